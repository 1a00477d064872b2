"""Scripted policies for the model seat of `vf-eval`: each reads the conversation verifiers'
harness sent (an OpenAI chat request through mcpgym's capture proxy, `scripted_model`) and
answers the next tool call, the way a model would.

- `bisect_guess`: Guess the Number by bisection on the verdicts the tools answered;
- `never_guess`: guesses 0 (below the range) `tries` times, then gives up (it cannot win);
- `follow_plans(plans)`: the plan of the task whose prompt the conversation holds, call by call
  (Calendar Gym's gold plans, or a wrong one).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from scripted_model import Say, StepContext, call, say

Policy = Callable[[StepContext], Say]

__all__ = ["Policy", "bisect_guess", "follow_plans", "never_guess", "turns"]


def turns(policy: Policy, most: int = 40) -> list[Policy]:
    """A `ScriptedModel` script playing `policy` on every turn (the model answers each request)."""
    return [policy] * most


def _exchanges(ctx: StepContext) -> list[tuple[str, Any, str]]:
    """`(tool, arguments, result text)` of every tool call so far, in order."""
    calls: dict[str, tuple[str, Any]] = {}
    out: list[tuple[str, Any, str]] = []
    for message in ctx.conversation.messages:
        for part in message.parts:
            if part.kind == "tool_call":
                calls[part.call_id] = (part.name, part.arguments)
            elif part.kind == "tool_result" and part.call_id in calls:
                name, arguments = calls[part.call_id]
                out.append((name, arguments, part.text))
    return out


def bisect_guess(ctx: StepContext) -> Say:
    low, high = 1, 100
    for name, arguments, text in _exchanges(ctx):
        try:
            verdict = json.loads(text).get("verdict")
        except (json.JSONDecodeError, AttributeError):
            continue
        if name != "guess" or not isinstance(arguments, dict):
            continue
        if verdict == "correct":
            return say(f"The number is {arguments['n']}.")
        if verdict == "higher":
            low = arguments["n"] + 1
        elif verdict == "lower":
            high = arguments["n"] - 1
    return call("guess", {"n": (low + high) // 2})


def never_guess(tries: int = 3) -> Policy:
    def policy(ctx: StepContext) -> Say:
        if len(_exchanges(ctx)) >= tries:
            return say("I give up.")
        return call("guess", {"n": 0})

    return policy


def _user_text(ctx: StepContext) -> str:
    return "\n".join(m.text for m in ctx.conversation.messages if m.role in ("user", "system"))


def follow_plans(plans: Sequence[tuple[str, list[list[Any]]]]) -> Policy:
    """`plans`: `(prompt, [[tool, arguments], ...])`; the conversation must hold exactly one of
    the prompts. Past its plan's end the policy says it is done."""

    def policy(ctx: StepContext) -> Say:
        text = _user_text(ctx)
        found = [plan for prompt, plan in plans if prompt in text]
        if len(found) != 1:
            raise LookupError(f"{len(found)} plans match the conversation's prompt")
        step = len(_exchanges(ctx))
        (plan,) = found
        if step >= len(plan):
            return say("Done.")
        name, arguments = plan[step]
        return call(name, arguments)

    return policy
