"""An Observer reply with no observation text is a failed attempt, never committed as memory."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from conversation_factory import make_conversation

from omlab import ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.scheduler import FixedLatency, VirtualScheduler
from omlab.llm.offline import register_offline_model
from omlab.llm.offline.base import OfflineResult

START = datetime(2025, 3, 3, tzinfo=UTC)

EMPTY_REPLIES = {
    "empty": "",
    "whitespace": "  \n\t\n",
    "empty-block": "<observations>\n</observations>\n<current-task>keep going</current-task>",
    "prose": "I could not find anything worth noting in this conversation.",
}


class EmptyObserver:
    """Always answers with one of the unusable replies above."""

    name = "empty-observer"
    reply = ""
    calls = 0

    def generate(self, messages, **_):
        EmptyObserver.calls += 1
        return OfflineResult(EmptyObserver.reply, 10, 0)


register_offline_model(EmptyObserver.name, EmptyObserver)


def _om(*, buffering: bool, scope: str = "thread"):
    clock = VirtualClock(START)
    parts = []
    observation = {"model": "omlab/empty-observer", "messageTokens": 1_000, "failurePolicy": "continue"}
    if buffering:
        observation.update(bufferTokens=0.2, blockAfter=1.5)
    else:
        observation["bufferTokens"] = False
    om = ObservationalMemory(
        {"scope": scope, "observation": observation, "reflection": {"model": "omlab/reflector"}},
        scheduler=VirtualScheduler(clock, FixedLatency(1.0)),
        on_event=parts.append,
    )
    return om, clock, parts


@pytest.mark.parametrize("kind", sorted(EMPTY_REPLIES))
@pytest.mark.parametrize("buffering", [False, True], ids=["sync", "buffered"])
async def test_an_empty_observer_reply_fails_the_cycle_and_keeps_every_message(kind, buffering):
    EmptyObserver.reply, EmptyObserver.calls = EMPTY_REPLIES[kind], 0
    om, clock, parts = _om(buffering=buffering)
    messages = make_conversation(4_000, seed=5)
    for message in messages:
        clock.set(message.created_at)
        await om.add_messages("t", [message])
    await om.settle()
    record = await om.get_record("t")
    assert record.active_observations == ""
    assert record.buffered_chunks == []
    assert record.total_tokens_observed == 0
    assert len(await om.get_unobserved_messages("t")) == len(messages), "no message counted as observed"
    failed = "data-om-buffering-failed" if buffering else "data-om-observation-failed"
    assert any(p.type == failed for p in parts)
    # with buffering the blockAfter safety net also observes synchronously, and fails the same way
    errors = [p.data["error"] for p in parts if p.type in ("data-om-buffering-failed", "data-om-observation-failed")]
    assert all("empty (no observation text)" in e for e in errors)
    assert not [p for p in parts if p.type in ("data-om-observation-end", "data-om-buffering-end")]
    assert EmptyObserver.calls == 2 * len(errors), "each failed cycle retried once"


async def test_an_empty_multi_thread_observer_reply_fails_the_resource_cycle():
    EmptyObserver.reply, EmptyObserver.calls = "", 0
    om, clock, parts = _om(buffering=False, scope="resource")
    messages = make_conversation(3_000, seed=6)
    for message in messages:
        clock.set(message.created_at)
        await om.add_messages("t", [message], resource_id="r")
    record = await om.get_record("t")
    assert record.active_observations == ""
    assert len(await om.get_unobserved_messages("t", resource_id="r")) == len(messages)
    assert any(p.type == "data-om-observation-failed" for p in parts)
