"""Small synthetic results frames with exactly the columns of docs/results-schema.md."""

from __future__ import annotations

import io
from typing import Any

import pandas as pd
from matplotlib.axes import Axes

T0 = pd.Timestamp("2024-05-01 09:00", tz="UTC")

STEP_COLUMNS = [
    "run_id",
    "conversation_id",
    "thread_id",
    "step",
    "ts",
    "message_id",
    "pending_tokens",
    "threshold",
    "observation_tokens",
    "reflect_threshold",
    "block_after",
    "buffered_chunks",
    "buffered_message_tokens",
    "generation",
    "context_tokens",
    "blocked_s",
    "observed",
    "activated",
    "reflected",
]
EVENT_COLUMNS = [
    "run_id",
    "conversation_id",
    "seq",
    "ts",
    "kind",
    "type",
    "cycle_id",
    "operation_type",
    "triggered_by",
    "tokens_in",
    "tokens_out",
    "duration_ms",
    "record_id",
    "thread_id",
    "generation",
    "payload",
]
CALL_COLUMNS = [
    "run_id",
    "conversation_id",
    "call_id",
    "role",
    "requested_model",
    "resolved_model",
    "tier",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "latency_s",
    "started_at",
    "attempts",
    "cached",
    "error",
    "cycle_id",
]
ANSWER_COLUMNS = [
    "run_id",
    "conversation_id",
    "question_id",
    "question_type",
    "is_abstention",
    "category",
    "question",
    "gold",
    "hypothesis",
    "question_date",
    "context_tokens",
    "full_history_tokens",
    "answer_model",
    "status",
    "error",
    # answers_df always has these three score columns, and one more per other scorer that ran
    "judge_correct",
    "f1",
    "retention",
    "judge",
]
METRIC_COLUMNS = ["run_id", "name", "group_key", "value", "lo", "hi", "n"]


def minutes(n: float) -> pd.Timestamp:
    """``n`` minutes after the synthetic conversation starts."""
    return T0 + pd.Timedelta(minutes=n)


def _frame(columns: list[str], defaults: dict[str, Any], rows: list[dict[str, Any]]) -> pd.DataFrame:
    unknown = {key for row in rows for key in row} - set(columns)
    assert not unknown, f"test frame uses columns outside the schema: {unknown}"
    return pd.DataFrame([{**{c: defaults.get(c) for c in columns}, **row} for row in rows], columns=columns)


def steps_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """``steps_df`` rows; each row needs at least ``step``, the rest has neutral defaults."""
    full = []
    for row in rows:
        step = row["step"]
        full.append({"ts": minutes(step), "message_id": f"m{step}", **row})
    return _frame(
        STEP_COLUMNS,
        {
            "run_id": "R1",
            "conversation_id": "c1",
            "thread_id": "t1",
            "pending_tokens": 0,
            "threshold": 30_000,
            "observation_tokens": 0,
            "reflect_threshold": 40_000,
            "block_after": 36_000,
            "buffered_chunks": 0,
            "buffered_message_tokens": 0,
            "generation": 0,
            "context_tokens": 0,
            "blocked_s": 0.0,
            "observed": False,
            "activated": False,
            "reflected": False,
        },
        full,
    )


def sawtooth_steps(conversation_id: str = "c1") -> pd.DataFrame:
    """Eight steps: pending climbs past the threshold, a sync observation at step 3, an activation
    at step 6 (after two buffered chunks), a reflection at step 7; 2.5 s blocked at step 3."""
    pending = [10_000, 20_000, 31_000, 0, 12_000, 24_000, 6_000, 9_000]
    observations = [0, 0, 0, 5_000, 5_000, 5_000, 41_000, 15_000]
    chunks = [0, 0, 0, 0, 1, 2, 0, 0]
    return steps_frame(
        [
            {
                "conversation_id": conversation_id,
                "step": i,
                "pending_tokens": pending[i],
                "observation_tokens": observations[i],
                "buffered_chunks": chunks[i],
                "buffered_message_tokens": [0, 0, 0, 0, 8_000, 16_000, 0, 0][i],
                "blocked_s": 2.5 if i == 3 else 0.0,
                "observed": i == 3,
                "activated": i == 6,
                "reflected": i == 7,
            }
            for i in range(8)
        ]
    )


def events_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """``events_df`` rows; each row needs ``ts``, ``type`` (and usually ``operation_type``)."""
    full = [{"seq": i, **row} for i, row in enumerate(rows)]
    return _frame(
        EVENT_COLUMNS,
        {
            "run_id": "R1",
            "conversation_id": "c1",
            "kind": "data",
            "thread_id": "t1",
            "operation_type": "observation",
            "payload": "{}",
        },
        full,
    )


def calls_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """``calls_df`` rows; each row needs ``role`` and the token/cost numbers it cares about."""
    full = [{"call_id": f"k{i}", **row} for i, row in enumerate(rows)]
    return _frame(
        CALL_COLUMNS,
        {
            "run_id": "R1",
            "conversation_id": "c1",
            "requested_model": "omlab/observer",
            "resolved_model": "omlab/observer",
            "tier": None,
            "input_tokens": 0,
            "output_tokens": 0,
            "cost_usd": 0.0,
            "latency_s": 0.1,
            "attempts": 1,
            "cached": False,
        },
        full,
    )


def answers_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """``answers_df`` rows (joined with scores: ``judge``, ``f1``, ``retention``)."""
    full = [{"question_id": f"q{i}", **row} for i, row in enumerate(rows)]
    return _frame(
        ANSWER_COLUMNS,
        {"run_id": "R1", "conversation_id": "c1", "is_abstention": False, "status": "done"},
        full,
    )


def metrics_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """``metrics_df`` rows."""
    return _frame(METRIC_COLUMNS, {"run_id": "R1", "name": "accuracy"}, rows)


def render(ax: Axes) -> bytes:
    """Draw the figure to PNG bytes (Agg) and return them; fails if drawing raises."""
    buffer = io.BytesIO()
    ax.figure.savefig(buffer, format="png", dpi=40)
    data = buffer.getvalue()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return data


def no_data_note(ax: Axes) -> str | None:
    """The text of the "no data" note on ``ax``, if any."""
    notes = [t.get_text() for t in ax.texts if t.get_text().startswith("no data")]
    return notes[0] if notes else None


def horizontal_lines(ax: Axes) -> dict[str, float]:
    """Label -> y of every ``axhline`` on ``ax`` (two equal y values across the whole x range)."""
    found = {}
    for line in ax.lines:
        xs, ys = line.get_xdata(), line.get_ydata()
        if len(ys) == 2 and ys[0] == ys[1] and list(xs) == [0, 1]:
            found[line.get_label()] = float(ys[0])
    return found


def vertical_lines(ax: Axes) -> dict[str, float]:
    """Label -> x of every ``axvline`` on ``ax``."""
    found = {}
    for line in ax.lines:
        xs, ys = line.get_xdata(), line.get_ydata()
        if len(xs) == 2 and xs[0] == xs[1] and list(ys) == [0, 1]:
            found[line.get_label()] = float(xs[0])
    return found


def legend_texts(ax: Axes) -> list[str]:
    """The labels in the legend of ``ax``."""
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend is not None else []


def title(ax: Axes) -> str:
    """The plot title (house style puts it on the left)."""
    return ax.get_title(loc="left")
