"""What is particular to DuckDBStorage: files, restarts, locks, schema versions and speed."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

import duckdb
import pytest

from omlab.engine.messages import Message, Part
from omlab.storage import DuckDBStorage, SchemaVersionError, StorageLockedError

from .samples import at, make_record, make_thread, rich_message, snapshot, text_message


def fill(store: DuckDBStorage) -> None:
    store.save_thread(make_thread("t1", om={"currentTask": "résumé ✍", "lastObservedAt": "2024-05-01"}))
    store.save_thread(make_thread("t2", seconds=5))
    store.save_messages([rich_message(), *[text_message(f"m{i}", i, f"line {i} 🌍") for i in range(5)]])
    store.save_record(make_record("rec-0", 0, superseded_by="rec-1"))
    store.save_record(make_record("rec-1", 1, superseded_by="rec-2"))
    store.save_record(make_record("rec-2", 2))
    store.save_record(make_record("res-0", 0, scope="resource", thread_id=None, resource_id="r1"))


def test_state_survives_closing_and_reopening(tmp_path):
    path = tmp_path / "state.duckdb"
    with DuckDBStorage(path) as store:
        fill(store)
        before = {
            "threads": [snapshot(t) for t in store.list_threads("r1")],
            "messages": [snapshot(m) for m in store.get_messages("t1")],
            "history": [snapshot(r) for r in store.get_history("thread", "t1", None)],
            "head": snapshot(store.get_head_record("thread", "t1", None)),
            "resource_head": snapshot(store.get_head_record("resource", None, "r1")),
        }
    assert store.__repr__().endswith("closed)")

    with DuckDBStorage(path) as reopened:
        assert [snapshot(t) for t in reopened.list_threads("r1")] == before["threads"]
        assert [snapshot(m) for m in reopened.get_messages("t1")] == before["messages"]
        assert [snapshot(r) for r in reopened.get_history("thread", "t1", None)] == before["history"]
        assert snapshot(reopened.get_head_record("thread", "t1", None)) == before["head"]
        assert snapshot(reopened.get_head_record("resource", None, "r1")) == before["resource_head"]
        # concrete values, not just "equal to before"
        assert reopened.get_head_record("thread", "t1", None).id == "rec-2"
        assert reopened.get_thread("t1").om["currentTask"] == "résumé ✍"
        assert len(reopened.get_messages("t1")) == 6
        assert snapshot(reopened.get_message("msg-rich-✨")) == snapshot(rich_message())
        # and it is still writable
        reopened.save_messages([text_message("m9", 9)])
    with DuckDBStorage(path, read_only=True) as again:
        assert [m.id for m in again.get_messages("t1", after=at(8))] == ["m9", "msg-rich-✨"]


def test_read_only_store_reads_but_refuses_writes(tmp_path):
    path = tmp_path / "state.duckdb"
    with DuckDBStorage(path) as store:
        fill(store)
    with DuckDBStorage(path, read_only=True) as store:
        assert store.get_head_record("thread", "t1", None).id == "rec-2"
        with pytest.raises(PermissionError, match="read_only"):
            store.save_messages([text_message("m1", 1)])
        with pytest.raises(PermissionError, match=str(path)):
            store.clear("thread", "t1", None)


def test_read_only_needs_an_existing_omlab_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.duckdb"):
        DuckDBStorage(tmp_path / "missing.duckdb", read_only=True)
    with pytest.raises(ValueError, match="memory"):
        DuckDBStorage(":memory:", read_only=True)
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    with pytest.raises(SchemaVersionError, match="not an omlab storage file"):
        DuckDBStorage(empty, read_only=True)


def test_newer_schema_is_refused_clearly(tmp_path):
    path = tmp_path / "future.duckdb"
    DuckDBStorage(path).close()
    connection = duckdb.connect(str(path))
    connection.execute("UPDATE omlab_schema SET version = 7")
    connection.close()
    with pytest.raises(SchemaVersionError, match=r"schema version 7.*reads up to version 1") as info:
        DuckDBStorage(path)
    assert str(path) in str(info.value)


def test_foreign_tables_are_not_reused(tmp_path):
    path = tmp_path / "foreign.duckdb"
    connection = duckdb.connect(str(path))
    connection.execute("CREATE TABLE messages (x INTEGER)")
    connection.close()
    with pytest.raises(SchemaVersionError, match="messages.*not written by omlab"):
        DuckDBStorage(path)


def test_file_held_by_another_process_names_the_path(tmp_path):
    path = tmp_path / "held.duckdb"
    DuckDBStorage(path).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('ready', flush=True); sys.stdin.read()",
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(StorageLockedError, match="in use by another process") as info:
            DuckDBStorage(path)
        assert str(path) in str(info.value)
        with pytest.raises(StorageLockedError):
            DuckDBStorage(path, read_only=True)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    DuckDBStorage(path).close()  # free again once the holder is gone


def test_closed_store_says_so(tmp_path):
    store = DuckDBStorage(tmp_path / "s.duckdb")
    store.close()
    store.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        store.get_messages("t1")


def test_creates_missing_parent_folders(tmp_path):
    path = tmp_path / "a" / "b" / "state.duckdb"
    with DuckDBStorage(path) as store:
        store.save_messages([text_message("m1", 1)])
    assert path.exists()


def test_in_memory_database_works():
    with DuckDBStorage() as store:
        fill(store)
        assert store.get_head_record("thread", "t1", None).id == "rec-2"


@pytest.mark.parametrize("batch_size", [2, 30], ids=["row-path", "frame-path"])
def test_text_that_is_not_valid_unicode_is_named(tmp_path, batch_size):
    with DuckDBStorage(tmp_path / "s.duckdb") as store:
        bad = Message(
            id="m-bad",
            role="user",
            parts=[Part(type="text", text="a\ud800b")],
            created_at=at(0),
            thread_id="t1",
        )
        batch = [text_message(f"m-ok{i}", i) for i in range(batch_size - 1)] + [bad]
        with pytest.raises(ValueError, match="'m-bad'.*not valid Unicode"):
            store.save_messages(batch)
        assert store.get_messages("t1") == []  # the batch was rolled back
        store.save_messages(batch[:-1])  # and the store still works
        assert len(store.get_messages("t1")) == batch_size - 1


def test_saving_ten_thousand_messages_twice_upserts(tmp_path):
    # rows per second are benchmarks/bench_storage.py's job
    messages = [
        text_message(f"m{i:05d}", i * 0.5, f"message number {i} with some ordinary text in it") for i in range(10_000)
    ]
    with DuckDBStorage(tmp_path / "speed.duckdb") as store:
        for _ in range(2):  # the second pass is a pure upsert of the same ids
            store.save_messages(messages)
        got = store.get_messages("t1", after=at(0) - timedelta(seconds=1))
    assert len(got) == 10_000 and got[-1].id == "m09999"
    assert [m.id for m in got] == [m.id for m in messages]


def test_same_file_with_other_settings_in_this_process(tmp_path):
    path = tmp_path / "same.duckdb"
    with DuckDBStorage(path) as writer, DuckDBStorage(path) as second_writer:
        writer.save_messages([text_message("m1", 1)])
        assert [m.id for m in second_writer.get_messages("t1")] == ["m1"]
        with pytest.raises(StorageLockedError, match="already open in this process") as info:
            DuckDBStorage(path, read_only=True)
        assert str(path) in str(info.value)
