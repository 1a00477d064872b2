"""Data of the conformance fixture (`everything.py`): media and the schemas scenarios expect."""

from __future__ import annotations

import io
import struct
import wave
import zlib
from typing import Any

from mcpgym.content import Audio, Image

__all__ = ["JSON_SCHEMA_2020_12", "NAME", "PNG", "SEP1034_SCHEMA", "SEP1330_SCHEMA", "WAV"]


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

NAME: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}

SEP1034_SCHEMA: dict[str, Any] = {
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

SEP1330_SCHEMA: dict[str, Any] = {
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

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
