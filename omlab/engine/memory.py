"""``ObservationalMemory``: the engine's public face (thread scope).

Per memory (thread scope: one per thread) the engine keeps a live view (:class:`LiveMemory`): the
head record, the messages not yet observed with their cached token counts, and a running sum, so a
step costs O(new messages). Storage stays the source of truth: a new engine over the same storage
rebuilds the view from the head record's cursor.

A step (:meth:`ObservationalMemory.process`) lands finished background work, applies idle/provider
activation, then either buffers and activates (async buffering, the default) or observes
synchronously at the threshold, then reflects; it ends by reporting ``data-om-status``. Background
work goes through the engine's :class:`~omlab.engine.scheduler.Scheduler`: live (asyncio, wall
clock) by default, virtual in replays.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from omlab.engine import reference_mode
from omlab.engine.activity import CURRENT_ACTOR, ActorCall, last_activity_at, last_actor_model
from omlab.engine.buffering import (
    activate,
    activate_on_triggers,
    buffering_step,
    maybe_start_buffering,
    reference_step,
)
from omlab.engine.clock import Clock
from omlab.engine.config import OMConfig
from omlab.engine.context import build_actor_context
from omlab.engine.cycle_context import CycleContext
from omlab.engine.errors import ConfigError, ObservationalMemoryError
from omlab.engine.events import DataListener, DebugListener, EventBus, iso
from omlab.engine.extraction_step import configured_extractors
from omlab.engine.extractors import Extractor
from omlab.engine.image_probe import probe_image_dimensions
from omlab.engine.live import LiveMemory
from omlab.engine.live_views import LiveViews
from omlab.engine.messages import Message
from omlab.engine.observation_cycle import observe_sync
from omlab.engine.observer import ObserverRunner
from omlab.engine.read_only_storage import ReadOnlyStorage
from omlab.engine.recall import RecallTool
from omlab.engine.recall_schema import retrieval_instructions
from omlab.engine.recall_search import EmbeddingSearchIndex, KeywordSearchIndex, SearchIndex
from omlab.engine.record import ObservationRecord, Thread
from omlab.engine.reflection_cycle import maybe_reflect, reflect_sync
from omlab.engine.reflector import ReflectorRunner
from omlab.engine.resolved_config import resolved_config
from omlab.engine.resource_cycle import observe_resource, other_conversations_block
from omlab.engine.scheduler import LiveScheduler, Scheduler
from omlab.engine.status import Status
from omlab.engine.step_result import PENDING_STATUS, StepResult
from omlab.engine.storage import Storage
from omlab.engine.sync_memory import SyncObservationalMemory
from omlab.engine.temporal_markers import insert_temporal_markers, is_temporal_marker
from omlab.engine.token_counter import TokenCounter
from omlab.llm.client import ModelClient
from omlab.llm.spec import primary_model_name

log = logging.getLogger("omlab.engine")

_ENGINE_ONLY_OPTIONS = (
    "probe_image_urls",
    "client",
    "clock",
    "scheduler",
    "token_counter",
    "timezone",
    "on_event",
    "embedder",
    "keyword_search",
)


def _config(options: Any, kwargs: dict[str, Any]) -> OMConfig:
    """The engine's config from an option object, or an :class:`OMConfig` (keyword arguments may
    then only add the standalone options)."""
    if not isinstance(options, OMConfig):
        return OMConfig.from_options(options, **kwargs)
    standalone = {"storage": "storage", "on_debug_event": "on_debug_event", "onDebugEvent": "on_debug_event"}
    for name in kwargs:
        if name not in standalone:
            raise ConfigError(name, "cannot be given beside an OMConfig; build the config with it instead")
    changes = {standalone[name]: value for name, value in kwargs.items()}
    return dataclasses.replace(options, **changes) if changes else options


class ObservationalMemory:
    """Observational Memory for threads of a conversation.

    Accepts every option of the seed documents, in snake_case or camelCase, as keyword arguments
    or as one mapping (``ObservationalMemory({"observation": {"messageTokens": 20_000}})``), plus
    the standalone options ``storage`` (a store implementing ``omlab.engine.storage.Storage``: the
    engine receives a store and never opens one; :class:`omlab.ObservationalMemory` also accepts
    ``None`` for in-memory or a ``.duckdb`` path), ``on_debug_event`` and ``obscure_thread_ids``. Engine-only keyword
    arguments: ``client`` (a :class:`~omlab.llm.client.ModelClient`), ``scheduler`` (live by
    default; a :class:`~omlab.engine.scheduler.VirtualScheduler` for replays), ``clock`` (the
    scheduler's clock when a scheduler is given), ``token_counter``, ``timezone`` (the IANA zone
    used to date observations), ``on_event`` (a listener for ``data-om-*`` parts) and
    ``keyword_search`` (omlab extension: with ``retrieval`` but no ``vector``, offer the recall
    tool's ``search`` mode over a keyword (BM25) index; off by default, as documented) and
    ``probe_image_urls`` (omlab option, off by default: fetch the first bytes of each URL image
    with no size before counting it, as the reference's probe does; see
    :mod:`omlab.engine.image_probe`).

    All methods are coroutines; :meth:`sync` returns a blocking facade for scripts.
    """

    def __init__(self, options: Any = None, /, **kwargs: Any) -> None:
        engine_args = {name: kwargs.pop(name) for name in _ENGINE_ONLY_OPTIONS if name in kwargs}
        config: OMConfig = _config(options, kwargs)
        storage = self._receive_store(config.storage)
        if config.read_only:
            storage = ReadOnlyStorage(storage)
        scheduler: Scheduler = engine_args.get("scheduler") or LiveScheduler(engine_args.get("clock"))
        client: ModelClient = engine_args.get("client") or ModelClient()
        self.timezone: str = engine_args.get("timezone") or "UTC"
        self.probe_image_urls: bool = bool(engine_args.get("probe_image_urls"))
        obs, refl = config.observation, config.reflection
        counter: TokenCounter = engine_args.get("token_counter") or TokenCounter(primary_model_name(obs.model))
        events = EventBus()
        if config.on_debug_event is not None:
            events.on_debug(config.on_debug_event)
        if engine_args.get("on_event") is not None:
            events.on_data(engine_args["on_event"])
        observer = ObserverRunner(
            model=obs.model,
            settings=obs.model_settings,
            provider_options=obs.provider_options,
            instruction=obs.instruction,
            thread_title=obs.thread_title,
            previous_observer_tokens=obs.previous_observer_tokens,
            client=client,
            observe_attachments=obs.observe_attachments,
            sort_lines=config.compat != "reference",
        )
        reflector = ReflectorRunner(
            model=refl.model,
            settings=refl.model_settings,
            provider_options=refl.provider_options,
            instruction=refl.instruction,
            client=client,
            count=counter.count_log,
            sort_lines=config.compat != "reference",
        )
        observation_extractors, reflection_extractors = configured_extractors(config)
        #: the engine's parts as the cycles see them; the properties below read them from here
        self.context = CycleContext(
            config=config,
            storage=storage,
            scheduler=scheduler,
            clock=scheduler.clock,
            client=client,
            counter=counter,
            events=events,
            observer=observer,
            reflector=reflector,
            observation_extractors=observation_extractors,
            reflection_extractors=reflection_extractors,
        )
        self.search_index: SearchIndex | None = None
        if config.retrieval is not None:
            if config.retrieval.vector:
                embedder = engine_args.get("embedder")
                if embedder is None:
                    raise ConfigError(
                        "retrieval.vector",
                        "semantic search needs an embedder: pass embedder=... (a function from a list of texts "
                        "to a list of vectors, e.g. omlab.llm.embeddings.litellm_embedder('openai/text-embedding-3-small'))",
                    )
                self.search_index = EmbeddingSearchIndex(embedder)
            elif engine_args.get("keyword_search"):
                # omlab extension: BM25 over raw messages, for runs without an embedder
                self.search_index = KeywordSearchIndex()
        self._views = LiveViews(config, storage, scheduler, counter, self.timezone)

    @staticmethod
    def _receive_store(spec: Any) -> Storage:
        """The store the ``storage`` option gives. The engine takes a store object only;
        :class:`omlab.ObservationalMemory` also opens ``None``, ``"memory"`` and ``.duckdb`` paths."""
        if isinstance(spec, Storage):
            return spec
        raise ConfigError(
            "storage",
            f"the engine needs a store object (omlab.engine.storage.Storage), got {spec!r}; open one with "
            f"omlab.storage.open_storage(...), or use omlab.ObservationalMemory, which accepts None, 'memory' "
            f"and .duckdb paths",
        )

    @property
    def config(self) -> OMConfig:
        return self.context.config

    @property
    def storage(self) -> Storage:
        return self.context.storage

    @property
    def scheduler(self) -> Scheduler:
        return self.context.scheduler

    @property
    def clock(self) -> Clock:
        return self.context.clock

    @property
    def client(self) -> ModelClient:
        return self.context.client

    @property
    def counter(self) -> TokenCounter:
        return self.context.counter

    @property
    def events(self) -> EventBus:
        return self.context.events

    @property
    def observer(self) -> ObserverRunner:
        return self.context.observer

    @property
    def reflector(self) -> ReflectorRunner:
        return self.context.reflector

    @property
    def observation_extractors(self) -> list[Extractor]:
        return self.context.observation_extractors

    @property
    def reflection_extractors(self) -> list[Extractor]:
        return self.context.reflection_extractors

    @classmethod
    def from_memory_config(cls, serialized: Mapping[str, Any], /, **kwargs: Any) -> ObservationalMemory:
        """An engine built from a ``SerializedMemoryConfig`` (see
        :meth:`OMConfig.from_memory_config`); ``kwargs`` are the standalone and engine-only options
        (``storage``, ``client``, ``scheduler``, ...). With ``options.readOnly`` nothing is written."""
        return cls(OMConfig.from_memory_config(serialized), **kwargs)

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
        actor_model: str | None = None,
        actor_provider_options: Mapping[str, Any] | None = None,
        process: bool = True,
    ) -> StepResult | None:
        """Store ``messages`` in the thread and, unless ``process=False``, run one step.

        ``actor_model`` is the actor's ``provider/model`` for this turn (for
        ``activateOnProviderChange`` and ``activateAfterIdle: "auto"``); an assistant message's
        model (a ``step-start`` part's, ``metadata["model"]`` or ``metadata["provider"]`` +
        ``["modelId"]``) is read the same way. ``actor_provider_options`` are the actor call's
        provider options (``openai.promptCacheRetention`` changes the ``"auto"`` TTL)."""
        if self.config.read_only:
            return None  # options.readOnly: no message is stored, nothing runs
        live = await self._views.get(thread_id, resource_id)
        batch = list(messages)
        if batch and self.probe_image_urls:
            await probe_image_dimensions(batch)
        if batch and self.config.temporal_markers:
            batch = self._with_temporal_markers(live, batch)
        if batch and self.config.compat == "reference":
            batch = reference_mode.merge_assistant_runs(batch, live.last_message, live.is_open)
        if batch:
            for message in batch:
                message.thread_id = thread_id
                if message.resource_id is None:
                    message.resource_id = live.resource_id
            self.storage.save_messages(batch)
            for message in batch:
                live.add(message, self.counter.count_message(message))
            if self.search_index is not None:
                self.search_index.index(batch)
            live.last_message = batch[-1]
        if not process or not self.config.enabled:
            self._note_activity(live, batch)
            return None
        result = await self.process(thread_id, actor_model=actor_model, actor_provider_options=actor_provider_options)
        self._note_activity(live, batch)
        return result

    def _with_temporal_markers(self, live: LiveMemory, batch: list[Message]) -> list[Message]:
        """``temporalMarkers``: a gap reminder before a user message after 10+ minutes of silence,
        persisted like a message, shown to the Observer and reported as ``data-om-temporal-marker``."""
        previous = live.last_message
        if previous is None:
            stored = self.storage.get_messages(live.thread_id)
            previous = stored[-1] if stored else None
        out = insert_temporal_markers(
            batch, previous, timezone=self.timezone, reference=self.config.compat == "reference"
        )
        for message in out:
            if is_temporal_marker(message):
                self.events.data(
                    "data-om-temporal-marker",
                    {
                        "threadId": live.thread_id,
                        "messageId": message.id,
                        "text": message.text,
                        "createdAt": iso(message.created_at),
                    },
                )
        return out

    def recall_tool(self, thread_id: str, *, resource_id: str | None = None) -> RecallTool:
        """The ``recall`` tool for an actor in this thread (``retrieval`` must be on). Give the
        actor ``tool.schema`` and answer its calls with ``tool.run(arguments)``."""
        if self.config.retrieval is None:
            raise ConfigError("retrieval", "the recall tool needs retrieval: true (or a retrieval object)")
        thread = self.storage.get_thread(thread_id)
        return RecallTool(
            self.storage,
            scope=self.config.retrieval.scope,
            current_thread_id=thread_id,
            resource_id=resource_id or (thread.resource_id if thread else None),
            search_index=self.search_index,
        )

    def _note_activity(self, live: LiveMemory, batch: list[Message]) -> None:
        activity = last_activity_at(batch)
        if activity is not None:
            live.last_activity_at = activity
        model = last_actor_model(batch)
        if model is not None:
            live.last_actor_model = model

    async def process(
        self,
        thread_id: str,
        *,
        actor_model: str | None = None,
        actor_provider_options: Mapping[str, Any] | None = None,
        trigger: str = "turn-sync",
    ) -> StepResult:
        """Run one step (see the module docstring) and return what it did."""
        live = await self._views.get(thread_id)
        CURRENT_ACTOR.set(ActorCall(actor_model or live.last_actor_model, dict(actor_provider_options or {})))
        async with live.lock:
            await self.scheduler.poll(f"{live.key}|")
            live.step += 1
            result = StepResult(status=PENDING_STATUS, pending_before=live.pending_tokens)
            if self.config.enabled and not self.config.read_only:
                reference_step_run = self.config.compat == "reference" and self.config.observation.async_enabled
                if self.config.observation.async_enabled:
                    await activate_on_triggers(self.context, live, actor_model, result)
                if reference_step_run:  # reflects inside, where the reference does
                    await reference_step(self.context, live, result, trigger=trigger, actor_model=actor_model)
                elif self.config.observation.async_enabled:
                    await buffering_step(self.context, live, result)
                elif self.context.pending_tokens(live) >= self.context.threshold(live):
                    await self._observe_now(live, trigger, result)
                if not reference_step_run:
                    await maybe_reflect(self.context, live, trigger, result, actor_model=actor_model)
            if actor_model:
                live.last_actor_model = actor_model
            result.status = self.context.status(live)
            if self.config.compat == "reference":
                reference_mode.store_step_pending(live.record, result.status.pending_tokens)
            self.context.emit_status(live, result.status)
            return result

    async def end_turn(self, thread_id: str) -> None:
        """End of an agent turn: with ``observation.bufferOnIdle``, buffer what is left now."""
        if not (self.config.observation.buffer_on_idle and self.config.observation.async_enabled):
            return
        if self.config.read_only:
            return
        live = await self._views.get(thread_id)
        async with live.lock:
            await maybe_start_buffering(self.context, live, StepResult(status=self.context.status(live)), idle=True)

    async def observe(self, thread_id: str, *, force: bool = True) -> StepResult:
        """Observe now, synchronously. With ``force`` (the default) everything unobserved is
        observed whatever the threshold (buffered chunks are activated first, so order holds)."""
        live = await self._views.get(thread_id)
        async with live.lock:
            await self.scheduler.poll(f"{live.key}|")
            result = StepResult(status=self.context.status(live))
            if live.unobserved and (force or self.context.status(live).should_observe) and not self.config.read_only:
                result.blocked_observation_s += await self.scheduler.settle(live.obs_key)
                if live.record.buffered_chunks:
                    await activate(self.context, live, "threshold", result, force_all=True)
                await self._observe_now(live, "manual", result, everything=True)
                await maybe_reflect(self.context, live, "manual", result)
            result.status = self.context.status(live)
            return result

    async def reflect(self, thread_id: str, prompt: str | None = None) -> StepResult:
        """Reflect now, synchronously, whatever the threshold, optionally with guidance text."""
        live = await self._views.get(thread_id)
        async with live.lock:
            await self.scheduler.poll(f"{live.key}|")
            result = StepResult(status=self.context.status(live))
            if live.record.active_observations.strip() and not self.config.read_only:
                await reflect_sync(self.context, live, "manual", result, manual=True, guidance=prompt)
            result.status = self.context.status(live)
            return result

    async def finalize(self, thread_id: str) -> StepResult:
        """Wait for background work, activate every chunk, then observe and reflect if over their
        thresholds: the state a finished conversation leaves behind."""
        live = await self._views.get(thread_id)
        async with live.lock:
            result = StepResult(status=self.context.status(live))
            if self.config.read_only:
                return result
            result.blocked_observation_s += await self.scheduler.settle(live.obs_key)
            result.blocked_reflection_s += await self.scheduler.settle(live.refl_key)
            if live.record.buffered_chunks and self.context.status(live).should_observe:
                await activate(self.context, live, "threshold", result)
            if self.context.status(live).should_observe:
                await self._observe_now(live, "manual", result)
            await maybe_reflect(self.context, live, "manual", result)
            result.status = self.context.status(live)
            return result

    async def settle(self) -> None:
        """Wait for every background operation of this engine to land."""
        await self.scheduler.drain()

    async def status(self, thread_id: str) -> Status:
        live = await self._views.get(thread_id)
        return self.context.status(live)

    async def build_context(
        self, thread_id: str, *, current_date: datetime | None = None, resource_id: str | None = None
    ) -> list[dict[str, Any]]:
        """The actor's context: memory system messages, then the unobserved raw messages.

        ``current_date`` drives the relative-time annotations (a benchmark passes the question
        date); it defaults to the clock's now. In resource scope a thread new to the memory (a
        fresh question thread) needs its ``resource_id``."""
        live = await self._views.get(thread_id, resource_id)
        thread = self.storage.get_thread(thread_id)
        om = thread.om if thread is not None else {}
        retrieval = self.config.retrieval
        instructions = None
        if retrieval is not None:
            instructions = retrieval_instructions(
                retrieval.scope, vector=self.search_index is not None, custom=retrieval.instructions
            )
        raw = live.unobserved
        others = None
        if self.config.scope == "resource":
            raw = [m for m in live.unobserved if m.thread_id == thread_id]
            others = other_conversations_block(self.context, live, thread_id)
        context = build_actor_context(
            live.record.active_observations,
            raw,
            current_date=current_date or self.clock.now(),
            current_task=om.get("currentTask"),
            suggested_response=om.get("suggestedResponse"),
            extra_instructions=instructions,
            groups=retrieval is not None,
            reference=self.config.compat == "reference",
        )
        if others:
            # after the memory prompt (or first, with no log yet), before the observations
            at = 1 if live.record.active_observations.strip() else 0
            context.insert(at, {"role": "system", "content": others})
        return context

    async def get_observations(self, thread_id: str) -> str:
        return (await self._views.get(thread_id)).record.active_observations

    async def get_resolved_config(self, request_context: dict[str, Any] | None = None) -> dict[str, Any]:
        """The reference's ``getResolvedConfig()``: scope, thresholds and each role's concrete
        model id (a ``ModelByInputTokens`` router: its smallest tier's, with ``routing``)."""
        return await resolved_config(self.config, request_context)

    async def get_record(self, thread_id: str) -> ObservationRecord:
        return dataclasses.replace((await self._views.get(thread_id)).record)

    async def get_history(self, thread_id: str, *, resource_id: str | None = None) -> list[ObservationRecord]:
        """Every generation of the memory the thread belongs to, oldest first."""
        return self.storage.get_history(*self._views.record_key(thread_id, resource_id))

    async def get_unobserved_messages(self, thread_id: str, *, resource_id: str | None = None) -> list[Message]:
        """Messages the actor still sees raw (in resource scope: of every thread of the resource)."""
        return list((await self._views.get(thread_id, resource_id)).unobserved)

    async def list_threads(self, thread_id: str) -> list[Thread]:
        """The threads sharing ``thread_id``'s memory (just that thread in thread scope)."""
        scope, _, resource = self._views.record_key(thread_id, None)
        if scope == "resource":
            return self.storage.list_threads(resource)
        thread = self.storage.get_thread(thread_id)
        return [thread] if thread is not None else []

    async def clear(self, thread_id: str) -> None:
        """Forget the thread's memory (records and cursor); its messages stay in storage and are
        all unobserved again."""
        self._views.forget(thread_id)

    def sync(self) -> SyncObservationalMemory:
        """A blocking facade with the same methods, for scripts."""
        return SyncObservationalMemory(self)

    # ------------------------------------------------------------------ steps
    async def _observe_now(
        self, live: LiveMemory, trigger: str, result: StepResult, *, everything: bool = False
    ) -> None:
        if self.config.scope == "resource":
            await observe_resource(self.context, live, trigger, result, everything=everything)
        else:
            await observe_sync(self.context, live, trigger, result)


__all__: Sequence[str] = ("ObservationalMemory", "ObservationalMemoryError", "StepResult", "SyncObservationalMemory")
