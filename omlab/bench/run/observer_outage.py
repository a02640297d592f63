"""Telling a replay whose Observer never worked from one that observed the conversation.

Under ``failurePolicy = "continue"`` a failed observation cycle is skipped and the replay goes on.
When *every* cycle fails (a provider that loops or errors on each Observer reply) the replay
still ends, with an empty memory: answering and scoring its questions would report a retention
of 0% as if the memory had lost everything, when it never held anything. The prepare phase
treats such a replay as failed instead (:class:`ObserverOutageError`), so the run ends
``incomplete`` and the same command retries the conversation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_FAILED = ("data-om-observation-failed", "data-om-buffering-failed")
_OBSERVED = ("data-om-observation-end", "data-om-buffering-end")


class ObserverOutageError(RuntimeError):
    """Every Observer cycle of a conversation's replay failed: its memory holds nothing."""


def observer_outage(events: Iterable[Mapping[str, Any]]) -> str | None:
    """Why a replay's memory is empty because its Observer never succeeded, from its ``events``
    rows, or None when an observation cycle succeeded or none was attempted."""
    failed: list[Mapping[str, Any]] = []
    for event in events:
        if event.get("operation_type") not in (None, "observation"):
            continue
        if event.get("type") in _OBSERVED:
            return None
        if event.get("type") in _FAILED:
            failed.append(event)
    if not failed:
        return None
    payload = failed[-1].get("payload") or {}
    cause = payload.get("error") if isinstance(payload, Mapping) else None
    cycles = "1 cycle" if len(failed) == 1 else f"{len(failed)} cycles"
    return (
        f"every Observer cycle failed ({cycles}) and nothing of the conversation was observed: its memory is empty, so its "
        f"questions were not answered (the last error: {cause or 'not recorded'}). "
        "Run the same command again to retry it"
    )


__all__ = ["ObserverOutageError", "observer_outage"]
