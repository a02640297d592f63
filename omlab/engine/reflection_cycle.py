"""Reflection: synchronous, and buffered in the background (om-reference.md §2.8).

With async reflection on (``reflection.bufferActivation`` set, the default while buffering is on)
a background Reflector starts at ``bufferActivation × observationTokens`` over the oldest lines
worth that many tokens; at ``observationTokens`` its result replaces exactly the lines it covered
and the lines added since are kept. A blocking reflection of the whole log runs only at or above
``reflection.blockAfter`` (the seed's band), or at the threshold when async reflection is off.

Never committed: empty or degenerate output, or output that does not shrink what it replaces. An
unproductive attempt is not retried until the log has grown by a tenth of the threshold, so the
reference's reflect loop (#14109) cannot happen; a stale buffered reflection (the generation
changed under it) is discarded.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from omlab.engine import extraction_step, reference_mode
from omlab.engine.activity import CURRENT_ACTOR
from omlab.engine.errors import error_fields
from omlab.engine.events import iso, new_cycle_id
from omlab.engine.hooks import call_hook
from omlab.engine.live import LiveMemory
from omlab.engine.observation_cycle import duration_ms, observer_cost, usage_dict
from omlab.engine.observation_groups import reconcile_reflection_groups
from omlab.engine.record import new_id
from omlab.engine.reflector import start_level
from omlab.engine.thresholds import js_round, should_start_buffered_reflection
from omlab.engine.ttl import activation_ttl_ms, ttl_expired_ms
from omlab.llm.spec import primary_model_name

if TYPE_CHECKING:
    from omlab.engine.cycle_context import CycleContext
    from omlab.engine.step_result import StepResult

log = logging.getLogger("omlab.engine")

#: An unproductive reflection is retried only after the log grew by this share of the threshold.
RETRY_GROWTH = 0.1
#: The background Reflector aims at this share of the slice it condenses.
BUFFERED_TARGET_RATIO = 0.75


def _suppressed(live: LiveMemory) -> bool:
    return live.reflection_retry_at is not None and live.record.observation_token_count < live.reflection_retry_at


def _back_off(om: CycleContext, live: LiveMemory, size: int) -> None:
    threshold = om.config.reflection.observation_tokens
    live.reflection_retry_at = size + max(1, int(threshold * RETRY_GROWTH))


async def maybe_reflect(
    om: CycleContext, live: LiveMemory, trigger: str, result: StepResult, *, actor_model: str | None = None
) -> None:
    """The reflection half of a step."""
    cfg = om.config.reflection
    threshold = cfg.observation_tokens
    tokens = live.record.observation_token_count
    if not cfg.async_enabled:
        if tokens >= threshold and not _suppressed(live):
            await reflect_sync(om, live, trigger, result)
        return

    if should_start_buffered_reflection(
        tokens,
        threshold,
        cfg.buffer_activation,
        op_running=om.scheduler.in_flight(live.refl_key),
        has_buffered_reflection=live.record.buffered_reflection is not None,
    ) and not _suppressed(live):
        await start_buffered_reflection(om, live, result)

    reason, details = _reflection_trigger(om, live, actor_model)
    if reason is None:
        return
    if live.record.buffered_reflection is not None:
        await activate_buffered_reflection(om, live, reason, result, details)
        return
    if reason != "threshold":
        return
    if cfg.block_after is not None and tokens >= cfg.block_after:
        if om.scheduler.in_flight(live.refl_key):
            result.blocked_reflection_s += await om.scheduler.settle(live.refl_key)
            if live.record.buffered_reflection is not None:
                await activate_buffered_reflection(om, live, "threshold", result, {})
                return
        if not _suppressed(live):
            await reflect_sync(om, live, trigger, result)
        return
    if not om.scheduler.in_flight(live.refl_key) and not _suppressed(live):
        await start_buffered_reflection(om, live, result)


def _reflection_trigger(om: CycleContext, live: LiveMemory, actor_model: str | None) -> tuple[str | None, dict]:
    cfg = om.config.reflection
    if live.record.observation_token_count >= cfg.observation_tokens:
        return "threshold", {}
    if live.record.buffered_reflection is None:
        return None, {}
    if (
        cfg.activate_on_provider_change
        and actor_model
        and live.last_actor_model
        and actor_model != live.last_actor_model
    ):
        return "provider_change", {"previousModel": live.last_actor_model, "currentModel": actor_model}
    ttl = activation_ttl_ms(
        cfg.activate_after_idle, actor_model or live.last_actor_model, CURRENT_ACTOR.get().provider_options
    )
    if ttl is not None and live.last_activity_at is not None:
        idle_ms = (om.clock.now() - live.last_activity_at).total_seconds() * 1000
        if idle_ms >= ttl:
            return "ttl", {
                "lastActivityAt": int(live.last_activity_at.timestamp() * 1000),
                "ttlExpiredMs": ttl_expired_ms(idle_ms, ttl, reference=om.config.compat == "reference"),
            }
    return None, {}


def _end_of_group(lines: list[str], covered: int) -> int:
    depth = 0
    for index, line in enumerate(lines):
        depth += line.count("<observation-group") - line.count("</observation-group>")
        if index + 1 >= covered and depth <= 0:
            return index + 1
    return len(lines)


async def start_buffered_reflection(om: CycleContext, live: LiveMemory, result: StepResult) -> None:
    cfg = om.config.reflection
    record = live.record
    log = record.active_observations
    reference = om.config.compat == "reference"
    if reference:
        lines = log.split("\n")
        covered, slice_tokens = reference_mode.reflection_slice(
            len(lines), record.observation_token_count, cfg.observation_tokens * cfg.buffer_activation
        )
        slice_text = "\n".join(lines[:covered])
    else:
        # The reference estimates the slice from the log's average tokens per line; once the head
        # of the log is condensed reflection output (short lines), that covers less and less, each
        # reflection saves less, and reflections come ever more often. Counting the lines keeps
        # every background reflection the intended size.
        covered, slice_tokens, chars = om.counter.log_leading_lines(log, cfg.observation_tokens * cfg.buffer_activation)
        slice_text = log[:chars]
        if om.config.retrieval is not None:
            lines = log.split("\n")
            grouped = _end_of_group(lines, covered)  # never split an observation group
            if grouped != covered:
                covered, slice_text = grouped, "\n".join(lines[:grouped])
                slice_tokens = om.counter.count_log(slice_text)
    if covered <= 0:
        return
    target = max(1, js_round(BUFFERED_TARGET_RATIO * slice_tokens))
    record_id = record.id
    cycle_id = new_cycle_id("reflect-buf")
    started = om.clock.now()
    base = {"cycleId": cycle_id, "operationType": "reflection", "recordId": record_id, "threadId": live.thread_id}
    om.events.data(
        "data-om-buffering-start",
        {
            **base,
            "startedAt": iso(started),
            "tokensToBuffer": slice_tokens,
            "threadIds": [live.thread_id],
            "config": om.marker_config(),
        },
    )
    hook_base = {
        "threadId": live.thread_id,
        "resourceId": live.resource_id,
        "trigger": "async-buffer",
        "cycleId": cycle_id,
        "operationType": "reflection",
    }
    await call_hook(om.config.hooks, "on_reflection_start", hook_base)
    first_level = start_level(primary_model_name(cfg.model))
    # reflection.extract runs with the buffered reflection too (its values are kept when it is
    # buffered, as the reference does), not only with a synchronous one
    extraction = extraction_step.prepare(om, live, om.storage.get_thread(live.thread_id), "reflection")

    async def work() -> Any:
        return await om.reflector.reflect(
            slice_text,
            target=target,
            first_level=first_level,
            metadata={"cycleId": cycle_id, "threadId": live.thread_id, "operationType": "buffer-reflection"},
            inline_items=extraction.inline_items,
            inline_slugs=extraction.inline_slugs,
            # the reference's slice estimate is not a count of the text: the Reflector counts it
            observation_tokens=None if reference else slice_tokens,
        )

    async def commit(reflection: Any, error: BaseException | None) -> None:
        now = om.clock.now()
        latency = reflection.latency_s if reflection is not None else 0.0
        if error is None and live.record.id != record_id:
            error = RuntimeError("stale: the memory got a new generation while this reflection ran")
        if error is None and not reference and reflection.tokens >= slice_tokens:
            error = RuntimeError(f"did not shrink its slice ({slice_tokens} → {reflection.tokens} tokens)")
        if error is not None:
            _back_off(om, live, live.record.observation_token_count)
            om.events.data(
                "data-om-buffering-failed",
                {
                    **base,
                    "failedAt": iso(now),
                    "durationMs": duration_ms(started, now, latency),
                    "tokensAttempted": slice_tokens,
                    **error_fields(error),
                },
            )
            await call_hook(om.config.hooks, "on_reflection_end", {**hook_base, "usage": None, "error": error})
            return
        head = live.record
        head.buffered_reflection = reflection.observations
        head.buffered_reflection_tokens = reflection.tokens
        head.buffered_reflection_input_tokens = slice_tokens
        head.reflected_observation_line_count = covered
        head.updated_at = now
        om.storage.save_record(head)
        thread = om.storage.get_thread(live.thread_id)  # fresh: other cycles wrote it meanwhile
        extracted = await extraction_step.finish(om, extraction, thread, reflection.output, reflection.observations)
        if thread is not None:
            om.storage.save_thread(thread)
        om.events.data(
            "data-om-buffering-end",
            {
                **base,
                "completedAt": iso(now),
                "durationMs": duration_ms(started, now, latency),
                "tokensBuffered": slice_tokens,
                "bufferedTokens": reflection.tokens,
                "observations": reflection.observations,
                **extraction_step.event_fields(extracted),
            },
        )
        await call_hook(
            om.config.hooks,
            "on_reflection_end",
            {
                **hook_base,
                "usage": usage_dict(reflection.usage),
                "costUsd": reflection.cost_usd,
                "providerMetadata": reflection.responses[-1].provider_metadata if reflection.responses else {},
                "model": reflection.responses[-1].model if reflection.responses else None,
                "error": None,
            },
        )

    result.buffering_started = True
    await om.scheduler.submit(live.refl_key, work, commit, cost=observer_cost, lock=live.lock)


async def activate_buffered_reflection(
    om: CycleContext, live: LiveMemory, reason: str, result: StepResult, details: dict
) -> bool:
    """Replace the covered lines with the buffered reflection in a new generation."""
    cfg = om.config.reflection
    record = live.record
    buffered = record.buffered_reflection or ""
    reflected = record.reflected_observation_line_count
    # only the reflected lines are split off: the rest of the log stays one string
    pieces = record.active_observations.split("\n", reflected)
    tail = pieces[reflected].strip() if len(pieces) > reflected else ""
    combined = f"{buffered}\n\n{tail}" if tail else buffered
    new_tokens = None
    if reason != "threshold":
        # an early trigger must not make a cliff drop (§2.8 step 4)
        tail_tokens = om.counter.count_log(tail) if tail else 0
        new_tokens = om.counter.count_log(combined)
        floor = 0.75 * cfg.observation_tokens * (1 - (cfg.buffer_activation or 0))
        if tail_tokens < record.buffered_reflection_tokens or new_tokens < floor:
            return False
    if om.config.retrieval is not None:
        covered_text = "\n".join(pieces[:reflected])
        buffered = retrieval_groups(om, buffered, covered_text)
        combined = f"{buffered}\n\n{tail}" if tail else buffered
        new_tokens = om.counter.count_log(combined)
    elif new_tokens is None and om.config.compat == "reference":
        new_tokens = om.counter.count_log(combined)
    elif new_tokens is None:  # the buffered reflection was counted when it was stored
        new_tokens = om.counter.count_log_joined(buffered, record.buffered_reflection_tokens, tail)
    before = record.observation_token_count
    commit_generation(om, live, combined, new_tokens)
    now = om.clock.now()
    om.events.data(
        "data-om-activation",
        {
            "cycleId": new_cycle_id("reflect-act"),
            "operationType": "reflection",
            "activatedAt": iso(now),
            "chunksActivated": 1,
            "tokensActivated": before,
            "observationTokens": new_tokens,
            "messagesActivated": 0,
            "recordId": live.record.id,
            "threadId": live.thread_id,
            "generationCount": live.record.generation_count,
            "config": om.marker_config(),
            "observations": combined,
            "triggeredBy": reason,
            **details,
        },
    )
    live.reflection_retry_at = None
    result.reflected = True
    return True


async def reflect_sync(
    om: CycleContext,
    live: LiveMemory,
    trigger: str,
    result: StepResult,
    *,
    manual: bool = False,
    guidance: str | None = None,
) -> None:
    """Reflect the whole log while the actor waits."""
    record = live.record
    threshold = om.config.reflection.observation_tokens
    input_tokens = record.observation_token_count
    cycle_id = new_cycle_id("refl")
    started = om.clock.now()
    base = {"cycleId": cycle_id, "operationType": "reflection", "recordId": record.id, "threadId": live.thread_id}
    om.events.debug(
        "reflection_triggered",
        started,
        live.thread_id,
        live.resource_id,
        inputTokens=input_tokens,
        activeObservationsLength=len(record.active_observations),
    )
    start_marker = {
        **base,
        "tokensToObserve": input_tokens,
        "threadIds": [live.thread_id],
        "config": om.marker_config(),
    }
    om.events.data("data-om-observation-start", {**start_marker, "startedAt": iso(started)})
    hook_base = {
        "threadId": live.thread_id,
        "resourceId": live.resource_id,
        "trigger": trigger,
        "cycleId": cycle_id,
        "operationType": "reflection",
    }
    await call_hook(om.config.hooks, "on_reflection_start", hook_base)

    async def on_retry(inp: int, out: int, target: int, level: int) -> None:
        now = om.clock.now()
        om.events.data(
            "data-om-observation-failed",
            {
                **base,
                "failedAt": iso(now),
                "durationMs": duration_ms(started, now, 0.0),
                "tokensAttempted": inp,
                "error": f"Did not compress below threshold ({inp} → {out}, target {target}), retrying at level {level}",
                # not in the reference's marker: without it only the error text tells an attempt
                # that is retried from a failed cycle (docs/divergences.md, extensions)
                "retrying": True,
            },
        )
        om.events.data("data-om-observation-start", {**start_marker, "startedAt": iso(now)})

    thread = om.storage.get_thread(live.thread_id)
    extraction = extraction_step.prepare(om, live, thread, "reflection")
    try:
        reflection = await om.reflector.reflect(
            record.active_observations,
            target=threshold,
            first_level=start_level(primary_model_name(om.config.reflection.model), manual=manual),
            guidance=guidance,
            metadata={"cycleId": cycle_id, "threadId": live.thread_id, "operationType": "reflection"},
            on_retry=on_retry,
            inline_items=extraction.inline_items,
            inline_slugs=extraction.inline_slugs,
        )
    except Exception as exc:  # noqa: BLE001 - reflection never fails the turn: report and back off
        failed = om.clock.now()
        om.events.data(
            "data-om-observation-failed",
            {
                **base,
                "failedAt": iso(failed),
                "durationMs": duration_ms(started, failed, 0.0),
                "tokensAttempted": input_tokens,
                **error_fields(exc),
            },
        )
        await call_hook(om.config.hooks, "on_reflection_end", {**hook_base, "usage": None, "error": exc})
        _back_off(om, live, input_tokens)
        result.errors.append(str(exc))
        log.warning("reflection failed (memory kept unchanged): %s", exc)
        return
    result.blocked_reflection_s += await om.scheduler.block(observer_cost(reflection))

    completed = om.clock.now()
    committed = reflection.tokens < input_tokens
    extracted = None
    if committed:
        text = retrieval_groups(om, reflection.observations, record.active_observations)
        commit_generation(
            om, live, text, om.counter.count_log(text) if text != reflection.observations else reflection.tokens
        )
        result.reflected = True
        result.sync_reflections += 1
        extracted = await extraction_step.finish(om, extraction, thread, reflection.output, text)
        if thread is not None:
            om.storage.save_thread(thread)
    if committed and reflection.met_target:
        live.reflection_retry_at = None
    else:
        _back_off(om, live, max(reflection.tokens, input_tokens) if not committed else reflection.tokens)
    usage = reflection.usage
    om.events.debug(
        "reflection_complete",
        completed,
        live.thread_id,
        live.resource_id,
        inputTokens=input_tokens,
        outputTokens=reflection.tokens,
        observations=reflection.observations,
        usage=usage_dict(usage),
        committed=committed,
    )
    duration = duration_ms(started, completed, reflection.latency_s)
    if committed:
        om.events.data(
            "data-om-observation-end",
            {
                **base,
                "recordId": live.record.id,
                "completedAt": iso(completed),
                "durationMs": duration,
                "tokensObserved": input_tokens,
                "observationTokens": live.record.observation_token_count,
                "observations": live.record.active_observations,
                **(extraction_step.event_fields(extracted) if extracted is not None else {}),
            },
        )
    else:
        om.events.data(
            "data-om-observation-failed",
            {
                **base,
                "failedAt": iso(completed),
                "durationMs": duration,
                "tokensAttempted": input_tokens,
                "error": f"reflection did not shrink the log ({input_tokens} → {reflection.tokens}); kept unchanged",
                "observations": reflection.observations,
            },
        )
    await call_hook(
        om.config.hooks,
        "on_reflection_end",
        {
            **hook_base,
            "usage": usage_dict(usage),
            "costUsd": reflection.cost_usd,
            "providerMetadata": reflection.responses[-1].provider_metadata if reflection.responses else {},
            "model": reflection.responses[-1].model if reflection.responses else None,
            "error": None if committed else "not committed: the reflection did not shrink the log",
        },
    )


def retrieval_groups(om: CycleContext, reflection: str, source: str) -> str:
    """With ``retrieval`` on, the reflection wrapped as a ``kind="reflection"`` group whose range
    spans the groups it condensed, so the recall tool can still reach their messages."""
    if om.config.retrieval is None:
        return reflection
    return reconcile_reflection_groups(reflection, source)


def commit_generation(om: CycleContext, live: LiveMemory, observations: str, tokens: int) -> None:
    """Create the next generation holding ``observations``; buffered chunks move to it (finished
    work is never stranded on a retired record), a buffered reflection does not (it is stale)."""
    old = live.record
    now = om.clock.now()
    reference = om.config.compat == "reference"
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
        # the reference's new generation starts without the chunks (they stay on the retired
        # record and their messages are buffered again) and without a stored pending count
        buffered_chunks=[] if reference else list(old.buffered_chunks),
        pending_message_tokens=0 if reference else old.pending_message_tokens,
        buffered_reflection=None,
        buffered_reflection_tokens=0,
        buffered_reflection_input_tokens=0,
        reflected_observation_line_count=0,
        observed_message_ids=list(old.observed_message_ids),
        config=dict(old.config),
        metadata=dict(old.metadata),
    )
    om.storage.save_record(new)
    old.superseded_by = new.id
    old.updated_at = now
    # a retired generation holds no pending work: its buffered reflection is consumed or stale
    old.buffered_reflection = None
    old.buffered_reflection_tokens = 0
    old.buffered_reflection_input_tokens = 0
    old.reflected_observation_line_count = 0
    om.storage.save_record(old)
    live.record = new
