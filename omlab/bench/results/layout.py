"""Where run files live under a results directory.

::

    <results_dir>/runs/<run_id>.duckdb                    the run (the truth)
    <results_dir>/runs/<run_id>.parts/<table>/<seq>.parquet   live snapshot while a writer holds it
    <results_dir>/runs/<run_id>.summary.json              header and whole-run metrics, written at close
"""

from __future__ import annotations

from pathlib import Path

RUN_FILE_SUFFIX = ".duckdb"
PARTS_SUFFIX = ".parts"


def runs_dir(results_dir: str | Path) -> Path:
    """The folder holding the run files."""
    return Path(results_dir).expanduser() / "runs"


def run_path(results_dir: str | Path, run_id: str) -> Path:
    """The DuckDB file of run ``run_id``."""
    return runs_dir(results_dir) / f"{run_id}{RUN_FILE_SUFFIX}"


def parts_path(results_dir: str | Path, run_id: str) -> Path:
    """The folder of Parquet shards a running writer publishes for run ``run_id``."""
    return runs_dir(results_dir) / f"{run_id}{PARTS_SUFFIX}"


def list_run_ids(results_dir: str | Path) -> list[str]:
    """Ids of the runs with a file under ``results_dir``, sorted (generated ids sort by start time)."""
    folder = runs_dir(results_dir)
    if not folder.is_dir():
        return []
    return sorted(path.name[: -len(RUN_FILE_SUFFIX)] for path in folder.glob(f"*{RUN_FILE_SUFFIX}") if path.is_file())


SUMMARY_SUFFIX = ".summary.json"


def summary_path(results_dir: str | Path, run_id: str) -> Path:
    """The small JSON summary of run ``run_id`` written when its writer closes it (header and
    whole-run metrics, for listing many runs without opening each file)."""
    return runs_dir(results_dir) / f"{run_id}{SUMMARY_SUFFIX}"
