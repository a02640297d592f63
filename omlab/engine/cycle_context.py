"""What an observation, reflection or buffering cycle works with (:class:`CycleContext`).

The cycle modules (``observation_cycle``, ``reflection_cycle``, ``resource_cycle``,
``buffering``, ``extraction_step``) take this object, not the :class:`ObservationalMemory`
facade: the store, the resolved config, the scheduler and its clock, the model client and the
Observer/Reflector runners built on it, the token counter, the event bus and the extractors.
The facade builds one and passes it to every cycle; the cycles never reach back into it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omlab.engine import reference_resource
from omlab.engine.activity import CURRENT_ACTOR
from omlab.engine.clock import Clock
from omlab.engine.config import OMConfig
from omlab.engine.events import EventBus, iso
from omlab.engine.extractors import Extractor
from omlab.engine.live import LiveMemory
from omlab.engine.observer import ObserverRunner
from omlab.engine.record import Thread
from omlab.engine.reflector import ReflectorRunner
from omlab.engine.scheduler import Scheduler
from omlab.engine.status import Status
from omlab.engine.storage import Storage
from omlab.engine.thresholds import dynamic_threshold, projected_message_removal
from omlab.engine.token_counter import TokenCounter
from omlab.engine.ttl import activation_ttl_ms
from omlab.llm.client import ModelClient
from omlab.llm.spec import ModelByInputTokens, describe_model


@dataclass(slots=True)
class CycleContext:
    """The engine's shared parts, as the cycles see them. ``clock`` is the scheduler's clock."""

    config: OMConfig
    storage: Storage
    scheduler: Scheduler
    clock: Clock
    client: ModelClient
    counter: TokenCounter
    events: EventBus
    observer: ObserverRunner
    reflector: ReflectorRunner
    observation_extractors: list[Extractor]
    reflection_extractors: list[Extractor]

    def pending_tokens(self, live: LiveMemory) -> int:
        """The pending count a step compares with the threshold (in resource scope under
        ``compat="reference"``: the reference's, see ``omlab.engine.reference_resource``)."""
        if self.config.compat == "reference" and self.config.scope == "resource":
            return reference_resource.pending_tokens(self, live)
        return live.pending_tokens

    def threshold(self, live: LiveMemory) -> int:
        """The observation threshold in force (dynamic under ``shareTokenBudget``)."""
        return dynamic_threshold(self.config.observation.message_tokens, live.record.observation_token_count)

    def marker_config(self) -> dict[str, Any]:
        """The ``config`` snapshot carried by lifecycle markers."""
        message_tokens = self.config.observation.message_tokens
        snapshot: dict[str, Any] = {
            "messageTokens": getattr(message_tokens, "max", message_tokens),
            "observationTokens": self.config.reflection.observation_tokens,
            "scope": self.config.scope,
        }
        for role, model in (("observer", self.config.observation.model), ("reflector", self.config.reflection.model)):
            if isinstance(model, str):
                continue  # the reference's marker config has no model fields; only richer specs add them
            # a description, never a repr: no key or header of a model config object shows
            snapshot[f"{role}Model"] = describe_model(model)
            if isinstance(model, ModelByInputTokens):
                snapshot[f"{role}Routing"] = [
                    {"upTo": row["up_to"], "model": row["model"]} for row in model.routing_table()
                ]
        if self.config.observation.activate_after_idle is not None:
            # the resolved TTL in ms for the current actor ("auto" and per-provider maps resolved)
            actor = CURRENT_ACTOR.get()
            resolved = activation_ttl_ms(
                self.config.observation.activate_after_idle, actor.model, actor.provider_options
            )
            if resolved is not None:
                snapshot["activateAfterIdle"] = resolved
        return snapshot

    def update_thread_hints(
        self,
        thread: Thread | None,
        live: LiveMemory,
        cycle_id: str,
        current_task: str | None,
        suggested_response: str | None,
        thread_title: str | None,
    ) -> None:
        """Write continuation hints and the title to the thread. A hint that is absent keeps the
        previous value (never wiped, unlike the reference #22361)."""
        if thread is None:
            return
        om = thread.om
        if current_task:
            om["currentTask"] = current_task
        if suggested_response:
            om["suggestedResponse"] = suggested_response
        om["lastObservedAt"] = iso(live.record.last_observed_at) if live.record.last_observed_at else None
        title = (thread_title or "").strip()
        if self.config.observation.thread_title and len(title) >= 3 and title != thread.title:
            old = thread.title
            thread.title = title
            om["threadTitle"] = title
            self.events.data(
                "data-om-thread-update",
                {
                    "cycleId": cycle_id,
                    "threadId": thread.id,
                    "oldTitle": old,
                    "newTitle": title,
                    "timestamp": iso(self.clock.now()),
                },
            )
        thread.updated_at = self.clock.now()
        self.storage.save_thread(thread)

    def status(self, live: LiveMemory) -> Status:
        """The memory's token windows now (what ``data-om-status`` reports)."""
        record = live.record
        cfg = self.config
        chunks = record.buffered_chunks
        threshold = self.threshold(live)
        if self.scheduler.in_flight(live.obs_key):
            buffering = "running"
        else:
            buffering = "complete" if chunks else "idle"
        if self.scheduler.in_flight(live.refl_key):
            reflection_status = "running"
        else:
            reflection_status = "complete" if record.buffered_reflection is not None else "idle"
        projected = 0
        chunk_tokens = live.chunk_message_tokens() if chunks else []
        if chunks and cfg.observation.buffer_activation is not None:
            projected = projected_message_removal(
                chunk_tokens, live.pending_tokens, cfg.observation.buffer_activation, threshold
            )
        return Status(
            record_id=record.id,
            thread_id=live.thread_id,
            resource_id=live.resource_id,
            step_number=live.step,
            generation_count=record.generation_count,
            pending_tokens=self.pending_tokens(live),
            threshold=threshold,
            observation_tokens=record.observation_token_count,
            reflect_threshold=cfg.reflection.observation_tokens,
            block_after=cfg.observation.block_after,
            buffered_chunks=len(chunks),
            buffered_message_tokens=sum(chunk_tokens),
            projected_message_removal=projected,
            buffered_observation_tokens=sum(c.token_count for c in chunks),
            buffering_status=buffering,
            buffered_reflection_input_tokens=record.buffered_reflection_input_tokens,
            buffered_reflection_tokens=record.buffered_reflection_tokens,
            reflection_buffer_status=reflection_status,
        )

    def emit_status(self, live: LiveMemory, status: Status) -> None:
        """Report a step's status: the ``data-om-status`` part and the ``step_progress`` debug event."""
        self.events.data("data-om-status", status.to_data())
        self.events.debug(
            "step_progress",
            self.clock.now(),
            live.thread_id,
            live.resource_id,
            stepNumber=status.step_number,
            finishReason="unknown",
            pendingTokens=status.pending_tokens,
            threshold=status.threshold,
            thresholdPercent=round(100 * status.pending_tokens / status.threshold, 1) if status.threshold else 0.0,
            willSave=status.should_observe,
            willObserve=status.should_observe,
        )
