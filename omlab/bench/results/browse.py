"""What the run browser (``omlab view``) shows, read from the results folder: nothing here writes.

* :func:`run_list`: one row per run file: suite, configuration, status, tags, sweep, start,
  duration and every whole-run metric (``m.<name>`` columns); unreadable files are rows with
  status ``unreadable`` and their problem, as ``omlab runs`` lists them.
* :func:`filter_runs` / :func:`sort_runs`: the list's filters and sort keys (a bad key is refused
  with the valid ones named).
* :func:`run_header`, :func:`config_of`, :func:`config_diff`, :func:`metric_diff`: one run's header
  and configuration, and what differs between two runs.
* :func:`call_row`: one model call of a run.

A closed run is listed from its summary (:mod:`omlab.bench.results.summary`, written by its writer
at close) without opening its file; a run without a valid summary (running, resumed since, or
written before summaries existed) is read from its file, which is opened once for its ``runs`` and
``metrics`` rows together.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from omlab.bench.results.catalog import ResultsCatalog, TableRead, UnreadableRunWarning
from omlab.bench.results.frames import calls_df, metrics_df
from omlab.bench.results.run_config import sweep_id_of
from omlab.bench.results.summary import read_summary
from omlab.bench.results.tags import read_tags

METRIC_PREFIX = "m."
"""Prefix of :func:`run_list`'s metric columns (``m.accuracy``, ``m.cost_usd``…)."""
LIST_COLUMNS: tuple[str, ...] = (
    "run_id",
    "suite",
    "config_name",
    "status",
    "tags",
    "sweep_id",
    "started_at",
    "finished_at",
    "duration_s",
    "problem",
)
""":func:`run_list`'s fixed columns, before the metric columns."""
FILTERS: tuple[str, ...] = ("suite", "config", "status", "tag", "sweep", "text")
"""The filters :func:`filter_runs` takes."""


def run_list(results_dir: str | Path) -> pd.DataFrame:
    """Every run under ``results_dir``, newest first (:data:`LIST_COLUMNS`, then one ``m.<name>``
    column per whole-run metric, NaN where a run lacks it).

    A run whose file cannot be read is a row with status ``unreadable`` and ``problem`` saying why
    (the check ``omlab runs`` makes); a run a writer holds is read from its live snapshot.
    """
    catalog = ResultsCatalog(results_dir)
    tags = read_tags(results_dir)
    rows: list[dict[str, Any]] = []
    reads = {
        "runs": TableRead("runs"),
        "metrics": TableRead("metrics", {"group_key": "all"}, ("name", "value")),
    }
    for run_id in catalog.run_ids():
        summary = read_summary(results_dir, run_id)
        if summary is not None:
            header, metrics = summary["runs"], summary["metrics"]
        else:
            with warnings.catch_warnings():
                # a damaged file is a row of the list with its problem, not a warning
                warnings.simplefilter("ignore", UnreadableRunWarning)
                frames = catalog.read_tables(run_id, reads)
            if frames["runs"].empty:
                problem = catalog.problem_of(run_id)
                rows.append(
                    {
                        "run_id": run_id,
                        "status": "unreadable" if problem else "started",
                        "tags": ",".join(tags.get(run_id, [])),
                        "problem": problem or "no runs row written yet",
                    }
                )
                continue
            header = frames["runs"].iloc[-1].to_dict()
            metrics = dict(zip(frames["metrics"]["name"], frames["metrics"]["value"], strict=True))
        rows.append(_list_row(run_id, header, metrics, tags.get(run_id, [])))
    frame = pd.DataFrame(rows)
    for column in LIST_COLUMNS:
        if column not in frame:
            frame[column] = pd.Series(dtype="object")
    for column in ("suite", "config_name", "status", "tags", "sweep_id", "problem"):
        frame[column] = frame[column].fillna("").astype(str)
    for column in ("started_at", "finished_at"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    frame["duration_s"] = pd.to_numeric(frame["duration_s"], errors="coerce").astype("float64")
    metric_columns = sorted(c for c in frame.columns if c.startswith(METRIC_PREFIX))
    frame = frame[list(LIST_COLUMNS) + metric_columns]
    # generated run ids sort by start time
    return frame.sort_values("run_id", ascending=False, ignore_index=True)


def filter_runs(frame: pd.DataFrame, **filters: str | None) -> pd.DataFrame:
    """Rows of :func:`run_list` matching every given filter (None or ``""``: no filter).

    ``suite``, ``config``, ``status`` and ``sweep`` match exactly; ``tag`` matches one of a run's
    tags; ``text`` matches a substring (any case) of the run id, suite, configuration or tags.

    Raises:
        ValueError: An unknown filter name (the valid ones are named).
    """
    unknown = set(filters) - set(FILTERS)
    if unknown:
        raise ValueError(f"unknown run filter(s) {', '.join(sorted(unknown))}; filters are: {', '.join(FILTERS)}")
    keep = pd.Series(True, index=frame.index)
    exact = {"suite": "suite", "config": "config_name", "status": "status", "sweep": "sweep_id"}
    for name, column in exact.items():
        if filters.get(name):
            keep &= frame[column] == filters[name]
    if filters.get("tag"):
        keep &= frame["tags"].map(lambda tags: filters["tag"] in tags.split(","))
    if filters.get("text"):
        needle = str(filters["text"]).lower()
        haystack = frame["run_id"] + " " + frame["suite"] + " " + frame["config_name"] + " " + frame["tags"]
        keep &= haystack.str.lower().str.contains(needle, regex=False)
    return frame[keep]


def sort_keys(frame: pd.DataFrame) -> list[str]:
    """The columns :func:`sort_runs` accepts for this list (fixed columns and its metrics)."""
    return [c for c in frame.columns if c not in ("problem", "finished_at")]


def sort_runs(frame: pd.DataFrame, key: str = "started_at", *, descending: bool = True) -> pd.DataFrame:
    """:func:`run_list` rows sorted on ``key`` (missing values last, ties by run id).

    Raises:
        ValueError: A key that is not a column of the list (the valid ones are named).
    """
    if key not in sort_keys(frame):
        raise ValueError(f"cannot sort runs on {key!r}; sort keys are: {', '.join(sort_keys(frame))}")
    return frame.sort_values(
        [key, "run_id"], ascending=not descending, na_position="last", kind="stable", ignore_index=True
    )


def run_header(results_dir: str | Path | ResultsCatalog, run_id: str) -> pd.Series:
    """Run ``run_id``'s ``runs`` row.

    Raises:
        ValueError: No such run, or a file with no ``runs`` row (it cannot be read).
    """
    catalog = results_dir if isinstance(results_dir, ResultsCatalog) else ResultsCatalog(results_dir)
    header = catalog.read_table("runs", run_id)
    if header.empty:
        problem = catalog.problem_of(run_id)
        raise ValueError(f"run {run_id!r} cannot be read: {problem or 'it has no runs row yet'}")
    return header.iloc[-1]


def config_of(header: pd.Series) -> dict[str, Any]:
    """A run's resolved configuration (``runs.config_json``; empty when there is none)."""
    text = header.get("config_json")
    if not isinstance(text, str) or not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"engine.observation.messageTokens": 4000, ...}``: nested mappings as dotted paths (lists
    and scalars are leaves)."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, f"{path}."))
        else:
            flat[path] = value
    return flat


def config_diff(a: Mapping[str, Any], b: Mapping[str, Any], *, ignore: Iterable[str] = ("sweep_id",)) -> pd.DataFrame:
    """The settings that differ between two configurations: ``path``, ``a``, ``b`` (JSON text;
    ``""`` where one side lacks the path), sorted by path; ``ignore`` paths are left out."""
    flat_a, flat_b = flatten(a), flatten(b)
    skipped = set(ignore)
    rows = [
        {"path": path, "a": _json(flat_a, path), "b": _json(flat_b, path)}
        for path in sorted(set(flat_a) | set(flat_b))
        if path not in skipped and flat_a.get(path, _ABSENT) != flat_b.get(path, _ABSENT)
    ]
    return pd.DataFrame(rows, columns=["path", "a", "b"])


def metric_diff(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Two runs' ``metrics`` rows side by side: ``name``, ``group_key``, ``a``, ``b``, ``delta``
    (b - a; NaN where either lacks the metric), whole-run rows first, then by name and group."""
    key = ["name", "group_key"]
    left = a[key + ["value"]].rename(columns={"value": "a"})
    right = b[key + ["value"]].rename(columns={"value": "b"})
    both = left.merge(right, on=key, how="outer")
    both["a"] = pd.to_numeric(both["a"], errors="coerce").astype("float64")
    both["b"] = pd.to_numeric(both["b"], errors="coerce").astype("float64")
    both["delta"] = both["b"] - both["a"]
    both["_rest"] = both["group_key"] != "all"
    return both.sort_values(["_rest", "name", "group_key"], ignore_index=True).drop(columns="_rest")


def compare_runs(results_dir: str | Path, run_a: str, run_b: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(config_diff, metric_diff)`` of two runs."""
    catalog = ResultsCatalog(results_dir)
    config = config_diff(config_of(run_header(catalog, run_a)), config_of(run_header(catalog, run_b)))
    return config, metric_diff(metrics_df(catalog, run_a), metrics_df(catalog, run_b))


def call_row(results_dir: str | Path | ResultsCatalog, run_id: str, call_id: str) -> pd.Series:
    """Model call ``call_id`` of run ``run_id`` (its ``model_calls`` row, with ``cost_usd_paid``).

    Raises:
        ValueError: No such call in the run.
    """
    calls = calls_df(results_dir, run_id)
    hit = calls[calls["call_id"] == call_id]
    if hit.empty:
        raise ValueError(f"run {run_id!r} has no model call {call_id!r}")
    return hit.iloc[-1]


def call_text(
    results_dir: str | Path | ResultsCatalog, run_id: str, call_id: str
) -> tuple[list[dict[str, Any]] | None, str | None]:
    """``(prompt messages, response text)`` of model call ``call_id`` as the run recorded them
    (``call_texts``; credentials were dropped when written); ``(None, None)`` when the run holds no
    text for it (runs before schema 7, calls of a reused prepared memory)."""
    catalog = results_dir if isinstance(results_dir, ResultsCatalog) else ResultsCatalog(results_dir)
    rows = catalog.read_table("call_texts", run_id, {"call_id": call_id})
    if rows.empty:
        return None, None
    return _texts(rows.iloc[-1])


def call_texts(
    results_dir: str | Path | ResultsCatalog, run_id: str
) -> dict[str, tuple[list[dict[str, Any]], str | None]]:
    """Every model call's ``(prompt messages, response text)`` the run recorded, by call id, read
    at once (for a reader that shows every call, as the static site does); a call missing here
    has no text (see :func:`call_text`)."""
    catalog = results_dir if isinstance(results_dir, ResultsCatalog) else ResultsCatalog(results_dir)
    rows = catalog.read_table("call_texts", run_id)
    return {str(row["call_id"]): _texts(row) for _, row in rows.iterrows()}


def _texts(row: pd.Series) -> tuple[list[dict[str, Any]], str | None]:
    prompt = json.loads(row["prompt"]) if isinstance(row["prompt"], str) else []
    response = row["response"] if isinstance(row["response"], str) else None
    return (prompt if isinstance(prompt, list) else []), response


_ABSENT = object()


def _list_row(run_id: str, header: Mapping[str, Any], metrics: Mapping[str, Any], tags: list[str]) -> dict[str, Any]:
    started, finished = pd.Timestamp(header["started_at"]), pd.Timestamp(header.get("finished_at"))
    return {
        "run_id": run_id,
        "suite": _str(header.get("suite")),
        "config_name": _str(header.get("config_name")),
        "status": _str(header.get("status")),
        "tags": ",".join(tags),
        "sweep_id": sweep_id_of(header.get("config_json")) or "",
        "started_at": started,
        "finished_at": finished,
        "duration_s": (finished - started).total_seconds() if not pd.isna(finished) else math.nan,
        "problem": "",
    } | {f"{METRIC_PREFIX}{name}": math.nan if value is None else float(value) for name, value in metrics.items()}


def _json(flat: Mapping[str, Any], path: str) -> str:
    if path not in flat:
        return ""
    return json.dumps(flat[path], sort_keys=True, default=str)


def _str(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA else str(value)


__all__ = [
    "FILTERS",
    "LIST_COLUMNS",
    "METRIC_PREFIX",
    "call_row",
    "call_text",
    "call_texts",
    "compare_runs",
    "config_diff",
    "config_of",
    "filter_runs",
    "flatten",
    "metric_diff",
    "run_header",
    "run_list",
    "sort_keys",
    "sort_runs",
]
