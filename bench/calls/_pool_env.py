"""The bench's Guess game with `blocking = True`, the default for an environment: its sync tools
run in the shared worker pool (bench server `mcpgym-pool`), so the pool's hand-off is measured."""

from __future__ import annotations

from mcpgym.examples.guess import GuessEnv


class PoolGuessEnv(GuessEnv):
    """`GuessEnv` whose sync tools run in the shared worker pool."""

    blocking = True
