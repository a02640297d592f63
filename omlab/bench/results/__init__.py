"""The results database: one DuckDB file per run, a live Parquet snapshot, and DataFrame getters.

Design (``docs/results-schema.md`` has the tables):

* **One file per run, one writer.** :class:`RunWriter` creates
  ``<results_dir>/runs/<run_id>.duckdb`` and holds it for the whole run. Runs in several
  processes never share a file, so parallel sweeps never contend for a lock.
* **The DuckDB file is the truth.** Rows are buffered and appended in batches (an Arrow table per
  table per flush, in one transaction); a crash loses at most the unflushed buffer, and
  :meth:`RunWriter.open_existing` resumes the run.
* **A live snapshot for readers.** While a writer holds a file, DuckDB lets nobody else open it,
  even read-only. So each flush also writes the rows it committed as Parquet shards
  ``<run_id>.parts/<table>/<seq>.parquet`` (dual write). When the writer closes, it records the
  final status and deletes the shards: a finished run is a single file.
* **Readers never block writers.** :class:`ResultsCatalog` opens a run file read-only for one
  query and closes it; if a writer holds the file, it reads the shards instead (keyed tables: the
  newest shard wins). So a notebook can read finished runs and watch running ones while sweeps
  write.

Public API: :class:`RunWriter`, :class:`ResultsCatalog`, the getters :func:`runs_df`,
:func:`conversations_df`, :func:`steps_df`, :func:`events_df`, :func:`calls_df`,
:func:`answers_df`, :func:`scores_df`, :func:`metrics_df`, :func:`collect_provenance`,
:func:`new_run_id` and :func:`export_hypotheses`.
"""

from __future__ import annotations

from omlab.bench.results.catalog import ResultsCatalog, UnreadableRun, UnreadableRunWarning
from omlab.bench.results.connect import ResultsSchemaError, RunLockedError, UnreadableRunError
from omlab.bench.results.export import export_hypotheses, hypothesis_lines
from omlab.bench.results.frames import (
    answers_df,
    calls_df,
    conversations_df,
    events_df,
    join_question_costs,
    join_scores,
    lineage_df,
    lineage_questions_df,
    metrics_df,
    runs_df,
    scores_df,
    steps_df,
)
from omlab.bench.results.provenance import collect_provenance
from omlab.bench.results.rows import RowError
from omlab.bench.results.run_id import new_run_id
from omlab.bench.results.schema import KEYS, PHASES, SCHEMA_VERSION, TABLES
from omlab.bench.results.writer import RunWriter

__all__ = [
    "KEYS",
    "PHASES",
    "SCHEMA_VERSION",
    "TABLES",
    "ResultsCatalog",
    "ResultsSchemaError",
    "RowError",
    "RunLockedError",
    "RunWriter",
    "UnreadableRun",
    "UnreadableRunError",
    "UnreadableRunWarning",
    "answers_df",
    "calls_df",
    "collect_provenance",
    "conversations_df",
    "events_df",
    "export_hypotheses",
    "hypothesis_lines",
    "join_question_costs",
    "join_scores",
    "lineage_df",
    "lineage_questions_df",
    "metrics_df",
    "new_run_id",
    "runs_df",
    "scores_df",
    "steps_df",
]
