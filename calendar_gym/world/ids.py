"""Stable ids of the seed world: its version and how calendar and event keys become ids.

Its own module so that `seed_world` (people, calendars) and `seed_events` (events) both use it
without importing each other.

Example:
    >>> calendar_id("marketing").endswith("@group.calendar.google.com"), len(event_id("x"))
    (True, 26)
"""

from __future__ import annotations

import hashlib

__all__ = ["WORLD_VERSION", "calendar_id", "event_id", "listing_key"]

WORLD_VERSION = "1"
"""The seed world's version; anything that changes a row bumps it."""


def calendar_id(key: str) -> str:
    """The stable id of seed calendar `key` (Google-style secondary calendar id)."""
    digest = hashlib.sha256(f"calendar-gym/{WORLD_VERSION}/calendar/{key}".encode()).hexdigest()
    return f"c_{digest[:24]}@group.calendar.google.com"


def event_id(key: str) -> str:
    """The stable id of seed event `key` (base32hex, as Google requires)."""
    digest = hashlib.sha256(f"calendar-gym/{WORLD_VERSION}/event/{key}".encode()).hexdigest()
    return digest[:26]


def listing_key(salt: str, ident: str) -> str:
    """The sort key of item `ident` in a list whose order Google leaves unspecified, under an
    episode's `salt` (`"{seed}/{task}"`, suite v3): lists, search results and the candidates an
    error's hint offers come in an order no list position can learn."""
    return hashlib.sha256(f"{salt}/{ident}".encode()).hexdigest()
