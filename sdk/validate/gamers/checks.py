"""Level 3's gamer panel as checks: the gamers, the collateral pass, determinism across
processes.

`check_gamer_panel` plays every gamer (`simple`, `positional`) on every panel episode and
fails naming each gamer that beat a gate, with its score; the table of every gamer's scores
per tier, phrasing and trap is in the result (`details["table"]`, printed under the check).
"""

from __future__ import annotations

from mcpgym.validate.base import Fail, NotApplicable, Skip, Verdict, check, count
from mcpgym.validate.context import Context
from mcpgym.validate.gamers.collateral import play_mutants
from mcpgym.validate.gamers.positional import chances, gold_positions, positional_gamers
from mcpgym.validate.gamers.processes import compare_processes
from mcpgym.validate.gamers.scores import GATED, Score, pct, render, score
from mcpgym.validate.gamers.simple import simple_gamers
from mcpgym.validate.gamers.table import Episodes, episodes_of

__all__: list[str] = []

_NEEDS = (
    "check_oracle_reaches_max",
    "check_invalid_action",
    "check_step_timeout",
    "check_verifier_determinism",
)


def _skipped(eps: Episodes, name: str) -> bool:
    return name in eps.panel.skip or name.split(":", 1)[0] in eps.panel.skip


def panel_scores(ctx: Context) -> list[Score]:
    """Every gamer's `Score` (played once per run, cached)."""
    if "panel_scores" not in ctx.cache:
        eps = episodes_of(ctx)
        pickers = positional_gamers(eps)
        odds = chances(eps) if pickers else {}
        out = []
        for name, gamer in {**simple_gamers(eps), **pickers}.items():
            if _skipped(eps, name):
                continue
            runs = {i: gamer(eps, ep) for i, ep in enumerate(eps.items)}
            out.append(score(eps, name, runs, eps.panel, odds if name in pickers else None))
        ctx.cache["panel_scores"] = out
    return ctx.cache["panel_scores"]


@check("semantic", needs=_NEEDS)
def check_gamer_panel(ctx: Context) -> str | None:
    """No gamer (constant finishers, try-then-finish, random calls, replays, error exploits,
    positional pickers) beats its gates: success, trap, paired-trap and reward ceilings."""
    eps = episodes_of(ctx)
    scores = panel_scores(ctx)
    positions: dict[str, int] = gold_positions(eps) if eps.panel.lookups else {}
    traps = sum(e.trap for e in eps.items)
    paired = sum(1 for e in eps.items if e.trap and eps.twin_of(e) is not None)
    title = f"gamer panel: {count(len(eps.items), 'episode')}, {traps} traps ({paired} paired)"
    if positions.get("lookups"):
        n = positions["lookups"]
        title += f"; gold of {n} ambiguous look-ups: " + ", ".join(
            f"{k} {positions[k]}" for k in ("first", "second", "last")
        )
    table = render(scores, title)
    beaten = [s for s in scores if s.beaten]
    details = {
        "table": table,
        "scores": {s.gamer: {**s.metrics, "episodes": s.episodes} for s in scores},
        "groups": {s.gamer: s.groups for s in scores},
        "positions": positions,
    }
    if beaten:
        raise Fail(
            f"{count(len(beaten), 'gamer')} beat the panel: "
            + "; ".join(s.worded() for s in beaten),
            "pay only for evidence of solving: vary where the answer sits in look-ups, give "
            "every trap a twin, credit a trap's status only with the fact that makes it one, "
            "keep partial credit for real progress (thresholds: panel.thresholds, --gate)",
            gamers=[s.gamer for s in beaten],
            **details,
        )
    gated = [s for s in scores if "success" in GATED.get(s.gamer.split(":", 1)[0], ())]
    best = max(gated or scores, key=lambda s: s.metrics["success"] or 0.0)
    return Verdict(
        f"{count(len(scores), 'gamer')} below their gates (best gated success: {best.gamer} "
        f"{pct(best.metrics['success'])})",
        **details,
    )


@check("semantic", needs=_NEEDS)
def check_collateral_mutations(ctx: Context) -> str | None:
    """The oracle's plan plus one unrequested change (a field set, a guest added, a write
    repeated) loses full marks whenever the change took effect."""
    if not ctx.require_manifest().panel.writes:
        raise NotApplicable("no write tools declared (panel.writes)")
    eps = episodes_of(ctx)
    played, effective, kept = play_mutants(eps)
    if not played:
        raise NotApplicable("no solvable episode's oracle calls a write tool: nothing to mutate")
    if not effective:
        raise Skip(f"none of {count(played, 'mutant')} took effect: nothing was measured")
    share = len(kept) / effective
    limit = eps.panel.limit("collateral", "collateral")
    if kept and limit is not None and share > limit:
        raise Fail(
            f"{len(kept)}/{effective} effective collateral mutants keep full marks: "
            + "; ".join(kept[:6]),
            "guard every touched row field by field ('unchanged except' the asked fields) and "
            "compare created rows exactly (guests included)",
            kept=kept,
            played=played,
            effective=effective,
        )
    return f"{effective} of {count(played, 'mutant')} took effect; none kept full marks"


@check("semantic", needs=_NEEDS)
def check_process_determinism(ctx: Context) -> str | None:
    """The oracle's and the random gamer's actions give the same observations and rewards on a
    second server process (its own hash seed)."""
    eps = episodes_of(ctx)
    compared, differ = compare_processes(eps)
    if differ:
        raise Fail(
            f"{len(differ)}/{compared} episodes differ on a second process: "
            + "; ".join(differ[:4]),
            "nothing may depend on the process: no set iteration order, id(), hash() of "
            "strings or module-level state in observations or rewards",
            episodes=differ,
        )
    return f"{count(compared, 'episode')} identical on two processes"
