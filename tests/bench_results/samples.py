"""Rows for the results tests, and worker functions run in 'spawn' subprocesses."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omlab.bench.results import RunWriter

T0 = datetime(2024, 5, 1, 9, 30, tzinfo=UTC)
NO_PROVENANCE = {"git_commit": None}


def event_rows(count: int, conversation_id: str = "c1", start: int = 0) -> list[dict]:
    return [
        {
            "conversation_id": conversation_id,
            "ts": T0 + timedelta(seconds=i),
            "type": "data-om-observation-end" if i % 2 else "observation_triggered",
            "cycle_id": f"obs-{i // 2}",
            "tokens_in": 100 + i,
            "tokens_out": 10 + i,
            "payload": {"i": i, "tokensObserved": 100 + i},
        }
        for i in range(start, start + count)
    ]


def open_writer(results_dir: str, run_id: str, **options) -> RunWriter:
    return RunWriter(Path(results_dir), run_id, provenance=NO_PROVENANCE, **options)


def write_run(
    results_dir: str,
    run_id: str,
    batches: int,
    batch_size: int,
    answers: int,
    halfway: object = None,
    go: object = None,
) -> None:
    """A whole run: ``batches`` x ``batch_size`` events, ``answers`` answers, one conversation.
    With ``halfway``/``go`` events: after half the batches, flush, set ``halfway`` and wait for
    ``go``."""
    with open_writer(results_dir, run_id, flush_rows=1000, flush_seconds=0.05) as writer:
        for batch in range(batches):
            if halfway is not None and batch == batches // 2:
                writer.flush()
                halfway.set()
                go.wait(60)
            writer.add_events(event_rows(batch_size, start=batch * batch_size))
        writer.add_answers(
            [
                {"question_id": f"q{i}", "conversation_id": "c1", "hypothesis": f"h{i}", "status": "ok"}
                for i in range(answers)
            ]
        )
        writer.mark_conversation("c1", "prepare", "done")


def write_and_wait(results_dir: str, run_id: str, flushed: object, proceed: object, done: object) -> None:
    """Flush 30 events (+5 unflushed), signal ``flushed``, wait for ``proceed``, then rewrite an
    answer, flush, signal ``done``, wait for ``proceed`` again, and close."""
    writer = open_writer(results_dir, run_id, flush_rows=10_000, flush_seconds=None)
    writer.add_events(event_rows(30))
    writer.add_answers([{"question_id": "q1", "hypothesis": "first", "status": "ok"}])
    writer.flush()
    writer.add_events(event_rows(5, start=30))  # stays in the buffer
    flushed.set()
    proceed.wait(30)
    proceed.clear()
    writer.add_answers([{"question_id": "q1", "hypothesis": "second", "status": "ok"}])
    writer.flush()
    done.set()
    proceed.wait(30)
    writer.close()


def crash_mid_run(results_dir: str, run_id: str) -> None:
    """Write a run partway, flush, buffer a few more rows, then die without closing."""
    writer = open_writer(results_dir, run_id, flush_rows=10_000, flush_seconds=None)
    writer.add_steps([{"conversation_id": "c1", "step": i} for i in range(3)])
    writer.add_events(event_rows(4, "c1"))
    writer.add_model_calls([{"conversation_id": "c1", "role": "observer"}])
    writer.mark_conversation("c1", "prepare", "done")
    writer.add_steps([{"conversation_id": "c2", "step": i} for i in range(2)])
    writer.add_events(event_rows(3, "c2", start=4))
    writer.add_model_calls([{"conversation_id": "c2", "role": "observer"}, {"conversation_id": "c2", "role": "actor"}])
    writer.add_answers(
        [
            {"conversation_id": "c1", "question_id": "q1", "hypothesis": "a", "status": "ok"},
            {"conversation_id": "c1", "question_id": "q2", "status": "failed"},
        ]
    )
    writer.flush()
    writer.add_events(event_rows(7, "c2", start=100))  # never flushed: lost in the crash
    os._exit(3)
