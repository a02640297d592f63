"""Bad input is refused with an error naming the database and the table or thread, before any
replay: not a database, not a Mastra database, a missing table, a newer schema, a newer message
format, an unknown thread, a thread with no messages."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from omlab.bench.datasets.mastra import MastraImportError, read_mastra
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite
from omlab.bench.suite.suite_file import SuiteError, parse_suite


def _alter(path: Path, *statements: str) -> Path:
    with sqlite3.connect(path) as connection:
        for statement in statements:
            connection.execute(statement)
    return path


def test_a_file_that_is_not_a_database(tmp_path):
    text = tmp_path / "notes.db"
    text.write_text("these are not the tables you are looking for\n" * 100)
    with pytest.raises(MastraImportError, match=r"notes\.db: not an SQLite/LibSQL database"):
        read_mastra(text)


def test_an_sqlite_file_that_is_not_a_mastra_database(tmp_path):
    other = _alter(tmp_path / "other.db", "CREATE TABLE orders (id INTEGER)")
    with pytest.raises(MastraImportError, match=r"other\.db: not a Mastra storage database.*found orders"):
        read_mastra(other)


def test_a_missing_table_is_named(recorded_copy):
    _alter(recorded_copy, "DROP TABLE mastra_observational_memory")
    with pytest.raises(MastraImportError, match=r"copy\.db: table mastra_observational_memory: missing table") as error:
        read_mastra(recorded_copy)
    assert error.value.table == "mastra_observational_memory"


def test_a_missing_column_is_named(recorded_copy):
    _alter(
        recorded_copy,
        "DROP INDEX idx_messages_thread_resource_created_at",
        'ALTER TABLE mastra_messages DROP COLUMN "resourceId"',
    )
    with pytest.raises(MastraImportError, match=r"table mastra_messages: missing column\(s\) resourceId"):
        read_mastra(recorded_copy)


def test_a_newer_schema_is_refused_rather_than_imported_with_a_loss(recorded_copy):
    _alter(recorded_copy, 'ALTER TABLE mastra_messages ADD COLUMN "embedding" TEXT')
    with pytest.raises(MastraImportError, match=r"table mastra_messages: column\(s\) omlab does not know: embedding"):
        read_mastra(recorded_copy)


def test_a_newer_message_format_names_the_thread_and_message(recorded_copy):
    _alter(
        recorded_copy,
        "UPDATE mastra_messages SET content = json_set(content, '$.format', 3) WHERE id = 'support-3-m007'",
    )
    with pytest.raises(
        MastraImportError, match=r"thread 'support-3': message 'support-3-m007': column content\.format"
    ):
        read_mastra(recorded_copy)


def test_text_that_is_not_utf8_names_the_message_and_column(recorded_copy):
    # a message whose stored text holds a Latin-1 byte (0xe9), as a non-UTF-8 writer leaves it
    _alter(
        recorded_copy,
        "UPDATE mastra_messages SET content = CAST(X'7b2274657874223a22e9227d' AS TEXT) WHERE id = 'support-3-m007'",
    )
    with pytest.raises(
        MastraImportError,
        match=r"copy\.db: table mastra_messages: thread 'support-3': message 'support-3-m007': column content: "
        r"text is not UTF-8 \(byte 0xe9 at offset 9\)",
    ):
        read_mastra(recorded_copy)


def test_an_unknown_thread_and_a_thread_with_no_messages_are_named(recorded):
    with pytest.raises(MastraImportError, match=r"thread 'nope': no such thread in table mastra_threads") as error:
        read_mastra(recorded, threads=["support-1", "nope"])
    assert error.value.thread == "nope"
    with pytest.raises(MastraImportError, match=r"thread 'support-4': no messages in table mastra_messages"):
        read_mastra(recorded, threads="support-4")


def test_a_suite_on_a_bad_database_fails_before_any_replay(recorded_copy, tmp_path):
    _alter(recorded_copy, "DROP TABLE mastra_messages")
    suite = parse_suite(
        {"suite": {"name": "bad-mastra"}, "dataset": {"kind": "mastra", "path": str(recorded_copy)}},
        source="bad.toml",
    )
    results = tmp_path / "results"
    with pytest.raises(SuiteError, match=r"bad\.toml: \[dataset\]: .*copy\.db: table mastra_messages: missing table"):
        run_suite(suite, RunOptions(results_dir=results, workers=1))
    assert not list(results.glob("**/*.duckdb"))
