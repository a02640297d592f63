"""Implementations of the engine's storage protocol (:class:`omlab.engine.storage.Storage`).

* :class:`InMemoryStorage`: dicts, for tests and single runs.
* :class:`DuckDBStorage`: a DuckDB file that survives restarts.
* :func:`open_storage`: pick one from a spec (None, ``"memory"``, a ``.duckdb``/``.db`` path, or a
  storage object).
"""

from __future__ import annotations

from pathlib import Path

from omlab.engine.storage import Storage
from omlab.storage.duckdb_store import DuckDBStorage, SchemaVersionError, StorageLockedError
from omlab.storage.memory_store import InMemoryStorage

__all__ = [
    "DuckDBStorage",
    "InMemoryStorage",
    "SchemaVersionError",
    "StorageLockedError",
    "open_storage",
]

_DUCKDB_SUFFIXES = (".duckdb", ".db")


def open_storage(spec: str | Path | Storage | None) -> Storage:
    """Return the storage ``spec`` names.

    * ``None`` or ``"memory"`` → a new :class:`InMemoryStorage`;
    * a path (``str`` or ``Path``) ending in ``.duckdb`` or ``.db`` → :class:`DuckDBStorage` on
      that file (created, with its parent folders, if missing);
    * an object that already implements the storage protocol → returned as is.

    Anything else raises ``ValueError`` naming the spec.
    """
    if spec is None or (isinstance(spec, str) and spec == "memory"):
        return InMemoryStorage()
    if isinstance(spec, (str, Path)):
        if Path(spec).suffix.lower() in _DUCKDB_SUFFIXES:
            return DuckDBStorage(spec)
        raise ValueError(f"storage spec {str(spec)!r} is neither 'memory' nor a path ending in .duckdb or .db")
    if isinstance(spec, Storage):
        return spec
    raise ValueError(
        f"storage spec {spec!r} (a {type(spec).__name__}) is not None, 'memory', a .duckdb/.db path or a storage object"
    )
