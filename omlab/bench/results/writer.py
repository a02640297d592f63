"""RunWriter: the one writer of a run's results file.

Rows are checked when added and buffered: row dicts one by one
(:mod:`omlab.bench.results.rows`), column-wise data (an Arrow table, a DataFrame or a dict of
columns) a column at a time (:mod:`omlab.bench.results.columns`, the fast path for bulk rows).
They are appended in batches: at ``flush_rows`` buffered rows, when ``flush_seconds`` have passed since the last
flush (a background thread checks, so an idle writer still publishes its progress), when a
conversation phase is marked, and at close. A flush is one DuckDB transaction that appends one
Arrow table per table (never row by row), then publishes the same batches as Parquet shards for
live readers (:mod:`omlab.bench.results.shards`). Every public method takes the writer's lock, so
threads may share a writer.

Keyed tables (``runs``, ``conversations``, ``answers``, ``scores``, ``metrics``; keys in
:data:`omlab.bench.results.schema.KEYS`) replace a row whose key is written again, in the buffer
and in the file, so re-answering or re-scoring a question after a resume never duplicates it.

The ``runs`` row is written with status ``started`` when the writer opens and completed
(``finished_at``, final ``status``, ``error``) only when it closes: a run that still says
``started`` and has no live writer crashed.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import duckdb
import pyarrow as pa

from omlab.bench.results.columns import check_columns, check_required, is_column_data
from omlab.bench.results.connect import (
    check_schema_version,
    claim_for_writing,
    open_run_file,
    release_writing,
    rollback,
    run_transaction,
)
from omlab.bench.results.discard import discard_statements
from omlab.bench.results.layout import parts_path, run_path, runs_dir
from omlab.bench.results.provenance import collect_provenance
from omlab.bench.results.row_buffer import RowBuffer
from omlab.bench.results.row_defaults import ROW_FILLERS, EventNumbering, fill_call_ids
from omlab.bench.results.rows import RowError, check_row
from omlab.bench.results.run_id import check_run_id, new_run_id
from omlab.bench.results.schema import (
    ANSWER_FAILED,
    CONVERSATION_STATUSES,
    FINAL_RUN_STATUSES,
    KEYS,
    PHASES,
    SCHEMA_VERSION,
    SCHEMA_VERSION_TABLE,
    TABLES,
    ddl,
    upgrade_statements,
)
from omlab.bench.results.shards import last_seq, replace_shards, write_shard
from omlab.bench.results.summary import write_summary

log = logging.getLogger("omlab.bench.results")

_WRITER_MANAGED_RUN_COLUMNS = frozenset({"run_id", "status", "started_at", "finished_at", "error"})
_BATCH_VIEW = "omlab_incoming_batch"
_NEW_FILE_LOCK_TIMEOUT_S = 5.0
_Row = Mapping[str, Any]
T = TypeVar("T")
ColumnData = pa.Table | pa.RecordBatch | Mapping[str, Any]


def _now() -> datetime:
    return datetime.now(UTC)


class RunWriter:
    """Writes one run to ``<results_dir>/runs/<run_id>.duckdb``.

    Use as a context manager: leaving the block closes the run as ``finished``, or ``failed``
    when an exception escapes, or ``interrupted`` on ``KeyboardInterrupt`` / task cancellation.

    Args:
        results_dir: The results directory (created if needed).
        run_id: Default: a fresh time-sortable id (:func:`omlab.bench.results.run_id.new_run_id`).
        flush_rows: Flush once this many rows are buffered (all tables together).
        flush_seconds: Flush rows that have waited this long; None: only by count and at close.
        run_info: ``runs`` columns to record (suite, config_name, config_hash, config_json,
            dataset, dataset_subset, dataset_revision, dataset_sha256, phases, notes; provenance
            columns override the collected ones). Secrets in ``config_json`` are dropped.
        provenance: The provenance columns; default :func:`collect_provenance`.

    Raises:
        FileExistsError: The run file exists already (reopen it with :meth:`open_existing`).
        RowError: ``run_info`` names an unknown or writer-managed column, or a bad value.
    """

    def __init__(
        self,
        results_dir: str | Path,
        run_id: str | None = None,
        *,
        flush_rows: int = 5000,
        flush_seconds: float | None = 2.0,
        run_info: _Row | None = None,
        provenance: _Row | None = None,
    ) -> None:
        self._setup(results_dir, new_run_id() if run_id is None else run_id, flush_rows, flush_seconds)
        header = {**(collect_provenance() if provenance is None else provenance), **(run_info or {})}
        _refuse_managed_columns(header)
        run_row = check_row("runs", {**header, "status": "started", "started_at": _now()}, self.run_id)
        if self.path.exists():
            raise FileExistsError(
                f"run file {self.path} already exists; use RunWriter.open_existing(results_dir, "
                f"{self.run_id!r}) to resume that run"
            )
        runs_dir(self.results_dir).mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.parts_dir, ignore_errors=True)
        claim_for_writing(self.path)
        try:
            # A reader may hold the new file for a moment (it lists every *.duckdb it sees).
            self._connection = open_run_file(self.path, read_only=False, lock_timeout=_NEW_FILE_LOCK_TIMEOUT_S)
        except BaseException:
            release_writing(self.path)
            raise
        try:
            run_transaction(self._connection, [*ddl(), f"INSERT INTO {SCHEMA_VERSION_TABLE} VALUES ({SCHEMA_VERSION})"])
            self._run_row = run_row
            self._buffer.add_rows("runs", [run_row])
            self._flush_locked()
        except BaseException:
            self._connection.close()
            self._connection = None
            release_writing(self.path)
            for leftover in (self.path, self.path.with_name(self.path.name + ".wal")):
                leftover.unlink(missing_ok=True)  # a half-made file of ours; never a run's data
            shutil.rmtree(self.parts_dir, ignore_errors=True)
            raise
        self._start_flusher()

    @classmethod
    def open_existing(
        cls,
        results_dir: str | Path,
        run_id: str,
        *,
        flush_rows: int = 5000,
        flush_seconds: float | None = 2.0,
        lock_timeout: float = 10.0,
    ) -> RunWriter:
        """Reopen run ``run_id`` to append to it (resuming after a crash or an interruption).

        The run goes back to status ``started`` (``finished_at`` and ``error`` cleared) until it
        is closed again; its live snapshot is republished from the file. Rows of a phase that was
        cut short stay in the file: see :meth:`discard_conversation`.

        Args:
            lock_timeout: Seconds to wait while another process has the file open (a reader
                holds it for a moment; a live writer holds it until it closes).

        Raises:
            FileNotFoundError: There is no such run file.
            RunLockedError: The file stayed locked for ``lock_timeout`` seconds.
            ResultsSchemaError: The file has another results schema version.
        """
        writer = cls.__new__(cls)
        writer._setup(results_dir, run_id, flush_rows, flush_seconds)
        if not writer.path.is_file():
            raise FileNotFoundError(f"no run file {writer.path} to reopen (run {run_id!r})")
        claim_for_writing(writer.path)
        try:
            writer._connection = open_run_file(writer.path, read_only=False, lock_timeout=lock_timeout)
        except BaseException:
            release_writing(writer.path)
            raise
        try:
            writer._reopen()
        except BaseException:
            writer._connection.close()
            release_writing(writer.path)
            raise
        writer._start_flusher()
        return writer

    # ------------------------------------------------------------------ appending

    def add_events(self, rows: Iterable[_Row] | ColumnData) -> None:
        """Append ``events`` rows (row dicts, or column-wise data: an Arrow table, a DataFrame or a
        dict of columns; the same holds for every ``add_*`` method). ``seq`` defaults to the next number in this run (counting on
        from the largest stored one), ``kind`` to ``data`` for ``data-*`` types else ``debug``."""
        self._add("events", rows)

    def add_steps(self, rows: Iterable[_Row] | ColumnData) -> None:
        """Append ``steps`` rows (``observed``/``activated``/``reflected`` default to False)."""
        self._add("steps", rows)

    def add_model_calls(self, rows: Iterable[_Row] | ColumnData) -> None:
        """Append ``model_calls`` rows (``call_id`` defaults to a random hex id; ``started_at``
        may be unix seconds, as :class:`omlab.llm.types.ModelCall` has it)."""
        self._add("model_calls", rows)

    def add_answers(self, rows: Iterable[_Row] | ColumnData) -> None:
        """Write ``answers`` rows; a question answered before is replaced, never duplicated.
        ``status="failed"`` marks a question that resume should answer again."""
        self._add("answers", rows)

    def add_scores(self, rows: Iterable[_Row] | ColumnData) -> None:
        """Write ``scores`` rows, one per (question_id, scorer); a rewrite replaces the old row.
        ``value`` defaults to 1.0/0.0 when only ``correct`` is given."""
        self._add("scores", rows)

    def add_together(self, parts: Iterable[tuple[str, Iterable[_Row] | ColumnData]]) -> None:
        """Add rows to several tables as one unit: ``[(table, rows), ...]``.

        The rows are all checked before any is buffered and reach the file in the same
        transaction, so a crash or a bad row keeps all of them or none. The runner writes a
        question's model calls with its answer (or its scores) this way: a run killed in between
        can then never hold calls for a question it will ask again on resume.

        Raises:
            ValueError: an unknown table, or ``runs``/``conversations`` (use their own methods).
            RowError: a bad row (nothing of the unit is kept).
        """
        units = list(parts)
        for table, _ in units:
            if table not in _ROW_TABLES:
                raise ValueError(f"add_together takes rows of {', '.join(sorted(_ROW_TABLES))}; got {table!r}")
        self._add_all(units)

    def add_metrics(self, rows: Iterable[_Row] | ColumnData) -> None:
        """Write ``metrics`` rows, one per (name, group_key); ``group_key`` defaults to ``all``."""
        self._add("metrics", rows)

    def add_lineage(self, evidence: Iterable[_Row] | ColumnData, questions: Iterable[_Row] | ColumnData = ()) -> None:
        """Write the evidence lineage: ``lineage`` rows (one per question x evidence turn) and
        ``lineage_questions`` rows (one per question), together; a rewrite replaces them."""
        self._add_all([("lineage", evidence), ("lineage_questions", questions)])

    def mark_conversation(
        self,
        conversation_id: str,
        phase: str,
        status: str,
        *,
        started_at: datetime | float | None = None,
        finished_at: datetime | float | None = None,
        error: str | None = None,
        n_messages: int | None = None,
        n_message_tokens: int | None = None,
    ) -> None:
        """Checkpoint a conversation's phase (``prepare``/``answer``/``judge``) as ``done`` or
        ``failed``, and flush: once this returns, the mark and every row added before it are in
        the file. ``finished_at`` defaults to now. Marking again replaces the previous mark."""
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {', '.join(PHASES)}; got {phase!r}")
        if status not in CONVERSATION_STATUSES:
            raise ValueError(f"conversation status must be one of {', '.join(CONVERSATION_STATUSES)}; got {status!r}")
        row = {
            "conversation_id": conversation_id,
            "phase": phase,
            "status": status,
            "started_at": started_at,
            "finished_at": _now() if finished_at is None else finished_at,
            "error": error,
            "n_messages": n_messages,
            "n_message_tokens": n_message_tokens,
        }
        with self._lock:
            self._add("conversations", [row])
            self._flush_locked()

    def update_run(self, **fields: Any) -> None:
        """Set ``runs`` columns after opening (e.g. the dataset sha256 once it is known).

        Raises:
            RowError: An unknown column, a writer-managed one (run_id, status, started_at,
                finished_at, error), or a bad value.
        """
        _refuse_managed_columns(fields)
        with self._lock:
            self._check_open()
            self._run_row = check_row("runs", {**self._run_row, **fields}, self.run_id)
            self._buffer.add_rows("runs", [self._run_row])
            self._flush_locked()

    def flush(self) -> None:
        """Write every buffered row now (one transaction) and publish it to live readers."""
        with self._lock:
            self._check_open()
            self._flush_locked()

    # ------------------------------------------------------------------ resume

    def completed(self, phase: str) -> set[str]:
        """Ids of the conversations whose ``phase`` is marked ``done``."""
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {', '.join(PHASES)}; got {phase!r}")
        return self._ids("SELECT conversation_id FROM conversations WHERE phase = ? AND status = 'done'", [phase])

    def answered_questions(self) -> set[str]:
        """Ids of the questions with an answer whose status is not ``failed``."""
        return self._ids("SELECT question_id FROM answers WHERE status IS DISTINCT FROM ?", [ANSWER_FAILED])

    def scored_questions(self, scorer: str) -> set[str]:
        """Ids of the questions that have a ``scorer`` score."""
        return self._ids("SELECT question_id FROM scores WHERE scorer = ?", [scorer])

    def read_own(self, query: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run ``query`` on a cursor of this writer's own connection, after a flush: every row
        written so far, without the live snapshot's shards (a catalog made with ``writers=``)."""
        with self._lock:
            self._check_open()
            self._flush_locked(publish=False)
            cursor = self._connection.cursor()
            try:
                cursor.execute("SET TimeZone = 'UTC'")
                return query(cursor)
            finally:
                cursor.close()

    def discard_conversation(self, conversation_id: str, phase: str) -> None:
        """Delete what ``phase`` wrote for ``conversation_id``, so redoing it duplicates nothing.

        ``prepare``: its steps, events and observer/reflector/extractor calls; ``answer``: its
        answers and actor calls; ``judge``: the scores of its questions and judge calls. The
        phase's mark goes too. Live readers see the deletion once the affected tables are
        republished (before this returns).
        """
        statements, touched = discard_statements(conversation_id, phase)
        with self._lock:
            self._check_open()
            self._flush_locked()
            run_transaction(self._connection, statements)
            for table in touched:
                self._republish(table)

    # ------------------------------------------------------------------ closing

    def close(self, status: str = "finished", error: str | None = None) -> None:
        """Flush, record ``finished_at`` and the final ``status`` (``finished``, ``failed`` or
        ``interrupted``) and ``error``, close the file, remove the live snapshot and write the run's
        summary (:mod:`omlab.bench.results.summary`). Idempotent."""
        if status not in FINAL_RUN_STATUSES:
            raise ValueError(f"a run closes as one of {', '.join(FINAL_RUN_STATUSES)}; got {status!r}")
        self._stop_flusher()
        with self._lock:
            if self._connection is None:
                return
            try:
                self._run_row = check_row(
                    "runs",
                    {**self._run_row, "status": status, "finished_at": _now(), "error": error},
                    self.run_id,
                )
                self._buffer.add_rows("runs", [self._run_row])
                self._flush_locked(publish=False)
                self._connection.execute("CHECKPOINT")
            finally:
                self._connection.close()
                self._connection = None
                release_writing(self.path)
        shutil.rmtree(self.parts_dir, ignore_errors=True)
        write_summary(self.results_dir, self.run_id)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close("finished")
        elif issubclass(exc_type, (KeyboardInterrupt, asyncio.CancelledError)):
            self.close("interrupted", error=exc_type.__name__)
        else:
            self.close("failed", error=f"{exc_type.__name__}: {exc}")

    @property
    def closed(self) -> bool:
        return self._connection is None

    def __repr__(self) -> str:
        return f"RunWriter({self.run_id!r}, {'closed' if self.closed else 'open'}, path={str(self.path)!r})"

    # ------------------------------------------------------------------ internals

    def _setup(self, results_dir: str | Path, run_id: str, flush_rows: int, flush_seconds: float | None) -> None:
        if not isinstance(flush_rows, int) or flush_rows < 1:
            raise ValueError(f"flush_rows must be a positive integer, got {flush_rows!r}")
        if flush_seconds is not None and not flush_seconds > 0:
            raise ValueError(f"flush_seconds must be > 0 or None, got {flush_seconds!r}")
        self.run_id = check_run_id(run_id)
        self.results_dir = Path(results_dir).expanduser()
        self.path = run_path(self.results_dir, run_id)
        self.parts_dir = parts_path(self.results_dir, run_id)
        self._flush_rows = flush_rows
        self._flush_seconds = flush_seconds
        self._lock = threading.RLock()
        self._connection: duckdb.DuckDBPyConnection | None = None
        self._buffer = RowBuffer()
        self._last_flush = time.monotonic()
        self._shard_seq = 0
        self._events = EventNumbering()
        self._run_row: dict[str, Any] = {}
        self._stop = threading.Event()
        self._flusher: threading.Thread | None = None

    def _reopen(self) -> None:
        connection = self._connection
        version = check_schema_version(connection, self.path)
        if version < SCHEMA_VERSION:  # a run started by an older omlab: add the columns it lacks
            run_transaction(self._connection, upgrade_statements(version))
        result = connection.execute("SELECT * FROM runs WHERE run_id = ?", [self.run_id])
        names = [column[0] for column in result.description]
        rows = result.fetchall()
        if not rows:
            raise RowError(f"run file {self.path} has no runs row for {self.run_id!r}")
        stored = {name: value for name, value in zip(names, rows[0], strict=True) if value is not None}
        self._run_row = check_row(
            "runs", {**stored, "status": "started", "finished_at": None, "error": None}, self.run_id
        )
        self._events.next_seq = connection.execute("SELECT coalesce(max(seq) + 1, 0) FROM events").fetchall()[0][0]
        self._buffer.add_rows("runs", [self._run_row])
        self._flush_locked(publish=False)
        shutil.rmtree(self.parts_dir, ignore_errors=True)
        for table in TABLES:
            self._republish(table)

    def _check_open(self) -> None:
        if self._connection is None:
            raise RuntimeError(f"run writer for {self.run_id!r} is closed")

    def _add(self, table: str, rows: Iterable[_Row]) -> None:
        self._add_all([(table, rows)])

    def _add_all(self, units: list[tuple[str, Iterable[_Row] | ColumnData]]) -> None:
        for table, rows in units:
            if isinstance(rows, Mapping) and not is_column_data(rows):
                raise TypeError(
                    f"add_{table} takes a list of row dicts or columns, not a single dict; wrap it in a list"
                )
        with self._lock:
            self._check_open()
            checked = [(table, self._checked(table, rows)) for table, rows in units]
            for table, rows in checked:
                if isinstance(rows, pa.Table):
                    self._buffer.add_batch(table, rows)
                else:
                    self._buffer.add_rows(table, rows)
            if self._buffer.pending >= self._flush_rows or self._flush_is_due():
                self._flush_locked()

    def _checked(self, table: str, rows: Iterable[_Row] | ColumnData) -> list[dict[str, Any]] | pa.Table:
        if not is_column_data(rows):
            return [check_row(table, row, self.run_id, self._filler(table)) for row in rows]
        batch = check_columns(table, rows, self.run_id)
        if table in KEYS:  # keyed tables are small; their replace-on-rewrite rule works on rows
            return [
                check_row(table, {k: v for k, v in row.items() if v is not None}, self.run_id, self._filler(table))
                for row in batch.to_pylist()
            ]
        if table == "events":
            batch = self._events.fill_columns(batch)
        elif table == "model_calls":
            batch = fill_call_ids(batch)
        return check_required(table, batch)

    def _filler(self, table: str) -> Callable[[dict[str, Any]], None] | None:
        return self._events.fill_row if table == "events" else ROW_FILLERS.get(table)

    def _flush_is_due(self) -> bool:
        return (
            self._flush_seconds is not None
            and self._buffer.pending > 0
            and time.monotonic() - self._last_flush >= self._flush_seconds
        )

    def _flush_locked(self, *, publish: bool = True) -> None:
        if self._buffer.pending == 0:
            return
        batches = self._buffer.batches()
        self._connection.execute("BEGIN TRANSACTION")
        try:
            for table, batch in batches.items():
                self._append_batch(table, batch)
            self._connection.execute("COMMIT")
        except BaseException:
            rollback(self._connection)
            raise
        self._buffer.clear()
        self._last_flush = time.monotonic()
        seq = self._shard_seq
        self._shard_seq += 1
        if publish:
            for table, batch in batches.items():
                try:
                    write_shard(self.parts_dir, table, seq, batch)
                except OSError:  # the file has the rows; only the live view lags
                    log.warning(
                        "could not publish %s rows of run %s for live readers", table, self.run_id, exc_info=True
                    )

    def _append_batch(self, table: str, batch: pa.Table) -> None:
        """Append one batch to ``table`` (replacing rows with the same key in keyed tables)."""
        connection = self._connection
        connection.register(_BATCH_VIEW, batch)
        try:
            keys = KEYS.get(table)
            if keys:
                matches = " AND ".join(f'{table}."{k}" IS NOT DISTINCT FROM b."{k}"' for k in keys)
                connection.execute(f"DELETE FROM {table} WHERE EXISTS (SELECT 1 FROM {_BATCH_VIEW} b WHERE {matches})")
            connection.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {_BATCH_VIEW}")
        finally:
            connection.unregister(_BATCH_VIEW)

    def _republish(self, table: str) -> None:
        self._shard_seq = max(self._shard_seq, last_seq(self.parts_dir) + 1)
        try:
            replace_shards(self.parts_dir, table, self._shard_seq, self._connection)
        except OSError:
            log.warning("could not republish %s of run %s for live readers", table, self.run_id, exc_info=True)
        self._shard_seq += 1

    def _ids(self, sql: str, parameters: list[Any]) -> set[str]:
        with self._lock:
            self._check_open()
            self._flush_locked()
            return {row[0] for row in self._connection.execute(sql, parameters).fetchall()}

    def _start_flusher(self) -> None:
        if self._flush_seconds is None:
            return
        self._flusher = threading.Thread(target=self._flush_when_due, name=f"omlab-results-{self.run_id}", daemon=True)
        self._flusher.start()

    def _stop_flusher(self) -> None:
        self._stop.set()
        flusher = self._flusher
        if flusher is not None and flusher is not threading.current_thread():
            flusher.join()

    def _flush_when_due(self) -> None:
        while not self._stop.wait(self._flush_seconds / 2):
            with self._lock:
                if self._connection is None:
                    return
                if not self._flush_is_due():
                    continue
                try:
                    self._flush_locked()
                except Exception:  # the next flush (or close) retries and raises in the caller
                    log.warning("background flush of run %s failed", self.run_id, exc_info=True)


def _refuse_managed_columns(fields: Mapping[str, Any]) -> None:
    managed = sorted(_WRITER_MANAGED_RUN_COLUMNS & set(fields))
    if managed:
        raise RowError(f"runs columns {', '.join(managed)} are set by the writer, not by the caller")


_ROW_TABLES = frozenset(
    {"steps", "events", "model_calls", "call_texts", "answers", "scores", "metrics", "lineage", "lineage_questions"}
)
"""Tables :meth:`RunWriter.add_together` accepts (runs and conversations have their own methods)."""
