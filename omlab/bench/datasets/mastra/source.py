"""Read-only connections to a Mastra storage database: a LibSQL/SQLite file or PostgreSQL.

``open_source("mastra.db")`` opens the file with SQLite's ``mode=ro`` URI (omlab can never write
to it); ``open_source("postgresql://...")`` connects with psycopg (the ``postgres`` extra) and
runs every query inside a read-only transaction. Both give rows as dicts and say which tables
and columns exist, so :mod:`~omlab.bench.datasets.mastra.schema` checks them the same way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from omlab.bench.datasets.mastra.errors import MastraImportError

POSTGRES_SCHEMES = ("postgres://", "postgresql://")


class Source(Protocol):
    """A read-only Mastra database."""

    location: str
    """The file path, or the URL without its password."""
    dialect: str
    """``sqlite`` or ``postgres``."""

    def tables(self) -> set[str]:
        """Names of the tables."""
        ...

    def columns(self, table: str) -> list[str]:
        """Column names of ``table`` (empty when there is no such table)."""
        ...

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a SELECT (placeholders ``?``), as dicts."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


def is_postgres(location: str) -> bool:
    """Whether ``location`` is a PostgreSQL URL rather than a file."""
    return str(location).startswith(POSTGRES_SCHEMES)


def open_source(location: str | Path) -> Source:
    """A read-only connection to the Mastra database at ``location`` (a file or a postgres URL).

    Raises:
        MastraImportError: no such file, a file that is not an SQLite database, psycopg missing,
            or a server that refuses the connection.
    """
    text = str(location)
    if is_postgres(text):
        return PostgresSource(text)
    return SqliteSource(Path(text))


class SqliteSource:
    """A LibSQL/SQLite file opened read-only (``mode=ro``)."""

    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        self.location = str(path)
        if not path.is_file():
            raise MastraImportError("no such file", file=self.location)
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        self._connection = sqlite3.connect(uri, uri=True)
        self._connection.row_factory = sqlite3.Row
        try:
            self._connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as error:
            self._connection.close()
            raise MastraImportError(f"not an SQLite/LibSQL database ({error})", file=self.location) from None

    def tables(self) -> set[str]:
        return {row[0] for row in self._connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def columns(self, table: str) -> list[str]:
        return [row[1] for row in self._connection.execute("SELECT * FROM pragma_table_info(?)", (table,))]

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        try:
            return [dict(row) for row in self._connection.execute(sql, tuple(params))]
        except sqlite3.OperationalError as error:
            if "decode to UTF-8" not in str(error):
                raise
            raise self._not_utf8(sql, params, str(error)) from None

    def _not_utf8(self, sql: str, params: Sequence[Any], reason: str) -> MastraImportError:
        """The error naming the first row and column whose text is not UTF-8 (read again as bytes)."""
        self._connection.text_factory = bytes
        try:
            for row in self._connection.execute(sql, tuple(params)):
                for column, value in zip(row.keys(), row, strict=True):
                    if not isinstance(value, bytes):
                        continue
                    try:
                        value.decode("utf-8")
                    except UnicodeDecodeError as bad:
                        return MastraImportError(
                            f"text is not UTF-8 (byte 0x{value[bad.start]:02x} at offset {bad.start})",
                            file=self.location,
                            table=_table_of(sql),
                            column=column,
                            **_row_identity(row),
                        )
        finally:
            self._connection.text_factory = str
        return MastraImportError(f"text is not UTF-8 ({reason})", file=self.location, table=_table_of(sql))

    def close(self) -> None:
        self._connection.close()


def _row_identity(row: sqlite3.Row) -> dict[str, str | None]:
    """The thread and message a row read as bytes belongs to: a message row names both, an
    observational-memory record its thread, a thread row itself."""
    keys = row.keys()

    def text(key: str) -> str | None:
        value = row[key] if key in keys else None
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else value

    if "thread_id" in keys:
        return {"thread": text("thread_id"), "message": text("id")}
    if "threadId" in keys:
        return {"thread": text("threadId"), "message": None}
    return {"thread": text("id"), "message": None}


def _table_of(sql: str) -> str | None:
    """The table a simple ``SELECT … FROM <table>`` reads, for error messages."""
    words = sql.replace('"', " ").split()
    lowered = [word.lower() for word in words]
    return words[lowered.index("from") + 1] if "from" in lowered[:-1] else None


class PostgresSource:
    """A PostgreSQL database written by ``@mastra/pg``, read in read-only transactions."""

    dialect = "postgres"

    def __init__(self, url: str, schema: str = "public") -> None:
        try:
            import psycopg
            from psycopg.rows import dict_row
        except ImportError:
            raise MastraImportError(
                "reading PostgreSQL needs psycopg: pip install 'omlab[postgres]'", file=_redact(url)
            ) from None
        self.location = _redact(url)
        self.schema = schema
        try:
            self._connection = psycopg.connect(url, row_factory=dict_row, connect_timeout=10)
        except psycopg.Error as error:
            raise MastraImportError(f"cannot connect: {error}".strip(), file=self.location) from None
        self._connection.read_only = True

    def tables(self) -> set[str]:
        rows = self.query("SELECT table_name FROM information_schema.tables WHERE table_schema = ?", (self.schema,))
        return {row["table_name"] for row in rows}

    def columns(self, table: str) -> list[str]:
        rows = self.query(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? "
            "ORDER BY ordinal_position",
            (self.schema, table),
        )
        return [row["column_name"] for row in rows]

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._connection.transaction(), self._connection.cursor() as cursor:
            cursor.execute(sql.replace("?", "%s"), tuple(params))
            return list(cursor.fetchall())

    def close(self) -> None:
        self._connection.close()


def _redact(url: str) -> str:
    """``url`` without a password (``postgresql://user:***@host/db``)."""
    scheme, _, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if at and ":" in credentials:
        credentials = credentials.split(":", 1)[0] + ":***"
    return f"{scheme}://{credentials}{at}{host}"
