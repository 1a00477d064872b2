"""Model-listing bodies (`GET /v1/models`, `GET /v1/models/{id}`) in OpenAI's and Anthropic's
shapes, for when no upstream answers them.

Example:
    >>> models_body(["scripted"], None, anthropic=False)["data"][0]["id"]
    'scripted'
    >>> models_body(["a", "b"], None, anthropic=True)["last_id"]
    'b'
"""

from __future__ import annotations

from typing import Any

__all__ = ["models_body"]

_CREATED = "2025-01-01T00:00:00Z"


def models_body(ids: list[str], model_id: str | None, *, anthropic: bool) -> dict[str, Any]:
    """The list of `ids`, or the one entry `model_id` (which must be in `ids`)."""
    chosen = [model_id] if model_id is not None else ids
    if anthropic:
        data = [
            {"type": "model", "id": m, "display_name": m, "created_at": _CREATED} for m in chosen
        ]
        if model_id is not None:
            return data[0]
        first, last = (ids[0], ids[-1]) if ids else (None, None)
        return {"data": data, "has_more": False, "first_id": first, "last_id": last}
    data = [{"id": m, "object": "model", "created": 0, "owned_by": "mcpgym"} for m in chosen]
    return data[0] if model_id is not None else {"object": "list", "data": data}
