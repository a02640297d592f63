"""Rows waiting for the writer's next flush, per table, in the order they were added.

Row dicts and column-wise batches may be mixed: buffered row dicts become one Arrow batch before
the next column-wise batch of the same table, so the order stays the order of adding. For keyed
tables only the last row per key of the buffered row dicts is kept
(:data:`omlab.bench.results.schema.KEYS`).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from omlab.bench.results.rows import to_arrow
from omlab.bench.results.schema import KEYS, TABLES


class RowBuffer:
    """Buffered rows of every table; :attr:`pending` counts them."""

    def __init__(self) -> None:
        self._rows: dict[str, list[dict[str, Any]]] = {table: [] for table in TABLES}
        self._batches: dict[str, list[pa.Table]] = {table: [] for table in TABLES}
        self.pending = 0

    def add_rows(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Buffer checked row dicts of ``table``."""
        self._rows[table].extend(rows)
        self.pending += len(rows)

    def add_batch(self, table: str, batch: pa.Table) -> None:
        """Buffer a checked Arrow batch of ``table`` (after the rows buffered before it)."""
        rows = self._rows[table]
        if rows:  # keep the order rows were added in
            self._batches[table].append(to_arrow(table, rows))
            self._rows[table] = []
        self._batches[table].append(batch)
        self.pending += batch.num_rows

    def batches(self) -> dict[str, pa.Table]:
        """One Arrow table per table with buffered rows; the buffer keeps them until :meth:`clear`."""
        batches: dict[str, pa.Table] = {}
        for table, rows in self._rows.items():
            parts = list(self._batches[table])
            if rows:
                parts.append(to_arrow(table, last_per_key(table, rows)))
            if parts:
                batches[table] = parts[0] if len(parts) == 1 else pa.concat_tables(parts)
        return batches

    def clear(self) -> None:
        """Forget every buffered row (they are in the file now)."""
        for table in TABLES:
            self._rows[table] = []
            self._batches[table] = []
        self.pending = 0


def last_per_key(table: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last row of each key of a keyed table (every row of an unkeyed one)."""
    keys = KEYS.get(table)
    if not keys:
        return rows
    latest = {tuple(row.get(k) for k in keys): row for row in rows}
    return list(latest.values())


__all__ = ["RowBuffer", "last_per_key"]
