"""What ``latest`` means where a command takes a run: the latest run that is not a sweep cell.

After the quickstart (a suite run, then a sweep of nine cells) the run a user means by "latest"
is the suite run, not whichever sweep cell happened to finish last; a sweep's cells are named by
their run ids (``omlab runs`` lists them, grouped by sweep). A folder holding nothing but sweep
cells has its latest cell as ``latest``. :meth:`LatestRun.describe` says which run was picked and
what was passed over, so the choice is never silent.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from omlab.bench.results import ResultsCatalog, UnreadableRunWarning
from omlab.bench.results.layout import run_path
from omlab.bench.results.run_config import sweep_id_of
from omlab.bench.results.summary import read_summary


@dataclass(frozen=True, slots=True)
class LatestRun:
    """The run ``latest`` names, with what it is and the newer sweep cells passed over."""

    run_id: str
    suite: str
    config_name: str
    started_at: str
    sweep_id: str = ""
    """The run's own sweep: set only when every readable run is a sweep cell."""
    passed_cells: int = 0
    """Sweep cells newer than the run (not picked)."""
    passed_sweep: str = ""
    """The newest of those cells' sweep."""

    def describe(self) -> str:
        """One line: ``latest: run <id> (<suite> [<config>], started …)`` and why."""
        text = f"latest: run {self.run_id} ({self.suite} [{self.config_name}], started {self.started_at})"
        if self.sweep_id:
            return f"{text}, a cell of sweep {self.sweep_id}: every run here is a sweep cell"
        if self.passed_cells:
            cells = f"{self.passed_cells} newer sweep cell{'s' if self.passed_cells != 1 else ''}"
            return (
                f"{text}; passed over {cells} (latest sweep {self.passed_sweep}): "
                "name a cell by its run id (`omlab runs` lists them)"
            )
        return text


def latest_run(results_dir: str | Path) -> LatestRun:
    """The latest readable run under ``results_dir`` that is not a sweep cell (run ids sort by
    start time), else the latest sweep cell; a damaged file is skipped with an
    ``UnreadableRunWarning``.

    Raises:
        ValueError: No readable run under ``results_dir``.
    """
    catalog = ResultsCatalog(results_dir)
    ids = catalog.run_ids()
    newest_cell: LatestRun | None = None
    passed: list[str] = []
    for run_id in reversed(ids):
        header = _header(catalog, results_dir, run_id)
        if header is None:
            continue
        sweep = sweep_id_of(header.get("config_json")) or ""
        picked = LatestRun(
            run_id=run_id,
            suite=_text(header.get("suite")),
            config_name=_text(header.get("config_name")),
            started_at=_started(header.get("started_at")),
        )
        if not sweep:
            return LatestRun(
                **{**_fields(picked), "passed_cells": len(passed), "passed_sweep": passed[0] if passed else ""}
            )
        passed.append(sweep)
        if newest_cell is None:
            newest_cell = LatestRun(**{**_fields(picked), "sweep_id": sweep})
    if newest_cell is not None:
        return newest_cell
    raise ValueError(f"no {'readable ' if ids else ''}runs under {Path(results_dir) / 'runs'}")


def _header(catalog: ResultsCatalog, results_dir: str | Path, run_id: str) -> dict | None:
    summary = read_summary(results_dir, run_id)
    if summary is not None:
        return summary["runs"]
    problem = catalog.problem_of(run_id)
    if problem is not None:
        warnings.warn(
            f"skipping run {run_id!r}: run file {run_path(results_dir, run_id)} is not a readable DuckDB file: {problem}",
            UnreadableRunWarning,
            stacklevel=3,
        )
        return None
    rows = catalog.read_table("runs", run_id)
    return rows.iloc[-1].to_dict() if len(rows) else {}


def _fields(run: LatestRun) -> dict:
    return {name: getattr(run, name) for name in LatestRun.__slots__}


def _text(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _started(value: object) -> str:
    try:
        stamp = pd.Timestamp(value)
    except (TypeError, ValueError):
        return "?"
    if pd.isna(stamp):
        return "?"
    return stamp.strftime("%Y-%m-%d %H:%M UTC")


__all__ = ["LatestRun", "latest_run"]
