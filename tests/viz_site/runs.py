"""Small runs written with RunWriter for the run browser's tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omlab.bench.results import RunWriter

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def write_run(
    results_dir: Path,
    run_id: str,
    *,
    suite: str = "quick",
    config_name: str = "default",
    config: dict | None = None,
    metrics: dict[str, float] | None = None,
    status: str = "finished",
    questions: int = 2,
) -> str:
    """A finished (or ``status``) run with a header, whole-run metrics, answers, scores and calls."""
    config = {"engine": {"observation": {"messageTokens": 4000}}, **(config or {})}
    info = {
        "suite": suite,
        "config_name": config_name,
        "config_hash": f"h-{config_name}",
        "config_json": json.dumps(config),
    }
    with RunWriter(results_dir, run_id, provenance={"git_commit": None}, run_info=info) as writer:
        writer.add_answers(
            [
                {
                    "question_id": f"q{i}",
                    "conversation_id": "c1",
                    "question_type": "single-session-user",
                    "question": f"What is fact {i}?",
                    "gold": f"fact {i}",
                    "hypothesis": f"fact {i}" if i % 2 == 0 else "no idea",
                    "status": "ok",
                }
                for i in range(questions)
            ]
        )
        writer.add_scores(
            [
                {"question_id": f"q{i}", "scorer": "judge", "value": float(i % 2 == 0), "correct": i % 2 == 0}
                for i in range(questions)
            ]
        )
        writer.add_model_calls(
            [
                {
                    "conversation_id": "c1",
                    "call_id": f"{run_id}-call{i}",
                    "role": "actor",
                    "requested_model": "omlab/reader",
                    "resolved_model": "omlab/reader",
                    "input_tokens": 100 + i,
                    "output_tokens": 5,
                    "cost_usd": 0.001,
                    "latency_s": 0.5,
                    "started_at": T0 + timedelta(seconds=i),
                    "cached": False,
                    "question_id": f"q{i}",
                }
                for i in range(questions)
            ]
        )
        writer.add_metrics([{"name": name, "value": value, "n": questions} for name, value in (metrics or {}).items()])
        if status != "finished":
            writer.close(status)
    return run_id
