"""What one engine step did (:class:`StepResult`), filled in by the step and the cycles it runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omlab.engine.status import Status

PENDING_STATUS: Any = None  # a step's status is computed once, at its end


@dataclass(slots=True)
class StepResult:
    """What one step did. ``blocked_observation_s`` / ``blocked_reflection_s`` are how long the
    actor waited on synchronous observation or reflection, or on background work it needed
    (virtual seconds under a virtual scheduler)."""

    status: Status
    pending_before: int = 0
    observed: bool = False
    activated: bool = False
    reflected: bool = False
    buffering_started: bool = False
    activations: int = 0
    sync_observations: int = 0
    sync_reflections: int = 0
    blocked_observation_s: float = 0.0
    blocked_reflection_s: float = 0.0
    observed_message_ids: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def blocked_s(self) -> float:
        """Seconds the actor waited in this step, on observation and reflection together."""
        return self.blocked_observation_s + self.blocked_reflection_s
