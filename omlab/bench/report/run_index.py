"""The runs under a results directory at a glance: headline numbers, tags, deletion.

What ``omlab runs`` and ``omlab report`` print. Tags live in ``<results_dir>/tags.json``
(``{run_id: [tag, ...]}``) beside the run files, which stay as the harness wrote them.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from omlab.bench.report.metrics import metric_value
from omlab.bench.results import ResultsCatalog, metrics_df, runs_df
from omlab.bench.results.layout import parts_path, run_path, summary_path
from omlab.bench.results.run_config import sweep_id_of
from omlab.bench.results.tags import TAGS_FILE, read_tags

HEADLINE: tuple[tuple[str, str, str], ...] = (
    ("questions", "questions", "count"),
    ("accuracy", "accuracy", "percent"),
    ("retention", "retention", "percent"),
    ("cost_usd", "cost", "usd"),
    ("blocked_s", "blocked", "seconds"),
    ("context_tokens_peak", "peak context", "tokens"),
    ("compression_observation", "compression", "ratio"),
)
"""``(metric, label, kind)`` of the headline numbers, in print order; absent metrics are left out."""


def headline(metrics: pd.DataFrame) -> dict[str, str]:
    """The headline numbers of one run's ``metrics`` rows as ``{label: text}``."""
    shown: dict[str, str] = {}
    for name, label, kind in HEADLINE:
        value = metric_value(metrics, name) if len(metrics) else math.nan
        if not math.isnan(value):
            shown[label] = format_value(value, kind)
    return shown


def headline_text(metrics: pd.DataFrame) -> str:
    """``accuracy 62.5% · cost $0.25 · ...`` (``no metrics yet`` when there are none)."""
    numbers = headline(metrics)
    return " · ".join(f"{label} {text}" for label, text in numbers.items()) or "no metrics yet"


OVERVIEW_COLUMNS = ["run_id", "suite", "config_name", "status", "sweep", "started", "duration", "tags", "headline"]


def runs_overview(
    results_dir: str | Path,
    *,
    suite: str | None = None,
    status: str | None = None,
    tag: str | None = None,
    sweep: str | None = None,
) -> pd.DataFrame:
    """One row per run, newest first: ``run_id``, ``suite``, ``config_name``, ``status``, ``sweep``
    (the sweep's id, ``-`` for a single run), ``started`` (UTC, to the second), ``duration`` (``-``
    while running), ``tags`` and ``headline``; unreadable run files are rows with status
    ``unreadable`` and the problem as their headline. ``suite``, ``status``, ``tag`` and ``sweep``
    keep only the runs that match (all of them)."""
    catalog = ResultsCatalog(results_dir)
    runs = runs_df(catalog)
    metrics = metrics_df(catalog) if len(runs) else pd.DataFrame(columns=["run_id", "name", "group_key", "value"])
    tags = read_tags(results_dir)
    rows = [
        {
            "run_id": str(run.run_id),
            "suite": run.suite,
            "config_name": run.config_name,
            "status": run.status,
            "sweep": sweep_id_of(run.config_json) or "-",
            "started": _when(run.started_at),
            "duration": _duration(run.started_at, run.finished_at),
            "tags": ",".join(tags.get(str(run.run_id), [])),
            "headline": headline_text(metrics[metrics["run_id"] == run.run_id]),
        }
        for run in runs.drop_duplicates("run_id", keep="last").itertuples()
    ]
    rows += [
        {
            "run_id": bad.run_id,
            "suite": "",
            "config_name": "",
            "status": "unreadable",
            "sweep": "-",
            "started": "-",
            "duration": "-",
            "tags": ",".join(tags.get(bad.run_id, [])),
            "headline": bad.problem,
        }
        for bad in catalog.unreadable_runs()
    ]
    frame = pd.DataFrame(rows, columns=OVERVIEW_COLUMNS)
    keep = pd.Series(True, index=frame.index)
    for column, wanted in (("suite", suite), ("status", status), ("sweep", sweep)):
        if wanted is not None:
            keep &= frame[column] == wanted
    if tag is not None:
        keep &= frame["tags"].map(lambda text: tag in text.split(","))
    # generated run ids sort by start time
    return frame[keep].sort_values("run_id", ascending=False, ignore_index=True)


def _when(value: object) -> str:
    if value is None or pd.isna(value):
        return "-"
    return pd.Timestamp(value).tz_convert("UTC").strftime("%Y-%m-%d %H:%M:%S")


def _duration(started: object, finished: object) -> str:
    if started is None or finished is None or pd.isna(started) or pd.isna(finished):
        return "-"
    seconds = (pd.Timestamp(finished) - pd.Timestamp(started)).total_seconds()
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes}m{seconds:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


def tag_run(results_dir: str | Path, run_id: str, add: Iterable[str] = (), remove: Iterable[str] = ()) -> list[str]:
    """Add and remove tags of ``run_id``; return its tags.

    Raises:
        ValueError: A run id with no file.
    """
    _require_run(results_dir, run_id)
    tags = read_tags(results_dir)
    current = [t for t in tags.get(run_id, []) if t not in set(remove)]
    current += [t for t in dict.fromkeys(add) if t not in current]
    if current:
        tags[run_id] = current
    else:
        tags.pop(run_id, None)
    (Path(results_dir) / TAGS_FILE).write_text(json.dumps(tags, indent=1, sort_keys=True) + "\n")
    return current


def delete_run(results_dir: str | Path, run_id: str) -> list[Path]:
    """Delete run ``run_id``'s file (and its live snapshot and tags); return what was removed.

    Raises:
        ValueError: A run id with no file, or a run a writer holds right now.
    """
    _require_run(results_dir, run_id)
    catalog = ResultsCatalog(results_dir)
    if catalog.is_live(run_id):
        raise ValueError(f"run {run_id!r} is being written right now; stop it before deleting it")
    path = run_path(results_dir, run_id)
    removed = []
    for extra in (path, path.with_name(path.name + ".wal"), summary_path(results_dir, run_id)):
        if extra.exists():
            extra.unlink()
            removed.append(extra)
    parts = parts_path(results_dir, run_id)
    if parts.exists():
        shutil.rmtree(parts)
        removed.append(parts)
    tags = read_tags(results_dir)
    if tags.pop(run_id, None) is not None:
        (Path(results_dir) / TAGS_FILE).write_text(json.dumps(tags, indent=1, sort_keys=True) + "\n")
    return removed


def _require_run(results_dir: str | Path, run_id: str) -> None:
    if not run_path(results_dir, run_id).is_file():
        raise ValueError(f"no run {run_id!r} under {Path(results_dir) / 'runs'}")


def format_value(value: float, kind: str) -> str:
    """``value`` as ``omlab runs`` prints a headline number of ``kind`` (``percent``, ``usd``,
    ``seconds``, ``ratio``, ``count``)."""
    if kind == "percent":
        return f"{value:.1%}"
    if kind == "usd":
        return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"
    if kind == "seconds":
        return f"{value:,.1f} s"
    if kind == "ratio":
        return f"{value:.2f}x"
    return f"{value:,.0f}"


__all__ = [
    "HEADLINE",
    "OVERVIEW_COLUMNS",
    "TAGS_FILE",
    "delete_run",
    "format_value",
    "headline",
    "headline_text",
    "read_tags",
    "runs_overview",
    "tag_run",
]
