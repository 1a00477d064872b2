"""Content a tool may return besides plain JSON: text, images, audio and embedded resources.

A tool that returns one of these values, or a list of them, is rendered as MCP content blocks on
`/mcp` and stdio (`content: [{"type": "image", "data": ..., "mimeType": ...}]`, without
`structuredContent`), and in simulation `step` as the very same blocks, in JSON, in
`CallToolObservation.result`. Annotate the tool's return type with them (`-> Image`,
`-> list[Text | Image]`) and it gets no output schema; an unannotated tool that returns them at run
time is rendered the same way.

Example:
    >>> from mcpgym import MCPEnvironment, tool
    >>> class Painter(MCPEnvironment):
    ...     @tool
    ...     def paint(self) -> list[Text | Image]:
    ...         '''Paint a (fake) picture.'''
    ...         return [Text("here it is:"), Image.from_bytes(b"not really a png", "image/png")]
    >>> env = Painter(); _ = env.reset()
    >>> [block["type"] for block in env.call_tool_sync("paint", {})]
    ['text', 'image']
"""

from __future__ import annotations

import base64
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

__all__ = [
    "Audio",
    "Content",
    "ContentBlocks",
    "EmbeddedResource",
    "Image",
    "Resource",
    "Text",
    "as_blocks",
    "is_content_annotation",
]


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


@dataclass(frozen=True, slots=True)
class Text:
    """Plain text for the model."""

    text: str

    def to_block(self) -> dict[str, Any]:
        """The MCP content block (`{"type": "text", "text": ...}`)."""
        return {"type": "text", "text": self.text}


@dataclass(frozen=True, slots=True)
class Image:
    """An image: base64 `data` and its MIME type. Build one from bytes with `from_bytes`."""

    data: str
    mime_type: str

    @classmethod
    def from_bytes(cls, raw: bytes, mime_type: str) -> Self:
        """Encode raw bytes (e.g. a PNG file's) as base64."""
        return cls(_b64(raw), mime_type)

    def to_block(self) -> dict[str, Any]:
        """The MCP content block (`{"type": "image", "data": ..., "mimeType": ...}`)."""
        return {"type": "image", "data": self.data, "mimeType": self.mime_type}


@dataclass(frozen=True, slots=True)
class Audio:
    """Audio: base64 `data` and its MIME type. Build one from bytes with `from_bytes`."""

    data: str
    mime_type: str

    @classmethod
    def from_bytes(cls, raw: bytes, mime_type: str) -> Self:
        """Encode raw bytes (e.g. a WAV file's) as base64."""
        return cls(_b64(raw), mime_type)

    def to_block(self) -> dict[str, Any]:
        """The MCP content block (`{"type": "audio", "data": ..., "mimeType": ...}`)."""
        return {"type": "audio", "data": self.data, "mimeType": self.mime_type}


@dataclass(frozen=True, slots=True)
class Resource:
    """A resource embedded in the result: its URI and either `text` or base64 `blob`.

    Example:
        >>> Resource("test://note", text="hi", mime_type="text/plain").to_block()["resource"]
        {'uri': 'test://note', 'mimeType': 'text/plain', 'text': 'hi'}
    """

    uri: str
    text: str | None = None
    blob: str | None = None
    mime_type: str | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError("a Resource needs exactly one of text= or blob=")

    @classmethod
    def from_bytes(cls, uri: str, raw: bytes, mime_type: str | None = None) -> Self:
        """A binary resource (`blob` is the base64 of `raw`)."""
        return cls(uri, blob=_b64(raw), mime_type=mime_type)

    def to_block(self) -> dict[str, Any]:
        """The MCP content block (`{"type": "resource", "resource": {...}}`)."""
        resource: dict[str, Any] = {"uri": self.uri}
        if self.mime_type is not None:
            resource["mimeType"] = self.mime_type
        if self.text is not None:
            resource["text"] = self.text
        else:
            resource["blob"] = self.blob
        return {"type": "resource", "resource": resource}


EmbeddedResource = Resource
"""The MCP spec's name for `Resource`."""

Content = Text | Image | Audio | Resource
"""Any single content value."""

_CONTENT_CLASSES: tuple[type, ...] = (Text, Image, Audio, Resource)


class ContentBlocks(list[dict[str, Any]]):
    """A tool result made of MCP content blocks (plain dicts, JSON-ready).

    `ToolSpec.dump_result` returns this for content values, so transports can tell content apart
    from a structured result that happens to be a list.
    """

    __slots__ = ()


def as_blocks(value: Any) -> ContentBlocks | None:
    """The blocks of `value` (a content value or a non-empty list of them), else `None`."""
    if isinstance(value, _CONTENT_CLASSES):
        return ContentBlocks([typing.cast(Content, value).to_block()])
    if isinstance(value, Sequence) and not isinstance(value, str | bytes) and value:
        items = typing.cast(Sequence[Any], value)
        if all(isinstance(item, _CONTENT_CLASSES) for item in items):
            return ContentBlocks(typing.cast(Content, item).to_block() for item in items)
    return None


def is_content_annotation(annotation: Any) -> bool:
    """Whether a return annotation names content: a content class, a union of them, or a list."""
    if isinstance(annotation, type) and issubclass(annotation, _CONTENT_CLASSES):
        return True
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return bool(args) and all(is_content_annotation(a) for a in args)
    if origin in (list, tuple, Sequence, typing.Sequence) and args:
        items = [a for a in args if a is not Ellipsis]
        return all(is_content_annotation(a) for a in items)
    return False
