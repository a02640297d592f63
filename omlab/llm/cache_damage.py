"""A damaged response cache file: detected, named, removable.

A cache file can be truncated by a full disk, overwritten by another program or be something else
altogether. SQLite then answers every statement with "file is not a database" or "database disk
image is malformed", which on its own names no file. Here such errors become
:class:`CorruptCacheError` naming the file and the command that removes it;
:func:`check_cache_file` finds the damage before a run starts and :func:`remove_cache_file` is what
``omlab cache clear`` does with a damaged file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

_BUSY_TIMEOUT_S = 60.0


class CorruptCacheError(ValueError):
    """The response cache file is not a readable SQLite database (truncated, overwritten, not a
    cache at all). Names the file and how to remove it; ``path`` is that file."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(
            f"response cache {path} is damaged ({reason}); remove it with "
            "'omlab cache clear --responses' (with the same --results) or delete the file"
        )
        self.path = Path(path)


def check_cache_file(path: Path | str) -> None:
    """Raise :class:`CorruptCacheError` when the cache file at ``path`` exists but is no readable
    SQLite database (a missing file is fine: it is created on first use)."""
    path = Path(path).expanduser()
    if not path.exists():
        return
    try:
        with damage_named(path):
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=_BUSY_TIMEOUT_S)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'responses'").fetchone():
                    conn.execute("SELECT max(rowid) FROM responses").fetchone()
            finally:
                conn.close()
    except sqlite3.OperationalError:
        return  # locked or busy: a live writer, not damage; the run's own connection waits


def remove_cache_file(path: Path | str) -> list[Path]:
    """Delete the cache file at ``path`` and its ``-wal`` / ``-shm`` companions; the paths removed."""
    path = Path(path).expanduser()
    removed = []
    for suffix in ("", "-wal", "-shm"):
        candidate = path.with_name(path.name + suffix)
        if candidate.exists():
            candidate.unlink()
            removed.append(candidate)
    return removed


class damage_named:
    """Turns SQLite's "file is not a database" / "malformed" errors into :class:`CorruptCacheError`
    naming the file (a locked database is not damage and passes through)."""

    def __init__(self, path: Path | str | None) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, _tb: object) -> None:
        damaged = isinstance(error, sqlite3.DatabaseError) and (
            not isinstance(error, sqlite3.OperationalError) or "malformed" in str(error)
        )
        if damaged and self.path is not None:
            raise CorruptCacheError(self.path, str(error)) from error


__all__ = ["CorruptCacheError", "check_cache_file", "damage_named", "remove_cache_file"]
