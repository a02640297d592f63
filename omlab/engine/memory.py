"""``ObservationalMemory``: the engine's public face (thread scope, synchronous cycles).

Per memory (thread scope: one per thread) the engine keeps a *live view*: the head record, the
messages not yet observed with their cached token counts, and a running sum, so a step costs
O(new messages). Storage stays the source of truth: a new engine over the same storage rebuilds
the view from the head record's cursor.

A step (:meth:`ObservationalMemory.process`) reports ``data-om-status``; when the unobserved
tokens reach the threshold (``observation.messageTokens``, dynamic under ``shareTokenBudget``) it
observes them all synchronously; when the log reaches ``reflection.observationTokens`` it reflects
into a new generation. Reflection never commits empty, degenerate or non-shrinking output, and an
unproductive reflection is not retried until the log has grown by a tenth of the threshold, so the
reference's reflect loop (#14109) cannot happen.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from omlab.engine.clock import Clock, SystemClock
from omlab.engine.config import OMConfig
from omlab.engine.context import build_actor_context
from omlab.engine.events import DataListener, DebugListener, EventBus, iso, new_cycle_id
from omlab.engine.hooks import call_hook
from omlab.engine.messages import Message
from omlab.engine.observation_text import append_with_boundary
from omlab.engine.observer import ObserverRunner
from omlab.engine.record import ObservationRecord, Thread, new_id
from omlab.engine.reflector import ReflectorRunner, start_level
from omlab.engine.status import Status
from omlab.engine.storage import Storage
from omlab.engine.thresholds import dynamic_threshold
from omlab.engine.token_counter import TokenCounter
from omlab.llm.client import ModelClient
from omlab.llm.spec import primary_model_name
from omlab.storage import open_storage

log = logging.getLogger("omlab.engine")

#: An unproductive reflection is retried only after the log grew by this share of the threshold.
REFLECTION_RETRY_GROWTH = 0.1

_ENGINE_ONLY_OPTIONS = ("client", "clock", "token_counter", "timezone", "on_event")


class ObservationalMemoryError(RuntimeError):
    """A misuse of the engine (e.g. a missing thread id)."""


@dataclass(slots=True)
class StepResult:
    """What one step did."""

    status: Status
    observed: bool = False
    reflected: bool = False
    observed_message_ids: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class _Live:
    """The in-process view of one memory (see the module docstring)."""

    thread_id: str
    resource_id: str | None
    record: ObservationRecord
    unobserved: list[Message]
    counts: dict[str, int]
    pending_sum: int
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    step: int = 0
    reflection_retry_at: int | None = None

    @property
    def pending_tokens(self) -> int:
        # the reference's per-conversation overhead of 24 applies to a non-empty list only
        return self.pending_sum + 24 if self.unobserved else 0


class ObservationalMemory:
    """Observational Memory for threads of a conversation.

    Accepts every option of the seed documents, in snake_case or camelCase, as keyword arguments
    or as one mapping (``ObservationalMemory({"observation": {"messageTokens": 20_000}})``), plus
    the standalone options ``storage`` (an ``omlab.engine.storage.Storage``, a ``.duckdb`` path or
    ``None`` for in-memory), ``on_debug_event`` and ``obscure_thread_ids``. Engine-only keyword
    arguments: ``client`` (a :class:`~omlab.llm.client.ModelClient`), ``clock``,
    ``token_counter``, ``timezone`` (the IANA zone used to date observations) and ``on_event``
    (a listener for ``data-om-*`` parts).

    All methods are coroutines; :meth:`sync` returns a blocking facade for scripts.
    """

    def __init__(self, options: Any = None, /, **kwargs: Any) -> None:
        engine_args = {name: kwargs.pop(name) for name in _ENGINE_ONLY_OPTIONS if name in kwargs}
        self.config: OMConfig = OMConfig.from_options(options, **kwargs)
        self.storage: Storage = open_storage(self.config.storage)
        self.clock: Clock = engine_args.get("clock") or SystemClock()
        self.client: ModelClient = engine_args.get("client") or ModelClient()
        self.timezone: str = engine_args.get("timezone") or "UTC"
        observer_model = self.config.observation.model
        self.counter: TokenCounter = engine_args.get("token_counter") or TokenCounter(primary_model_name(observer_model))
        self.events = EventBus()
        if self.config.on_debug_event is not None:
            self.events.on_debug(self.config.on_debug_event)
        if engine_args.get("on_event") is not None:
            self.events.on_data(engine_args["on_event"])
        if self.config.scope != "thread":
            raise ObservationalMemoryError(
                "scope: 'resource' is not implemented in this omlab version yet; use scope: 'thread'"
            )
        obs, refl = self.config.observation, self.config.reflection
        self._observer = ObserverRunner(
            model=obs.model,
            settings=obs.model_settings,
            provider_options=obs.provider_options,
            instruction=obs.instruction,
            thread_title=obs.thread_title,
            previous_observer_tokens=obs.previous_observer_tokens,
            client=self.client,
        )
        self._reflector = ReflectorRunner(
            model=refl.model,
            settings=refl.model_settings,
            provider_options=refl.provider_options,
            instruction=refl.instruction,
            client=self.client,
            count=self.counter.count_string,
        )
        self._live: dict[str, _Live] = {}

    # ------------------------------------------------------------------ listeners
    def on_event(self, listener: DataListener) -> Callable[[], None]:
        """Subscribe to ``data-om-*`` parts; returns an unsubscribe function."""
        return self.events.on_data(listener)

    def on_debug_event(self, listener: DebugListener) -> Callable[[], None]:
        """Subscribe to debug events (``observation_triggered``, ``step_progress``, …)."""
        return self.events.on_debug(listener)

    # ------------------------------------------------------------------ public API
    async def add_messages(
        self,
        thread_id: str,
        messages: Iterable[Message],
        *,
        resource_id: str | None = None,
        process: bool = True,
    ) -> StepResult | None:
        """Store ``messages`` in the thread and, unless ``process=False``, run one step."""
        live = await self._get_live(thread_id, resource_id)
        batch = list(messages)
        for message in batch:
            message.thread_id = thread_id
            if message.resource_id is None:
                message.resource_id = live.resource_id
        if batch:
            self.storage.save_messages(batch)
            known = live.counts
            for message in batch:
                tokens = self.counter.count_message(message)
                if message.id in known:  # an update of a pending message: replace it
                    live.pending_sum -= known[message.id]
                    live.unobserved = [m for m in live.unobserved if m.id != message.id]
                live.unobserved.append(message)
                known[message.id] = tokens
                live.pending_sum += tokens
        if not process or not self.config.enabled:
            return None
        return await self.process(thread_id)

    async def process(self, thread_id: str, *, trigger: str = "turn-sync") -> StepResult:
        """Run one step: report status, observe at the threshold, reflect at its threshold."""
        live = await self._get_live(thread_id)
        async with live.lock:
            live.step += 1
            status = self._status(live)
            self._emit_status(live, status)
            result = StepResult(status=status)
            if not self.config.enabled:
                return result
            if status.should_observe:
                await self._observe_locked(live, trigger, result)
            await self._maybe_reflect_locked(live, trigger, result, manual=False)
            result.status = self._status(live)
            return result

    async def observe(self, thread_id: str, *, force: bool = True) -> StepResult:
        """Observe now. With ``force`` (the default) everything unobserved is observed whatever
        the threshold; otherwise only when the threshold is reached."""
        live = await self._get_live(thread_id)
        async with live.lock:
            status = self._status(live)
            result = StepResult(status=status)
            if live.unobserved and (force or status.should_observe):
                await self._observe_locked(live, "manual", result)
                await self._maybe_reflect_locked(live, "manual", result, manual=False)
            result.status = self._status(live)
            return result

    async def reflect(self, thread_id: str, prompt: str | None = None) -> StepResult:
        """Reflect now, whatever the threshold, optionally with guidance text."""
        live = await self._get_live(thread_id)
        async with live.lock:
            result = StepResult(status=self._status(live))
            if live.record.active_observations.strip():
                await self._reflect_locked(live, "manual", result, manual=True, guidance=prompt)
            result.status = self._status(live)
            return result

    async def status(self, thread_id: str) -> Status:
        live = await self._get_live(thread_id)
        return self._status(live)

    async def build_context(self, thread_id: str, *, current_date: datetime | None = None) -> list[dict[str, Any]]:
        """The actor's context: memory system messages, then the unobserved raw messages.

        ``current_date`` drives the relative-time annotations (a benchmark passes the question
        date); it defaults to the clock's now."""
        live = await self._get_live(thread_id)
        thread = self.storage.get_thread(thread_id)
        om = thread.om if thread is not None else {}
        return build_actor_context(
            live.record.active_observations,
            live.unobserved,
            current_date=current_date or self.clock.now(),
            current_task=om.get("currentTask"),
            suggested_response=om.get("suggestedResponse"),
        )

    async def get_observations(self, thread_id: str) -> str:
        return (await self._get_live(thread_id)).record.active_observations

    async def get_record(self, thread_id: str) -> ObservationRecord:
        return dataclasses.replace((await self._get_live(thread_id)).record)

    async def get_history(self, thread_id: str) -> list[ObservationRecord]:
        """Every generation of the thread's memory, oldest first."""
        return self.storage.get_history("thread", thread_id, None)

    async def get_unobserved_messages(self, thread_id: str) -> list[Message]:
        return list((await self._get_live(thread_id)).unobserved)

    async def clear(self, thread_id: str) -> None:
        """Forget the thread's memory (records and cursor); its messages stay in storage and are
        all unobserved again."""
        self.storage.clear("thread", thread_id, None)
        self._live.pop(thread_id, None)

    def sync(self) -> "SyncObservationalMemory":
        """A blocking facade with the same methods, for scripts."""
        return SyncObservationalMemory(self)

    # ------------------------------------------------------------------ live view
    async def _get_live(self, thread_id: str, resource_id: str | None = None) -> _Live:
        if not thread_id:
            raise ObservationalMemoryError("thread scope needs a thread id")
        live = self._live.get(thread_id)
        if live is not None:
            return live
        now = self.clock.now()
        thread = self.storage.get_thread(thread_id)
        if thread is None:
            thread = Thread(id=thread_id, resource_id=resource_id, created_at=now, updated_at=now)
            self.storage.save_thread(thread)
        record = self.storage.get_head_record("thread", thread_id, None)
        if record is None:
            record = ObservationRecord(
                id=new_id("omr"),
                scope="thread",
                thread_id=thread_id,
                resource_id=thread.resource_id,
                created_at=now,
                updated_at=now,
                observed_timezone=self.timezone,
                config=self.config.to_dict(),
            )
            self.storage.save_record(record)
        unobserved = self._load_unobserved(thread_id, record)
        counts = {m.id: self.counter.count_message(m) for m in unobserved}
        live = _Live(thread_id, thread.resource_id, record, unobserved, counts, sum(counts.values()))
        self._live[thread_id] = live
        return live

    def _load_unobserved(self, thread_id: str, record: ObservationRecord) -> list[Message]:
        cursor = record.last_observed_at
        if cursor is None:
            messages = self.storage.get_messages(thread_id)
        else:
            # messages sharing the cursor's millisecond may or may not be observed: the id set decides
            messages = self.storage.get_messages(thread_id, after=cursor - timedelta(milliseconds=1))
        observed = set(record.observed_message_ids)
        return [
            m for m in messages
            if m.role != "system" and m.id not in observed and (cursor is None or m.created_at >= cursor)
        ]

    def _threshold(self, live: _Live) -> int:
        return dynamic_threshold(self.config.observation.message_tokens, live.record.observation_token_count)

    def _status(self, live: _Live) -> Status:
        record = live.record
        return Status(
            record_id=record.id,
            thread_id=live.thread_id,
            resource_id=live.resource_id,
            step_number=live.step,
            generation_count=record.generation_count,
            pending_tokens=live.pending_tokens,
            threshold=self._threshold(live),
            observation_tokens=record.observation_token_count,
            reflect_threshold=self.config.reflection.observation_tokens,
            block_after=self.config.observation.block_after,
        )

    def _emit_status(self, live: _Live, status: Status) -> None:
        self.events.data("data-om-status", status.to_data())
        self.events.debug(
            "step_progress", self.clock.now(), live.thread_id, live.resource_id,
            stepNumber=status.step_number, finishReason="unknown", pendingTokens=status.pending_tokens,
            threshold=status.threshold,
            thresholdPercent=round(100 * status.pending_tokens / status.threshold, 1) if status.threshold else 0.0,
            willSave=status.should_observe, willObserve=status.should_observe,
        )

    def _marker_config(self) -> dict[str, Any]:
        message_tokens = self.config.observation.message_tokens
        return {
            "messageTokens": getattr(message_tokens, "max", message_tokens),
            "observationTokens": self.config.reflection.observation_tokens,
            "scope": self.config.scope,
        }

    # ------------------------------------------------------------------ observation
    async def _observe_locked(self, live: _Live, trigger: str, result: StepResult) -> None:
        messages = list(live.unobserved)
        if not messages:  # never run the Observer on nothing (the reference's H4 bug)
            return
        record = live.record
        tokens_to_observe = live.pending_tokens
        cycle_id = new_cycle_id("obs")
        started = self.clock.now()
        base = {"cycleId": cycle_id, "operationType": "observation", "recordId": record.id, "threadId": live.thread_id}
        self.events.debug(
            "observation_triggered", started, live.thread_id, live.resource_id,
            messages=[{"role": m.role, "content": m.text} for m in messages] if self.events.wants_debug else None,
            previousObservations=record.active_observations, pendingTokens=tokens_to_observe,
        )
        self.events.data("data-om-observation-start", {
            **base, "startedAt": iso(started), "tokensToObserve": tokens_to_observe,
            "threadIds": [live.thread_id], "config": self._marker_config(),
        })
        hook_base = {"threadId": live.thread_id, "resourceId": live.resource_id, "trigger": trigger,
                     "cycleId": cycle_id, "operationType": "observation"}
        await call_hook(self.config.hooks, "on_observation_start", hook_base)
        thread = self.storage.get_thread(live.thread_id)
        om = thread.om if thread is not None else {}
        prior = [(k, om[key]) for k, key in (("current-task", "currentTask"), ("suggested-response", "suggestedResponse"),
                                              ("thread-title", "threadTitle")) if om.get(key)]
        try:
            observed = await self._observer.observe(
                messages,
                input_tokens=tokens_to_observe,
                active_observations=record.active_observations,
                prior_metadata=prior,
                timezone=record.observed_timezone,
                metadata={"cycleId": cycle_id, "threadId": live.thread_id, "operationType": "observation"},
            )
        except Exception as exc:  # the model layer or the observer failed: report, then policy decides
            failed = self.clock.now()
            self.events.data("data-om-observation-failed", {
                **base, "failedAt": iso(failed), "durationMs": _ms(started, failed, 0.0),
                "tokensAttempted": tokens_to_observe, "error": str(exc),
            })
            await call_hook(self.config.hooks, "on_observation_end", {**hook_base, "usage": None, "error": str(exc)})
            result.errors.append(str(exc))
            if self.config.observation.failure_policy == "continue":
                log.warning("observation failed and failure_policy is 'continue': %s", exc)
                return
            raise
        output = observed.output
        new_text = output.observations.strip()
        cursor = max(m.created_at for m in messages)
        if record.last_observed_at is not None and record.last_observed_at > cursor:
            cursor = record.last_observed_at  # the cursor never moves backwards
        if new_text:
            record.active_observations = (
                append_with_boundary(record.active_observations, new_text, cursor)
                if record.active_observations.strip() else new_text
            )
        record.observation_token_count = self.counter.count_string(record.active_observations)
        record.last_observed_at = cursor
        record.observed_message_ids = record.observed_message_ids + [m.id for m in messages]
        record.total_tokens_observed += tokens_to_observe
        record.updated_at = self.clock.now()
        self._update_thread_metadata(thread, output, cycle_id, live)
        self.storage.save_record(record)

        observed_ids = {m.id for m in messages}
        live.unobserved = [m for m in live.unobserved if m.id not in observed_ids]
        for message_id in observed_ids:
            live.pending_sum -= live.counts.pop(message_id, 0)
        result.observed = True
        result.observed_message_ids.extend(m.id for m in messages)

        completed = self.clock.now()
        usage = observed.usage
        cycle_tokens = self.counter.count_string(new_text) if new_text else 0
        self.events.debug(
            "observation_complete", completed, live.thread_id, live.resource_id,
            observations=record.active_observations, rawObserverOutput=observed.output.raw,
            previousObservations=observed.previous_observations,
            usage={"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens, "totalTokens": usage.total_tokens},
        )
        self.events.data("data-om-observation-end", {
            **base, "completedAt": iso(completed), "durationMs": _ms(started, completed, observed.latency_s),
            "tokensObserved": tokens_to_observe, "observationTokens": cycle_tokens, "observations": new_text,
            "currentTask": output.current_task, "suggestedResponse": output.suggested_response,
        })
        await call_hook(self.config.hooks, "on_observation_end", {
            **hook_base, "usage": _usage_dict(usage), "costUsd": observed.cost_usd,
            "providerMetadata": observed.responses[-1].provider_metadata, "model": observed.responses[-1].model,
            "error": None,
        })

    def _update_thread_metadata(self, thread: Thread | None, output: Any, cycle_id: str, live: _Live) -> None:
        if thread is None:
            return
        om = thread.om
        # continuation hints are carried forward: a cycle that says nothing keeps the previous hint
        if output.current_task:
            om["currentTask"] = output.current_task
        if output.suggested_response:
            om["suggestedResponse"] = output.suggested_response
        om["lastObservedAt"] = iso(live.record.last_observed_at) if live.record.last_observed_at else None
        title = (output.thread_title or "").strip()
        if self.config.observation.thread_title and len(title) >= 3 and title != thread.title:
            old = thread.title
            thread.title = title
            om["threadTitle"] = title
            self.events.data("data-om-thread-update", {
                "cycleId": cycle_id, "threadId": thread.id, "oldTitle": old, "newTitle": title,
                "timestamp": iso(self.clock.now()),
            })
        thread.updated_at = self.clock.now()
        self.storage.save_thread(thread)

    # ------------------------------------------------------------------ reflection
    async def _maybe_reflect_locked(self, live: _Live, trigger: str, result: StepResult, *, manual: bool) -> None:
        tokens = live.record.observation_token_count
        if tokens < self.config.reflection.observation_tokens:
            return
        if live.reflection_retry_at is not None and tokens < live.reflection_retry_at:
            return  # the last attempt at about this size did not help: wait for the log to grow
        await self._reflect_locked(live, trigger, result, manual=manual)

    async def _reflect_locked(
        self, live: _Live, trigger: str, result: StepResult, *, manual: bool, guidance: str | None = None
    ) -> None:
        record = live.record
        threshold = self.config.reflection.observation_tokens
        input_tokens = record.observation_token_count
        cycle_id = new_cycle_id("refl")
        started = self.clock.now()
        base = {"cycleId": cycle_id, "operationType": "reflection", "recordId": record.id, "threadId": live.thread_id}
        self.events.debug(
            "reflection_triggered", started, live.thread_id, live.resource_id,
            inputTokens=input_tokens, activeObservationsLength=len(record.active_observations),
        )
        start_marker = {**base, "tokensToObserve": input_tokens, "threadIds": [live.thread_id],
                        "config": self._marker_config()}
        self.events.data("data-om-observation-start", {**start_marker, "startedAt": iso(started)})
        hook_base = {"threadId": live.thread_id, "resourceId": live.resource_id, "trigger": trigger,
                     "cycleId": cycle_id, "operationType": "reflection"}
        await call_hook(self.config.hooks, "on_reflection_start", hook_base)

        async def on_retry(inp: int, out: int, target: int, level: int) -> None:
            now = self.clock.now()
            self.events.data("data-om-observation-failed", {
                **base, "failedAt": iso(now), "durationMs": _ms(started, now, 0.0), "tokensAttempted": inp,
                "error": f"Did not compress below threshold ({inp} → {out}, target {target}), retrying at level {level}",
            })
            self.events.data("data-om-observation-start", {**start_marker, "startedAt": iso(now)})

        model_name = primary_model_name(self.config.reflection.model)
        try:
            reflection = await self._reflector.reflect(
                record.active_observations,
                target=threshold,
                first_level=start_level(model_name, manual=manual),
                guidance=guidance,
                metadata={"cycleId": cycle_id, "threadId": live.thread_id, "operationType": "reflection"},
                on_retry=on_retry,
            )
        except Exception as exc:  # reflection never fails the turn: report and back off
            failed = self.clock.now()
            self.events.data("data-om-observation-failed", {
                **base, "failedAt": iso(failed), "durationMs": _ms(started, failed, 0.0),
                "tokensAttempted": input_tokens, "error": str(exc),
            })
            await call_hook(self.config.hooks, "on_reflection_end", {**hook_base, "usage": None, "error": str(exc)})
            live.reflection_retry_at = input_tokens + max(1, int(threshold * REFLECTION_RETRY_GROWTH))
            result.errors.append(str(exc))
            log.warning("reflection failed (memory kept unchanged): %s", exc)
            return

        completed = self.clock.now()
        committed = reflection.tokens < input_tokens
        if committed:
            self._commit_generation(live, reflection.observations, reflection.tokens)
            result.reflected = True
        if not reflection.met_target or not committed:
            live.reflection_retry_at = max(reflection.tokens, input_tokens) + max(1, int(threshold * REFLECTION_RETRY_GROWTH))
        else:
            live.reflection_retry_at = None
        if committed and reflection.suggested_response:
            thread = self.storage.get_thread(live.thread_id)
            if thread is not None:
                thread.om["suggestedResponse"] = reflection.suggested_response
                self.storage.save_thread(thread)
        usage = reflection.usage
        self.events.debug(
            "reflection_complete", completed, live.thread_id, live.resource_id,
            inputTokens=input_tokens, outputTokens=reflection.tokens, observations=reflection.observations,
            usage=_usage_dict(usage), committed=committed,
        )
        end = {**base, "completedAt": iso(completed), "durationMs": _ms(started, completed, reflection.latency_s),
               "tokensObserved": input_tokens, "observationTokens": reflection.tokens,
               "observations": reflection.observations, "recordId": live.record.id}
        if committed:
            self.events.data("data-om-observation-end", end)
        else:
            self.events.data("data-om-observation-failed", {
                **base, "failedAt": iso(completed), "durationMs": end["durationMs"], "tokensAttempted": input_tokens,
                "error": f"reflection did not shrink the log ({input_tokens} → {reflection.tokens}); kept unchanged",
                "observations": reflection.observations,
            })
        await call_hook(self.config.hooks, "on_reflection_end", {
            **hook_base, "usage": _usage_dict(usage), "costUsd": reflection.cost_usd,
            "providerMetadata": reflection.responses[-1].provider_metadata if reflection.responses else {},
            "model": reflection.responses[-1].model if reflection.responses else None,
            "error": None if committed else "not committed: the reflection did not shrink the log",
        })

    def _commit_generation(self, live: _Live, observations: str, tokens: int) -> None:
        old = live.record
        now = self.clock.now()
        new = dataclasses.replace(
            old,
            id=new_id("omr"),
            origin_type="reflection",
            generation_count=old.generation_count + 1,
            active_observations=observations,
            observation_token_count=tokens,
            created_at=now,
            updated_at=now,
            superseded_by=None,
            buffered_chunks=list(old.buffered_chunks),  # finished work moves to the new head
            observed_message_ids=list(old.observed_message_ids),
            config=dict(old.config),
            metadata=dict(old.metadata),
        )
        self.storage.save_record(new)
        old.superseded_by = new.id
        old.updated_at = now
        self.storage.save_record(old)
        live.record = new


class SyncObservationalMemory:
    """Blocking versions of :class:`ObservationalMemory`'s coroutines.

    The coroutines run on a private event loop in a daemon thread, so the facade works both in
    plain scripts and where an event loop is already running (Jupyter)."""

    def __init__(self, memory: ObservationalMemory) -> None:
        self.memory = memory
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="omlab-sync", daemon=True)
        self._thread.start()

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def add_messages(self, thread_id: str, messages: Iterable[Message], **kwargs: Any) -> StepResult | None:
        return self._run(self.memory.add_messages(thread_id, messages, **kwargs))

    def process(self, thread_id: str, **kwargs: Any) -> StepResult:
        return self._run(self.memory.process(thread_id, **kwargs))

    def observe(self, thread_id: str, **kwargs: Any) -> StepResult:
        return self._run(self.memory.observe(thread_id, **kwargs))

    def reflect(self, thread_id: str, prompt: str | None = None) -> StepResult:
        return self._run(self.memory.reflect(thread_id, prompt))

    def status(self, thread_id: str) -> Status:
        return self._run(self.memory.status(thread_id))

    def build_context(self, thread_id: str, **kwargs: Any) -> list[dict[str, Any]]:
        return self._run(self.memory.build_context(thread_id, **kwargs))

    def get_observations(self, thread_id: str) -> str:
        return self._run(self.memory.get_observations(thread_id))

    def get_record(self, thread_id: str) -> ObservationRecord:
        return self._run(self.memory.get_record(thread_id))

    def get_history(self, thread_id: str) -> list[ObservationRecord]:
        return self._run(self.memory.get_history(thread_id))

    def clear(self, thread_id: str) -> None:
        self._run(self.memory.clear(thread_id))

    def close(self) -> None:
        """Stop the private loop (the memory itself stays usable from async code)."""
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        self._loop.close()


def _ms(start: datetime, end: datetime, model_latency_s: float) -> int:
    """Cycle duration: clock time, or the models' latency when the clock did not move (virtual)."""
    elapsed = (end - start).total_seconds()
    return round(1000 * (elapsed if elapsed > 0 else model_latency_s))


def _usage_dict(usage: Any) -> dict[str, int]:
    return {"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens, "totalTokens": usage.total_tokens}


__all__: Sequence[str] = ("ObservationalMemory", "ObservationalMemoryError", "StepResult", "SyncObservationalMemory")
