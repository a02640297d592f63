"""The Mastra storage schema omlab reads, and the check every import runs first.

omlab reads the tables ``@mastra/libsql`` 1.23.1 and ``@mastra/pg`` 1.27.1 create (with
``@mastra/core`` 1.71.0): threads, messages, resources and the observational-memory records. The
check names what is wrong before anything is read: a database with no Mastra tables, a missing
table or column, or a table with columns omlab does not know, which means a newer Mastra schema
whose data omlab could not carry over without loss.
"""

from __future__ import annotations

from omlab.bench.datasets.mastra.errors import MastraImportError
from omlab.bench.datasets.mastra.source import Source

THREADS = "mastra_threads"
MESSAGES = "mastra_messages"
RESOURCES = "mastra_resources"
OM = "mastra_observational_memory"

# PostgreSQL adds a timestamptz twin ("createdAtZ") beside each timestamp column.
_PG_TWINS = ("createdAtZ", "updatedAtZ", "lastObservedAtZ", "lastReflectionAtZ", "lastBufferedAtTimeZ")

COLUMNS: dict[str, tuple[str, ...]] = {
    THREADS: ("id", "resourceId", "title", "metadata", "createdAt", "updatedAt"),
    MESSAGES: ("id", "thread_id", "content", "role", "type", "createdAt", "resourceId"),
    RESOURCES: ("id", "workingMemory", "metadata", "createdAt", "updatedAt"),
    OM: (
        "id",
        "lookupKey",
        "scope",
        "resourceId",
        "threadId",
        "activeObservations",
        "activeObservationsPendingUpdate",
        "originType",
        "config",
        "generationCount",
        "lastObservedAt",
        "lastReflectionAt",
        "pendingMessageTokens",
        "totalTokensObserved",
        "observationTokenCount",
        "isObserving",
        "isReflecting",
        "observedMessageIds",
        "observedTimezone",
        "bufferedObservations",
        "bufferedObservationTokens",
        "bufferedMessageIds",
        "bufferedReflection",
        "bufferedReflectionTokens",
        "bufferedReflectionInputTokens",
        "reflectedObservationLineCount",
        "bufferedObservationChunks",
        "isBufferingObservation",
        "isBufferingReflection",
        "lastBufferedAtTokens",
        "lastBufferedAtTime",
        "metadata",
        "createdAt",
        "updatedAt",
    ),
}
"""Every column omlab knows per table (PostgreSQL's ``...Z`` twins aside)."""

REQUIRED: dict[str, tuple[str, ...]] = {
    THREADS: ("id", "resourceId", "title", "metadata", "createdAt", "updatedAt"),
    MESSAGES: ("id", "thread_id", "content", "role", "type", "createdAt", "resourceId"),
    OM: ("id", "scope", "threadId", "resourceId", "activeObservations", "generationCount", "originType", "createdAt"),
}
"""Tables and columns an import cannot do without (resources are optional)."""

SCHEMA_NOTE = "omlab reads the schema of @mastra/libsql 1.23.1 and @mastra/pg 1.27.1"


def check_schema(source: Source) -> dict[str, list[str]]:
    """Check ``source`` against the schema omlab reads; return ``{table: columns}`` of the tables found.

    Raises:
        MastraImportError: naming the database and the table (and columns) that are wrong.
    """
    tables = source.tables()
    if THREADS not in tables and MESSAGES not in tables:
        found = ", ".join(sorted(tables)[:8]) or "no tables"
        raise MastraImportError(
            f"not a Mastra storage database: no {THREADS} or {MESSAGES} table (found {found})",
            file=source.location,
        )
    found_columns: dict[str, list[str]] = {}
    for table, known in COLUMNS.items():
        if table not in tables:
            if table in REQUIRED:
                raise MastraImportError(f"missing table ({SCHEMA_NOTE})", file=source.location, table=table)
            continue
        columns = source.columns(table)
        missing = [c for c in REQUIRED.get(table, ()) if c not in columns]
        if missing:
            raise MastraImportError(
                f"missing column(s) {', '.join(missing)} ({SCHEMA_NOTE})",
                file=source.location,
                table=table,
            )
        unknown = [c for c in columns if c not in known and c not in _PG_TWINS]
        if unknown:
            raise MastraImportError(
                f"column(s) omlab does not know: {', '.join(unknown)}; the database was written by a newer "
                f"Mastra schema ({SCHEMA_NOTE}), and importing it would drop those columns",
                file=source.location,
                table=table,
            )
        found_columns[table] = columns
    return found_columns
