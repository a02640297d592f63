"""Two imports of the same recorded threads compared field by field (what the recorder wrote)."""

from __future__ import annotations

import json
from typing import Any

from omlab.bench.datasets.mastra import MastraImport

# the columns of an OM record that carry what Mastra did (ids and times included)
RECORD_FIELDS = (
    "id",
    "scope",
    "threadId",
    "resourceId",
    "generationCount",
    "originType",
    "activeObservations",
    "observationTokenCount",
    "pendingMessageTokens",
    "lastObservedAt",
    "createdAt",
    "bufferedObservationChunks",
    "config",
)


def _parts(parts: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Content parts in order; OM markers as a sorted multiset: two background operations that
    start at one step write their markers concurrently, and with ``@mastra/pg``'s round trips
    they can land in either order."""
    markers = sorted(json.dumps(p, sort_keys=True) for p in parts if p["type"].startswith("data-om-"))
    return [p for p in parts if not p["type"].startswith("data-om-")], markers


def import_view(imported: MastraImport, *, markers: bool = True) -> dict[str, Any]:
    """Everything an import read, without where it read it from; ``markers=False`` leaves the OM
    markers out (of each message and of the summary's counts)."""
    summary = {k: v for k, v in imported.summary.to_dict().items() if k not in ("location", "dialect")}
    if not markers:
        del summary["om_markers"], summary["parts"]
        summary["parts_by_type"] = {t: n for t, n in summary["parts_by_type"].items() if not t.startswith("data-om-")}
    threads = [
        (
            t.id,
            t.resource_id,
            t.title,
            t.metadata,
            [(m.id, m.role, m.created_at, _parts(m.parts) if markers else _parts(m.parts)[0]) for m in t.messages],
        )
        for t in imported.threads
    ]
    records = [{k: r.get(k) for k in RECORD_FIELDS} for r in imported.om_records]
    return {"summary": summary, "threads": threads, "records": records}
