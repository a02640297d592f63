from __future__ import annotations

import pytest

from omlab.storage import DuckDBStorage, InMemoryStorage


@pytest.fixture(params=["memory", "duckdb"])
def store(request, tmp_path):
    """Each implementation of the storage protocol, fresh (DuckDB on a real file)."""
    if request.param == "memory":
        storage = InMemoryStorage()
    else:
        storage = DuckDBStorage(tmp_path / "store.duckdb")
    yield storage
    storage.close()
