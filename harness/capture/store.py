"""Per-episode keys and the calls recorded under each (thread-safe: the proxy may serve from its
own thread while a test or an adapter reads from another).

Example:
    >>> store = CallStore()
    >>> key = store.new_key(label="episode-1")
    >>> key.startswith("mcpgym-"), store.calls(key), store.label(key)
    (True, [], 'episode-1')
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from mcpgym.harness.capture.records import LLMCall

__all__ = ["CallListener", "CallStore", "UnknownKeyError"]

CallListener = Callable[[Literal["request", "response"], LLMCall], None]
"""Called when a call of the episode starts (`"request"`) and when it ends (`"response"`). It runs
on the proxy's event loop thread, so it must not block; hand work to your own loop with
`loop.call_soon_threadsafe` if the proxy runs in a thread."""


class UnknownKeyError(KeyError):
    """The API key was not issued by this proxy (or its episode was dropped)."""


@dataclass
class _Episode:
    label: str
    listener: CallListener | None
    calls: list[LLMCall] = field(default_factory=list[LLMCall])


class CallStore:
    def __init__(self, *, accept_unknown_keys: bool = False) -> None:
        self._episodes: dict[str, _Episode] = {}
        self._lock = threading.Lock()
        self.accept_unknown_keys = accept_unknown_keys

    def new_key(self, *, label: str = "", listener: CallListener | None = None) -> str:
        key = f"mcpgym-{secrets.token_hex(16)}"
        with self._lock:
            self._episodes[key] = _Episode(label, listener)
        return key

    def known(self, key: str) -> bool:
        with self._lock:
            if key and key not in self._episodes and self.accept_unknown_keys:
                self._episodes[key] = _Episode("", None)
            return key in self._episodes

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._episodes)

    def label(self, key: str) -> str:
        return self._get(key).label

    def calls(self, key: str) -> list[LLMCall]:
        """A snapshot of the episode's calls, oldest first (calls in flight: `done == False`)."""
        with self._lock:
            return list(self._get(key).calls)

    def drop(self, key: str) -> list[LLMCall]:
        """Forget the key (later calls with it get 401) and return its calls."""
        with self._lock:
            episode = self._episodes.pop(key, None)
        if episode is None:
            raise UnknownKeyError(key)
        return episode.calls

    def begin(self, call: LLMCall) -> LLMCall:
        with self._lock:
            episode = self._get(call.key)
            call.index = len(episode.calls)
            episode.calls.append(call)
        self._notify(episode, "request", call)
        return call

    def end(self, call: LLMCall) -> None:
        with self._lock:
            episode = self._episodes.get(call.key)
        if episode is not None:
            self._notify(episode, "response", call)

    def _get(self, key: str) -> _Episode:
        try:
            return self._episodes[key]
        except KeyError:
            raise UnknownKeyError(key) from None

    @staticmethod
    def _notify(episode: _Episode, phase: Literal["request", "response"], call: LLMCall) -> None:
        if episode.listener is not None:
            episode.listener(phase, call)
