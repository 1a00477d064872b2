"""A fixture environment whose tools use every schema shape the web form must render."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mcpgym import MCPEnvironment, Observation, State, tool


class Person(BaseModel):
    """One traveller."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="Full name.")
    age: int = Field(ge=0, le=120)


class Train(BaseModel):
    """Going by train."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["train"] = "train"
    coach: int = Field(ge=1, le=12, description="Coach number.")


class Flight(BaseModel):
    """Going by air."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["flight"] = "flight"
    seat: str | None = None
    window: bool = False


class Trip(BaseModel):
    """A trip to plan."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"x-example": {"destination": "Oslo"}}
    )

    destination: str = Field(description="Where to.")
    pace: Literal["slow", "normal", "fast"] = "normal"
    transport: Annotated[Train | Flight, Field(discriminator="kind")]
    travellers: list[Person] = Field(default_factory=list, max_length=5)
    budget: float | None = Field(default=None, ge=0, le=10000)


class WebState(State):
    """What the fixture remembers."""

    total: int = 0
    trips: list[dict[str, Any]] = Field(default_factory=list)
    wiped: bool = False


class WebEnv(MCPEnvironment):
    """Plan trips and count: a fixture for the web UI tests."""

    description = "Fixture for the web UI: nested forms, rewards, done."
    version = "0.1.0"
    state_type = WebState
    blocking = False

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kw: Any
    ) -> Observation:
        """Start over (option `start`: the counter's first value)."""
        super().reset(seed=seed, episode_id=episode_id)
        self._state = WebState(episode_id=self._state.episode_id, total=int(kw.get("start", 0)))
        return Observation(metadata={"prompt": "Add numbers until you reach 10, then finish."})

    @property
    def st(self) -> WebState:
        assert isinstance(self._state, WebState)
        return self._state

    @tool(annotations={"readOnlyHint": False, "destructiveHint": False})
    def add(self, n: Annotated[int, Field(ge=-100, le=100, description="How much to add.")]) -> int:
        """Add `n` to the counter; the reward is the new total's distance to 10, negated."""
        self.st.total += n
        return self.st.total

    @tool(annotations={"readOnlyHint": False, "destructiveHint": False})
    def plan(
        self,
        trip: Trip,
        notes: Annotated[str, Field(max_length=4000, description="Anything else.")] = "",
        tags: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
        urgent: bool = False,
    ) -> dict[str, Any]:
        """Plan a trip (a nested form: groups, a discriminated union, lists, maps)."""
        record = {
            "trip": trip.model_dump(),
            "notes": notes,
            "tags": tags,
            "extra": extra,
            "urgent": urgent,
        }
        self.st.trips.append(record)
        return record

    @tool(annotations={"readOnlyHint": True})
    def peek(self) -> dict[str, Any]:
        """Read the counter."""
        return {"total": self.st.total}

    @tool(annotations={"destructiveHint": True})
    def wipe(self) -> str:
        """Forget every trip."""
        self.st.trips.clear()
        self.st.wiped = True
        return "wiped"

    @tool
    def finish(self) -> str:
        """End the episode."""
        self.end_episode()
        return "finished"

    def reward(self, action: Any, observation: Observation) -> float | None:
        return -abs(10 - self.st.total) / 10
