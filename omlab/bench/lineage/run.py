"""The lineage of a whole run: read its frames, compute, and (in the runner) write the tables."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from omlab.bench.lineage.tables import lineage_frames
from omlab.bench.lineage.trace import LINEAGE_EVENT_TYPES
from omlab.bench.schema import Conversation


def run_lineage(
    db: Any, run_id: str, conversations: Iterable[Conversation], *, scope: str = "thread"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``lineage`` and ``lineage_questions`` frames of run ``run_id`` (``db``: a results
    directory or catalog), given the conversations it replayed."""
    from omlab.bench.results import answers_df, conversations_df, events_df, steps_df
    from omlab.bench.results.frames import catalog_of

    catalog = catalog_of(db)
    prepared = conversations_df(catalog, run_id, phase="prepare")
    tokens = {
        cid: (None if pd.isna(n) else int(n))
        for cid, n in zip(prepared["conversation_id"], prepared["n_message_tokens"], strict=True)
    }
    return lineage_frames(
        conversations,
        steps_df(catalog, run_id),
        events_df(catalog, run_id, types=list(LINEAGE_EVENT_TYPES)),
        answers_df(catalog, run_id),
        n_message_tokens=tokens,
        scope=scope,
    )


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


__all__ = ["records", "run_lineage"]
