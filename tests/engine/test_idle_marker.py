"""``ttlExpiredMs`` on an idle (``ttl``) activation marker (issue 20 item 1).

The seed documents it as how long ``activateAfterIdle`` had been *exceeded* when the activation
fired (idle time minus the TTL); the reference (1.31.0) reports the whole idle time. omlab follows
the seed by default and the reference under ``compat="reference"``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from conversation_factory import make_conversation

from omlab import ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message
from omlab.engine.scheduler import FixedLatency, VirtualScheduler

START = datetime(2025, 3, 3, tzinfo=UTC)


def _memory(clock, parts, compat, **observation):
    return ObservationalMemory(
        {
            "compat": compat,
            "observation": {"model": "omlab/observer", "messageTokens": 4_000, **observation},
            "reflection": {"model": "omlab/reflector", "observationTokens": 6_000},
        },
        scheduler=VirtualScheduler(clock, FixedLatency(1.0)),
        on_event=parts.append,
    )


async def _idle_marker(compat: str, setting: str, actor_model: str | None = None) -> dict:
    """The first ``ttl`` activation marker after 5 min + 1 s without an assistant message."""
    clock, parts = VirtualClock(START), []
    om = _memory(clock, parts, compat, activateAfterIdle=setting)
    base = make_conversation(3_500, seed=2)  # below the threshold: chunks wait
    kwargs = {"actor_model": actor_model, "actor_provider_options": {}} if actor_model else {}
    for index, message in enumerate(base):
        message.created_at = START + timedelta(minutes=index)
        clock.set(message.created_at)
        await om.add_messages("t", [message], **kwargs)
    await om.settle()
    assert (await om.get_record("t")).buffered_chunks
    last_assistant = next(m for m in reversed(base) if m.role == "assistant")
    clock.set(last_assistant.created_at + timedelta(minutes=5, seconds=1))
    await om.add_messages("t", [Message.of("user", "Back after a break.", clock.now())], **kwargs)
    markers = [p.data for p in parts if p.type == "data-om-activation" and p.data["triggeredBy"] == "ttl"]
    assert markers, "the idle TTL activated the chunks"
    assert markers[0]["lastActivityAt"] == int(last_assistant.created_at.timestamp() * 1000)
    return markers[0]


@pytest.mark.parametrize(("compat", "expected"), [("omlab", 1_000), ("reference", 301_000)])
async def test_ttl_expired_ms_after_five_minutes_and_one_second(compat, expected):
    marker = await _idle_marker(compat, "5m")
    assert marker["ttlExpiredMs"] == expected


@pytest.mark.parametrize(("compat", "expected"), [("omlab", 1_000), ("reference", 301_000)])
async def test_ttl_expired_ms_with_the_auto_ttl_of_an_openai_actor(compat, expected):
    # "auto" resolves to the provider's prompt-cache TTL: 5 minutes for OpenAI without retention options
    marker = await _idle_marker(compat, "auto", actor_model="openai/gpt-4o")
    assert marker["config"]["activateAfterIdle"] == 300_000
    assert marker["ttlExpiredMs"] == expected


@pytest.mark.parametrize(("compat", "expected"), [("omlab", 1_000), ("reference", 301_000)])
async def test_ttl_expired_ms_of_an_idle_reflection_activation(compat, expected):
    clock, parts = VirtualClock(START), []
    om = ObservationalMemory(
        {
            "compat": compat,
            "observation": {"model": "omlab/observer", "messageTokens": 1_000},
            "reflection": {"model": "omlab/reflector", "observationTokens": 2_000, "activateAfterIdle": "5m"},
        },
        scheduler=VirtualScheduler(clock, FixedLatency(1.0)),
        on_event=parts.append,
    )
    last_assistant = None
    for index, message in enumerate(make_conversation(30_000, seed=3)):
        message.created_at = START + timedelta(minutes=index)
        clock.set(message.created_at)
        await om.add_messages("t", [message])
        record = await om.get_record("t")
        # a buffered reflection waits, and the log past it is large enough for an early activation
        waiting = record.buffered_reflection is not None and record.observation_token_count >= 1_700
        if waiting and message.role == "assistant":
            last_assistant = message
            break
    assert last_assistant is not None
    await om.settle()
    clock.set(last_assistant.created_at + timedelta(minutes=5, seconds=1))
    await om.add_messages("t", [Message.of("user", "Back.", clock.now())])
    (marker,) = [
        p.data
        for p in parts
        if p.type == "data-om-activation" and p.data["operationType"] == "reflection" and p.data["triggeredBy"] == "ttl"
    ]
    assert marker["ttlExpiredMs"] == expected
