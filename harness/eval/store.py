"""`episodes.jsonl`: one `EpisodeRecord` per line, appended and flushed as each episode ends.

A killed run leaves every finished episode on disk and at most one partial last line.
`EpisodeStore.load` reads the file back, cuts off such a partial line (so the next append starts
on a fresh line), and tells the runner which spec ids are done; a resumed run plays only the
others. When every spec has a record, `finalize` rewrites the file once, atomically, in spec
order, so two runs with the same seeds leave identical files (apart from `timing`) whatever
order concurrent episodes finished in.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "episodes.jsonl"
    >>> store = EpisodeStore(path)
    >>> store.load()
    {}
    >>> store.append(EpisodeRecord(spec_id="a", group="a", agent="x", done_reason="done"))
    >>> store.close()
    >>> with path.open("a") as fh:
    ...     _ = fh.write('{"spec_id": "b", "gro')  # a kill mid-write
    >>> sorted(EpisodeStore(path).load())
    ['a']
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from mcpgym.harness.episodes import EpisodeRecord

__all__ = ["CorruptEpisodes", "EpisodeStore"]

log = logging.getLogger("mcpgym.harness")


class CorruptEpisodes(ValueError):
    """A line other than the last of `episodes.jsonl` is not a valid record."""


class EpisodeStore:
    """Reads, appends to and finalizes one `episodes.jsonl`.

    Args:
        path: the file (created with its folder on the first append).
        fsync: also `fsync` after every record (survives power loss, not only a killed process).
    """

    def __init__(self, path: Path | str, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._fh: IO[str] | None = None

    def load(self) -> dict[str, EpisodeRecord]:
        """The records on disk by spec id (the first wins if an id repeats).

        A partial last line (a killed writer) is removed from the file; a bad line elsewhere
        raises `CorruptEpisodes`.
        """
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        complete = data[: data.rfind(b"\n") + 1]  # records never contain a raw newline
        if len(complete) < len(data):
            tail = len(data) - len(complete)
            log.warning("%s: dropping a partial last line (%d bytes)", self.path, tail)
            with self.path.open("r+b") as fh:
                fh.truncate(len(complete))
        records: dict[str, EpisodeRecord] = {}
        for number, line in enumerate(complete.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = EpisodeRecord.model_validate_json(line)
            except ValidationError as exc:
                raise CorruptEpisodes(
                    f"{self.path}:{number}: not an episode record: {exc}"
                ) from None
            if record.spec_id in records:
                log.warning(
                    "%s: spec id %r recorded twice; keeping the first", self.path, record.spec_id
                )
                continue
            records[record.spec_id] = record
        return records

    def append(self, record: EpisodeRecord) -> None:
        """Write one record as one line and flush it."""
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("a", encoding="utf-8")
        self._fh.write(record.model_dump_json() + "\n")
        self._fh.flush()
        if self.fsync:
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        """Close the file (appending again reopens it)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def finalize(self, records: Iterable[EpisodeRecord]) -> None:
        """Replace the file, atomically, with exactly `records` in the given order."""
        self.close()
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for record in records:
                fh.write(record.model_dump_json() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
