"""The response cache on machines that cannot open the driver's cache file.

A cluster's workers read a **read-only snapshot** of the driver's cache: the driver takes a
consistent copy of the SQLite file (:func:`snapshot_bytes`), ships it once, and each node writes it
to a local file (:func:`materialize`). A worker's :class:`LayeredCache` answers from what it
recorded itself first, then from the snapshot; it never writes the snapshot. Entries recorded in
``write`` mode stay in the worker's memory until the task hands them back
(:meth:`LayeredCache.take_new_entries`); the driver merges them into its cache (first answer wins,
as always). ``strict`` mode still raises on a miss, so it still means zero provider calls.

A snapshot lookup is a local SQLite read (tens of microseconds); the alternative, a Ray actor
serving the driver's cache, costs a round trip per lookup (``benchmarks/bench_scale.py --cache``
prints both).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
import threading
from pathlib import Path
from typing import ClassVar

from omlab.llm.cache import _COLUMNS, CachedResponse, CacheMode, ResponseCache, _entry


def snapshot_bytes(path: str | Path) -> bytes | None:
    """A consistent copy of the cache file at ``path`` (None when there is no such file)."""
    source_path = Path(path)
    if not source_path.exists():
        return None
    with tempfile.TemporaryDirectory(prefix="omlab-cache-") as folder:
        copy = Path(folder) / "snapshot.sqlite"
        source = sqlite3.connect(f"file:{source_path}?mode=ro", uri=True)
        target = sqlite3.connect(copy)
        try:
            source.backup(target)  # sees committed WAL pages too
            target.execute("PRAGMA journal_mode=DELETE")
        finally:
            target.close()
            source.close()
        return copy.read_bytes()


def materialize(data: bytes, folder: str | Path | None = None) -> Path:
    """Write snapshot ``data`` once per machine (named by its digest) and return the file."""
    digest = hashlib.sha256(data).hexdigest()[:24]
    base = Path(folder or tempfile.gettempdir()) / "omlab-cache-snapshots"
    base.mkdir(parents=True, exist_ok=True)
    path = base / f"{digest}.sqlite"
    if not path.exists():
        partial = base / f"{digest}.{os.getpid()}.{threading.get_ident()}.part"
        partial.write_bytes(data)
        os.replace(partial, path)  # atomic: a concurrent reader sees all of it or nothing
    return path


class LayeredCache(ResponseCache):
    """A response cache made of this process's new entries over a read-only snapshot file.

    ``LayeredCache(snapshot, mode)``: ``snapshot`` None means an empty snapshot.
    """

    _by_process: ClassVar[dict[tuple[str | None, str], LayeredCache]] = {}

    def __init__(self, snapshot: str | Path | None, mode: CacheMode = "write") -> None:
        super().__init__(None, mode)
        self.snapshot = Path(snapshot) if snapshot is not None else None
        self._base: sqlite3.Connection | None = None
        self._recorded: dict[str, CachedResponse] = {}
        self._handed_back: set[str] = set()

    @classmethod
    def for_process(cls, snapshot: str | Path | None, mode: CacheMode) -> LayeredCache:
        """The one layered cache of this process for ``snapshot`` and ``mode``: every client of a
        task records into it, so the task can hand back all its new entries."""
        key = (str(snapshot) if snapshot is not None else None, mode)
        if key not in cls._by_process:
            cls._by_process[key] = cls(snapshot, mode)
        return cls._by_process[key]

    def get(self, key: str) -> CachedResponse | None:
        with self._lock:
            entry = self._recorded.get(key)
        if entry is not None or self.snapshot is None:
            return entry
        with self._lock:
            if self._base is None:
                # immutable: no journal, no lock, no write ever reaches the shared snapshot file
                uri = f"file:{self.snapshot}?mode=ro&immutable=1"
                self._base = sqlite3.connect(uri, uri=True, check_same_thread=False)
            row = self._base.execute(f"SELECT {_COLUMNS} FROM responses WHERE key = ?", (key,)).fetchone()
        return _entry(row) if row is not None else None

    def store(self, entry: CachedResponse) -> bool:
        if not self.writes_enabled or self.get(entry.key) is not None:
            return False
        with self._lock:
            self._recorded.setdefault(entry.key, entry)
            self._writes += 1
        return True

    def take_new_entries(self) -> list[CachedResponse]:
        """The entries recorded since the last call (still served here afterwards)."""
        with self._lock:
            entries = [entry for key, entry in self._recorded.items() if key not in self._handed_back]
            self._handed_back.update(entry.key for entry in entries)
        return entries

    def __getstate__(self) -> dict[str, object]:
        return {"path": self.snapshot, "mode": self.mode}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(state["path"], state["mode"])  # type: ignore[misc,arg-type]

    def __repr__(self) -> str:
        return f"LayeredCache({str(self.snapshot)!r}, mode={self.mode!r})"


def merge_entries(cache: ResponseCache, entries: list[CachedResponse]) -> int:
    """Store workers' new ``entries`` in the driver's ``cache``; how many were new there."""
    return sum(cache.store(entry) for entry in entries)


__all__ = ["LayeredCache", "materialize", "merge_entries", "snapshot_bytes"]
