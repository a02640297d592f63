"""Resource scope: one memory shared by every thread of a resource (om-reference.md §2.9).

Observation gathers the unobserved messages of all threads (each thread has its own cursor, so
nothing is reloaded each step), picks threads largest first until their tokens reach the
threshold, orders them by their oldest message, packs them into batches of at most
``observation.maxTokensPerBatch`` (a thread is never split; a large thread is its own batch) and
runs the multi-thread Observer on the batches in parallel. Each thread's observations go into a
``<thread id="…">`` section, merged into the thread's last section when it is for the same day.
With ``obscureThreadIds`` the ids shown to models are xxhash32 digests, mapped back on return.
Async buffering is not available in resource scope (the seed: it is disabled there).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from omlab.engine import extraction_step, reference_resource
from omlab.engine.errors import error_fields
from omlab.engine.events import iso, new_cycle_id
from omlab.engine.extraction_pipeline import ExtractionResult
from omlab.engine.hooks import call_hook
from omlab.engine.live import LiveMemory, safe_prefix
from omlab.engine.messages import Message
from omlab.engine.observation_cycle import duration_ms, observer_cost
from omlab.engine.reference_mode import skips_degenerate_cycle
from omlab.engine.thread_sections import merge_thread_section, obscure_thread_id, wrap_thread_section

if TYPE_CHECKING:
    from omlab.engine.cycle_context import CycleContext
    from omlab.engine.step_result import StepResult

OTHER_CONVERSATION_PART_CHARS = 500


def shown_thread_id(om: CycleContext, thread_id: str) -> str:
    """The id a model sees for a thread (hashed with ``obscureThreadIds``)."""
    return obscure_thread_id(thread_id) if om.config.obscure_thread_ids else thread_id


def plan_batches(per_thread: dict[str, tuple[int, datetime]], threshold: int, max_batch: int) -> list[list[str]]:
    """Pick threads largest first until they reach ``threshold``, order them by oldest message,
    and pack them into batches of at most ``max_batch`` tokens (thread-granular).

    ``per_thread`` maps a thread id to (unobserved tokens, oldest message time)."""
    chosen: list[str] = []
    total = 0
    for thread_id, (tokens, _) in sorted(per_thread.items(), key=lambda kv: (-kv[1][0], kv[0])):
        if total >= threshold:
            break
        chosen.append(thread_id)
        total += tokens
    chosen.sort(key=lambda t: (per_thread[t][1], t))
    batches: list[list[str]] = []
    current: list[str] = []
    size = 0
    for thread_id in chosen:
        tokens = per_thread[thread_id][0]
        if current and size + tokens > max_batch:
            batches.append(current)
            current, size = [], 0
        current.append(thread_id)
        size += tokens
    if current:
        batches.append(current)
    return batches


def group_by_thread(messages: Sequence[Message]) -> dict[str, list[Message]]:
    out: dict[str, list[Message]] = {}
    for message in messages:
        out.setdefault(message.thread_id or "", []).append(message)
    return out


async def observe_resource(
    om: CycleContext, live: LiveMemory, trigger: str, result: StepResult, *, everything: bool = False
) -> None:
    """One synchronous resource-scope observation (``everything``: all threads, not just enough
    to reach the threshold)."""
    reference = om.config.compat == "reference"
    if reference:  # the reference's lists (reference_resource), not omlab's per-thread cursors
        plan = reference_resource.plan_cycle(om, live)
        if plan is None:
            return
        by_thread = plan.by_thread
        per_thread = {t: (plan.tokens[t], msgs[0].created_at) for t, msgs in by_thread.items()}
        batches = plan.batches
    else:
        by_thread = {t: safe_prefix(msgs) for t, msgs in group_by_thread(live.unobserved).items()}
        by_thread = {t: msgs for t, msgs in by_thread.items() if msgs}
        if not by_thread:
            return
        per_thread = {t: (live.tokens_of(msgs), msgs[0].created_at) for t, msgs in by_thread.items()}
        threshold = 10**12 if everything else om.threshold(live)
        batches = plan_batches(per_thread, threshold, om.config.observation.max_tokens_per_batch)
    record = live.record
    cycle_id = new_cycle_id("obs")
    started = om.clock.now()
    picked = [t for batch in batches for t in batch]
    tokens_to_observe = sum(per_thread[t][0] for t in picked)
    base = {"cycleId": cycle_id, "operationType": "observation", "recordId": record.id, "threadId": live.thread_id}
    om.events.debug(
        "observation_triggered",
        started,
        ",".join(picked),
        live.resource_id,
        previousObservations=record.active_observations,
        pendingTokens=tokens_to_observe,
    )
    om.events.data(
        "data-om-observation-start",
        {
            **base,
            "startedAt": iso(started),
            "tokensToObserve": tokens_to_observe,
            "threadIds": picked,
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
    threads = {t: om.storage.get_thread(t) for t in picked}
    shown = {t: shown_thread_id(om, t) for t in picked}
    active_before = record.active_observations
    # each thread has its own extraction (its context, its previous values); the one prompt asks
    # for every inline section any of them needs, inside each thread's block
    extraction = {t: extraction_step.prepare(om, live, threads[t], "observation", thread_id=t) for t in picked}
    inline_items = list(dict.fromkeys(item for setup in extraction.values() for item in setup.inline_items))
    inline_slugs = list(dict.fromkeys(slug for setup in extraction.values() for slug in setup.inline_slugs))

    async def run_batch(batch: list[str]) -> Any:
        return await om.observer.observe_threads(
            [(shown[t], by_thread[t]) for t in batch],
            input_tokens=sum(per_thread[t][0] for t in batch),
            active_observations=active_before,  # every batch sees the same previous observations
            prior_by_thread=[(shown[t], extraction[t].prior) for t in batch],
            timezone=record.observed_timezone,
            metadata={"cycleId": cycle_id, "threadId": ",".join(batch), "operationType": "observation"},
            inline_items=inline_items,
            inline_slugs=inline_slugs,
        )

    try:
        outcomes = await asyncio.gather(*(run_batch(batch) for batch in batches))
    except Exception as exc:
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
        if om.config.observation.failure_policy == "continue" or skips_degenerate_cycle(om.config.compat, exc):
            return
        raise
    # batches ran in parallel: the actor waited for the slowest one
    slowest = max((summary for _, summary in outcomes), key=lambda s: s.latency_s)
    result.blocked_observation_s += await om.scheduler.block(observer_cost(slowest))

    unshown = {shown[t]: t for t in picked}
    text = record.active_observations
    observed_ids: list[str] = []
    extracted_by_thread: dict[str, ExtractionResult] = {}
    per_thread_debug: list[dict[str, Any]] = []
    for outputs, _ in outcomes:
        for shown_id, output in outputs.items():
            thread_id = unshown.get(shown_id)
            if thread_id is None or not output.observations.strip():
                continue
            newest = max(m.created_at for m in by_thread[thread_id])
            section = extraction_step.wrap_for_retrieval(om, output.observations.strip(), by_thread[thread_id])
            if reference:
                text = reference_resource.merge_section(text, wrap_thread_section(shown_id, section), newest)
            else:
                text = merge_thread_section(text, shown_id, section, newest)
            per_thread_debug.append(
                {
                    "threadId": thread_id,
                    "observations": wrap_thread_section(shown_id, section),
                    "rawObserverOutput": output.raw,
                    "messages": [{"role": m.role, "content": m.text} for m in by_thread[thread_id]],
                }
            )
            thread = threads[thread_id]
            extracted_by_thread[thread_id] = await extraction_step.finish(
                om, extraction[thread_id], thread, output, active_before
            )
            om.update_thread_hints(
                thread, live, cycle_id, output.current_task, output.suggested_response, output.thread_title
            )
    for thread_id in picked:
        messages = by_thread[thread_id]
        newest = max(m.created_at for m in messages)
        observed_ids.extend(m.id for m in messages)
        thread = threads[thread_id]
        if thread is not None:  # the per-thread cursor, written even when the Observer said nothing
            thread.om["lastObservedAt"] = iso(newest)
            thread.om["observedAtCursor"] = [m.id for m in messages if m.created_at >= newest]
            om.storage.save_thread(thread)
    record.active_observations = text
    record.observation_token_count = om.counter.count_log(text)
    cursor = max(max(m.created_at for m in by_thread[t]) for t in picked)
    if reference:  # the cycle's newest message, and the ids the reference will not hand over again
        record.last_observed_at = cursor
        state = reference_resource.state_of(live)
        state.sent.update(observed_ids)
        state.observed.update(observed_ids)
    elif record.last_observed_at is None or cursor > record.last_observed_at:
        record.last_observed_at = cursor
    record.total_tokens_observed += tokens_to_observe
    record.updated_at = om.clock.now()
    om.storage.save_record(record)
    live.remove(observed_ids)
    result.observed = True
    result.sync_observations += 1
    result.observed_message_ids.extend(observed_ids)

    completed = om.clock.now()
    usage_in = sum(s.usage.input_tokens for _, s in outcomes)
    usage_out = sum(s.usage.output_tokens for _, s in outcomes)
    new_text_tokens = max(0, record.observation_token_count - om.counter.count_log(active_before))
    batch_usage = {"inputTokens": usage_in, "outputTokens": usage_out, "totalTokens": usage_in + usage_out}
    # one per observed thread, as the reference emits them; the batch's usage rides on the first
    for index, thread_debug in enumerate(per_thread_debug):
        om.events.debug(
            "observation_complete",
            completed,
            thread_debug["threadId"],
            live.resource_id,
            observations=thread_debug["observations"],
            rawObserverOutput=thread_debug["rawObserverOutput"],
            previousObservations=active_before,
            messages=thread_debug["messages"],
            usage=batch_usage if index == 0 and batch_usage["totalTokens"] > 0 else None,
        )
    om.events.data(
        "data-om-observation-end",
        {
            **base,
            "completedAt": iso(completed),
            "durationMs": duration_ms(started, completed, slowest.latency_s),
            "tokensObserved": tokens_to_observe,
            "observationTokens": new_text_tokens,
            "observations": text,
            "threadIds": picked,
            "messageIds": observed_ids,
            **resource_extraction_fields(extracted_by_thread),
        },
    )
    await call_hook(
        om.config.hooks,
        "on_observation_end",
        {
            **hook_base,
            "usage": {"inputTokens": usage_in, "outputTokens": usage_out, "totalTokens": usage_in + usage_out},
            "costUsd": sum((s.cost_usd or 0.0) for _, s in outcomes),
            "error": None,
            "model": slowest.responses[-1].model if slowest.responses else None,
            "providerMetadata": slowest.responses[-1].provider_metadata if slowest.responses else {},
        },
    )


def resource_extraction_fields(by_thread: dict[str, ExtractionResult]) -> dict[str, Any]:
    """A resource cycle's extraction on its one end event: ``extractedValues`` /
    ``extractionFailures`` merged over its threads in cycle order (as the reference's aggregate),
    and the same per thread under ``extractedValuesByThread`` / ``extractionFailuresByThread``
    (the reference emits one end event per thread instead; docs/divergences.md)."""
    merged = ExtractionResult()
    for result in by_thread.values():
        merged.values.update(result.values)
        merged.failures.extend({**failure} for failure in result.failures)
    fields = extraction_step.event_fields(merged)
    values = {t: r.values for t, r in by_thread.items() if r.values}
    failures = {t: r.failures for t, r in by_thread.items() if r.failures}
    if values:
        fields["extractedValuesByThread"] = values
    if failures:
        fields["extractionFailuresByThread"] = failures
    return fields


def other_conversations_block(om: CycleContext, live: LiveMemory, current_thread: str) -> str | None:
    """Unobserved messages of the resource's *other* threads, as clearly separate reference
    context (parts cut to 500 characters)."""
    groups = {t: msgs for t, msgs in group_by_thread(live.unobserved).items() if t != current_thread}
    if not groups:
        return None
    blocks = []
    for thread_id, messages in groups.items():
        lines = []
        for message in messages:
            text = message.text.strip()
            if not text:
                continue
            if len(text) > OTHER_CONVERSATION_PART_CHARS:
                text = text[:OTHER_CONVERSATION_PART_CHARS] + "…"
            lines.append(f"{message.role} ({iso(message.created_at)}): {text}")
        if lines:
            blocks.append(
                f'<other-conversation id="{shown_thread_id(om, thread_id)}">\n'
                + "\n".join(lines)
                + "\n</other-conversation>"
            )
    if not blocks:
        return None
    return (
        "The following comes from OTHER conversations with this user, not the current one. Use it only as "
        "background; do not continue their unfinished work here.\nSTART_OTHER_CONVERSATIONS_BLOCK\n"
        + "\n".join(blocks)
        + "\nEND_OTHER_CONVERSATIONS_BLOCK"
    )
