"""The ``events`` row of a ``data-om-*`` part or a debug event: typed columns pulled from its payload.

One shape for every source of events: a replay's (``omlab.bench.run.replay``) and a Mastra
database's stored markers (``omlab.bench.datasets.mastra.records``), so code that reads one reads
the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

_TOKENS_IN_KEYS = (
    "tokensToObserve",
    "tokensObserved",
    "tokensToBuffer",
    "tokensBuffered",
    "tokensActivated",
    "inputTokens",
    "pendingTokens",
)
_TOKENS_OUT_KEYS = ("observationTokens", "bufferedTokens", "outputTokens")


def event_row(conversation_id: str, kind: str, type_: str, ts: datetime, payload: dict[str, Any]) -> dict[str, Any]:
    """An ``events`` row: typed columns pulled from the payload, the payload kept whole."""
    return {
        "conversation_id": conversation_id,
        "ts": ts,
        "kind": kind,
        "type": type_,
        "cycle_id": _text(payload.get("cycleId")),
        "operation_type": _text(payload.get("operationType")),
        "triggered_by": _text(payload.get("triggeredBy")),
        "tokens_in": _first_int(payload, _TOKENS_IN_KEYS),
        "tokens_out": _first_int(payload, _TOKENS_OUT_KEYS),
        "duration_ms": _number(payload.get("durationMs")),
        "record_id": _text(payload.get("recordId")),
        "thread_id": _text(payload.get("threadId")),
        "generation": _first_int(payload, ("generationCount",)),
        "payload": payload,
    }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _first_int(payload: dict[str, Any], keys: Iterable[str]) -> int | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    return None
