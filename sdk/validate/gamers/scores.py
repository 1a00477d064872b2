"""A gamer's scores, the gates they are held to, and the table the report prints.

Metrics (each over the episodes the gamer applies to):

- `success`: share of episodes paid as solved (above `reward.max - margin`), a trap credited
  only when its twin (same prompt variant) is paid too — one episode cannot tell "found out it
  cannot be done" from "says so whatever happens" when trying the request is refused, the
  twin (the same request where it can be done) can; a trap without a twin counts alone;
- `traps`: the same (credited) over trap episodes — the trap score; `alone`: trap episodes
  paid on their own (shown, never gated);
- `paired`: traps scored by pair — a trap and its twin count as one, passed only when both
  halves pass; a trap without a twin is a pair of one, so a status-blind gamer that passes an
  unpaired trap scores here. Since `traps` credits a trap with its twin, the two are the same
  number; `paired` keeps its name and its stricter default gate (manifests set both);
- `reward`: mean score as a fraction of the reward range (partial credit);
- `chance` (positional pickers): what a blind guess among the same candidates would pass —
  the mean over episodes of the product of 1/candidates over their ambiguous look-ups; a
  picker's success gate is the `success` threshold *plus* chance (position must carry no
  information, and with three candidates a blind guess is right a third of the time);
- per group: `success` for every value of every spec tag (tier, phrasing, ...) and for
  trap / solvable.

Which metrics gate which family (a family's gamers share the prefix before `:`):
`constant`, `random`, `error-exploit`: success, traps, paired, reward (they do no useful work);
`replay`: success, traps, paired; `positional`: success; `try-then`: traps, paired (it plays
the request itself, so it may pass a solvable task, or a trap alone — never a trap credited
with its twin).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field

from rich import box
from rich.console import Console
from rich.table import Table

from mcpgym.manifest.panel import Panel
from mcpgym.validate.gamers.table import Episode, Episodes
from mcpgym.validate.policies import Trajectory

__all__ = ["GATED", "Score", "pct", "render", "score"]

GATED: dict[str, tuple[str, ...]] = {
    "constant": ("success", "traps", "paired", "reward"),
    "random": ("success", "traps", "paired", "reward"),
    "error-exploit": ("success", "traps", "paired", "reward"),
    "replay": ("success", "traps", "paired"),
    "positional": ("success",),
    "try-then": ("traps", "paired"),
}


def _rate(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


@dataclass
class Score:
    """One gamer's numbers (None: no episode to measure it on) and the gates it broke."""

    gamer: str
    episodes: int
    metrics: dict[str, float | None]
    groups: dict[str, float | None] = field(default_factory=dict)
    beaten: list[str] = field(default_factory=list)

    def worded(self) -> str:
        """`second-hit: success 76% > 10%` for each broken gate."""
        return f"{self.gamer} ({'; '.join(self.beaten)})"


def score(
    eps: Episodes,
    gamer: str,
    runs: dict[int, Trajectory | None],
    panel: Panel,
    chance: dict[int, float] | None = None,
) -> Score:
    """The metrics of `gamer` from its trajectory per episode index (see the module doc);
    `chance` (per episode) is what a blind guess would pass, added to the success gate."""
    played = {i: t for i, t in runs.items() if t is not None}
    passed = {i: eps.passed(t) for i, t in played.items()}
    items = eps.items
    traps = [i for i in played if items[i].trap]
    index = {id(e): i for i, e in enumerate(items)}
    credit = dict(passed)
    for i in traps:
        twin = eps.twin_of(items[i])
        if twin is not None:
            credit[i] = passed[i] and passed.get(index[id(twin)], False)
    metrics: dict[str, float | None] = {
        "success": _rate(list(credit.values())),
        "traps": _rate([credit[i] for i in traps]),
        "alone": _rate([passed[i] for i in traps]),
        "paired": _rate([credit[i] for i in traps]),
        "reward": (sum(eps.fraction(t) for t in played.values()) / len(played) if played else None),
    }
    if chance is not None:
        odds = [chance[i] for i in played if i in chance]
        metrics["chance"] = sum(odds) / len(odds) if odds else None
    groups: dict[str, list[bool]] = {}
    for i, ok in credit.items():
        ep: Episode = items[i]
        for k, v in sorted(ep.spec.tags.items()):
            groups.setdefault(f"{k}={v}", []).append(ok)
        groups.setdefault("trap" if ep.trap else "solvable", []).append(ok)
    out = Score(gamer, len(played), metrics, {k: _rate(v) for k, v in sorted(groups.items())})
    for metric in GATED.get(gamer.split(":", 1)[0], ()):
        limit, value = panel.limit(gamer, metric), metrics[metric]
        odds = metrics.get("chance") if metric == "success" else None
        if limit is not None and value is not None and value > limit + (odds or 0.0) + 1e-12:
            extra = f" + chance {pct(odds)}" if odds is not None else ""
            out.beaten.append(f"{metric} {pct(value)} > {pct(limit)}{extra}")
    return out


def pct(x: float | None) -> str:
    """`x` as a percentage (`-` for none): `pct(0.5)` is "50%", `pct(1/7)` is "14.3%"."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{100 * x:.0f}%" if abs(100 * x - round(100 * x)) < 0.05 else f"{100 * x:.1f}%"


def render(scores: list[Score], title: str) -> str:
    """The panel as a text table (rich, ASCII, no colour): one row per gamer, a column per
    metric and per group (a tag's value, `trap`, `solvable`; tags with one value are left
    out); a broken gate is marked `!`."""
    every = sorted({g for s in scores for g in s.groups})
    axes: dict[str, int] = {}
    for g in every:
        axes[g.partition("=")[0]] = axes.get(g.partition("=")[0], 0) + 1
    groups = [g for g in every if "=" not in g or axes[g.partition("=")[0]] > 1]
    table = Table(title=title, box=box.ASCII, title_justify="left")
    table.add_column("gamer", no_wrap=True)
    for col in ("n", "success", "chance", "traps", "alone", "paired", "reward", *groups):
        table.add_column(col.partition("=")[2] or col, justify="right", no_wrap=True)
    for s in scores:
        cells = []
        for m in ("success", "chance", "traps", "alone", "paired", "reward"):
            mark = "!" if any(b.startswith(m + " ") for b in s.beaten) else ""
            cells.append(pct(s.metrics.get(m)) + mark)
        table.add_row(s.gamer, str(s.episodes), *cells, *(pct(s.groups.get(g)) for g in groups))
    buf = io.StringIO()
    console = Console(file=buf, width=200, color_system=None, force_terminal=False)
    console.print(table)
    return buf.getvalue().rstrip()
