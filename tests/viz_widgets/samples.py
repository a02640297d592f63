"""A small sample conversation, settings that exercise every engine path on it, and a results
directory holding simulations as runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from omlab.bench.report.metrics import RunFrames, compute_metrics, metrics_records
from omlab.bench.results import RunWriter
from omlab.viz.simulate import Sample, SimulationResult, sample_conversation

SMALL = {"message_tokens": 1200, "observation_tokens": 1600, "observer_latency_s": 30.0}
"""On :func:`small_sample`: buffered chunks, activations, synchronous observations (blocking),
synchronous and buffered reflections all happen."""


def small_sample() -> Sample:
    """~8k tokens, 154 messages, a turn a second (cached by ``sample_conversation``)."""
    return sample_conversation(3, 8_000)


def write_simulation(results_dir: Path, run_id: str, result: SimulationResult, config_name: str) -> None:
    """Record ``result`` as a finished run ``run_id`` (steps, events, calls and its metrics)."""

    def rows(frame: Any) -> list[dict[str, Any]]:
        records = frame.drop(columns=["run_id"]).to_dict("records")
        return [{k: (None if _missing(v) else v) for k, v in record.items()} for record in records]

    info = {"suite": "what-if-tests", "config_name": config_name, "config_json": result.options}
    with RunWriter(results_dir, run_id, run_info=info, provenance={"git_commit": None}) as writer:
        writer.add_steps(rows(result.steps))
        writer.add_events(rows(result.events))
        writer.add_model_calls(rows(result.calls))
        frames = RunFrames(
            steps=result.steps, events=result.events, calls=result.calls, answers=pd.DataFrame(), scores=pd.DataFrame()
        )
        metrics = compute_metrics(frames, dataset_kind="synthetic")
        writer.add_metrics(metrics_records(metrics))


def _missing(value: Any) -> bool:
    return value is None or (not isinstance(value, (str, list, dict)) and bool(pd.isna(value)))
