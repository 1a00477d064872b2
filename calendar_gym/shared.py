"""Shared worlds: one live database that several sessions (users) act on together.

Simulation sessions each get a private copy of the world. A live service is different: in
production mode the server builds one `CalendarEnv` per authenticated principal, and a calendar
Alice shares must become readable by Bob, so those instances attach to one shared `Store` by key.
The registry counts references; the world is closed when the last session detaches.

Example:
    >>> from calendar_gym.store import Store
    >>> a = SHARED_WORLDS.acquire("demo", lambda: Store.create(now="2026-03-04T14:00:00Z"))
    >>> b = SHARED_WORLDS.acquire("demo", lambda: Store.create(now="2026-03-04T14:00:00Z"))
    >>> a is b
    True
    >>> SHARED_WORLDS.release("demo"); SHARED_WORLDS.release("demo"); "demo" in SHARED_WORLDS
    False
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from calendar_gym.store import Store

__all__ = ["SHARED_WORLDS", "SharedWorlds"]


class SharedWorlds:
    """A process-wide, reference-counted registry of shared stores."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._worlds: dict[str, tuple[Store, int]] = {}

    def acquire(self, key: str, create: Callable[[], Store]) -> Store:
        """The store registered under `key`, created by `create()` on first use."""
        with self._lock:
            found = self._worlds.get(key)
            store = found[0] if found else create()
            self._worlds[key] = (store, (found[1] if found else 0) + 1)
            return store

    def release(self, key: str) -> None:
        """Detach one session; the last one closes the store."""
        with self._lock:
            found = self._worlds.get(key)
            if found is None:
                return
            store, count = found
            if count <= 1:
                del self._worlds[key]
                store.close()
            else:
                self._worlds[key] = (store, count - 1)

    def __contains__(self, key: object) -> bool:
        return key in self._worlds


SHARED_WORLDS = SharedWorlds()
