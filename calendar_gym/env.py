"""`CalendarEnv`: the Calendar Gym environment (Google Calendar API v3 as MCP tools).

Each instance is one session with its own SQLite database. `reset(**options)` picks the acting
user, their OAuth scopes, the error rendering, the seed, the frozen "now" and an optional seed
patch. Every tool call goes through `_call`: unknown tool → scope check → argument validation
against the tool's schema (all problems at once) → the tool, inside one transaction → a result,
or an `ApiError` rendered in the session's `error_mode` as a `ToolError` the agent reads.

Example:
    >>> from mcpgym import CallToolAction
    >>> env = CalendarEnv(); _ = env.reset(seed=1)
    >>> obs = env.step(CallToolAction(tool_name="events_insert", arguments={"calendarId": "primary",
    ...     "title": "Sync", "start": {"dateTime": "2026-03-05T10:00:00-05:00"},
    ...     "end": {"dateTime": "2026-03-05T10:30:00-05:00"}}))
    >>> obs.error.error["code"], obs.error.error["suggestion"]
    ('UNKNOWN_FIELD', 'summary')
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from pydantic import Field

from calendar_gym.events.query import call_budget
from calendar_gym.tasks.play import TaskPlay
from calendar_gym.tasks.taskset import CALENDAR_TASKS
from calendar_gym.tools.acl import AclTools
from calendar_gym.tools.calendars import CalendarTools
from calendar_gym.tools.events import EventTools
from calendar_gym.tools.misc import MiscTools
from calendar_gym.tools.suggest import suggest_field, suggest_tools
from calendar_gym.tools.validation import check_arguments, check_id_lengths
from calendar_gym.world.acl import RANK, effective_role, resolve_calendar_id
from calendar_gym.world.errors import ERROR_MODES, ApiError, CalendarUnknownTool, ErrorMode, render
from calendar_gym.world.scopes import DEFAULT_SCOPES, missing_scope, normalise_scopes
from calendar_gym.world.seed import DEFAULT_NOW, MAIN_USER, WORLD_VERSION
from calendar_gym.world.store import SHARED_WORLDS, Store, patch_digest, state_hash
from calendar_gym.world.timeutil import TimeError, format_in_zone, parse_rfc3339
from mcpgym import MCPEnvironment, Observation, State, ToolError, ToolSpec, tool
from mcpgym.errors import InvalidRequest, InvalidToolArguments, SessionError

__all__ = ["RESET_OPTIONS", "CalendarEnv", "CalendarState"]

log = logging.getLogger(__name__)

RESET_OPTIONS = (
    "user",
    "scopes",
    "error_mode",
    "now",
    "seed_patch",
    "world_version",
    "shared_world",
    "task",
    "suite",
)
FinishStatus = Literal["done", "cannot_complete", "needs_clarification"]


class CalendarState(State):
    """Episode bookkeeping of a Calendar Gym session."""

    user: str = MAIN_USER
    scopes: list[str] = Field(default_factory=lambda: list(DEFAULT_SCOPES))
    error_mode: ErrorMode = "structured"
    now: str = DEFAULT_NOW
    seed: int = 0
    world_version: str = WORLD_VERSION
    calls: int = 0
    errors: int = 0
    writes: int = 0
    finish_status: FinishStatus | None = None
    finish_summary: str | None = None
    task: str | None = None
    grade: dict[str, Any] | None = None


class CalendarEnv(TaskPlay, MCPEnvironment, EventTools, CalendarTools, AclTools, MiscTools):
    """Google-Calendar-shaped, multi-user environment with ACLs and structured errors.

    Reset options (all optional):
        user: the acting user's email (default alice@acme.test).
        scopes: OAuth scopes, short (`calendar.readonly`) or full URLs (default full access).
        error_mode: `structured` (default), `google` or `plain`.
        now: the frozen current time, RFC 3339 with offset (default 2026-03-04T09:00:00-05:00).
        seed_patch: extra or changed world rows (format in `calendar_gym.world.loader`).
        world_version: the seed world version (default the latest).
        shared_world: attach to the live world registered under this name (created by the
            first session with its options) instead of a private copy. In production serving
            mode every instance shares one world per (version, seed, now, patch) by default, so
            what one principal shares another can read.
        task: play a task of the suite (`calendar_gym.tasks`): the task fixes the user,
            scopes, now and seed patch; the episode ends at `finish` or at the task's step
            limit, is graded then (reward, and `success`, `grade`, `failures` in the final
            observation's metadata), and `task_grade()` reads the grade so far (operator-only:
            `state` carries none, it is what an agent and its player see).
        suite: the suite version the task comes from (default the latest).
    The `seed` argument seeds generated ids; the same seed and calls give the same state.
    """

    description = "A Google Calendar API v3 workspace: several users, sharing, time zones."
    version = "1.0.0"
    state_type = CalendarState
    blocking = False  # every call is a few in-memory SQLite statements
    task_set = CALENDAR_TASKS  # the suite as an mcpgym task set: reset(task_id=...) plays one

    _state: CalendarState  # pyright: ignore[reportIncompatibleVariableOverride]
    _store: Store | None = None
    _shared_key: str | None = None

    @property
    def store(self) -> Store:  # type: ignore[override]
        """The session's database (after `reset`)."""
        if self._store is None:
            raise SessionError("No episode: call reset() before using the calendar.")
        return self._store

    # -- episode ----------------------------------------------------------------------------

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        """Start an episode with a fresh copy of the seed world (see the class docstring)."""
        kwargs = self.task_set.resolve_reset(kwargs)  # task_id / split+index -> task options
        unknown = [k for k in kwargs if k not in RESET_OPTIONS]
        if unknown:
            near = {k: suggest_field(k, RESET_OPTIONS) for k in unknown}
            raise InvalidRequest(
                f"unknown reset option(s) {unknown}; known: {', '.join(RESET_OPTIONS)}",
                errors=[{"field": k, "suggestion": v} for k, v in near.items()],
            )
        mode = kwargs.get("error_mode", "structured")
        if mode not in ERROR_MODES:
            raise InvalidRequest(
                f"error_mode must be one of {', '.join(ERROR_MODES)}; got {mode!r}",
                errors=[{"field": "error_mode", "got": mode}],
            )
        task_id = kwargs.get("task")
        if task_id is not None:
            kwargs = self.task_options(str(task_id), kwargs)
        now = kwargs.get("now") or DEFAULT_NOW
        try:
            parse_rfc3339(str(now))
            granted = kwargs.get("scopes") or DEFAULT_SCOPES
            scopes = normalise_scopes(granted.split() if isinstance(granted, str) else granted)
            if seed is not None and not isinstance(seed, int):
                raise ValueError(f"seed must be an integer, not {seed!r}")
        except (TimeError, ValueError) as exc:
            raise InvalidRequest(f"invalid reset option: {exc}") from None
        store, shared_key = self._open_store(seed or 0, str(now), kwargs)
        user = str(kwargs.get("user") or MAIN_USER).strip().lower()
        if store.one("SELECT 1 FROM users WHERE email = ?", (user,)) is None:
            emails = [r[0] for r in store.all("SELECT email FROM users ORDER BY email")]
            self._detach(store, shared_key)
            raise InvalidRequest(
                f"user {user!r} is not in the world; known users: {', '.join(emails)}",
                errors=[{"field": "user", "got": user, "expected": emails}],
            )
        if self._store is not None:
            self._detach(self._store, self._shared_key)
        super().reset(seed=seed, episode_id=episode_id)
        self._store, self._shared_key = store, shared_key
        self.user, self.scopes, self.error_mode = user, scopes, mode
        self.now = store.now
        task = self.start_task(kwargs, store)
        self._state = CalendarState(  # pyright: ignore[reportIncompatibleVariableOverride]
            episode_id=self._state.episode_id,
            user=user,
            scopes=list(scopes),
            error_mode=mode,
            now=str(now),
            seed=seed or 0,
            world_version=store.world_version,
            task=task.id if task is not None else None,
        )
        tz = self.user_tz()
        metadata: dict[str, Any] = {
            "user": user,
            "now": format_in_zone(store.now, tz),
            "timeZone": tz,
            "scopes": list(scopes),
            "error_mode": mode,
            "world_version": store.world_version,
        }
        # No task id, tier or step budget here: the observation reaches the agent (an LLM agent
        # reads it whole), and a trap and its twin differ in exactly those (`t4-perm-…` vs
        # `t4-twin-…`, T4 vs T1, 10 vs 8 steps). The operator has them in `state` (`task`) and
        # the final observation; a trap and its twin open the same.
        return Observation(metadata=metadata)

    def _open_store(self, seed: int, now: str, options: dict[str, Any]) -> tuple[Store, str | None]:
        """A private copy of the world, or the shared world this session should attach to."""
        from calendar_gym.world.loader import LoadError

        version = options.get("world_version", WORLD_VERSION)
        patch = options.get("seed_patch")
        key = options.get("shared_world")
        if key is None and self.serving_mode == "production":
            digest = patch_digest(patch)[:16]
            key = f"production/{version}/{seed}/{now}/{digest}"

        def create() -> Store:
            return Store.create(seed=seed, now=now, seed_patch=patch, version=version)

        try:
            if key is not None:
                return SHARED_WORLDS.acquire(str(key), create), str(key)
            return create(), None
        except (LoadError, ValueError) as exc:
            raise InvalidRequest(f"invalid seed_patch/world: {exc}") from None

    @staticmethod
    def _detach(store: Store, shared_key: str | None) -> None:
        if shared_key is None:
            store.close()
        else:
            SHARED_WORLDS.release(shared_key)

    def close(self) -> None:
        """Release the session's database (or detach from a shared world)."""
        if self._store is not None:
            self._detach(self._store, self._shared_key)
            self._store = None

    def state_dump(self) -> str:
        """The whole world state as canonical JSON (byte-identical for identical histories)."""
        return self.store.dump()

    def state_hash(self) -> str:
        """SHA-256 of `state_dump()`."""
        return state_hash(self.store.dump())

    # -- the call path ---------------------------------------------------------------------------

    def get_tool(self, name: str) -> ToolSpec:
        """The visible tool `name`; a structured `UNKNOWN_TOOL` error (nearest names) otherwise."""
        spec = self.tool_specs.get(name)
        if spec is None or not spec.visible_in(self.serving_mode):
            visible = [s.name for s in self.visible_tools()]
            near = suggest_tools(name, visible)
            err = ApiError(
                "UNKNOWN_TOOL",
                f"There is no tool {name!r}"
                + (f"; did you mean {' or '.join(near)}?" if near else "."),
                field="tool_name",
                expected="one of the tools from list_tools",
                got=name,
                hint=(f"Call {near[0]}." if near else "List the tools to see what exists.")
                + " Tool names follow the Calendar API: events_insert, calendarList_list, ...",
                suggestions=near,
            )
            raise render(err, getattr(self, "error_mode", "structured"), name)
        return spec

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, timeout_s: float | None = None
    ) -> Any:
        """Run one tool (see `_call`); calls take microseconds, so `timeout_s` is not needed."""
        return self._call(name, arguments)

    def call_tool_sync(self, name: str, arguments: dict[str, Any] | None) -> Any:
        """Run one tool synchronously (see `_call`)."""
        return self._call(name, arguments)

    def _call(self, name: str, arguments: dict[str, Any] | None) -> Any:
        store = self.store
        st = self._state
        st.calls += 1
        wrote = False
        try:
            spec = self.get_tool(name)
            if st.finish_status is not None or self.over_limit:
                why = (
                    f"finish({st.finish_status!r}) was already called"
                    if st.finish_status is not None
                    else "the task's step limit was reached"
                )
                raise ApiError(
                    "FORBIDDEN_OPERATION",
                    f"The episode is over: {why}.",
                    expected="no further calls",
                    got=name,
                    hint="Nothing more to do.",
                )
            problem = missing_scope(spec.name, self.scopes)
            if problem is not None:
                raise problem
            args = arguments if arguments is not None else {}
            problems = check_arguments(
                spec.input_schema, args, tool=name, default_tz=lambda: self._hint_tz(args)
            )
            if problems:
                raise ApiError.many(problems)
            check_id_lengths(args)
            kwargs = self._validated(spec, args)
            with store.lock:
                before = store.conn.total_changes
                with store.transaction(), call_budget():
                    value = getattr(self, spec.method)(**kwargs)
                if store.conn.total_changes != before:
                    st.writes += 1
                    wrote = True
            result = spec.dump_result(value)
        except ApiError as err:
            st.errors += 1
            self.record_call(name, arguments, error=err.code)
            raise render(err, self.error_mode, name) from None
        except ToolError as err:
            st.errors += 1
            code = "UNKNOWN_TOOL" if isinstance(err, CalendarUnknownTool) else err.error_type
            self.record_call(name, arguments, error=code)
            raise
        except (OverflowError, UnicodeEncodeError) as exc:  # the caller's values, not a fault
            st.errors += 1
            self.record_call(name, arguments, error="INVALID_VALUE")
            err = ApiError(
                "INVALID_VALUE",
                "A value of the call is out of the calendar's range "
                f"({type(exc).__name__}: {str(exc)[:120]}).",
                expected="dates between the years 1 and 9999 (after applying the offset), "
                "and text without lone surrogates",
                got=None,
                hint="Use dates in a plausible range, e.g. 2026-03-02T10:00:00-05:00.",
            )
            raise render(err, self.error_mode, name) from None
        except Exception as exc:
            st.errors += 1
            self.record_call(name, arguments, error="INTERNAL")
            log.exception("calendar tool %s failed", name)
            err = ApiError(
                "INTERNAL",
                f"The calendar failed internally ({type(exc).__name__}).",
                expected="a result (the failure is on the calendar's side)",
                got=None,
                hint="This is a fault of the environment, not of your call.",
            )
            raise render(err, self.error_mode, name) from exc
        self.record_call(name, arguments, result=result, wrote=wrote)
        return result

    @staticmethod
    def _validated(spec: ToolSpec, args: dict[str, Any]) -> dict[str, Any]:
        """The method's keyword arguments (our schema walk already accepted `args`)."""
        try:
            return spec.validate(args)
        except InvalidToolArguments as exc:  # a disagreement with the schema walk: still data
            items = exc.detail.get("errors") or [{"field": None, "message": exc.message}]
            raise ApiError.many(
                [
                    ApiError(
                        "TYPE_MISMATCH",
                        f"{e.get('field')}: {e.get('message')}",
                        field=e.get("field"),
                        expected=e.get("type"),
                        got=e.get("got"),
                        hint="Check the argument against the tool's input schema.",
                    )
                    for e in items
                ]
            ) from None

    def _hint_tz(self, args: dict[str, Any]) -> str:
        """The zone hints should quote: the target calendar's if visible, else the user's."""
        raw = args.get("calendarId") if isinstance(args, dict) else None
        if isinstance(raw, str):
            cid = resolve_calendar_id(self.user, raw)
            row = self.store.one("SELECT time_zone FROM calendars WHERE id = ?", (cid,))
            if row is not None and RANK[effective_role(self.store, self.user, cid)] > 0:
                return str(row["time_zone"])
        return self.user_tz()

    # -- finishing ---------------------------------------------------------------------------

    @tool(mode="simulation")
    def finish(
        self,
        status: Annotated[
            FinishStatus,
            Field(
                description="done = the task is complete; cannot_complete = it is impossible "
                "(e.g. no permission); needs_clarification = the request is ambiguous."
            ),
        ],
        summary: Annotated[str, Field(description="What you did, or why you stopped.")],
    ) -> dict[str, Any]:
        """End the episode with an outcome and a short summary."""
        self._state.finish_status = status
        self._state.finish_summary = summary
        self.end_episode()
        return {"status": status, "summary": summary, "episodeDone": True}
