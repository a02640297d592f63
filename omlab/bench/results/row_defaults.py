"""Defaults the writer fills in from other columns, row by row or a column at a time.

``events.seq`` counts on from the largest stored one and ``events.kind`` is ``data`` for
``data-*`` types else ``debug`` (:class:`EventNumbering`); ``model_calls.call_id`` is a random hex
id; ``scores.value`` follows ``correct``. Both paths give the same values.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


class EventNumbering:
    """The next ``events.seq`` of a run; fills ``seq`` and ``kind`` of event rows."""

    def __init__(self, next_seq: int = 0) -> None:
        self.next_seq = next_seq

    def fill_row(self, row: dict[str, Any]) -> None:
        """Give an event row without ``seq`` the next number, and one without ``kind`` its kind."""
        seq = row.get("seq")
        if seq is None:
            row["seq"] = self.next_seq
            self.next_seq += 1
        elif seq >= self.next_seq:
            self.next_seq = int(seq) + 1
        if row.get("kind") is None and row.get("type") is not None:
            row["kind"] = "data" if row["type"].startswith("data-") else "debug"

    def fill_columns(self, batch: pa.Table) -> pa.Table:
        """Column-wise :meth:`fill_row`: the same ``seq`` and ``kind`` as row by row."""
        seq = batch.column("seq")
        count = batch.num_rows
        if count == 0:
            return batch
        if seq.null_count == count:
            filled = pa.array(np.arange(self.next_seq, self.next_seq + count, dtype=np.int64))
            self.next_seq += count
        elif seq.null_count == 0:
            filled = seq
            self.next_seq = max(self.next_seq, int(pc.max(seq).as_py()) + 1)
        else:
            values = seq.to_pylist()
            for index, value in enumerate(values):
                if value is None:
                    values[index] = self.next_seq
                    self.next_seq += 1
                elif value >= self.next_seq:
                    self.next_seq = value + 1
            filled = pa.array(values, type=pa.int64())
        batch = batch.set_column(batch.schema.get_field_index("seq"), "seq", filled)
        kind = batch.column("kind")
        if kind.null_count:
            derived = pc.if_else(pc.starts_with(batch.column("type"), "data-"), "data", "debug")
            batch = batch.set_column(batch.schema.get_field_index("kind"), "kind", pc.coalesce(kind, derived))
        return batch


def fill_call(row: dict[str, Any]) -> None:
    """A random hex ``call_id`` for a call row that has none."""
    if row.get("call_id") is None:
        row["call_id"] = uuid.uuid4().hex


def fill_score(row: dict[str, Any]) -> None:
    """``value`` 1.0 or 0.0 from ``correct`` when a score row has no value."""
    if row.get("value") is None and row.get("correct") is not None:
        row["value"] = 1.0 if row["correct"] else 0.0


def fill_call_ids(batch: pa.Table) -> pa.Table:
    """Column-wise :func:`fill_call`: a random hex id for each call that has none."""
    ids = batch.column("call_id")
    if not ids.null_count:
        return batch
    values = [uuid.uuid4().hex if value is None else value for value in ids.to_pylist()]
    return batch.set_column(batch.schema.get_field_index("call_id"), "call_id", pa.array(values, type=pa.string()))


ROW_FILLERS: dict[str, Callable[[dict[str, Any]], None]] = {"model_calls": fill_call, "scores": fill_score}
"""Row fillers by table; events are numbered by the writer's :class:`EventNumbering`."""

__all__ = ["ROW_FILLERS", "EventNumbering", "fill_call", "fill_call_ids", "fill_score"]
