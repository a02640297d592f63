"""Async buffering and activation (om-reference.md §2.3-2.6, with the seed's ``blockAfter`` band).

* **Buffering**: every ``bufferTokens`` of pending tokens (half intervals near the threshold) a
  background Observer observes the messages in no chunk yet and produces a *chunk*. Buffering
  keeps running past ``messageTokens``.
* **Activation** (instant, no model call): at the threshold, or when ``activateAfterIdle`` /
  ``activateOnProviderChange`` fire, a prefix of the chunks chosen by the boundary rule moves into
  the log and its messages leave the actor's context.
* **``blockAfter``**: between ``messageTokens`` and ``blockAfter`` only buffering and activation
  run; at or above ``blockAfter`` the step waits for the in-flight buffer, activates every chunk
  and, if the context is still over the threshold, observes the rest synchronously.

Fixes of the reference's bugs (§10): chunks always land on the *current* head record, so a
reflection can neither strand them nor receive an activation meant for a retired generation;
continuation hints from chunks are carried forward, never wiped; one buffer op per key; the cursor
only moves forward.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from omlab.engine import extraction_step, reference_mode
from omlab.engine.activity import CURRENT_ACTOR
from omlab.engine.errors import error_fields
from omlab.engine.events import iso, new_cycle_id
from omlab.engine.hooks import call_hook
from omlab.engine.live import LiveMemory, ids_at_cursor, safe_prefix
from omlab.engine.observation_cycle import duration_ms, observe_sync, observer_cost, usage_dict
from omlab.engine.observation_text import append_with_boundary
from omlab.engine.record import BufferedChunk, new_id
from omlab.engine.reflection_cycle import maybe_reflect
from omlab.engine.thresholds import (
    blocking_band,
    min_buffer_tokens,
    select_activation_boundary,
    should_trigger_buffer,
    stale_buffer_boundary,
)
from omlab.engine.ttl import activation_ttl_ms, ttl_expired_ms

if TYPE_CHECKING:
    from omlab.engine.cycle_context import CycleContext
    from omlab.engine.step_result import StepResult

BUFFERED_SEPARATOR = "\n\n--- BUFFERED (pending activation) ---\n\n"


async def buffering_step(om: CycleContext, live: LiveMemory, result: StepResult) -> None:
    """The observation half of a step when async buffering is on."""
    cfg = om.config.observation
    threshold = om.threshold(live)
    band = blocking_band(live.pending_tokens, threshold, cfg.block_after)
    if band != "below" and live.record.buffered_chunks:
        await activate(om, live, "threshold", result, force_max=band == "block")
    if cfg.block_after is not None and live.pending_tokens >= cfg.block_after:
        # the safety net: buffering did not keep up, so the actor waits
        result.blocked_observation_s += await om.scheduler.settle(live.obs_key)
        if live.record.buffered_chunks:
            await activate(om, live, "threshold", result, force_all=True)
        if live.pending_tokens >= threshold:
            await observe_sync(om, live, "turn-sync", result)
    await maybe_start_buffering(om, live, result)


async def reference_step(
    om: CycleContext, live: LiveMemory, result: StepResult, *, trigger: str, actor_model: str | None
) -> None:
    """The reference's step (``compat="reference"``), its reflections included: a turn's first
    step (its newest message is a user's) activates when the pending count reached the threshold,
    then reflects; every step buffers only below the threshold and, at or over it, waits for the
    in-flight buffer, then activates what it left (and reflects) or, with no chunk, observes
    synchronously, after which the turn's later steps check the buffering interval from the live
    boundary again. ``blockAfter`` only makes an activation take as much as it may."""
    live.turn_opening_step = live.last_message is None or live.last_message.role == "user"
    if live.turn_opening_step:  # only a turn's first step activates (and reflects) up front
        live.turn_buffer_boundary = None
        if live.pending_tokens >= om.threshold(live) and live.record.buffered_chunks:
            await activate(om, live, "threshold", result)
        await maybe_reflect(om, live, trigger, result, actor_model=actor_model)
    if live.pending_tokens < om.threshold(live):
        await maybe_start_buffering(om, live, result)
        return
    result.blocked_observation_s += await om.scheduler.settle(live.obs_key)
    if live.pending_tokens < om.threshold(live):
        return
    if live.record.buffered_chunks:
        await activate(om, live, "threshold", result)
    else:
        await observe_sync(om, live, "turn-sync", result)
    reference_mode.reset_turn_boundary(live)
    await maybe_reflect(om, live, trigger, result, actor_model=actor_model)


async def maybe_start_buffering(om: CycleContext, live: LiveMemory, result: StepResult, *, idle: bool = False) -> None:
    """Start a background Observer when pending tokens crossed a new ``bufferTokens`` interval
    (``idle``: at the end of a turn with ``bufferOnIdle``, without the interval and size checks)."""
    cfg = om.config.observation
    buffer_tokens = cfg.buffer_tokens
    if buffer_tokens is None or om.scheduler.in_flight(live.obs_key):
        return
    pending = live.pending_tokens
    reference = om.config.compat == "reference"
    if stale_buffer_boundary(pending, live.buffer_boundary):
        live.buffer_boundary = 0
    boundary = live.buffer_boundary
    if reference and not live.turn_opening_step:
        boundary = reference_mode.later_step_boundary(boundary, live.turn_buffer_boundary)
    if not idle and not should_trigger_buffer(pending, boundary, om.threshold(live), buffer_tokens):
        return
    unbuffered = live.unbuffered()
    candidates = safe_prefix(unbuffered)
    if reference and not unbuffered:
        live.buffer_boundary = pending  # the reference's op runs on nothing and consumes the interval
        return
    if not candidates:
        return  # nothing safe yet: keep the boundary so the next step retries
    # the interval is consumed even when too little is new to be worth a call (as the reference
    # does): the next op waits for the next interval instead of firing on the next message
    live.buffer_boundary = pending
    if reference:  # the reference seals the candidates before it weighs them
        live.sealed_ids.update(m.id for m in candidates)
    new_tokens = live.tokens_of(candidates)
    if not idle and new_tokens < min_buffer_tokens(buffer_tokens):
        return
    if reference:
        live.turn_buffer_boundary = pending
    await _start_buffer(om, live, candidates, new_tokens, result)


async def _start_buffer(
    om: CycleContext, live: LiveMemory, candidates: list[Any], new_tokens: int, result: StepResult
) -> None:
    record = live.record
    cycle_id = new_cycle_id("buffer-obs")
    started = om.clock.now()
    ids = [m.id for m in candidates]
    live.in_flight_ids.update(ids)
    previous = record.active_observations
    if record.buffered_chunks:
        previous = (previous + BUFFERED_SEPARATOR if previous.strip() else "") + "\n\n".join(
            c.observations for c in record.buffered_chunks if c.observations
        )
    base = {"cycleId": cycle_id, "operationType": "observation", "recordId": record.id, "threadId": live.thread_id}
    om.events.data(
        "data-om-buffering-start",
        {
            **base,
            "startedAt": iso(started),
            "tokensToBuffer": new_tokens,
            "threadIds": [live.thread_id],
            "config": om.marker_config(),
        },
    )
    hook_base = {
        "threadId": live.thread_id,
        "resourceId": live.resource_id,
        "trigger": "async-buffer",
        "cycleId": cycle_id,
        "operationType": "observation",
    }
    await call_hook(om.config.hooks, "on_observation_start", hook_base)
    extraction = extraction_step.prepare(om, live, om.storage.get_thread(live.thread_id), "observation")

    async def work() -> Any:
        return await om.observer.observe(
            candidates,
            input_tokens=new_tokens,
            active_observations=previous,
            prior_metadata=extraction.prior,
            timezone=record.observed_timezone,
            buffering=True,
            metadata={"cycleId": cycle_id, "threadId": live.thread_id, "operationType": "buffer-observation"},
            inline_items=extraction.inline_items,
            inline_slugs=extraction.inline_slugs,
        )

    async def commit(observed: Any, error: BaseException | None) -> None:
        await _commit_buffer(
            om, live, cycle_id, candidates, new_tokens, started, base, hook_base, observed, error, extraction
        )

    result.buffering_started = True
    await om.scheduler.submit(live.obs_key, work, commit, cost=observer_cost, lock=live.lock)


async def _commit_buffer(
    om: CycleContext,
    live: LiveMemory,
    cycle_id: str,
    candidates: list[Any],
    new_tokens: int,
    started: Any,
    base: dict,
    hook_base: dict,
    observed: Any,
    error: BaseException | None,
    extraction: extraction_step.ExtractionSetup,
) -> None:
    ids = [m.id for m in candidates]
    live.in_flight_ids.difference_update(ids)
    now = om.clock.now()
    latency = observed.latency_s if observed is not None else 0.0
    if error is None and not all(mid in live.counts for mid in ids):
        # some of these messages were observed synchronously meanwhile: the chunk is superseded
        error = RuntimeError("superseded: its messages were observed synchronously while it ran")
    if error is not None:
        live.buffer_boundary = 0  # let the next step try again
        om.events.data(
            "data-om-buffering-failed",
            {
                **base,
                "failedAt": iso(now),
                "durationMs": duration_ms(started, now, latency),
                "tokensAttempted": new_tokens,
                **error_fields(error),
            },
        )
        await call_hook(om.config.hooks, "on_observation_end", {**hook_base, "usage": None, "error": error})
        return
    output = observed.output
    text = extraction_step.wrap_for_retrieval(om, output.observations.strip(), candidates)
    record = live.record  # the head *now*: a reflection during the call cannot strand the chunk
    # extracted values are persisted now (the seed: "already persisted" at buffering-end); the
    # built-in hints travel on the chunk and reach the thread at activation
    thread = om.storage.get_thread(live.thread_id)
    extracted = await extraction_step.finish(om, extraction, thread, _without_hints(output), record.active_observations)
    if thread is not None:
        om.storage.save_thread(thread)
    chunk = BufferedChunk(
        id=new_id("ombuf"),
        cycle_id=cycle_id,
        observations=text,
        token_count=om.counter.count_log(text) if text else 0,
        message_ids=ids,
        message_tokens=new_tokens,
        last_observed_at=max(m.created_at for m in candidates),
        created_at=now,
        suggested_continuation=output.suggested_response,
        current_task=output.current_task,
        thread_title=output.thread_title,
    )
    record.buffered_chunks = [*record.buffered_chunks, chunk]
    record.updated_at = now
    om.storage.save_record(record)
    if om.config.compat == "reference":
        live.buffer_boundary = reference_mode.boundary_after_buffer(new_tokens)
    om.events.data(
        "data-om-buffering-end",
        {
            **base,
            "recordId": record.id,
            "completedAt": iso(now),
            "durationMs": duration_ms(started, now, latency),
            "tokensBuffered": new_tokens,
            "bufferedTokens": sum(c.token_count for c in record.buffered_chunks),
            "observations": text,
            "messageIds": ids,
            **extraction_step.event_fields(extracted),
        },
    )
    await call_hook(
        om.config.hooks,
        "on_observation_end",
        {
            **hook_base,
            "usage": usage_dict(observed.usage),
            "costUsd": observed.cost_usd,
            "providerMetadata": observed.responses[-1].provider_metadata,
            "model": observed.responses[-1].model,
            "error": None,
        },
    )


def _without_hints(output: Any) -> Any:
    """The Observer output minus the built-in hints, which must wait for activation."""
    import dataclasses

    return dataclasses.replace(output, current_task=None, suggested_response=None, thread_title=None)


async def activate(
    om: CycleContext,
    live: LiveMemory,
    trigger: str,
    result: StepResult,
    *,
    force_max: bool = False,
    force_all: bool = False,
    details: dict | None = None,
) -> int:
    """Move a prefix of the buffered chunks into the log; returns how many were activated."""
    record = live.record
    chunks = record.buffered_chunks
    if not chunks:
        return 0
    tokens = live.chunk_message_tokens()
    reference = om.config.compat == "reference"
    if force_all:
        count = len(chunks)
    else:
        cfg = om.config.observation
        pending = live.pending_tokens
        if reference:  # D3: the reference selects with the pending count its last step stored
            pending = reference_mode.selection_pending(record, tokens)
            force_max = cfg.block_after is not None and pending >= cfg.block_after
        count = select_activation_boundary(
            tokens, pending, cfg.buffer_activation, om.threshold(live), force_max=force_max
        ).chunks
    activated, remaining = chunks[:count], chunks[count:]
    previous_cursor = record.last_observed_at
    if reference:
        reference_mode.append_activated(record, activated, sum(tokens[:count]))
    else:
        text = record.active_observations
        for chunk in activated:
            if chunk.observations:
                text = (
                    append_with_boundary(text, chunk.observations, chunk.last_observed_at)
                    if text.strip()
                    else chunk.observations
                )
        record.active_observations = text
        record.observation_token_count = om.counter.count_log(text)
        newest = max(c.last_observed_at for c in activated)
        if record.last_observed_at is None or newest > record.last_observed_at:
            record.last_observed_at = newest  # forward only
    ids = [mid for c in activated for mid in c.message_ids]
    id_set = set(ids)
    record.observed_message_ids = ids_at_cursor(record, [m for m in live.unobserved if m.id in id_set], previous_cursor)
    record.buffered_chunks = remaining
    record.total_tokens_observed += sum(tokens[:count])
    record.updated_at = om.clock.now()

    # hints: the newest chunk that has them wins; a chunk without hints never wipes older ones
    hinted = [c for c in activated if c.current_task or c.suggested_continuation or c.thread_title]
    thread = om.storage.get_thread(live.thread_id)
    if hinted:
        last = hinted[-1]
        om.update_thread_hints(
            thread, live, last.cycle_id, last.current_task, last.suggested_continuation, last.thread_title
        )
    om.storage.save_record(record)
    live.remove(ids)
    live.buffer_boundary = 0

    now = om.clock.now()
    for chunk, chunk_tokens in zip(activated, tokens[:count]):
        om.events.data(
            "data-om-activation",
            {
                "cycleId": chunk.cycle_id,
                "operationType": "observation",
                "activatedAt": iso(now),
                "chunksActivated": 1 if reference else count,
                "tokensActivated": chunk_tokens,
                "observationTokens": chunk.token_count,
                "messagesActivated": len(chunk.message_ids),
                "recordId": record.id,
                "threadId": live.thread_id,
                "generationCount": record.generation_count,
                "config": om.marker_config(),
                "observations": chunk.observations,
                "messageIds": list(chunk.message_ids),
                "triggeredBy": trigger,
                **(details or {}),
            },
        )
    result.activated = True
    result.activations += count
    result.observed_message_ids.extend(ids)
    return count


async def activate_on_triggers(om: CycleContext, live: LiveMemory, actor_model: str | None, result: StepResult) -> None:
    """Idle-TTL and provider-change activation, checked at the start of a step."""
    if not live.record.buffered_chunks:
        return
    cfg = om.config.observation
    if (
        cfg.activate_on_provider_change
        and actor_model
        and live.last_actor_model
        and actor_model != live.last_actor_model
    ):
        await activate(
            om,
            live,
            "provider_change",
            result,
            details={"previousModel": live.last_actor_model, "currentModel": actor_model},
        )
        return
    ttl = activation_ttl_ms(
        cfg.activate_after_idle, actor_model or live.last_actor_model, CURRENT_ACTOR.get().provider_options
    )
    if ttl is None or live.last_activity_at is None:
        return
    idle_ms = (om.clock.now() - live.last_activity_at).total_seconds() * 1000
    if idle_ms >= ttl:
        await activate(
            om,
            live,
            "ttl",
            result,
            details={
                "lastActivityAt": int(live.last_activity_at.timestamp() * 1000),
                "ttlExpiredMs": ttl_expired_ms(idle_ms, ttl, reference=om.config.compat == "reference"),
            },
        )
