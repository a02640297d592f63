"""A snapshot of one memory's token windows (what ``data-om-status`` reports)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Status:
    """Token windows of one memory at one step.

    ``pending_tokens`` are the unobserved message tokens (what the actor sees raw),
    ``threshold`` the observation threshold in force (dynamic with ``shareTokenBudget``),
    ``observation_tokens`` the size of the active log and ``reflect_threshold`` the reflection
    threshold. ``block_after`` is the blocking limit (``None`` without async buffering).
    """

    record_id: str
    thread_id: str | None
    resource_id: str | None
    step_number: int
    generation_count: int
    pending_tokens: int
    threshold: int
    observation_tokens: int
    reflect_threshold: int
    block_after: int | None = None
    buffered_chunks: int = 0
    buffered_message_tokens: int = 0
    projected_message_removal: int = 0
    buffered_observation_tokens: int = 0
    buffering_status: str = "idle"
    buffered_reflection_input_tokens: int = 0
    buffered_reflection_tokens: int = 0
    reflection_buffer_status: str = "idle"

    @property
    def should_observe(self) -> bool:
        return self.pending_tokens >= self.threshold

    @property
    def should_reflect(self) -> bool:
        return self.observation_tokens >= self.reflect_threshold

    def to_data(self) -> dict[str, Any]:
        """The ``data-om-status`` payload (camelCase, as the seed documents it)."""
        return {
            "windows": {
                "active": {
                    "messages": {"tokens": self.pending_tokens, "threshold": self.threshold},
                    "observations": {"tokens": self.observation_tokens, "threshold": self.reflect_threshold},
                },
                "buffered": {
                    "observations": {
                        "chunks": self.buffered_chunks,
                        "messageTokens": min(self.buffered_message_tokens, self.pending_tokens),
                        "projectedMessageRemoval": self.projected_message_removal,
                        "observationTokens": self.buffered_observation_tokens,
                        "status": self.buffering_status,
                    },
                    "reflection": {
                        "inputObservationTokens": self.buffered_reflection_input_tokens,
                        "observationTokens": self.buffered_reflection_tokens,
                        "status": self.reflection_buffer_status,
                    },
                },
            },
            "recordId": self.record_id,
            "threadId": self.thread_id,
            "stepNumber": self.step_number,
            "generationCount": self.generation_count,
        }
