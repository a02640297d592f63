"""Opening run files: lock errors, retries, damaged files and the schema-version check.

Run files are opened with DuckDB's extension autoloading and autoinstalling off: a foreign file
(an SQLite database renamed ``.duckdb``, say) must be reported as unreadable, never make DuckDB
download an extension to read it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb

from omlab.bench.results.schema import SCHEMA_VERSION, SCHEMA_VERSION_TABLE

_RETRY_PAUSE_S = 0.05
# DuckDB lets a second read-write connection in the same process share an open file, so the
# one-writer-per-run rule is enforced here for writers of this process.
_OPEN_IN_THIS_PROCESS: set[Path] = set()
_OPEN_IN_THIS_PROCESS_LOCK = threading.Lock()

#: DuckDB settings for every results connection: no extension is ever loaded or fetched implicitly.
NO_EXTENSION_AUTOLOAD = {"autoload_known_extensions": False, "autoinstall_known_extensions": False}


class RunLockedError(RuntimeError):
    """The run file is held by a writer (another process, or this one with other settings)."""


class ResultsSchemaError(RuntimeError):
    """The run file is not a results file this omlab can read (other schema version, or broken)."""


class UnreadableRunError(ResultsSchemaError):
    """The run file is damaged or is not a DuckDB database (truncated, corrupted, empty, foreign).

    ``path`` is the file and ``problem`` says what is wrong with it, in one line."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"run file {path} is not a readable DuckDB file: {problem}")
        self.path = path
        self.problem = problem


def describe_damage(error: BaseException) -> str:
    """One line saying what DuckDB found wrong with a file (for :class:`UnreadableRunError`)."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    lowered = text.lower()
    if "not a valid duckdb database" in lowered:
        return "empty or not a DuckDB database file"
    if "extension" in lowered:
        return "not a DuckDB database file (another format)"
    if "could not read enough bytes" in lowered:
        return f"truncated ({text})"
    if "corrupt" in lowered or "checksum" in lowered:
        return f"corrupted ({text})"
    return text


def is_lock_error(error: BaseException) -> bool:
    """Whether DuckDB refused to open a file because someone else holds it.

    Another process holding the file raises ``IOException`` ("Could not set lock"); this
    process holding it with other settings (read-write vs read-only) raises
    ``ConnectionException``.
    """
    if isinstance(error, duckdb.ConnectionException):
        return "different configuration" in str(error)
    return isinstance(error, duckdb.IOException) and "lock" in str(error).lower()


def open_run_file(path: Path, *, read_only: bool, lock_timeout: float = 0.0) -> duckdb.DuckDBPyConnection:
    """A connection to the run file ``path`` (session time zone UTC).

    Args:
        path: The ``.duckdb`` file; created when missing unless ``read_only``.
        read_only: Open for reading only (never blocks other readers).
        lock_timeout: Seconds to keep retrying while the file is locked.

    Raises:
        FileNotFoundError: ``read_only`` and the file does not exist.
        RunLockedError: Still locked after ``lock_timeout`` seconds.
        UnreadableRunError: The file is damaged or not a DuckDB database.
    """
    if read_only and not path.is_file():
        raise FileNotFoundError(f"run file {path} does not exist")
    deadline = time.monotonic() + lock_timeout
    while True:
        try:
            connection = duckdb.connect(str(path), read_only=read_only, config=NO_EXTENSION_AUTOLOAD)
        except duckdb.Error as error:
            if not is_lock_error(error):
                raise UnreadableRunError(path, describe_damage(error)) from error
            if time.monotonic() >= deadline:
                raise RunLockedError(
                    f"run file {path} is held by a writer (another process, or this one with other "
                    f"settings); DuckDB said: {error}"
                ) from error
            time.sleep(_RETRY_PAUSE_S)
            continue
        connection.execute("SET TimeZone = 'UTC'")
        return connection


def check_schema_version(connection: duckdb.DuckDBPyConnection, path: Path) -> int:
    """The results schema version of ``path`` (1 up to ``SCHEMA_VERSION``).

    Raises:
        ResultsSchemaError: Not a results file, or one from a newer omlab.
    """
    try:
        rows = connection.execute(f"SELECT max(version) FROM {SCHEMA_VERSION_TABLE}").fetchall()
    except duckdb.CatalogException:
        raise ResultsSchemaError(
            f"{path} is not an omlab results file (no {SCHEMA_VERSION_TABLE} table); it may be a "
            f"run whose writer died while creating it"
        ) from None
    except duckdb.Error as error:
        raise UnreadableRunError(path, describe_damage(error)) from error
    version = rows[0][0] if rows else None
    if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
        raise ResultsSchemaError(
            f"{path} uses results schema version {version}; this omlab reads versions 1 to {SCHEMA_VERSION}"
            + (" (upgrade omlab to read it)" if isinstance(version, int) and version > SCHEMA_VERSION else "")
        )
    return version


def claim_for_writing(path: Path) -> None:
    """Record that this process has a writer for ``path``; a second one is a :class:`RunLockedError`."""
    with _OPEN_IN_THIS_PROCESS_LOCK:
        if path.resolve() in _OPEN_IN_THIS_PROCESS:
            raise RunLockedError(f"run file {path} already has a writer in this process")
        _OPEN_IN_THIS_PROCESS.add(path.resolve())


def release_writing(path: Path) -> None:
    """Undo :func:`claim_for_writing` (the writer of ``path`` closed)."""
    with _OPEN_IN_THIS_PROCESS_LOCK:
        _OPEN_IN_THIS_PROCESS.discard(path.resolve())


def run_transaction(connection: duckdb.DuckDBPyConnection, statements: Iterable[str | tuple[str, list[Any]]]) -> None:
    """Execute ``statements`` (SQL, or SQL with parameters) in one transaction, rolled back on error."""
    connection.execute("BEGIN TRANSACTION")
    try:
        for statement in statements:
            sql, parameters = (statement, None) if isinstance(statement, str) else statement
            connection.execute(sql, parameters)
        connection.execute("COMMIT")
    except BaseException:
        rollback(connection)
        raise


def rollback(connection: duckdb.DuckDBPyConnection) -> None:
    """Roll back the open transaction, if there is one left to roll back."""
    try:
        connection.execute("ROLLBACK")
    except duckdb.Error:
        pass
