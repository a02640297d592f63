"""Async buffering, activation and blockAfter, on the virtual and the live scheduler."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from conversation_factory import make_conversation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omlab import ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message
from omlab.engine.scheduler import FixedLatency, LiveScheduler, VirtualScheduler

START = datetime(2025, 3, 3, tzinfo=UTC)


def _memory(
    latency: float,
    *,
    message_tokens=4_000,
    observation_tokens=6_000,
    extra_observation=None,
    extra_reflection=None,
    scheduler=None,
):
    clock = VirtualClock(START)
    scheduler = scheduler or VirtualScheduler(clock, FixedLatency(latency))
    parts = []
    om = ObservationalMemory(
        {
            "observation": {"model": "omlab/observer", "messageTokens": message_tokens, **(extra_observation or {})},
            "reflection": {
                "model": "omlab/reflector",
                "observationTokens": observation_tokens,
                **(extra_reflection or {}),
            },
        },
        scheduler=scheduler,
        on_event=parts.append,
    )
    return om, scheduler.clock, parts


class Tracker:
    """Checks the invariants after every step."""

    def __init__(self, om, thread_id: str):
        self.om = om
        self.thread_id = thread_id
        self.sent: list[str] = []
        self.observed: list[str] = []
        self.cursor = None
        self.finished_chunks: set[str] = set()
        self.activated_chunks: set[str] = set()
        om.on_event(self._on_event)

    def _on_event(self, part):
        if part.type == "data-om-buffering-end" and part.data["operationType"] == "observation":
            self.finished_chunks.add(part.data["cycleId"])
        if part.type == "data-om-activation" and part.data["operationType"] == "observation":
            self.activated_chunks.add(part.data["cycleId"])

    async def check(self, result, block_after: int, max_message: int):
        record = await self.om.get_record(self.thread_id)
        raw = [m.id for m in await self.om.get_unobserved_messages(self.thread_id)]
        self.observed.extend(result.observed_message_ids)
        observed = self.observed
        # every message reaches the actor exactly once: raw, or inside the log
        assert len(observed) == len(set(observed))
        assert not set(observed) & set(raw)
        assert set(observed) | set(raw) == set(self.sent)
        # the cursor never moves backwards
        if self.cursor is not None:
            assert record.last_observed_at is not None and record.last_observed_at >= self.cursor
        self.cursor = record.last_observed_at
        # no finished chunk is discarded: it was activated or is still buffered on the head
        waiting = {c.cycle_id for c in record.buffered_chunks}
        assert self.finished_chunks <= self.activated_chunks | waiting
        # the actor's raw window stays below blockAfter plus one message
        assert result.status.pending_tokens < block_after + max_message


async def _replay(om, clock, messages, tracker=None, block_after=None, max_message=0):
    results = []
    for message in messages:
        clock.set(message.created_at) if hasattr(clock, "set") else None
        if tracker is not None:
            tracker.sent.append(message.id)
        result = await om.add_messages("t", [message])
        if tracker is not None:
            await tracker.check(result, block_after, max_message)
        results.append(result)
    return results


def _steady(messages):
    """The same messages one minute apart (no idle gaps)."""
    for index, message in enumerate(messages):
        message.created_at = START + timedelta(minutes=index)
    return messages


@pytest.fixture(scope="module")
def conversation():
    return make_conversation(60_000, seed=11)


async def test_fast_observer_buffers_and_activates_without_blocking(conversation):
    om, clock, parts = _memory(latency=2.0)
    tracker = Tracker(om, "t")
    results = await _replay(om, clock, conversation, tracker, om.config.observation.block_after, 1_000)
    assert sum(r.activations for r in results) > 5
    assert sum(r.sync_observations for r in results) == 0
    assert sum(r.blocked_observation_s for r in results) == 0
    types = {p.type for p in parts}
    assert {"data-om-buffering-start", "data-om-buffering-end", "data-om-activation"} <= types
    activation = next(p.data for p in parts if p.type == "data-om-activation")
    assert {
        "cycleId",
        "operationType",
        "activatedAt",
        "chunksActivated",
        "tokensActivated",
        "observationTokens",
        "messagesActivated",
        "recordId",
        "threadId",
        "generationCount",
        "config",
        "observations",
        "triggeredBy",
    } <= activation.keys()
    assert activation["triggeredBy"] == "threshold"
    status = next(p.data for p in reversed(parts) if p.type == "data-om-status")
    buffered = status["windows"]["buffered"]["observations"]
    assert {"chunks", "messageTokens", "projectedMessageRemoval", "observationTokens", "status"} == buffered.keys()


async def test_slow_observer_blocks_only_at_block_after_and_reports_blocked_time():
    # messages every minute, an Observer that takes 20 virtual minutes: buffering cannot keep up
    messages = [
        Message.of(
            "user" if i % 2 == 0 else "assistant",
            f"Message {i}: " + "lorem ipsum dolor sit amet " * 40,
            START + timedelta(minutes=i),
            id=f"m{i:04d}",
        )
        for i in range(300)
    ]
    om, clock, _parts = _memory(latency=1200.0, observation_tokens=1_000_000)
    block_after = om.config.observation.block_after
    threshold = om.config.observation.message_tokens
    results = await _replay(om, clock, messages)
    blocked_steps = [r for r in results if r.blocked_observation_s > 0 or r.sync_observations]
    assert blocked_steps, "a slow observer must make the actor wait somewhere"
    assert sum(r.blocked_observation_s for r in results) > 0
    for r in blocked_steps:
        assert r.pending_before >= block_after
    # in the band nothing blocks
    for r in results:
        if threshold <= r.pending_before < block_after:
            assert r.blocked_observation_s == 0 and r.sync_observations == 0

    # the same conversation with a fast observer never blocks
    fast, fast_clock, _ = _memory(latency=1.0, observation_tokens=1_000_000)
    fast_results = await _replay(fast, fast_clock, messages)
    assert sum(r.blocked_observation_s for r in fast_results) == 0
    assert sum(r.sync_observations for r in fast_results) == 0


async def test_buffered_reflection_replaces_exactly_the_covered_lines(conversation):
    om, clock, parts = _memory(latency=5.0, observation_tokens=3_000)
    await _replay(om, clock, conversation)
    reflections = [p.data for p in parts if p.type == "data-om-activation" and p.data["operationType"] == "reflection"]
    assert reflections, "a buffered reflection was activated"
    assert all(r["observationTokens"] < r["tokensActivated"] for r in reflections)
    assert len(await om.get_history("t")) == len(reflections) + 1 + sum(
        1 for p in parts if p.type == "data-om-observation-end" and p.data["operationType"] == "reflection"
    )


async def test_idle_ttl_activates_buffered_chunks():
    om, clock, parts = _memory(latency=1.0, extra_observation={"activateAfterIdle": "5m"})
    base = _steady(make_conversation(3_500, seed=2))  # below the threshold: chunks wait
    await _replay(om, clock, base)
    record = await om.get_record("t")
    assert record.buffered_chunks, "buffering produced chunks below the threshold"
    late = Message.of("user", "Back after a break, where were we?", base[-1].created_at + timedelta(minutes=30))
    clock.set(late.created_at)
    result = await om.add_messages("t", [late])
    assert result.activated
    ttl = [p.data for p in parts if p.type == "data-om-activation" and p.data["triggeredBy"] == "ttl"]
    assert ttl and ttl[0]["ttlExpiredMs"] >= 25 * 60 * 1000 - 1 and "lastActivityAt" in ttl[0]


async def test_provider_change_activates_buffered_chunks():
    om, clock, parts = _memory(latency=1.0, extra_observation={"activateOnProviderChange": True})
    base = _steady(make_conversation(3_500, seed=4))
    for m in base:
        clock.set(m.created_at)
        await om.add_messages("t", [m], actor_model="openai/gpt-4o")
    nxt = Message.of("user", "Switching models now.", base[-1].created_at + timedelta(minutes=1))
    clock.set(nxt.created_at)
    result = await om.add_messages("t", [nxt], actor_model="anthropic/claude-sonnet-4-5")
    assert result.activated
    data = next(p.data for p in parts if p.type == "data-om-activation")
    assert data["triggeredBy"] == "provider_change"
    assert data["previousModel"] == "openai/gpt-4o" and data["currentModel"] == "anthropic/claude-sonnet-4-5"


async def test_live_scheduler_runs_buffering_as_tasks(conversation):
    om, _clock, parts = _memory(0.0, scheduler=LiveScheduler())
    tracker = Tracker(om, "t")
    sample = conversation[:120]
    for message in sample:
        tracker.sent.append(message.id)
        result = await om.add_messages("t", [message])
        await tracker.check(result, om.config.observation.block_after, 1_000)
        await asyncio.sleep(0)  # let background tasks run, as a real agent's I/O would
    await om.settle()
    types = {p.type for p in parts}
    assert "data-om-buffering-end" in types and "data-om-activation" in types


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    message_tokens=st.integers(1_500, 5_000),
    buffer_ratio=st.sampled_from([0.1, 0.2, 0.35, 0.5]),
    activation=st.sampled_from([0.5, 0.8, 1.0, 1_200]),
    block_after=st.sampled_from([1.1, 1.2, 1.5, 2.0]),
    latency=st.sampled_from([0.0, 30.0, 600.0, 5_000.0]),
    seed=st.integers(0, 1_000),
    live=st.booleans(),
)
def test_invariants_hold_for_random_settings(
    message_tokens, buffer_ratio, activation, block_after, latency, seed, live
):
    if activation == 1_200 and activation >= message_tokens:
        activation = 0.8
    messages = make_conversation(14_000, seed=seed)

    async def run() -> None:
        scheduler = LiveScheduler() if live else VirtualScheduler(VirtualClock(START), FixedLatency(latency))
        om, clock, _ = _memory(
            latency,
            message_tokens=message_tokens,
            observation_tokens=2_500,
            scheduler=scheduler,
            extra_observation={"bufferTokens": buffer_ratio, "bufferActivation": activation, "blockAfter": block_after},
        )
        tracker = Tracker(om, "t")
        max_message = max(om.counter.count_messages([m]) for m in messages)
        for message in messages:
            if not live:
                clock.set(message.created_at)
            tracker.sent.append(message.id)
            result = await om.add_messages("t", [message])
            await tracker.check(result, om.config.observation.block_after, max_message)
            if live:
                await asyncio.sleep(0)
        await om.settle()

    asyncio.run(run())
