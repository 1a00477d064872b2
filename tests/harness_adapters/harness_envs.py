"""Environments for the harness tests: one whose every tool call lands in a log of its own."""

from __future__ import annotations

from typing import Any, ClassVar

from mcpgym import Action, CallToolObservation, MCPEnvironment, Observation, tool


class CallLogEnv(MCPEnvironment):
    """Notes and sums; every call is appended to the class-level `log` as
    `(episode_id, serving_mode, tool, arguments)`, so a test can prove a call ran *inside* the
    environment. `finish` ends the episode (reward 1.0); other calls earn 0.1."""

    description = "A notebook that records every call."
    log: ClassVar[list[tuple[str, str, str, dict[str, Any]]]] = []

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        super().reset(seed=seed, episode_id=episode_id)
        self.notes: list[str] = []
        self.seed = seed
        return Observation(metadata={"prompt": "Take notes."})

    def _log(self, name: str, **arguments: Any) -> None:
        episode = str(self.state.episode_id)
        self.log.append((episode, self.serving_mode, name, arguments))

    @tool
    def note(self, text: str) -> dict[str, Any]:
        """Write a note; returns how many there are."""
        self._log("note", text=text)
        self.notes.append(text)
        return {"notes": len(self.notes), "seed": self.seed}

    @tool
    def add(self, a: int, b: int) -> int:
        """Add two integers."""
        self._log("add", a=a, b=b)
        return a + b

    @tool
    def finish(self) -> str:
        """End the episode."""
        self._log("finish")
        self.end_episode()
        return "finished"

    @tool(mode="simulation")
    def peek(self) -> list[str]:
        """Trainer-only: the notes."""
        return list(self.notes)

    def reward(self, action: Action, observation: Observation) -> float | None:
        if not isinstance(observation, CallToolObservation):
            return None
        return 1.0 if observation.tool_name == "finish" else 0.1

    @classmethod
    def calls_of(cls, episode_id: str) -> list[tuple[str, dict[str, Any]]]:
        """`(tool, arguments)` of every call episode `episode_id` made, in order."""
        return [(tool_, args) for ep, _, tool_, args in cls.log if ep == episode_id]
