"""Opening run files: lock errors, retries and the schema-version check."""

from __future__ import annotations

import time
from pathlib import Path

import duckdb

from omlab.bench.results.schema import SCHEMA_VERSION, SCHEMA_VERSION_TABLE

_RETRY_PAUSE_S = 0.05


class RunLockedError(RuntimeError):
    """The run file is held by a writer (another process, or this one with other settings)."""


class ResultsSchemaError(RuntimeError):
    """The run file is not a results file this omlab can read (other schema version, or broken)."""


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
    """
    if read_only and not path.is_file():
        raise FileNotFoundError(f"run file {path} does not exist")
    deadline = time.monotonic() + lock_timeout
    while True:
        try:
            connection = duckdb.connect(str(path), read_only=read_only)
        except (duckdb.IOException, duckdb.ConnectionException) as error:
            if not is_lock_error(error):
                raise
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
    version = rows[0][0] if rows else None
    if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
        raise ResultsSchemaError(
            f"{path} uses results schema version {version}; this omlab reads versions 1 to {SCHEMA_VERSION}"
            + (" (upgrade omlab to read it)" if isinstance(version, int) and version > SCHEMA_VERSION else "")
        )
    return version
