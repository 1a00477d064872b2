"""How big a value's JSON is at least, found without encoding it (and without walking all of it).

Shared by the SDK (a tool result too large to send is refused in the worker thread that made
it, before it is converted) and the servers (`mcpgym.servers.wire_json.check_result`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["size_at_least"]


def size_at_least(value: Any, limit: int, max_nodes: int | None = None) -> int:
    """A lower bound of the length of `value`'s JSON, walked only until it passes `limit`.

    Strings count their length, containers their brackets and separators, anything else one
    byte, so the bound is exact for ASCII text without escapes and never above the truth. A
    container's separators are counted before its items are walked, so a list of ten million
    numbers is over any sane limit at once; the walk visits at most about `limit` bytes' worth
    of nodes. With `max_nodes`, a value of more nodes than that counts as over (`limit + 1`).

    >>> size_at_least({"a": [1, "xy"]}, 1000)
    14
    """
    total = 0
    stack = [value]
    pop, push, extend = stack.pop, stack.append, stack.extend
    budget = -1 if max_nodes is None else max_nodes
    while stack:
        budget -= 1
        if budget == 0:
            return max(total, limit + 1)
        item = pop()
        kind = type(item)
        if kind is str:
            total += len(item) + 2
        elif kind is dict or isinstance(item, dict):
            total += 1 + len(item)
            if total > limit:
                return total
            for key, inner in item.items():
                total += (len(key) if type(key) is str else 1) + 3
                push(inner)
        elif kind is list or isinstance(item, list | tuple):
            total += 1 + len(item)
            if total > limit:
                return total
            extend(item)
        else:
            total += 1
        if total > limit:
            return total
    return total
