"""What production's Observational Memory did, as DataFrames (records, markers, settings).

Three tidy frames of an import:

* :func:`om_records_df`: one row per OM record (a generation: ``initial`` or made by a
  reflection) with its final observation tokens, log size and cursor;
* :func:`markers_df`: one row per stored ``data-om-*`` part, with the same columns as a run's
  ``events`` rows of kind ``data`` (``omlab.bench.results.event_rows.event_row``), so the code that reads a
  run's events reads production's markers unchanged;
* :func:`engine_options_of`: the threshold settings a record was made with, as omlab engine
  options (what a replay "with the same settings" uses).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from omlab.bench.datasets.mastra.parts import OM_MARKER_PREFIX, created_at_of
from omlab.bench.datasets.mastra.reader import MastraImport
from omlab.bench.results.event_rows import event_row

RECORD_COLUMNS = (
    "record_id",
    "scope",
    "thread_id",
    "resource_id",
    "generation",
    "origin_type",
    "created_at",
    "updated_at",
    "last_observed_at",
    "last_reflection_at",
    "observation_tokens",
    "total_tokens_observed",
    "pending_message_tokens",
    "log_chars",
    "log_lines",
    "observed_message_count",
    "buffered_chunks",
    "active_observations",
)

_OBSERVATION_KEYS = ("messageTokens", "bufferTokens", "bufferActivation", "blockAfter", "previousObserverTokens")
_REFLECTION_KEYS = ("observationTokens", "bufferActivation", "blockAfter")


def om_records_df(imported: MastraImport) -> pd.DataFrame:
    """One row per OM record of the import, oldest first (columns: :data:`RECORD_COLUMNS`)."""
    rows = []
    for record in imported.om_records:
        log = record.get("activeObservations") or ""
        chunks = record.get("bufferedObservationChunks")
        rows.append(
            {
                "record_id": record["id"],
                "scope": record.get("scope"),
                "thread_id": record.get("threadId"),
                "resource_id": record.get("resourceId"),
                "generation": int(record.get("generationCount") or 0),
                "origin_type": record.get("originType"),
                "created_at": record.get("createdAt"),
                "updated_at": record.get("updatedAt"),
                "last_observed_at": record.get("lastObservedAt"),
                "last_reflection_at": record.get("lastReflectionAt"),
                "observation_tokens": int(record.get("observationTokenCount") or 0),
                "total_tokens_observed": int(record.get("totalTokensObserved") or 0),
                "pending_message_tokens": int(record.get("pendingMessageTokens") or 0),
                "log_chars": len(log),
                "log_lines": len(log.split("\n")) if log else 0,
                "observed_message_count": len(record.get("observedMessageIds") or []),
                "buffered_chunks": len(chunks) if isinstance(chunks, list) else 0,
                "active_observations": log,
            }
        )
    return pd.DataFrame(rows, columns=list(RECORD_COLUMNS))


def markers_df(imported: MastraImport) -> pd.DataFrame:
    """One row per stored ``data-om-*`` part, in message order, shaped like a run's ``events``
    rows of kind ``data`` plus ``message_id``; ``conversation_id`` is the thread id and ``ts``
    the marker's own time (``startedAt``/``completedAt``/``activatedAt``...) or its part's."""
    rows = []
    for thread in imported.threads:
        for message in thread.messages:
            for part in message.parts:
                if not part["type"].startswith(OM_MARKER_PREFIX):
                    continue
                data = part.get("data") if isinstance(part.get("data"), dict) else {}
                ts = _marker_time(data) or created_at_of(part.get("createdAt")) or message.created_at
                payload = {"threadId": thread.id, **data}
                rows.append({**event_row(thread.id, "data", part["type"], ts, payload), "message_id": message.id})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=["conversation_id", "ts", "kind", "type", "message_id"])
    return frame.sort_values(["conversation_id", "ts"], kind="stable").reset_index(drop=True)


def _marker_time(data: dict[str, Any]) -> Any:
    for key in ("activatedAt", "completedAt", "startedAt", "failedAt", "timestamp"):
        value = data.get(key)
        if isinstance(value, str):
            return created_at_of(value)
    return None


def engine_options_of(record: dict[str, Any]) -> dict[str, Any]:
    """The thresholds an OM record's ``config`` column holds, as omlab engine options
    (``observation`` / ``reflection`` / ``scope``); models, prompts and extractors are left out."""
    config = record.get("config") or {}
    observation = config.get("observation") or {}
    reflection = config.get("reflection") or {}
    options: dict[str, Any] = {
        "observation": {k: observation[k] for k in _OBSERVATION_KEYS if observation.get(k) is not None},
        "reflection": {k: reflection[k] for k in _REFLECTION_KEYS if reflection.get(k) is not None},
    }
    if config.get("scope"):
        options["scope"] = config["scope"]
    return options
