"""A DuckDB-file implementation of the engine's storage protocol.

Layout (schema version 1): ``threads``, ``messages`` and ``om_records`` each keep the columns the
queries filter and sort on, plus the whole object as a JSON ``payload`` written by
:mod:`omlab.storage.serialize` (the payload is the source of truth when reading). ``omlab_schema``
holds the schema version.

DuckDB lets one process hold a file for writing, and while it does no other process can open it,
even read-only. Give each concurrent process its own file.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Self

import duckdb
import pandas as pd

from omlab.engine.messages import Message, utc
from omlab.engine.record import ObservationRecord, Thread
from omlab.storage.record_key import key_of_record, record_key
from omlab.storage.serialize import (
    message_from_dict,
    message_to_dict,
    record_from_dict,
    record_to_dict,
    thread_from_dict,
    thread_to_dict,
)

SCHEMA_VERSION = 1

_SCHEMA_TABLE = "omlab_schema"
_DATA_TABLES = ("threads", "messages", "om_records")
_DDL = (
    f"CREATE TABLE {_SCHEMA_TABLE} (version INTEGER NOT NULL)",
    """CREATE TABLE threads (
        id VARCHAR PRIMARY KEY,
        resource_id VARCHAR,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        payload JSON NOT NULL
    )""",
    """CREATE TABLE messages (
        id VARCHAR PRIMARY KEY,
        thread_id VARCHAR,
        resource_id VARCHAR,
        role VARCHAR NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        payload JSON NOT NULL
    )""",
    "CREATE INDEX messages_thread_created ON messages (thread_id, created_at)",
    """CREATE TABLE om_records (
        id VARCHAR PRIMARY KEY,
        scope VARCHAR NOT NULL,
        thread_id VARCHAR,
        resource_id VARCHAR,
        generation_count INTEGER NOT NULL,
        superseded_by VARCHAR,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        payload JSON NOT NULL
    )""",
    "CREATE INDEX om_records_key ON om_records (scope, thread_id, resource_id)",
)

# The SQL condition selecting one record key; parameter: the thread or resource id.
_KEY_CONDITION = {
    "thread": "scope = 'thread' AND thread_id = ?",
    "resource": "scope = 'resource' AND resource_id = ? AND thread_id IS NULL",
}

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_INCOMING = "omlab_incoming_messages"
#: batches up to this size are written row by row (see ``save_messages``)
_SMALL_BATCH = 8


class StorageLockedError(RuntimeError):
    """The DuckDB file is held by another process (or by this one with other settings)."""


class SchemaVersionError(RuntimeError):
    """The DuckDB file was written with a schema this omlab cannot read."""


def _dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _first_row(result: duckdb.DuckDBPyConnection) -> tuple[Any, ...] | None:
    # fetchall, not fetchone: DuckDB 2 refuses new work on a connection with an unfinished result
    rows = result.fetchall()
    return rows[0] if rows else None


def _epoch_micros(moment: datetime) -> int:
    return (utc(moment) - _EPOCH) // _MICROSECOND


class DuckDBStorage:
    """Threads, messages and observation records in a DuckDB file (or ``":memory:"``).

    Every read returns fresh objects decoded from storage, so mutating them changes nothing
    until they are saved. One connection per store, guarded by a lock: safe to share between
    threads. Use as a context manager or call :meth:`close`; state survives closing and
    reopening the file.

    Raises :class:`StorageLockedError` when another process holds the file and
    :class:`SchemaVersionError` when the file comes from a newer omlab.
    """

    def __init__(self, path: str | Path = ":memory:", *, read_only: bool = False) -> None:
        self.in_memory = str(path) == ":memory:"
        self.path: str | Path = path if self.in_memory else Path(path).expanduser()
        self.read_only = read_only
        self._lock = threading.RLock()
        self._connection: duckdb.DuckDBPyConnection | None = self._connect()
        try:
            self._connection.execute("SET TimeZone = 'UTC'")
            self._prepare_schema()
        except BaseException:
            self._connection.close()
            self._connection = None
            raise

    # ------------------------------------------------------------------ lifecycle

    def _connect(self) -> duckdb.DuckDBPyConnection:
        if self.in_memory:
            if self.read_only:
                raise ValueError("DuckDBStorage(':memory:') cannot be opened read_only")
            return duckdb.connect(":memory:")
        path = Path(self.path)
        if path.exists() and path.is_dir():
            raise IsADirectoryError(f"DuckDB storage path {path} is a directory, not a file")
        if self.read_only and not path.exists():
            raise FileNotFoundError(f"DuckDB storage file {path} does not exist (opened read_only)")
        if not self.read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return duckdb.connect(str(path), read_only=self.read_only)
        except duckdb.IOException as error:
            if "lock" in str(error).lower():
                raise StorageLockedError(
                    f"DuckDB storage file {path} is in use by another process; a DuckDB file can be "
                    f"open in only one process at a time (close it there or use another file). "
                    f"DuckDB said: {error}"
                ) from error
            raise
        except duckdb.ConnectionException as error:
            raise StorageLockedError(
                f"DuckDB storage file {path} is already open in this process with different "
                f"settings (read_only={not self.read_only}); close that store first. "
                f"DuckDB said: {error}"
            ) from error

    def close(self) -> None:
        """Close the connection (idempotent). Later calls raise ``RuntimeError``."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._connection is None else ("read-only" if self.read_only else "open")
        return f"DuckDBStorage({str(self.path)!r}, {state})"

    def _con(self) -> duckdb.DuckDBPyConnection:
        if self._connection is None:
            raise RuntimeError(f"{self!r} is closed")
        return self._connection

    def _writable(self) -> duckdb.DuckDBPyConnection:
        connection = self._con()
        if self.read_only:
            raise PermissionError(f"DuckDB storage file {self.path} was opened read_only; cannot write")
        return connection

    # ------------------------------------------------------------------ schema

    def _prepare_schema(self) -> None:
        connection = self._con()
        tables = {
            row[0]
            for row in connection.execute(
                "SELECT table_name FROM duckdb_tables() "
                "WHERE database_name = current_database() AND schema_name = 'main'"
            ).fetchall()
        }
        if _SCHEMA_TABLE in tables:
            version = _first_row(connection.execute(f"SELECT max(version) FROM {_SCHEMA_TABLE}"))[0]
            if version is None or version > SCHEMA_VERSION:
                raise SchemaVersionError(
                    f"DuckDB storage file {self.path} has omlab storage schema version {version}; "
                    f"this omlab reads up to version {SCHEMA_VERSION}. Upgrade omlab to open it."
                )
            # (no older versions exist yet; migrations from them would run here)
            return
        clashing = sorted(tables.intersection(_DATA_TABLES))
        if clashing:
            raise SchemaVersionError(
                f"DuckDB file {self.path} has table(s) {', '.join(clashing)} but no {_SCHEMA_TABLE} "
                "table: it was not written by omlab storage; use another file"
            )
        if self.read_only:
            raise SchemaVersionError(
                f"DuckDB file {self.path} is not an omlab storage file (no {_SCHEMA_TABLE} table) "
                "and cannot be initialised read_only"
            )
        with _Transaction(connection):
            for statement in _DDL:
                connection.execute(statement)
            connection.execute(f"INSERT INTO {_SCHEMA_TABLE} VALUES (?)", [SCHEMA_VERSION])

    # ------------------------------------------------------------------ threads

    def get_thread(self, thread_id: str) -> Thread | None:
        """The thread with this id, or None."""
        with self._lock:
            row = _first_row(self._con().execute("SELECT payload FROM threads WHERE id = ?", [thread_id]))
        return None if row is None else thread_from_dict(json.loads(row[0]))

    def save_thread(self, thread: Thread) -> None:
        """Insert or replace the thread with ``thread.id``."""
        payload = _dumps(thread_to_dict(thread))
        with self._lock:
            connection = self._writable()
            with _Transaction(connection):
                connection.execute("DELETE FROM threads WHERE id = ?", [thread.id])
                connection.execute(
                    "INSERT INTO threads VALUES (?, ?, ?, ?, CAST(? AS JSON))",
                    [thread.id, thread.resource_id, utc(thread.created_at), utc(thread.updated_at), payload],
                )

    def list_threads(self, resource_id: str) -> list[Thread]:
        """Threads of a resource, ordered by ``(created_at, id)``."""
        with self._lock:
            rows = (
                self._con()
                .execute("SELECT payload FROM threads WHERE resource_id = ? ORDER BY created_at, id", [resource_id])
                .fetchall()
            )
        return [thread_from_dict(json.loads(row[0])) for row in rows]

    # ------------------------------------------------------------------ messages

    def save_messages(self, messages: list[Message]) -> None:
        """Insert or replace each message by id (the last one wins within a batch), in one
        transaction.

        Large batches go in as one DataFrame scan (row-at-a-time inserts manage ~1k rows/s in
        DuckDB); a few rows, the engine's usual step, go in as plain statements, which skip the
        DataFrame's fixed cost of a few milliseconds.
        """
        latest = {message.id: message for message in messages}
        if not latest:
            return
        batch = list(latest.values())
        rows = [_message_row(message) for message in batch]
        try:
            with self._lock:
                connection = self._writable()
                if len(rows) <= _SMALL_BATCH:
                    self._upsert_message_rows(connection, rows)
                else:
                    self._upsert_message_frame(connection, _message_frame(rows))
        except (duckdb.InvalidInputException, UnicodeEncodeError) as error:
            raise ValueError(_describe_unencodable(batch, error)) from error

    @staticmethod
    def _upsert_message_rows(connection: duckdb.DuckDBPyConnection, rows: list[tuple[Any, ...]]) -> None:
        with _Transaction(connection):
            for row in rows:
                connection.execute("DELETE FROM messages WHERE id = ?", [row[0]])
                connection.execute(
                    "INSERT INTO messages VALUES (?, ?, ?, ?, make_timestamptz(?), CAST(? AS JSON))", row
                )

    @staticmethod
    def _upsert_message_frame(connection: duckdb.DuckDBPyConnection, frame: pd.DataFrame) -> None:
        connection.register(_INCOMING, frame)
        try:
            with _Transaction(connection):
                connection.execute(f"DELETE FROM messages WHERE id IN (SELECT id FROM {_INCOMING})")
                connection.execute(
                    "INSERT INTO messages SELECT id, thread_id, resource_id, role, "
                    f"make_timestamptz(created_us), CAST(payload AS JSON) FROM {_INCOMING}"
                )
        finally:
            connection.unregister(_INCOMING)

    def get_messages(self, thread_id: str, *, after: datetime | None = None, limit: int | None = None) -> list[Message]:
        """Messages of a thread ordered by ``(created_at, id)``; only those with ``created_at``
        strictly after ``after`` when given (naive ``after`` is taken as UTC); at most ``limit``
        (the oldest ones)."""
        if limit is not None and limit < 0:
            raise ValueError(f"get_messages: limit must be >= 0 or None, got {limit}")
        sql = "SELECT payload FROM messages WHERE thread_id = ?"
        params: list[Any] = [thread_id]
        if after is not None:
            sql += " AND created_at > ?"
            params.append(utc(after))
        sql += " ORDER BY created_at, id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self._lock:
            rows = self._con().execute(sql, params).fetchall()
        return [message_from_dict(json.loads(row[0])) for row in rows]

    def get_message(self, message_id: str) -> Message | None:
        """The message with this id, or None."""
        with self._lock:
            row = _first_row(self._con().execute("SELECT payload FROM messages WHERE id = ?", [message_id]))
        return None if row is None else message_from_dict(json.loads(row[0]))

    # ------------------------------------------------------------------ records

    def save_record(self, record: ObservationRecord) -> None:
        """Insert or replace the record with ``record.id``."""
        key_of_record(record)
        payload = _dumps(record_to_dict(record))
        with self._lock:
            connection = self._writable()
            with _Transaction(connection):
                connection.execute("DELETE FROM om_records WHERE id = ?", [record.id])
                connection.execute(
                    "INSERT INTO om_records VALUES (?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS JSON))",
                    [
                        record.id,
                        record.scope,
                        record.thread_id,
                        record.resource_id,
                        record.generation_count,
                        record.superseded_by,
                        utc(record.created_at),
                        utc(record.updated_at),
                        payload,
                    ],
                )

    def get_head_record(self, scope: str, thread_id: str | None, resource_id: str | None) -> ObservationRecord | None:
        """The live generation: ``superseded_by`` NULL, highest ``generation_count`` (ties:
        ``created_at`` then ``id`` ascending), or None."""
        condition, key = self._key_condition(scope, thread_id, resource_id)
        with self._lock:
            row = _first_row(
                self._con().execute(
                    f"SELECT payload FROM om_records WHERE {condition} AND superseded_by IS NULL "
                    "ORDER BY generation_count DESC, created_at, id LIMIT 1",
                    [key],
                )
            )
        return None if row is None else record_from_dict(json.loads(row[0]))

    def get_history(self, scope: str, thread_id: str | None, resource_id: str | None) -> list[ObservationRecord]:
        """Every generation for the key, oldest first: ``(generation_count, created_at, id)``."""
        condition, key = self._key_condition(scope, thread_id, resource_id)
        with self._lock:
            rows = (
                self._con()
                .execute(
                    f"SELECT payload FROM om_records WHERE {condition} ORDER BY generation_count, created_at, id",
                    [key],
                )
                .fetchall()
            )
        return [record_from_dict(json.loads(row[0])) for row in rows]

    def clear(self, scope: str, thread_id: str | None, resource_id: str | None) -> None:
        """Delete every record for this key (threads and messages stay)."""
        condition, key = self._key_condition(scope, thread_id, resource_id)
        with self._lock:
            self._writable().execute(f"DELETE FROM om_records WHERE {condition}", [key])

    @staticmethod
    def _key_condition(scope: str, thread_id: str | None, resource_id: str | None) -> tuple[str, str]:
        scope, key = record_key(scope, thread_id, resource_id)
        return _KEY_CONDITION[scope], key


class _Transaction:
    """``BEGIN`` ... ``COMMIT``, or ``ROLLBACK`` if the block raises."""

    def __init__(self, connection: duckdb.DuckDBPyConnection) -> None:
        self._connection = connection

    def __enter__(self) -> None:
        self._connection.execute("BEGIN TRANSACTION")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._connection.execute("ROLLBACK" if exc_type is not None else "COMMIT")


def _message_row(message: Message) -> tuple[Any, ...]:
    """One row of the ``messages`` table, in column order (created_at as epoch microseconds)."""
    return (
        message.id,
        message.thread_id,
        message.resource_id,
        message.role,
        _epoch_micros(message.created_at),
        _dumps(message_to_dict(message)),
    )


def _message_frame(rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    """``messages`` rows as one DataFrame to scan."""
    return pd.DataFrame(rows, columns=["id", "thread_id", "resource_id", "role", "created_us", "payload"])


def _describe_unencodable(batch: list[Message], error: Exception) -> str:
    """Name the first message whose text cannot be stored (lone surrogates are not UTF-8)."""
    for message in batch:
        try:
            _dumps(message_to_dict(message)).encode("utf-8")
            message.id.encode("utf-8")
        except UnicodeEncodeError:
            return f"message {message.id!r} holds text that is not valid Unicode (a lone surrogate?)"
    return f"DuckDB rejected the message batch: {error}"
