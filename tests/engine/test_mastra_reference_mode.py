"""``compat="reference"`` replays the recorded reference traces as ``@mastra/memory`` 1.31.0 did.

The buffered fixture (``test_mastra_oracle_buffered.py``) is replayed with the same driver, once
with ``compat="reference"``; every field the trace records after every message must agree:
pending tokens, buffered chunk count and weight, observation tokens, the active log (sha1 of its
text), the generation count, the cursor, each buffer op (messages, size, chunk text) and each
activation (weight, messages, observation tokens, trigger). The final log must be identical byte
for byte. Where omlab's own semantics differ (the default), ``test_mastra_oracle_buffered.py``
pins the divergences.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import test_mastra_oracle as sync_oracle
from test_mastra_oracle_buffered import FIXTURE, BufferedStep, replay

from omlab.engine.scheduler import FixedLatency


def _reference_mode(trace: dict[str, Any]) -> dict[str, Any]:
    return {**trace, "config": {**trace["config"], "compat": "reference"}}


@pytest.fixture(scope="module")
def trace() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def mirrored(trace) -> list[BufferedStep]:
    return asyncio.run(replay(_reference_mode(trace)))


@pytest.fixture(scope="module")
def sync_trace() -> dict[str, Any]:
    return json.loads(sync_oracle.FIXTURE.read_text(encoding="utf-8"))


def _expected(step: dict[str, Any]) -> dict[str, Any]:
    return {
        "pendingTokens": step["pendingTokens"],
        "bufferedChunkCount": step["bufferedChunkCount"],
        "bufferedChunkMessageTokens": step["bufferedChunkMessageTokens"],
        "observationTokens": step["observationTokens"],
        "activeObservationsSha1": step["activeObservationsSha1"],
        "generationCount": step["generationCount"],
        "lastObservedAt": step["lastObservedAt"],
        "buffered": step.get("buffered", []),
        "activated": step.get("activated", []),
        "observed": step.get("observedMessageIds", []),
        "reflectionActivated": step.get("reflectionActivated", []),
    }


def _actual(step: BufferedStep) -> dict[str, Any]:
    return {
        "pendingTokens": step.pending_tokens,
        "bufferedChunkCount": step.chunk_count,
        "bufferedChunkMessageTokens": step.chunk_message_tokens,
        "observationTokens": step.observation_tokens,
        "activeObservationsSha1": step.log_sha1,
        "generationCount": step.generation_count,
        "lastObservedAt": step.last_observed_at,
        "buffered": step.buffered,
        "activated": step.activated,
        "observed": step.observed,
        "reflectionActivated": step.reflection_activated,
    }


def test_every_step_of_the_buffered_trace_agrees_in_reference_mode(trace, mirrored):
    for index, (expected, actual) in enumerate(zip(trace["steps"], mirrored, strict=True)):
        assert _actual(actual) == _expected(expected), f"step {index} ({expected['messageId']})"


def test_the_final_buffered_log_is_the_references_byte_for_byte(trace):
    async def final() -> str:
        capture = sync_oracle.ObserverCapture()
        memory, clock = sync_oracle.mock_memory(_reference_mode(trace), capture, FixedLatency(0.0))
        for raw in trace["messages"]:  # the same driver as ``replay``: one reply per turn
            message = sync_oracle.to_message(raw)
            clock.set(message.created_at)
            await memory.add_messages(trace["threadId"], [message], process=message.role == "user")
            await memory.settle()
        return await memory.get_observations(trace["threadId"])

    assert asyncio.run(final()) == trace["final"]["activeObservations"]


def test_every_step_of_the_synchronous_trace_agrees_in_reference_mode(sync_trace):
    replayed = asyncio.run(sync_oracle.replay(_reference_mode(sync_trace)))
    for index, (expected, actual) in enumerate(zip(sync_trace["steps"], replayed.steps, strict=True)):
        assert (
            actual.pending_tokens,
            actual.observation_tokens,
            actual.generation_count,
            actual.last_observed_at,
            actual.observed_message_ids,
            actual.reflections,
        ) == (
            expected["pendingTokens"],
            expected["observationTokens"],
            expected["generationCount"],
            expected["lastObservedAt"],
            expected.get("observedMessageIds", []),
            expected.get("reflections", []),
        ), f"step {index}"
    final = asyncio.run(replayed.memory.get_observations(sync_trace["threadId"]))
    assert final == sync_trace["final"]["activeObservations"]


def test_compat_is_validated_with_its_name():
    from omlab.engine.config import OMConfig
    from omlab.engine.errors import ConfigError

    assert OMConfig.from_options({}).compat == "omlab"
    assert OMConfig.from_options({"compat": "reference"}).compat == "reference"
    with pytest.raises(ConfigError, match="compat.*'omlab', 'reference'.*got 'mastra'"):
        OMConfig.from_options({"compat": "mastra"})


async def _over_the_threshold_without_chunks(compat: str):
    """One long message takes the pending count past ``messageTokens`` (3000) but under
    ``blockAfter`` (3600) before any chunk exists; what does the step do?"""
    from datetime import UTC, datetime

    from omlab import ObservationalMemory
    from omlab.engine.clock import VirtualClock
    from omlab.engine.messages import Message
    from omlab.engine.scheduler import VirtualScheduler

    start = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
    clock, parts = VirtualClock(start), []
    om = ObservationalMemory(
        {
            "observation": {
                "model": "omlab/observer",
                "messageTokens": 3000,
                "bufferTokens": 0.2,
                "blockAfter": 1.2,
            },
            "reflection": {"model": "omlab/reflector", "observationTokens": 40_000},
            "compat": compat,
        },
        scheduler=VirtualScheduler(clock, FixedLatency(1.0)),
        on_event=parts.append,
    )
    sentence = "I moved the quarterly budget review to Thursday because Priya is travelling to Lisbon. "
    message = Message.of("user", sentence * 165, start, id="m1", thread_id="t")
    result = await om.add_messages("t", [message])
    status = await om.status("t")
    assert 3000 <= result.pending_before < 3600  # over the threshold, under blockAfter
    types = [p.type for p in parts]
    return result, status, types


async def test_the_reference_observes_synchronously_at_the_threshold_when_no_chunk_can_help():
    result, status, types = await _over_the_threshold_without_chunks("reference")
    assert "data-om-observation-end" in types  # synchronous observation at the threshold
    assert "data-om-buffering-start" not in types  # the reference buffers only below the threshold
    assert result.observed_message_ids == ["m1"] and status.pending_tokens == 0


async def test_omlab_keeps_buffering_in_the_band_and_blocks_only_at_block_after():
    _, status, types = await _over_the_threshold_without_chunks("omlab")
    assert "data-om-observation-end" not in types  # under blockAfter: no blocking observation
    assert "data-om-buffering-start" in types  # buffering keeps running past messageTokens
    assert status.pending_tokens >= 3000


LONG_TRACES = (
    "buffered_reflection_300",
    "buffered_multi_assistant_600",
    "buffered_block_after_320",
    "buffered_later_step_reset_348",
)


@pytest.mark.parametrize("name", LONG_TRACES)
def test_every_step_of_the_long_reference_traces_agrees_in_reference_mode(name):
    long_trace = json.loads((FIXTURE.parent / f"{name}.json").read_text(encoding="utf-8"))
    replayed = asyncio.run(replay(_reference_mode(long_trace)))
    for index, (expected, actual) in enumerate(zip(long_trace["steps"], replayed, strict=True)):
        assert _actual(actual) == _expected(expected), f"{name}: step {index} ({expected['messageId']})"


def test_after_a_later_step_activates_the_next_step_checks_the_interval_from_zero():
    """buffered_later_step_reset_348 (absolute thresholds): msg-0119 (step 132) opens a turn and
    starts a buffer op at 2963 pending tokens; the reply msg-0120 is followed by msg-0120-2 (step
    134, the turn's second step), which activates. The reference then resets its buffering state
    and reloads the turn's record, so msg-0120-3 (step 135) checks the interval from 0 and buffers
    msg-0120 instead of checking it against the op's 2963."""
    trace = json.loads((FIXTURE.parent / "buffered_later_step_reset_348.json").read_text(encoding="utf-8"))
    steps, messages = trace["steps"], trace["messages"]
    assert [messages[i]["role"] for i in (132, 133, 134, 135)] == ["user", "assistant", "assistant", "assistant"]
    assert steps[134]["activated"] and steps[134]["pendingTokens"] < steps[132]["pendingTokens"]
    assert [b["messageIds"] for b in steps[135]["buffered"]] == [["msg-0120"]]
    replayed = asyncio.run(replay(_reference_mode(trace)))
    for index in (134, 135, 136):
        assert _actual(replayed[index]) == _expected(steps[index]), f"step {index}"
