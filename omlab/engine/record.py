"""The durable state of one Observational Memory: records (generations), chunks and threads."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Scope = Literal["thread", "resource"]


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


@dataclass(slots=True)
class BufferedChunk:
    """Observations computed in the background, waiting to be activated."""

    id: str
    cycle_id: str
    observations: str
    token_count: int
    message_ids: list[str]
    message_tokens: int
    last_observed_at: datetime
    created_at: datetime
    suggested_continuation: str | None = None
    current_task: str | None = None
    thread_title: str | None = None


@dataclass(slots=True)
class ObservationRecord:
    """One generation of the observation log. A reflection creates a new record; the old one is
    kept as history with ``superseded_by`` set to its successor's id."""

    id: str
    scope: Scope
    thread_id: str | None
    resource_id: str | None
    created_at: datetime
    updated_at: datetime
    origin_type: Literal["initial", "reflection"] = "initial"
    generation_count: int = 0
    active_observations: str = ""
    observation_token_count: int = 0
    #: the cursor: messages created at or before it count as observed
    last_observed_at: datetime | None = None
    observed_message_ids: list[str] = field(default_factory=list)
    observed_timezone: str = "UTC"
    total_tokens_observed: int = 0
    pending_message_tokens: int = 0
    buffered_chunks: list[BufferedChunk] = field(default_factory=list)
    buffered_reflection: str | None = None
    buffered_reflection_tokens: int = 0
    buffered_reflection_input_tokens: int = 0
    reflected_observation_line_count: int = 0
    last_buffered_at_tokens: int = 0
    last_buffered_at_time: datetime | None = None
    config: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    superseded_by: str | None = None


@dataclass(slots=True)
class Thread:
    """A conversation thread. OM keeps its per-thread state under ``metadata["om"]``:
    ``currentTask``, ``suggestedResponse``, ``threadTitle``, ``lastObservedAt``, ``extracted``."""

    id: str
    resource_id: str | None
    created_at: datetime
    updated_at: datetime
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def om(self) -> dict[str, Any]:
        return self.metadata.setdefault("om", {})
