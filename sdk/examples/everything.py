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
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mcpgym import MCPEnvironment, tool
from mcpgym.content import Audio, Image, Resource, Text
from mcpgym.context import ToolContext
from mcpgym.examples.everything_data import (
    JSON_SCHEMA_2020_12,
    NAME,
    PNG,
    SEP1034_SCHEMA,
    SEP1330_SCHEMA,
    WAV,
)

__all__ = ["EverythingEnv"]


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
            "Please review and update the form fields with defaults", SEP1034_SCHEMA
        )
        return Text(f"Elicitation completed: action={answer.action}, content={answer.content}")

    @tool
    async def test_elicitation_sep1330_enums(self, ctx: ToolContext) -> Text:
        """Elicit with all five enum shapes (SEP-1330)."""
        answer = await ctx.elicit("Please select options from the enum fields", SEP1330_SCHEMA)
        return Text(f"Elicitation completed: action={answer.action}, content={answer.content}")

    @tool(description="Tool with JSON Schema 2020-12 features")
    def json_schema_2020_12_tool(
        self,
        name: str | None = None,
        address: Address | None = None,
        contactMethod: Literal["phone", "email"] | None = None,  # the schema's camelCase name
        phone: str | None = None,
        email: str | None = None,
    ) -> Text:
        """Accept a contact (2020-12 keywords: $schema, $defs, $anchor, allOf, if/then/else)."""
        return Text(f"name={name}, contact={contactMethod}, phone={phone}, email={email}")

    @tool
    def test_headers(
        self,
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
        query: str = "",
    ) -> Text:
        """Echo a parameter the client mirrors into the `Mcp-Param-Region` header (SEP-2243).

        Args:
            region: Mirrored into the Mcp-Param-Region HTTP header by 2026-07-28 clients.
            query: Any text.
        """
        return Text(f"region={region}, query={query}")

    @tool
    async def test_logging_tool(self, ctx: ToolContext) -> Text:
        """Log at every level; a 2026-07-28 client only receives what it opted into."""
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(f"a {level} message", level)
        return Text("logged")

    @tool
    async def test_missing_capability(self, ctx: ToolContext) -> Text:
        """Needs sampling: a client that did not declare it gets -32021 (2026-07-28)."""
        reply = await ctx.sample("Say hello.", max_tokens=20)
        return Text(f"LLM response: {reply}")

    @tool
    async def test_streaming_elicitation(self, ctx: ToolContext) -> Text:
        """Report progress, then ask the user to confirm."""
        await ctx.progress(1, 2, "about to ask")
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        answer = await ctx.elicit("Please confirm", schema)
        await ctx.progress(2, 2, "answered")
        return Text(f"action={answer.action}, content={answer.content}")

    # -- 2026-07-28 multi-round input (SEP-2322): the same ctx.elicit / ctx.sample, asked by name --

    @tool
    async def test_input_required_result_elicitation(self, ctx: ToolContext) -> Text:
        """Ask the user's name, then greet them."""
        answer = await ctx.elicit("What is your name?", NAME, key="user_name")
        return Text(f"Hello, {(answer.content or {}).get('name')}!")

    @tool
    async def test_input_required_result_sampling(self, ctx: ToolContext) -> Text:
        """Ask the client's model a question."""
        reply = await ctx.sample(
            "What is the capital of France?", max_tokens=100, key="capital_question"
        )
        return Text(f"The model says: {reply}")

    @tool
    async def test_input_required_result_request_state(self, ctx: ToolContext) -> Text:
        """Ask for a confirmation; the answer round carries the sealed request state."""
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        answer = await ctx.elicit("Please confirm", schema, key="confirm")
        # A tampered or foreign requestState is refused (-32602) before the tool runs again.
        return Text(f"state-ok: confirmed={(answer.content or {}).get('ok')}")

    @tool
    async def test_input_required_result_multi_round(self, ctx: ToolContext) -> Text:
        """Ask two questions in turn (two rounds)."""
        name = await ctx.elicit("Step 1: What is your name?", NAME, key="step1")
        color_schema = {
            "type": "object",
            "properties": {"color": {"type": "string"}},
            "required": ["color"],
        }
        color = await ctx.elicit("Step 2: What is your favorite color?", color_schema, key="step2")
        return Text(
            f"name={(name.content or {}).get('name')}, color={(color.content or {}).get('color')}"
        )

    @tool
    async def test_input_required_result_tampered_state(self, ctx: ToolContext) -> Text:
        """Ask a question; a retry with a modified request state is refused."""
        answer = await ctx.elicit("What is your name?", NAME, key="user_name")
        return Text(f"Hello, {(answer.content or {}).get('name')}!")

    @tool
    async def test_input_required_result_capabilities(self, ctx: ToolContext) -> Text:
        """Ask only what the client can answer (sampling and/or elicitation)."""
        parts: list[str] = []
        if ctx.supports("sampling"):
            parts.append(await ctx.sample("Generate a greeting", max_tokens=50, key="greeting"))
        if ctx.supports("elicitation"):
            answer = await ctx.elicit("What is your name?", NAME, key="user_name")
            parts.append(str(answer.content))
        return Text("; ".join(parts) or "the client can answer nothing")


def _advertise(name: str, schema: dict[str, Any]) -> None:
    """Advertise a literal input schema for one tool (arguments are still validated by the
    pydantic model built from its signature, which accepts every document the schema accepts).

    The json-schema-2020-12 scenario checks that the server passes 2020-12 keywords (`$schema`,
    a `$defs` entry named `address` with an `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else`)
    through untouched; pydantic names `$defs` after classes and emits none of the others, so the
    fixture states the scenario's schema verbatim.
    """
    spec = EverythingEnv.tool_specs[name]
    spec.input_schema = schema
    spec.info = spec.info.model_copy(update={"input_schema": schema})


_advertise("json_schema_2020_12_tool", JSON_SCHEMA_2020_12)
