"""The manifest's `panel:` section: what the validator's gamer panel needs to know.

Every key is optional; without the section the panel still runs the gamers that need nothing
declared (constant finishers, try-then-finish, random calls, replays, error exploits, the
cross-process check). An environment declares more to be measured more:

- `finish`: how an episode states its outcome (`tool`, its `argument`, the `solved` value);
  a *trap* is an episode whose oracle finishes with another value;
- `lookups`: the look-up tools and how to read a candidate list from their result, which
  turns on the positional pickers (first, second, last hit);
- `writes`: the tools that change the world, which turns on the collateral-mutation pass;
- `pair`, `template`: the spec tag (or `data` key) naming a trap's pair and a task's template;
- `thresholds`, `gamers`: the gates (strict defaults; `gamers.NAME` overrides one gamer's),
  and `skip`: gamers not run.

Example:
    >>> p = Panel.model_validate({"thresholds": {"success": 0.2}, "gamers": {"random":
    ...     {"success": 0.3}}})
    >>> p.limit("random", "success"), p.limit("first-hit", "success"), p.limit("x", "traps")
    (0.3, 0.2, 0.05)
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["METRICS", "FinishDecl", "Lookup", "Panel", "Thresholds"]

METRICS = ("success", "traps", "paired", "reward", "collateral")
"""The gated numbers: success rate, trap success rate, paired trap score, mean reward (as a
fraction of the range) and the share of effective collateral mutants keeping full marks."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Thresholds(_Model):
    """The most a gamer may reach on each metric (strict defaults; `None` leaves it ungated)."""

    success: float | None = 0.10
    traps: float | None = 0.05
    paired: float | None = 0.02
    reward: float | None = 0.20
    collateral: float | None = 0.0


class FinishDecl(_Model):
    """How an episode states its outcome: `tool(argument=solved)` on a solvable task."""

    tool: str
    argument: str = "status"
    solved: Any = "done"


class Lookup(_Model):
    """A look-up tool and how to read its candidates.

    `items`: dotted paths to the candidate lists in the result (concatenated, in order); `key`:
    the candidate's field an agent would pass on (an id, an email); `text`: the fields that name
    it; `query`: the argument that takes a search word (one call per word of the prompt), if
    any; `arguments`: fixed arguments, where `"$NAME"` is the value of argument NAME of the gold
    call whose value is being picked (an event look-up on the gold call's calendar).
    """

    tool: str
    items: list[str] = Field(default_factory=lambda: ["items"], min_length=1)
    key: str = "id"
    text: list[str] = Field(default_factory=lambda: ["name"], min_length=1)
    query: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)


class Panel(_Model):
    """The `panel:` section (see the module docstring)."""

    finish: FinishDecl | None = None
    lookups: list[Lookup] = Field(default_factory=list)
    writes: list[str] = Field(default_factory=list)
    pair: str = "pair"
    template: str | None = None
    thresholds: Thresholds = Field(default_factory=Thresholds)
    gamers: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    skip: list[str] = Field(default_factory=list)

    def limit(self, gamer: str, metric: str) -> float | None:
        """The threshold of `metric` for `gamer`: its own override, else the panel's."""
        own = self.gamers.get(gamer, {})
        if metric in own:
            return own[metric]
        family = gamer.split(":", 1)[0]
        if family in self.gamers and metric in self.gamers[family]:
            return self.gamers[family][metric]
        return getattr(self.thresholds, metric)

    def with_overrides(self, overrides: dict[str, float | None]) -> Panel:
        """A copy with `METRIC` or `GAMER.METRIC` thresholds replaced (the CLI's `--gate`)."""
        base = self.thresholds.model_dump()
        gamers = {k: dict(v) for k, v in self.gamers.items()}
        for name, value in overrides.items():
            gamer, _, metric = name.rpartition(".")
            if metric not in METRICS:
                raise ValueError(f"unknown gate metric {metric!r}; known: {', '.join(METRICS)}")
            if gamer:
                gamers.setdefault(gamer, {})[metric] = value
            else:
                base[metric] = value
        return self.model_copy(update={"thresholds": Thresholds(**base), "gamers": gamers})
