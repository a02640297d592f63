"""Reading a selection of a Mastra database: threads, their messages, and the OM records.

:func:`read_mastra` is the one verb: it opens the database read-only, checks its schema, selects
threads (by resource, thread ids and a date range on the messages) and returns a
:class:`MastraImport` holding every selected message with its parts exactly as stored, the
observational-memory records (every generation of every selected thread or resource), and an
:class:`~omlab.bench.datasets.mastra.summary.ImportSummary`. Every problem is a
:class:`~omlab.bench.datasets.mastra.errors.MastraImportError` naming the table or thread, raised
before anything is replayed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from omlab.bench.datasets.mastra import schema
from omlab.bench.datasets.mastra.errors import MastraImportError
from omlab.bench.datasets.mastra.imported import ImportedMessage, ImportedThread
from omlab.bench.datasets.mastra.source import Source, open_source
from omlab.bench.datasets.mastra.summary import ImportSummary, summarize
from omlab.bench.datasets.mastra.values import json_value, time_value

MESSAGE_FORMAT = 2
"""The stored message format omlab reads (``content.format``; AI-SDK v4/v5 UI parts)."""


@dataclass(frozen=True, slots=True)
class Selection:
    """Which threads and messages to import (every field optional)."""

    resource: str | None = None
    threads: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None

    def describe(self) -> dict[str, Any]:
        """The selection as JSON-ready values (for provenance)."""
        return {
            "resource": self.resource,
            "threads": list(self.threads),
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
        }


@dataclass(frozen=True, slots=True)
class MastraImport:
    """What :func:`read_mastra` read.

    Attributes:
        location: The file, or the URL without its password.
        dialect: ``sqlite`` or ``postgres``.
        selection: What was asked for.
        threads: The selected threads with messages, oldest first.
        om_records: Observational-memory records (one per generation), as dicts of their columns
            with JSON columns decoded and timestamps as datetimes.
        summary: Counts of everything read.
    """

    location: str
    dialect: str
    selection: Selection
    threads: list[ImportedThread]
    om_records: list[dict[str, Any]]
    summary: ImportSummary


def read_mastra(
    location: str | Path,
    *,
    resource: str | None = None,
    threads: Sequence[str] | str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> MastraImport:
    """Read threads, messages and OM records from a Mastra database, read-only.

    Args:
        location: A LibSQL/SQLite file or a ``postgresql://`` URL.
        resource: Only this resource's threads.
        threads: Only these thread ids (each must exist and have messages in the range).
        since: Only messages created at or after this time (aware datetime).
        until: Only messages created before this time.

    Raises:
        MastraImportError: not a Mastra database, a schema omlab does not read, an unknown or
            empty thread, a malformed message; the message names the table or thread.
    """
    wanted = (threads,) if isinstance(threads, str) else tuple(threads or ())
    selection = Selection(resource=resource, threads=wanted, since=since, until=until)
    for name, value in (("since", since), ("until", until)):
        if value is not None and value.tzinfo is None:
            raise ValueError(f"{name} must be timezone-aware, got {value.isoformat()}")
    source = open_source(location)
    try:
        tables = schema.check_schema(source)
        thread_rows = _thread_rows(source, selection)
        imported, empty = [], []
        for row in thread_rows:
            messages = _messages(source, row["id"], selection)
            if not messages:
                if row["id"] in wanted:
                    raise MastraImportError(
                        f"no messages in table {schema.MESSAGES}{_range_note(selection)}",
                        file=source.location,
                        thread=row["id"],
                    )
                empty.append(row["id"])
                continue
            imported.append(
                ImportedThread(
                    id=row["id"],
                    resource_id=row["resourceId"],
                    title=row.get("title") or "",
                    created_at=time_value(row, "createdAt"),
                    updated_at=time_value(row, "updatedAt"),
                    metadata=_json(
                        row.get("metadata"), source, {"table": schema.THREADS, "thread": row["id"]}, "metadata"
                    ),
                    messages=messages,
                )
            )
        if not imported:
            raise MastraImportError(f"no thread with messages matches {selection.describe()}", file=source.location)
        records = _om_records(source, imported)
        n_resources = len(source.query(f"SELECT id FROM {schema.RESOURCES}")) if schema.RESOURCES in tables else 0
    finally:
        source.close()
    summary = summarize(source.location, source.dialect, imported, records, empty, n_resources)
    return MastraImport(source.location, source.dialect, selection, imported, records, summary)


def _range_note(selection: Selection) -> str:
    if selection.since is None and selection.until is None:
        return ""
    return f" between {selection.since or '-'} and {selection.until or '-'}"


def _thread_rows(source: Source, selection: Selection) -> list[dict[str, Any]]:
    sql, params = f"SELECT * FROM {schema.THREADS}", []
    where = []
    if selection.resource is not None:
        where.append('"resourceId" = ?')
        params.append(selection.resource)
    if selection.threads:
        where.append(f"id IN ({', '.join('?' for _ in selection.threads)})")
        params.extend(selection.threads)
    if where:
        sql += " WHERE " + " AND ".join(where)
    rows = source.query(sql + ' ORDER BY "createdAt", id', params)
    found = {row["id"] for row in rows}
    for thread in selection.threads:
        if thread not in found:
            scope = f" of resource {selection.resource!r}" if selection.resource is not None else ""
            raise MastraImportError(
                f"no such thread{scope} in table {schema.THREADS}", file=source.location, thread=thread
            )
    if selection.resource is not None and not rows:
        raise MastraImportError(
            f"no thread of resource {selection.resource!r} in table {schema.THREADS}",
            file=source.location,
        )
    return rows


def _messages(source: Source, thread_id: str, selection: Selection) -> list[ImportedMessage]:
    rows = source.query(f'SELECT * FROM {schema.MESSAGES} WHERE thread_id = ? ORDER BY "createdAt", id', [thread_id])
    messages = []
    for row in rows:
        created = time_value(row, "createdAt")
        if created is None:
            raise MastraImportError(
                "no createdAt", file=source.location, table=schema.MESSAGES, thread=thread_id, message=row["id"]
            )
        if (selection.since is not None and created < selection.since) or (
            selection.until is not None and created >= selection.until
        ):
            continue
        messages.append(_message(source, row, created))
    return messages


def _message(source: Source, row: dict[str, Any], created: datetime) -> ImportedMessage:
    where = {"table": schema.MESSAGES, "thread": row["thread_id"], "message": row["id"]}
    content = _json(row["content"], source, where, "content")
    if isinstance(content, str):
        content = {"format": MESSAGE_FORMAT, "parts": [{"type": "text", "text": content}], "legacyString": True}
    if not isinstance(content, dict):
        raise MastraImportError("content is not a message object", file=source.location, **where, column="content")
    if content.get("format") != MESSAGE_FORMAT:
        raise MastraImportError(
            f"message format {content.get('format')!r}: omlab reads format {MESSAGE_FORMAT} "
            f"(a newer Mastra message format?; {schema.SCHEMA_NOTE})",
            file=source.location,
            **where,
            column="content.format",
        )
    parts = content.get("parts", [])
    if not isinstance(parts, list) or not all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in parts):
        raise MastraImportError(
            "content.parts must be a list of objects with a string type",
            file=source.location,
            **where,
            column="content.parts",
        )
    if row["role"] not in ("user", "assistant", "system", "tool"):
        raise MastraImportError(f"unknown role {row['role']!r}", file=source.location, **where, column="role")
    return ImportedMessage(
        id=row["id"],
        thread_id=row["thread_id"],
        resource_id=row.get("resourceId"),
        role=row["role"],
        type=row.get("type") or "v2",
        created_at=created,
        parts=parts,
        content_extra={k: v for k, v in content.items() if k != "parts"},
    )


def _json(value: Any, source: Source, where: dict[str, Any], column: str) -> Any:
    try:
        return json_value(value)
    except (ValueError, TypeError) as error:
        raise MastraImportError(f"not JSON ({error})", file=source.location, column=column, **where) from None


_OM_JSON = ("config", "observedMessageIds", "bufferedMessageIds", "bufferedObservationChunks", "metadata")
_OM_TIMES = ("lastObservedAt", "lastReflectionAt", "lastBufferedAtTime", "createdAt", "updatedAt")


def _om_records(source: Source, threads: list[ImportedThread]) -> list[dict[str, Any]]:
    ids = [t.id for t in threads]
    resources = sorted({t.resource_id for t in threads})
    marks_t, marks_r = ", ".join("?" for _ in ids), ", ".join("?" for _ in resources)
    rows = source.query(
        f'SELECT * FROM {schema.OM} WHERE ("scope" = \'thread\' AND "threadId" IN ({marks_t})) '
        f'OR ("scope" = \'resource\' AND "resourceId" IN ({marks_r})) ORDER BY "createdAt", "generationCount", id',
        [*ids, *resources],
    )
    records = []
    for row in rows:
        where = {"table": schema.OM, "thread": row.get("threadId"), "message": None}
        record = {k: v for k, v in row.items() if not (k.endswith("Z") and k[:-1] in row)}
        for column in _OM_JSON:
            if column in record:
                record[column] = _json(record[column], source, where, column)
        for column in _OM_TIMES:
            if column in record:
                record[column] = time_value(row, column)
        records.append(record)
    return records
