"""Finding the run to resume and what a resumed run already holds.

A run is resumable when it belongs to the same suite, has the same ``config_hash`` (so it asked
the same questions of the same configuration) and did not finish: status ``started`` with no live
writer (the process died), ``incomplete`` (it ended with failed phases, which a resume retries),
``failed`` or ``interrupted``. ``omlab run`` resumes the latest such run
automatically; ``--resume RUN_ID`` names one (and refuses a run made with another configuration).

Two automatic resumes of the same killed run (two ``omlab run`` started together): the first to
open the file resumes it; the other finds it held by a writer and starts its own new run (with a
notice), rather than failing or waiting for a run that may take hours. ``--resume RUN_ID`` never
falls back: it fails with a lock error while another process writes that run.

Before a run file is reopened, :func:`read_resume_state` reads (read-only) the answers it already
has, for judging, and the conversations whose ``prepare`` rows were partly written by a process
that died before marking the phase ``done``: those rows are discarded and the conversation is
prepared again, so nothing is duplicated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from omlab.bench.results import ResultsCatalog, runs_df
from omlab.bench.results.connect import open_run_file
from omlab.bench.results.layout import run_path
from omlab.bench.results.run_config import sweep_id_of

UNFINISHED = ("started", "incomplete", "failed", "interrupted")
_PREPARE_ROLES = ("observer", "reflector", "extractor")


class ResumeError(RuntimeError):
    """A run that cannot be resumed as asked (unknown id, other configuration, still running)."""


@dataclass(frozen=True, slots=True)
class ResumeState:
    """What a run file already holds, read before its writer reopens it."""

    hypotheses: dict[str, str] = field(default_factory=dict)
    orphaned_prepare: frozenset[str] = frozenset()


def find_resumable_run(
    results_dir: str | Path, suite: str, config_hash: str, *, prefer_sweep: str | None = None
) -> str | None:
    """The latest unfinished run of ``suite`` with ``config_hash`` that no writer holds, or None.
    With ``prefer_sweep``, a run of that sweep wins over later runs of other sweeps."""
    if not (Path(results_dir) / "runs").is_dir():
        return None
    runs = runs_df(results_dir)
    if runs.empty:
        return None
    candidates = runs[(runs["suite"] == suite) & (runs["config_hash"] == config_hash) & runs["status"].isin(UNFINISHED)]
    catalog = ResultsCatalog(results_dir)
    ordered = sorted(candidates["run_id"], reverse=True)
    if prefer_sweep is not None:
        of_sweep = set(candidates.loc[candidates["config_json"].map(sweep_id_of) == prefer_sweep, "run_id"])
        ordered.sort(key=lambda run_id: run_id not in of_sweep)  # stable: newest first within each group
    for run_id in ordered:
        if not catalog.is_live(run_id):
            return run_id
    return None


def check_resume_target(results_dir: str | Path, run_id: str, suite: str, config_hash: str) -> None:
    """Raise :class:`ResumeError` unless run ``run_id`` exists, is idle and matches the configuration."""
    if not run_path(results_dir, run_id).is_file():
        raise ResumeError(f"no run {run_id!r} under {Path(results_dir) / 'runs'}")
    catalog = ResultsCatalog(results_dir)
    if catalog.is_live(run_id):
        raise ResumeError(f"run {run_id!r} is being written by another process right now")
    problem = catalog.problem_of(run_id)
    if problem is not None:
        path = run_path(results_dir, run_id)
        raise ResumeError(f"cannot resume run {run_id!r}: its file {path} cannot be read: {problem}")
    header = catalog.read_table("runs", run_id)
    if header.empty:
        raise ResumeError(f"run {run_id!r} has no header row")
    row = header.iloc[0]
    if row["suite"] != suite:
        raise ResumeError(f"run {run_id!r} belongs to suite {row['suite']!r}, not {suite!r}")
    if row["config_hash"] != config_hash:
        raise ResumeError(
            f"run {run_id!r} was made with another configuration (config hash "
            f"{str(row['config_hash'])[:12]}…, the suite now gives {config_hash[:12]}…); resuming would mix "
            "results. Start a new run instead (prepared memories and cached responses are reused)"
        )


def read_resume_state(results_dir: str | Path, run_id: str, *, lock_timeout: float = 10.0) -> ResumeState:
    """Answers already given and half-written prepare phases of run ``run_id`` (file must be idle).

    Raises:
        RunLockedError: A writer held the file for ``lock_timeout`` seconds."""
    connection = open_run_file(run_path(results_dir, run_id), read_only=True, lock_timeout=lock_timeout)
    try:
        hypotheses = dict(
            connection.execute(
                "SELECT question_id, hypothesis FROM answers WHERE status IS DISTINCT FROM 'failed' "
                "AND hypothesis IS NOT NULL"
            ).fetchall()
        )
        roles = ", ".join(f"'{role}'" for role in _PREPARE_ROLES)
        orphans = {
            row[0]
            for row in connection.execute(
                "SELECT conversation_id FROM steps UNION SELECT conversation_id FROM events "
                f"UNION SELECT conversation_id FROM model_calls WHERE role IN ({roles}) "
                "EXCEPT SELECT conversation_id FROM conversations WHERE phase = 'prepare' AND status IN ('done', 'failed')"
            ).fetchall()
            if row[0] is not None
        }
    except duckdb.Error as error:
        raise ResumeError(f"cannot read run {run_id!r} to resume it: {error}") from error
    finally:
        connection.close()
    return ResumeState(hypotheses=hypotheses, orphaned_prepare=frozenset(orphans))


__all__ = ["ResumeError", "ResumeState", "check_resume_target", "find_resumable_run", "read_resume_state"]
