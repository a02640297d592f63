"""``omlab.ObservationalMemory``: the engine with the store its ``storage`` option names.

The engine (:class:`omlab.engine.memory.ObservationalMemory`) receives a store and never opens
one, so it depends on the storage protocol only. This class is where the two layers meet: it
accepts the documented storage specs (``None`` or ``"memory"`` for in-memory, a ``.duckdb``/``.db``
path, or a store object) and opens them with :func:`omlab.storage.open_storage`.
"""

from __future__ import annotations

from typing import Any

from omlab.engine import memory as engine_memory
from omlab.engine.storage import Storage
from omlab.storage import open_storage


class ObservationalMemory(engine_memory.ObservationalMemory):
    """Observational Memory for threads of a conversation (see the engine's class for every
    option). ``storage`` may be ``None`` (in-memory), ``"memory"``, a ``.duckdb``/``.db`` path or
    a store implementing :class:`omlab.engine.storage.Storage`."""

    @staticmethod
    def _receive_store(spec: Any) -> Storage:
        return open_storage(spec)


__all__ = ["ObservationalMemory"]
