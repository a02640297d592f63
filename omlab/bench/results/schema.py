"""The results tables: columns, types, keys, DDL and the schema version.

One definition drives everything else: the DuckDB DDL, the Arrow schema of a batch (used for the
DuckDB append *and* the Parquet shard), the pandas dtypes the getters return, and which tables
are keyed (a re-written key replaces its row) rather than append-only. ``docs/results-schema.md``
is the human description of the same tables; keep them in step.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd
import pyarrow as pa

SCHEMA_VERSION = 7
"""Bumped when a table or column changes; readers refuse files from a newer version."""

SCHEMA_VERSION_TABLE = "omlab_results_schema"

PHASES: tuple[str, ...] = ("prepare", "answer", "judge")
CONVERSATION_STATUSES: tuple[str, ...] = ("done", "failed")
RUN_STATUSES: tuple[str, ...] = ("started", "finished", "incomplete", "failed", "interrupted")
FINAL_RUN_STATUSES: tuple[str, ...] = ("finished", "incomplete", "failed", "interrupted")
"""``incomplete``: the run ended but some conversation phase failed (resume retries it)."""
ANSWER_FAILED = "failed"
"""The ``answers.status`` value that marks a question as not answered (resume retries it)."""
# pandas 3 has a real default string dtype; before it, text lives in object columns.
_TEXT_DTYPE = "str" if int(pd.__version__.split(".")[0]) >= 3 else "object"

MODEL_ROLES_BY_PHASE = MappingProxyType(
    {
        "prepare": ("observer", "reflector", "extractor"),
        "answer": ("actor",),
        "judge": ("judge",),
    }
)


@dataclass(frozen=True, slots=True)
class Column:
    """One column. ``kind`` is one of ``text``, ``json``, ``int``, ``float``, ``bool``, ``time``.

    ``json`` columns are text holding a JSON document (written with ``json.dumps``). ``default``
    fills the column when a row leaves it out.
    """

    name: str
    kind: str
    required: bool = False
    default: object = None


_SQL_TYPES = MappingProxyType(
    {
        "text": "VARCHAR",
        "json": "VARCHAR",
        "int": "BIGINT",
        "float": "DOUBLE",
        "bool": "BOOLEAN",
        "time": "TIMESTAMPTZ",
    }
)
_ARROW_TYPES = MappingProxyType(
    {
        "text": pa.string(),
        "json": pa.string(),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
        "time": pa.timestamp("us", tz="UTC"),
    }
)


def _text(name: str, required: bool = False) -> Column:
    return Column(name, "text", required)


def _int(name: str) -> Column:
    return Column(name, "int")


def _float(name: str) -> Column:
    return Column(name, "float")


def _time(name: str, required: bool = False) -> Column:
    return Column(name, "time", required)


def _flag(name: str) -> Column:
    return Column(name, "bool", True, False)


_RUN_ID = Column("run_id", "text", True)

TABLES: MappingProxyType[str, tuple[Column, ...]] = MappingProxyType(
    {
        "runs": (
            _RUN_ID,
            _text("suite"),
            _text("config_name"),
            _text("config_hash"),
            Column("config_json", "json"),
            _text("dataset"),
            _text("dataset_subset"),
            _text("dataset_revision"),
            _text("dataset_sha256"),
            Column("phases", "json"),
            _time("started_at", True),
            _time("finished_at"),
            _text("status", True),
            _text("error"),
            _text("omlab_version"),
            _text("litellm_version"),
            _text("duckdb_version"),
            _text("python_version"),
            _text("git_commit"),
            Column("git_dirty", "bool"),
            _text("host"),
            _text("notes"),
            Column("price_map", "json"),
        ),
        "conversations": (
            _RUN_ID,
            _text("conversation_id", True),
            _text("phase", True),
            _text("status", True),
            _time("started_at"),
            _time("finished_at"),
            _text("error"),
            _int("n_messages"),
            _int("n_message_tokens"),
        ),
        "steps": (
            _RUN_ID,
            _text("conversation_id", True),
            _text("thread_id"),
            Column("step", "int", True),
            _time("ts"),
            _text("message_id"),
            _int("pending_tokens"),
            _float("threshold"),
            _int("observation_tokens"),
            _float("reflect_threshold"),
            _float("block_after"),
            _int("buffered_chunks"),
            _int("buffered_message_tokens"),
            _int("generation"),
            _int("context_tokens"),
            _float("blocked_s"),
            _flag("observed"),
            _flag("activated"),
            _flag("reflected"),
        ),
        "events": (
            _RUN_ID,
            _text("conversation_id"),
            Column("seq", "int", True),
            _time("ts"),
            _text("kind"),
            _text("type", True),
            _text("cycle_id"),
            _text("operation_type"),
            _text("triggered_by"),
            _int("tokens_in"),
            _int("tokens_out"),
            _float("duration_ms"),
            _text("record_id"),
            _text("thread_id"),
            _int("generation"),
            Column("payload", "json"),
        ),
        "model_calls": (
            _RUN_ID,
            _text("conversation_id"),
            _text("call_id", True),
            _text("role"),
            _text("requested_model"),
            _text("resolved_model"),
            _int("tier"),
            _int("input_tokens"),
            _int("output_tokens"),
            _float("cost_usd"),
            _float("latency_s"),
            _time("started_at"),
            _int("attempts"),
            _flag("cached"),
            _text("error"),
            _text("cycle_id"),
            _text("question_id"),
            _float("cost_usd_paid"),
            _int("routing_tokens"),
        ),
        "answers": (
            _RUN_ID,
            _text("conversation_id"),
            _text("question_id", True),
            _text("question_type"),
            Column("is_abstention", "bool"),
            _int("category"),
            _text("question"),
            _text("gold"),
            _text("hypothesis"),
            _time("question_date"),
            _int("context_tokens"),
            _int("full_history_tokens"),
            _text("answer_model"),
            _text("status"),
            _text("error"),
        ),
        "scores": (
            _RUN_ID,
            _text("question_id", True),
            _text("scorer", True),
            _float("value"),
            Column("correct", "bool"),
            Column("details", "json"),
        ),
        "metrics": (
            _RUN_ID,
            _text("name", True),
            Column("group_key", "text", True, "all"),
            _float("value"),
            _float("lo"),
            _float("hi"),
            _int("n"),
            _int("n_missing"),
        ),
        "lineage": (
            _RUN_ID,
            _text("conversation_id"),
            _text("question_id", True),
            _text("evidence_id", True),
            _text("message_id"),
            _text("evidence_text"),
            _int("ingest_step"),
            _time("ingested_at"),
            _int("ingested_at_tokens"),
            _text("cycle_id"),
            _text("cycle_kind"),
            _int("buffered_step"),
            _int("observed_step"),
            _text("match"),
            Column("lines", "json"),
            _int("observed_generation"),
            Column("generations", "json"),
            _int("survived_generations"),
            _int("merged_generation"),
            _int("dropped_generation"),
            _int("dropped_step"),
            _int("dropped_at_tokens"),
            _int("final_generation"),
            _int("final_tokens"),
            _text("fate"),
            Column("final_lines", "json"),
            _float("final_coverage"),
            Column("in_context", "bool"),
            _text("in_context_as"),
        ),
        "call_texts": (
            _RUN_ID,
            _text("conversation_id"),
            _text("call_id", True),
            Column("prompt", "json"),
            _text("response"),
        ),
        "lineage_questions": (
            _RUN_ID,
            _text("conversation_id"),
            _text("question_id", True),
            _text("question_type"),
            Column("is_abstention", "bool"),
            _int("n_evidence"),
            _int("n_observed"),
            _int("n_lost_at_observation"),
            _int("n_lost_at_reflection"),
            _int("n_in_context"),
            Column("correct", "bool"),
            _text("loss_cause"),
        ),
    }
)
"""Every table's columns, in storage order (``run_id`` first)."""

KEYS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "runs": ("run_id",),
        "conversations": ("run_id", "conversation_id", "phase"),
        "answers": ("run_id", "question_id"),
        "scores": ("run_id", "question_id", "scorer"),
        "metrics": ("run_id", "name", "group_key"),
        "lineage": ("run_id", "question_id", "evidence_id"),
        "lineage_questions": ("run_id", "question_id"),
        "call_texts": ("run_id", "call_id"),
    }
)
"""Keyed tables: writing a row whose key exists replaces the old row. Other tables only append."""

ORDER_BY: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "runs": ("started_at", "run_id"),
        "conversations": ("run_id", "conversation_id", "phase"),
        "steps": ("run_id", "conversation_id", "step"),
        "events": ("run_id", "conversation_id", "seq"),
        "model_calls": ("run_id", "started_at", "call_id"),
        "answers": ("run_id", "conversation_id", "question_id"),
        "scores": ("run_id", "question_id", "scorer"),
        "metrics": ("run_id", "name", "group_key"),
        "lineage": ("run_id", "conversation_id", "question_id", "ingest_step", "evidence_id"),
        "lineage_questions": ("run_id", "conversation_id", "question_id"),
        "call_texts": ("run_id", "conversation_id", "call_id"),
    }
)
"""The row order the readers return."""


COLUMNS_ADDED: MappingProxyType[int, tuple[tuple[str, str], ...]] = MappingProxyType(
    {
        2: (("model_calls", "question_id"),),
        4: (("model_calls", "cost_usd_paid"), ("runs", "price_map")),
        5: (("metrics", "n_missing"),),
        6: (("model_calls", "routing_tokens"),),
    }
)
"""``(table, column)`` pairs each schema version added. Files of an older version are read with
NULL in those columns and upgraded in place when a writer reopens them."""


TABLES_ADDED: MappingProxyType[int, tuple[str, ...]] = MappingProxyType(
    {
        3: ("lineage", "lineage_questions"),
        7: ("call_texts",),
    }
)
"""Tables each schema version added. Files of an older version read as empty there and get the
tables when a writer reopens them."""


def table_added_in(table: str) -> int:
    """The schema version that added ``table`` (1 for the original tables)."""
    return next((version for version, tables in TABLES_ADDED.items() if table in tables), 1)


def columns_added_since(version: int, table: str) -> frozenset[str]:
    """Columns of ``table`` that a file of schema ``version`` does not have."""
    if table_added_in(table) > version:
        return frozenset(c.name for c in columns_of(table))
    return frozenset(
        column
        for added_in, pairs in COLUMNS_ADDED.items()
        if added_in > version
        for added_table, column in pairs
        if added_table == table
    )


def upgrade_statements(version: int) -> tuple[str, ...]:
    """SQL that brings a file of schema ``version`` to :data:`SCHEMA_VERSION` (empty when current)."""
    statements = []
    for added_in in range(version + 1, SCHEMA_VERSION + 1):
        statements.extend(_create_table(table) for table in TABLES_ADDED.get(added_in, ()))
        for table, name in COLUMNS_ADDED.get(added_in, ()):
            column = next(c for c in columns_of(table) if c.name == name)
            statements.append(f"ALTER TABLE {table} ADD COLUMN {name} {_SQL_TYPES[column.kind]}")
    if statements:
        statements += [
            f"DELETE FROM {SCHEMA_VERSION_TABLE}",
            f"INSERT INTO {SCHEMA_VERSION_TABLE} VALUES ({SCHEMA_VERSION})",
        ]
    return tuple(statements)


def columns_of(table: str) -> tuple[Column, ...]:
    """The columns of ``table``; a clear ``ValueError`` for an unknown table name."""
    try:
        return TABLES[table]
    except KeyError:
        raise ValueError(f"unknown results table {table!r}; tables are: {', '.join(TABLES)}") from None


def ddl() -> tuple[str, ...]:
    """``CREATE TABLE`` statements for a new run file (schema-version table included)."""
    statements = [f"CREATE TABLE {SCHEMA_VERSION_TABLE} (version INTEGER NOT NULL)"]
    statements.extend(_create_table(table) for table in TABLES)
    return tuple(statements)


def _create_table(table: str) -> str:
    body = ",\n    ".join(
        f"{c.name} {_SQL_TYPES[c.kind]}{' NOT NULL' if c.required else ''}" for c in columns_of(table)
    )
    return f"CREATE TABLE {table} (\n    {body}\n)"


def arrow_schema(table: str) -> pa.Schema:
    """The Arrow schema of a batch of ``table`` rows (also the Parquet shard schema)."""
    return pa.schema([pa.field(c.name, _ARROW_TYPES[c.kind], nullable=not c.required) for c in columns_of(table)])


def pandas_dtype(column: Column) -> str:
    """The dtype the DataFrame getters give ``column``.

    Required booleans are numpy ``bool``; booleans that may be missing are pandas ``boolean``
    (``<NA>`` when missing); integers likewise ``int64`` / ``Int64``; times are
    ``datetime64[us, UTC]``; text and JSON are pandas' default string dtype (``str``; ``object``
    before pandas 3).
    """
    if column.kind == "bool":
        return "bool" if column.required else "boolean"
    if column.kind == "int":
        return "int64" if column.required else "Int64"
    if column.kind == "float":
        return "float64"
    if column.kind == "time":
        return "datetime64[us, UTC]"
    return _TEXT_DTYPE
