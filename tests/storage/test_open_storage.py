"""open_storage: choosing an implementation from a spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from omlab.storage import DuckDBStorage, InMemoryStorage, open_storage


def test_none_and_memory_give_in_memory_storage():
    assert isinstance(open_storage(None), InMemoryStorage)
    assert isinstance(open_storage("memory"), InMemoryStorage)
    assert open_storage(None) is not open_storage(None)


@pytest.mark.parametrize("name", ["state.duckdb", "state.db", "STATE.DuckDB"])
def test_duckdb_paths(tmp_path, name):
    for spec in (str(tmp_path / name), tmp_path / name):
        with open_storage(spec) as store:
            assert isinstance(store, DuckDBStorage)
            assert Path(store.path) == tmp_path / name
    assert (tmp_path / name).exists()


def test_existing_storage_passes_through(tmp_path):
    memory = InMemoryStorage()
    assert open_storage(memory) is memory
    with DuckDBStorage() as duck:
        assert open_storage(duck) is duck


@pytest.mark.parametrize("spec", ["results.sqlite", "memroy", "", 42, object()])
def test_anything_else_is_rejected_by_name(spec):
    with pytest.raises(ValueError, match="storage spec") as info:
        open_storage(spec)
    if isinstance(spec, str) and spec:
        assert repr(spec) in str(info.value)
