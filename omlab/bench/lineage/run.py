"""The lineage of a whole run: read its frames, compute, and (in the runner) write the tables.

A long run's ``steps`` and ``events`` tables are large (a 1M-token replay records ~18,000 steps,
each with a ``data-om-status`` part and a progress event), and the lineage needs little of them:
:func:`read_inputs` asks the run file for the columns it uses only, for the status parts' place
in the stream but not their payload, and skips the parts it ignores (a buffered reflection's
``data-om-buffering-end``: its log only counts once activated).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from omlab.bench.datasets.schema import Conversation
from omlab.bench.lineage.tables import lineage_frames
from omlab.bench.lineage.trace import STATUS_TYPE

STEP_COLUMNS = ("conversation_id", "step", "ts", "message_id")
"""The ``steps`` columns the lineage reads."""
EVENT_COLUMNS = ("conversation_id", "seq", "ts", "type", "operation_type", "cycle_id", "payload")
"""The ``events`` columns the lineage reads (status parts: all but ``payload``)."""
_LOG_TYPES = ("data-om-observation-end", "data-om-activation")


@dataclass(frozen=True, slots=True)
class LineageInputs:
    """What :func:`~omlab.bench.lineage.tables.lineage_frames` needs of a run, besides its
    conversations."""

    steps: pd.DataFrame
    events: pd.DataFrame
    answers: pd.DataFrame
    n_message_tokens: Mapping[str, int | None]


def run_lineage(
    db: Any, run_id: str, conversations: Iterable[Conversation], *, scope: str = "thread"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``lineage`` and ``lineage_questions`` frames of run ``run_id`` (``db``: a results
    directory or catalog), given the conversations it replayed."""
    return lineage_of(read_inputs(db, run_id), conversations, scope=scope)


def lineage_of(
    inputs: LineageInputs, conversations: Iterable[Conversation], *, scope: str = "thread"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``lineage`` and ``lineage_questions`` frames from inputs already read."""
    return lineage_frames(
        conversations,
        inputs.steps,
        inputs.events,
        inputs.answers,
        n_message_tokens=inputs.n_message_tokens,
        scope=scope,
    )


def read_inputs(db: Any, run_id: str) -> LineageInputs:
    """The parts of run ``run_id``'s tables the lineage reads (module docstring), in one opening
    of its file."""
    from omlab.bench.results.catalog import TableRead
    from omlab.bench.results.frames import catalog_of, join_scores

    frames = catalog_of(db).read_tables(
        run_id,
        {
            "prepared": TableRead("conversations", {"phase": "prepare"}, ("conversation_id", "n_message_tokens")),
            "steps": TableRead("steps", columns=STEP_COLUMNS),
            "logged": TableRead("events", {"type": list(_LOG_TYPES)}, EVENT_COLUMNS),
            "buffered": TableRead(
                "events", {"type": "data-om-buffering-end", "operation_type": "observation"}, EVENT_COLUMNS
            ),
            "status": TableRead("events", {"type": STATUS_TYPE}, tuple(c for c in EVENT_COLUMNS if c != "payload")),
            "answers": TableRead("answers", columns=("run_id", "question_id")),
            "scores": TableRead("scores", columns=("run_id", "question_id", "scorer", "value", "correct")),
        },
    )
    prepared = frames["prepared"]
    tokens = {
        cid: (None if pd.isna(n) else int(n))
        for cid, n in zip(prepared["conversation_id"], prepared["n_message_tokens"], strict=True)
    }
    # payloads as Python strings, which the lineage parses: sorting moves pointers, not megabytes
    logged, buffered = (frame.astype({"payload": object}) for frame in (frames["logged"], frames["buffered"]))
    status = frames["status"].reindex(columns=EVENT_COLUMNS).astype(logged.dtypes.to_dict())
    events = pd.concat([logged, buffered, status], ignore_index=True)
    events = events.sort_values(["conversation_id", "seq"], kind="stable", ignore_index=True)
    answers = join_scores(frames["answers"], frames["scores"])
    return LineageInputs(frames["steps"], events, answers, tokens)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of a lineage frame as dicts for the writer (missing values as None)."""
    if len(frame) == 0:
        return []
    return [{k: (None if _missing(v) else v) for k, v in row.items()} for row in frame.to_dict("records")]


def _missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


__all__ = ["EVENT_COLUMNS", "STEP_COLUMNS", "LineageInputs", "read_inputs", "records", "run_lineage"]
