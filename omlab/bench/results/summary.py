"""Run summaries: a run's header and whole-run metrics in a small JSON file beside its run file.

Listing a folder of hundreds of runs by opening each DuckDB file costs tens of milliseconds a file;
a summary costs a fraction of one. :func:`write_summary` is called by the writer when it closes a
run (after the file is closed, so the summary records the file's final size and time);
:func:`read_summary` returns it only while the run file still has that size and time, so a run
reopened by a resume, or changed by anything else, is read from its file again (and summarised
again when its writer closes it).
"""

from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from omlab.bench.results.catalog import ResultsCatalog, TableRead
from omlab.bench.results.layout import parts_path, run_path, summary_path

log = logging.getLogger("omlab.bench.results")

SUMMARY_VERSION = 1


def write_summary(results_dir: str | Path, run_id: str) -> Path | None:
    """Write run ``run_id``'s summary from its (closed) file; None when it could not be written
    (a reader then opens the run file instead, as without a summary)."""
    path = run_path(results_dir, run_id)
    try:
        frames = ResultsCatalog(results_dir).read_tables(
            run_id,
            {"runs": TableRead("runs"), "metrics": TableRead("metrics", {"group_key": "all"}, ("name", "value"))},
        )
        if frames["runs"].empty:
            return None
        header = frames["runs"].iloc[-1]
        stat = path.stat()
        summary = {
            "version": SUMMARY_VERSION,
            "file_size": stat.st_size,
            "file_mtime_ns": stat.st_mtime_ns,
            "runs": {name: _json_value(value) for name, value in header.items()},
            "metrics": {str(n): _json_value(v) for n, v in zip(frames["metrics"]["name"], frames["metrics"]["value"])},
        }
        target = summary_path(results_dir, run_id)
        partial = target.with_name(target.name + ".tmp")
        partial.write_text(json.dumps(summary), encoding="utf-8")
        os.replace(partial, target)
        return target
    except Exception:  # a summary is an optimisation: never fail a run for it
        log.warning("could not write the summary of run %s", run_id, exc_info=True)
        return None


def read_summary(results_dir: str | Path, run_id: str) -> dict[str, Any] | None:
    """Run ``run_id``'s summary (``runs``: its header, ``metrics``: ``{name: value}`` of the
    whole-run metrics), or None when there is none or the run file changed since it was written."""
    if parts_path(results_dir, run_id).exists():  # a writer holds the run: read its live snapshot
        return None
    try:
        text = summary_path(results_dir, run_id).read_text(encoding="utf-8")
        stat = run_path(results_dir, run_id).stat()
        summary = json.loads(text)
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict) or summary.get("version") != SUMMARY_VERSION:
        return None
    if (summary.get("file_size"), summary.get("file_mtime_ns")) != (stat.st_size, stat.st_mtime_ns):
        return None
    return summary


def _json_value(value: Any) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


__all__ = ["SUMMARY_VERSION", "read_summary", "write_summary"]
