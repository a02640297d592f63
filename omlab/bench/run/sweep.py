"""Sweeps: every grid cell of a suite as its own run, and continuing a sweep that was cut short.

A sweep has an id (recorded in each of its runs' ``config_json.sweep_id`` and notes). Running a
suite's sweep again continues the latest sweep of that suite when it is unfinished — some cell
of the current grid has no finished run in it — instead of starting over:

* a cell whose run in that sweep finished (same ``config_hash``, so same configuration and
  dataset) is reused as it is: nothing runs, no second run is made;
* a cell whose run was cut short is resumed (the run's own checkpoints: nothing repeated, no
  duplicate rows);
* a cell that never started runs now, in the same sweep.

So the continued sweep has exactly one run per cell. A sweep whose cells all finished is not
continued: running it again starts a new sweep (``new=True`` always does). If the suite changed
so that no cell of the latest sweep matches the grid any more, a new sweep starts too.
"""

from __future__ import annotations

import dataclasses
import secrets
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from omlab.bench.results import answers_df, conversations_df, metrics_df, runs_df
from omlab.bench.results.run_config import sweep_id_of
from omlab.bench.run.options import RunOptions, RunSummary
from omlab.bench.run.runner import cell_config_hash, run_cells
from omlab.bench.suite.preflight import preflight
from omlab.bench.suite.suite_file import Suite, SuiteCell, expand_grid, load_suite


@dataclass(frozen=True, slots=True)
class SweepResult:
    """What a sweep run did: its id, one summary per grid cell (grid order), and whether it
    continued an earlier, unfinished sweep."""

    sweep_id: str
    summaries: list[RunSummary]
    continued: bool

    @property
    def reused(self) -> list[str]:
        """Run ids of the cells taken as they were from the sweep being continued."""
        return [summary.run_id for summary in self.summaries if summary.reused]


def run_sweep(suite: Suite | str | Path, options: RunOptions | None = None, *, new: bool = False) -> SweepResult:
    """Run every cell of ``suite``'s grid, continuing its latest unfinished sweep unless ``new``.

    ``options.sweep_id``, when set, names the sweep to continue (complete or not), or the id of
    the new sweep when no run of that sweep matches the grid.
    """
    suite = suite if isinstance(suite, Suite) else load_suite(suite)
    options = options or RunOptions()
    checked = preflight(suite, options.limit)  # before any model call; raises SuiteError
    cells = expand_grid(suite)
    hashes = [cell_config_hash(cell, options) for cell in cells]
    explicit = options.sweep_id
    previous = None if new else (explicit or latest_sweep_id(options.results_dir, suite.name))
    finished: dict[str, str] = {}
    continued = False
    if previous is not None and _belongs_to_grid(options.results_dir, previous, hashes):
        finished = _finished_runs(options.results_dir, previous)
        # A named sweep is continued even when complete (nothing runs; its table is rebuilt).
        continued = explicit is not None or not all(h in finished for h in hashes)
    if not continued:
        finished = {}
    sweep_id = previous if continued else (explicit or secrets.token_hex(4))
    todo = [cell for cell, h in zip(cells, hashes, strict=True) if h not in finished]
    ran = iter(run_cells(todo, dataclasses.replace(options, sweep_id=sweep_id), checked=checked))
    summaries = [
        _reused_summary(options.results_dir, cell, h, finished[h]) if h in finished else next(ran)
        for cell, h in zip(cells, hashes, strict=True)
    ]
    return SweepResult(sweep_id=sweep_id, summaries=summaries, continued=continued)


def latest_sweep_id(results_dir: str | Path, suite: str) -> str | None:
    """The sweep id of the most recently started run of ``suite`` that belongs to a sweep."""
    runs = _runs(results_dir)
    if runs.empty:
        return None
    of_suite = runs[(runs["suite"] == suite) & runs["sweep_id"].notna()]
    if of_suite.empty:
        return None
    return str(of_suite.sort_values(["started_at", "run_id"]).iloc[-1]["sweep_id"])


def _runs(results_dir: str | Path) -> pd.DataFrame:
    if not (Path(results_dir) / "runs").is_dir():
        return pd.DataFrame(columns=["run_id", "suite", "config_hash", "status", "started_at", "sweep_id"])
    runs = runs_df(results_dir)
    return runs.assign(sweep_id=runs["config_json"].map(sweep_id_of))


def _finished_runs(results_dir: str | Path, sweep_id: str) -> dict[str, str]:
    """``config_hash`` → the newest finished run of sweep ``sweep_id`` with it."""
    runs = _runs(results_dir)
    done = runs[(runs["sweep_id"] == sweep_id) & (runs["status"] == "finished")].sort_values("run_id")
    return dict(zip(done["config_hash"], done["run_id"], strict=True))


def _belongs_to_grid(results_dir: str | Path, sweep_id: str, hashes: list[str]) -> bool:
    runs = _runs(results_dir)
    return bool(set(runs.loc[runs["sweep_id"] == sweep_id, "config_hash"]) & set(hashes))


def _reused_summary(results_dir: str | Path, cell: SuiteCell, config_hash: str, run_id: str) -> RunSummary:
    prepared = conversations_df(results_dir, run_id, phase="prepare")
    return RunSummary(
        run_id=run_id,
        suite=cell.suite.name,
        config_name=cell.name,
        config_hash=config_hash,
        status="finished",
        resumed=False,
        n_conversations=int(prepared["conversation_id"].nunique()),
        n_questions=len(answers_df(results_dir, run_id)),
        wall_s=0.0,
        metrics=metrics_df(results_dir, run_id),
        reused=True,
    )


__all__ = ["SweepResult", "latest_sweep_id", "run_sweep"]
