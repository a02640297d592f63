"""What production's Observational Memory did beside what omlab's replay did, as DataFrames.

For a run on a ``kind = "mastra"`` dataset the imported OM records and markers (what
``@mastra/memory`` stored) are set beside the run's ``steps`` (what the replay did with its own
settings), per thread:

* :func:`log_over_time_df`: the observation log's tokens over time. omlab's comes from its steps;
  production's is rebuilt from its markers: each activation or synchronous observation adds its
  chunk's observation tokens, each reflection activation resets the log to its reflected size
  (the stored record's final ``observationTokenCount`` is the check on that reconstruction);
* :func:`generations_df`: the peak log tokens of each generation and when it started (a
  reflection starts the next one);
* :func:`comparison_summary_df`: one row per thread and source (generations, reflections, final
  and peak log tokens, mean peak per generation).

:func:`production_comparison` reads all of that for one run. Plots are drawn elsewhere
(``omlab.viz.plots.production``) from these frames.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from omlab.bench.datasets.mastra import markers_df, om_records_df, read_mastra
from omlab.bench.datasets.mastra.source import is_postgres
from omlab.bench.results import ResultsCatalog, runs_df

SOURCES = ("production", "omlab")
LOG_COLUMNS = ["source", "conversation_id", "ts", "observation_tokens", "generation"]
GENERATION_COLUMNS = ["source", "conversation_id", "generation", "started_at", "peak_tokens"]


@dataclass(frozen=True, slots=True)
class ProductionComparison:
    """The three frames of one run's comparison (see the module docstring)."""

    log: pd.DataFrame
    generations: pd.DataFrame
    summary: pd.DataFrame


def production_log_df(markers: pd.DataFrame) -> pd.DataFrame:
    """Production's observation log tokens over time, rebuilt from its ``data-om-*`` markers."""
    rows: list[dict[str, Any]] = []
    if markers.empty:
        return pd.DataFrame(columns=LOG_COLUMNS)
    for thread, group in markers.groupby("conversation_id", sort=True):
        tokens, generation = 0, 0
        for marker in group.sort_values("ts", kind="stable").itertuples(index=False):
            added = marker.tokens_out if pd.notna(marker.tokens_out) else None
            if marker.type == "data-om-activation" and marker.operation_type == "reflection" and added is not None:
                tokens, generation = int(added), generation + 1
            elif marker.type in ("data-om-activation", "data-om-observation-end") and added is not None:
                tokens += int(added)
            elif marker.type == "data-om-reflection-end" and added is not None:
                tokens, generation = int(added), generation + 1
            else:
                continue
            rows.append(
                {
                    "source": "production",
                    "conversation_id": thread,
                    "ts": marker.ts,
                    "observation_tokens": tokens,
                    "generation": generation,
                }
            )
    return pd.DataFrame(rows, columns=LOG_COLUMNS)


def replay_log_df(steps: pd.DataFrame) -> pd.DataFrame:
    """omlab's observation log tokens after every replay step."""
    if steps.empty:
        return pd.DataFrame(columns=LOG_COLUMNS)
    frame = steps[["conversation_id", "ts", "observation_tokens", "generation"]].copy()
    frame.insert(0, "source", "omlab")
    return frame.sort_values(["conversation_id", "ts"], kind="stable").reset_index(drop=True)


def log_over_time_df(markers: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """Both sources' log tokens over time (``LOG_COLUMNS``), production first."""
    parts = [frame for frame in (production_log_df(markers), replay_log_df(steps)) if not frame.empty]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=LOG_COLUMNS)


def generations_df(log: pd.DataFrame, records: pd.DataFrame | None = None) -> pd.DataFrame:
    """Peak log tokens per generation and source; production's peaks are the stored records'
    final ``observationTokenCount`` when ``records`` are given (what Mastra itself counted)."""
    if log.empty:
        return pd.DataFrame(columns=GENERATION_COLUMNS)
    grouped = log.groupby(["source", "conversation_id", "generation"], sort=True)
    frame = grouped.agg(started_at=("ts", "min"), peak_tokens=("observation_tokens", "max")).reset_index()
    if records is not None and not records.empty:
        stored = records.set_index(["thread_id", "generation"])["observation_tokens"]
        for index, row in frame[frame["source"] == "production"].iterrows():
            key = (row["conversation_id"], row["generation"])
            if key in stored.index:
                frame.loc[index, "peak_tokens"] = int(stored.loc[key])
    frame["peak_tokens"] = frame["peak_tokens"].astype(int)
    return frame[GENERATION_COLUMNS]


def comparison_summary_df(log: pd.DataFrame, generations: pd.DataFrame) -> pd.DataFrame:
    """One row per thread and source: generations, reflections, final, peak and mean-peak log tokens."""
    rows = []
    for (thread, source), group in log.groupby(["conversation_id", "source"], sort=True):
        gens = generations[(generations["conversation_id"] == thread) & (generations["source"] == source)]
        rows.append(
            {
                "conversation_id": thread,
                "source": source,
                "generations": len(gens),
                "reflections": int(group["generation"].max()),
                "final_tokens": int(group.sort_values("ts", kind="stable")["observation_tokens"].iloc[-1]),
                "peak_tokens": int(group["observation_tokens"].max()),
                "mean_peak_per_generation": float(gens["peak_tokens"].mean()) if len(gens) else 0.0,
            }
        )
    order = {source: i for i, source in enumerate(SOURCES)}
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.sort_values(["conversation_id", "source"], key=lambda s: s.map(order) if s.name == "source" else s)


def compare(records: pd.DataFrame, markers: pd.DataFrame, steps: pd.DataFrame) -> ProductionComparison:
    """The comparison frames from production's records and markers and a run's steps."""
    log = log_over_time_df(markers, steps)
    generations = generations_df(log, records)
    return ProductionComparison(log, generations, comparison_summary_df(log, generations))


def production_location(config: dict[str, Any]) -> str | None:
    """The Mastra database a run read (a file resolved against its suite file, or a URL), else None."""
    dataset = config.get("dataset") or {}
    path = dataset.get("path")
    if dataset.get("kind") != "mastra" or not isinstance(path, str):
        return None
    if is_postgres(path) or Path(path).is_absolute():
        return path
    suite_file = config.get("suite_file")
    return str(Path(suite_file).resolve().parent / path) if suite_file else path


def production_comparison(results_dir: str | Path, run_id: str) -> ProductionComparison | None:
    """The comparison of run ``run_id`` with the production database it replayed; None for a run
    on another kind of dataset or without steps."""
    catalog = ResultsCatalog(results_dir)
    header = runs_df(catalog)
    header = header[header["run_id"] == run_id]
    if header.empty:
        return None
    config = json.loads(header.iloc[0]["config_json"] or "{}")
    location = production_location(config)
    if location is None:
        return None
    dataset = config["dataset"]
    since, until = (
        pd.Timestamp(v).to_pydatetime() if v else None for v in (dataset.get("since"), dataset.get("until"))
    )
    steps = catalog.read_table("steps", run_id)
    if steps.empty:
        return None
    imported = read_mastra(
        location,
        resource=dataset.get("resource"),
        threads=sorted(set(steps["conversation_id"])),
        since=since,
        until=until,
    )
    return compare(om_records_df(imported), markers_df(imported), steps)
