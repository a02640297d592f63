"""The engine receives a store; ``omlab.ObservationalMemory`` opens one from the storage option."""

from __future__ import annotations

import pytest

from omlab import ObservationalMemory
from omlab.engine import memory as engine_memory
from omlab.engine.errors import ConfigError
from omlab.storage import DuckDBStorage, InMemoryStorage

OFFLINE = {"observation": {"model": "omlab/observer"}, "reflection": {"model": "omlab/reflector"}}


def test_the_engine_refuses_a_storage_spec_it_would_have_to_open(tmp_path):
    with pytest.raises(ConfigError) as caught:
        engine_memory.ObservationalMemory(OFFLINE, storage=str(tmp_path / "memory.duckdb"))
    assert caught.value.option == "storage"
    assert "omlab.ObservationalMemory" in str(caught.value)
    assert not (tmp_path / "memory.duckdb").exists()


def test_the_engine_takes_a_store_object():
    store = InMemoryStorage()
    assert engine_memory.ObservationalMemory(OFFLINE, storage=store).storage is store


def test_the_public_class_opens_paths_and_none(tmp_path):
    on_disk = ObservationalMemory(OFFLINE, storage=str(tmp_path / "memory.duckdb"))
    assert isinstance(on_disk.storage, DuckDBStorage)
    assert isinstance(ObservationalMemory(OFFLINE).storage, InMemoryStorage)
    assert isinstance(on_disk, engine_memory.ObservationalMemory)
