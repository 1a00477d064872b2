"""The conformance fixture: the tools the official MCP conformance suite calls, as an mcpgym env.

The suite (npm `@modelcontextprotocol/conformance`) expects a server with the reference
"everything" server's `test_*` tools. This environment provides them with nothing but the public
SDK: content values (`mcpgym.content`) for images, audio and embedded resources, and a
`ToolContext` for logging, progress, sampling and elicitation. docs/conformance.md lists what the
suite checks, what passes and which scenarios need features mcpgym does not offer.

Serve it: `mcpgym serve mcpgym.examples.everything:EverythingEnv --mode production`.
"""

from __future__ import annotations

import asyncio
import io
import struct
import wave
import zlib
from typing import Any

from pydantic import BaseModel, ConfigDict

from mcpgym import MCPEnvironment, tool
from mcpgym.content import Audio, Image, Resource, Text
from mcpgym.context import ToolContext

__all__ = ["EverythingEnv"]


def _red_pixel_png() -> bytes:
    """A 1x1 red PNG, built by hand so the fixture needs no image library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte, then one red pixel
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _silence_wav() -> bytes:
    """A tenth of a second of 8 kHz mono silence."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 800)
    return buffer.getvalue()


PNG = Image.from_bytes(_red_pixel_png(), "image/png")
WAV = Audio.from_bytes(_silence_wav(), "audio/wav")
_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_SEP1034_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}

_SEP1330_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}


class Address(BaseModel):
    """A postal address (the nested model of the JSON Schema 2020-12 tool)."""

    model_config = ConfigDict(extra="forbid")

    street: str | None = None
    city: str | None = None


class EverythingEnv(MCPEnvironment):
    """Every tool the MCP conformance scenarios call, implemented with the public mcpgym SDK."""

    description = (
        "The MCP conformance suite's fixture tools (test_simple_text, test_sampling, ...)."
    )
    version = "1.0.0"
    blocking = False

    @tool
    def test_simple_text(self) -> Text:
        """Return a fixed text."""
        return Text("This is a simple text response for testing.")

    @tool
    def test_image_content(self) -> Image:
        """Return a 1x1 red PNG."""
        return PNG

    @tool
    def test_audio_content(self) -> Audio:
        """Return a short WAV clip."""
        return WAV

    @tool
    def test_embedded_resource(self) -> Resource:
        """Return an embedded text resource."""
        return Resource(
            "test://embedded-resource",
            text="This is an embedded resource content.",
            mime_type="text/plain",
        )

    @tool
    def test_multiple_content_types(self) -> list[Text | Image | Resource]:
        """Return text, an image and an embedded resource."""
        return [
            Text("Multiple content types test:"),
            PNG,
            Resource(
                "test://mixed-content-resource",
                text='{"test":"data","value":123}',
                mime_type="application/json",
            ),
        ]

    @tool
    async def test_tool_with_logging(self, ctx: ToolContext) -> Text:
        """Send three info log messages while running."""
        await ctx.log("Tool execution started")
        await asyncio.sleep(0.05)
        await ctx.log("Tool processing data")
        await asyncio.sleep(0.05)
        await ctx.log("Tool execution completed")
        return Text("Tool with logging executed successfully")

    @tool
    async def test_tool_with_progress(self, ctx: ToolContext) -> Text:
        """Report progress 0, 50 and 100 of 100."""
        for done in (0, 50, 100):
            await ctx.progress(done, 100)
            if done < 100:
                await asyncio.sleep(0.05)
        return Text("Tool with progress executed successfully")

    @tool
    def test_error_handling(self) -> Text:
        """Always fail."""
        raise RuntimeError("This tool intentionally returns an error for testing")

    @tool
    async def test_sampling(self, prompt: str, ctx: ToolContext) -> Text:
        """Ask the client's model to complete a prompt.

        Args:
            prompt: The prompt to send to the LLM.
        """
        reply = await ctx.sample(prompt, max_tokens=100)
        return Text(f"LLM response: {reply}")

    @tool
    async def test_elicitation(self, message: str, ctx: ToolContext) -> Text:
        """Ask the user for a username and an email address.

        Args:
            message: The message to show the user.
        """
        schema = {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        }
        answer = await ctx.elicit(message, schema)
        return Text(f"User response: action={answer.action}, content={answer.content}")

    @tool
    async def test_elicitation_sep1034_defaults(self, ctx: ToolContext) -> Text:
        """Elicit with a default for every primitive type (SEP-1034)."""
        answer = await ctx.elicit(
            "Please review and update the form fields with defaults", _SEP1034_SCHEMA
        )
        return Text(f"Elicitation completed: action={answer.action}, content={answer.content}")

    @tool
    async def test_elicitation_sep1330_enums(self, ctx: ToolContext) -> Text:
        """Elicit with all five enum shapes (SEP-1330)."""
        answer = await ctx.elicit("Please select options from the enum fields", _SEP1330_SCHEMA)
        return Text(f"Elicitation completed: action={answer.action}, content={answer.content}")

    @tool(description="Tool with JSON Schema 2020-12 features")
    def json_schema_2020_12_tool(
        self, name: str | None = None, address: Address | None = None
    ) -> Text:
        """Accept a name and an address (2020-12 keywords: $schema, $defs, additionalProperties)."""
        return Text(f"name={name}, address={address.model_dump() if address else None}")


def _advertise(name: str, schema: dict[str, Any]) -> None:
    """Advertise a literal input schema for one tool (arguments are still validated by the
    pydantic model built from its signature, which accepts the same documents).

    The json-schema-2020-12 scenario checks that the server passes `$schema` and a `$defs` entry
    named `address` through untouched; pydantic names `$defs` after classes and does not emit
    `$schema`, so the fixture states the scenario's schema verbatim.
    """
    spec = EverythingEnv.tool_specs[name]
    spec.input_schema = schema
    spec.info = spec.info.model_copy(update={"input_schema": schema})


_advertise(
    "json_schema_2020_12_tool",
    {
        "$schema": _DIALECT,
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": False,
    },
)
