"""The synchronous observation cycle: the Observer runs while the actor waits."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from omlab.engine import extraction_step
from omlab.engine.errors import error_fields
from omlab.engine.events import iso, new_cycle_id
from omlab.engine.hooks import call_hook
from omlab.engine.live import LiveMemory, ids_at_cursor, safe_prefix
from omlab.engine.observation_text import append_with_boundary
from omlab.engine.reference_mode import skips_degenerate_cycle
from omlab.engine.scheduler import CallCost

if TYPE_CHECKING:
    from omlab.engine.cycle_context import CycleContext
    from omlab.engine.step_result import StepResult

log = logging.getLogger("omlab.engine")


def observer_cost(result: Any) -> CallCost:
    """What the latency model needs to know about an Observer/Reflector result."""
    last = result.responses[-1] if result.responses else None
    return CallCost(
        role="observer" if hasattr(result, "previous_observations") else "reflector",
        model=last.model if last else None,
        measured_s=result.latency_s,
        input_tokens=result.usage.input_tokens,
        output_tokens=result.usage.output_tokens,
    )


async def observe_sync(om: CycleContext, live: LiveMemory, trigger: str, result: StepResult) -> None:
    """Observe every unobserved message that is safe to observe, blocking the actor."""
    messages = safe_prefix([m for m in live.unobserved if m.id not in live.in_flight_ids])
    if not messages:  # never run the Observer on nothing (the reference's H4 bug)
        return
    record = live.record
    tokens_to_observe = live.tokens_of(messages)
    cycle_id = new_cycle_id("obs")
    started = om.clock.now()
    base = {"cycleId": cycle_id, "operationType": "observation", "recordId": record.id, "threadId": live.thread_id}
    om.events.debug(
        "observation_triggered",
        started,
        live.thread_id,
        live.resource_id,
        messages=[{"role": m.role, "content": m.text} for m in messages] if om.events.wants_debug else None,
        previousObservations=record.active_observations,
        pendingTokens=tokens_to_observe,
    )
    om.events.data(
        "data-om-observation-start",
        {
            **base,
            "startedAt": iso(started),
            "tokensToObserve": tokens_to_observe,
            "threadIds": [live.thread_id],
            "config": om.marker_config(),
        },
    )
    hook_base = {
        "threadId": live.thread_id,
        "resourceId": live.resource_id,
        "trigger": trigger,
        "cycleId": cycle_id,
        "operationType": "observation",
    }
    await call_hook(om.config.hooks, "on_observation_start", hook_base)
    thread = om.storage.get_thread(live.thread_id)
    extraction = extraction_step.prepare(om, live, thread, "observation")
    try:
        observed = await om.observer.observe(
            messages,
            input_tokens=tokens_to_observe,
            active_observations=record.active_observations,
            prior_metadata=extraction.prior,
            timezone=record.observed_timezone,
            metadata={"cycleId": cycle_id, "threadId": live.thread_id, "operationType": "observation"},
            inline_items=extraction.inline_items,
            inline_slugs=extraction.inline_slugs,
        )
    except Exception as exc:  # report, then the failure policy decides
        failed = om.clock.now()
        om.events.data(
            "data-om-observation-failed",
            {
                **base,
                "failedAt": iso(failed),
                "durationMs": duration_ms(started, failed, 0.0),
                "tokensAttempted": tokens_to_observe,
                **error_fields(exc),
            },
        )
        await call_hook(om.config.hooks, "on_observation_end", {**hook_base, "usage": None, "error": exc})
        result.errors.append(str(exc))
        if om.config.observation.failure_policy == "continue":
            log.warning("observation failed and failure_policy is 'continue': %s", exc)
            return
        if skips_degenerate_cycle(om.config.compat, exc):
            log.warning("degenerate observation cycle skipped (compat='reference'): %s", exc)
            return
        raise
    result.blocked_observation_s += await om.scheduler.block(observer_cost(observed))

    output = observed.output
    new_text = extraction_step.wrap_for_retrieval(om, output.observations.strip(), messages)
    extracted = await extraction_step.finish(om, extraction, thread, output, record.active_observations)
    cursor = max(m.created_at for m in messages)
    if record.last_observed_at is not None and record.last_observed_at > cursor:
        cursor = record.last_observed_at  # the cursor never moves backwards
    if new_text:
        record.active_observations = (
            append_with_boundary(record.active_observations, new_text, cursor)
            if record.active_observations.strip()
            else new_text
        )
    record.observation_token_count = om.counter.count_log(record.active_observations)
    previous_cursor = record.last_observed_at
    record.last_observed_at = cursor
    record.observed_message_ids = ids_at_cursor(record, messages, previous_cursor)
    record.total_tokens_observed += tokens_to_observe
    record.updated_at = om.clock.now()
    om.update_thread_hints(thread, live, cycle_id, output.current_task, output.suggested_response, output.thread_title)
    om.storage.save_record(record)

    live.remove(m.id for m in messages)
    result.observed = True
    result.sync_observations += 1
    result.observed_message_ids.extend(m.id for m in messages)

    completed = om.clock.now()
    usage = observed.usage
    om.events.debug(
        "observation_complete",
        completed,
        live.thread_id,
        live.resource_id,
        observations=record.active_observations,
        rawObserverOutput=output.raw,
        previousObservations=observed.previous_observations,
        usage=usage_dict(usage),
    )
    om.events.data(
        "data-om-observation-end",
        {
            **base,
            "completedAt": iso(completed),
            "durationMs": duration_ms(started, completed, observed.latency_s),
            "tokensObserved": tokens_to_observe,
            "observationTokens": om.counter.count_log(new_text) if new_text else 0,
            "observations": new_text,
            "messageIds": [m.id for m in messages],
            "currentTask": output.current_task,
            "suggestedResponse": output.suggested_response,
            **extraction_step.event_fields(extracted),
        },
    )
    await call_hook(
        om.config.hooks,
        "on_observation_end",
        {
            **hook_base,
            "usage": usage_dict(usage),
            "costUsd": observed.cost_usd,
            "providerMetadata": observed.responses[-1].provider_metadata,
            "model": observed.responses[-1].model,
            "error": None,
        },
    )


def duration_ms(start: Any, end: Any, model_latency_s: float) -> int:
    """Cycle duration: clock time, or the models' latency when the clock did not move."""
    elapsed = (end - start).total_seconds()
    return round(1000 * (elapsed if elapsed > 0 else model_latency_s))


def usage_dict(usage: Any) -> dict[str, int]:
    return {"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens, "totalTokens": usage.total_tokens}
