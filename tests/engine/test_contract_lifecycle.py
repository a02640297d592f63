"""Documented behaviours that worked but had no test: hook triggers and hook errors, failure
policy, clear(), bufferOnIdle / end_turn."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from conversation_factory import feed_and_settle, make_conversation

from omlab import ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.scheduler import FixedLatency, VirtualScheduler
from omlab.llm.offline import register_offline_model

START = datetime(2025, 3, 3, tzinfo=UTC)


class DownObserver:
    """A provider that is down."""

    name = "contract-down-observer"

    def generate(self, messages, **_):
        raise RuntimeError("provider is down")


register_offline_model(DownObserver.name, DownObserver)


def _om(observation, hooks=None, **extra):
    clock, parts = VirtualClock(START), []
    om = ObservationalMemory(
        {
            "observation": {"model": "omlab/observer", "messageTokens": 1_000, **observation},
            "reflection": {"model": "omlab/reflector", "observationTokens": 50_000},
            **({"hooks": hooks} if hooks else {}),
        },
        scheduler=VirtualScheduler(clock, FixedLatency(1.0)),
        on_event=parts.append,
        **extra,
    )
    return om, clock, parts


async def test_hooks_fire_with_every_trigger_and_a_raising_hook_never_fails_the_cycle():
    seen = []

    def start(info):
        seen.append(("start", info["trigger"]))
        raise ValueError("a broken hook")

    async def end(info):
        seen.append(("end", info["trigger"], info["error"]))

    hooks = {"onObservationStart": start, "onObservationEnd": end}
    sync, clock, _ = _om({"bufferTokens": False}, hooks)
    await feed_and_settle(sync, clock, make_conversation(2_000, seed=1))
    assert ("start", "turn-sync") in seen and ("end", "turn-sync", None) in seen
    assert (await sync.get_observations("t")).strip(), "the raising start hook did not stop the cycle"

    seen.clear()
    buffered, clock, _ = _om({"bufferTokens": 0.2}, hooks)
    await feed_and_settle(buffered, clock, make_conversation(2_000, seed=2))
    assert ("start", "async-buffer") in seen and ("end", "async-buffer", None) in seen

    seen.clear()
    await buffered.observe("t")
    assert ("start", "manual") in seen


async def test_failure_policy_abort_raises_and_continue_reports():
    aborting, clock, parts = _om({"model": f"omlab/{DownObserver.name}", "bufferTokens": False})
    with pytest.raises(RuntimeError, match="provider is down"):
        await feed_and_settle(aborting, clock, make_conversation(2_000, seed=3))
    assert any(p.type == "data-om-observation-failed" for p in parts)

    going_on, clock, parts = _om(
        {"model": f"omlab/{DownObserver.name}", "bufferTokens": False, "failurePolicy": "continue"}
    )
    await feed_and_settle(going_on, clock, make_conversation(2_000, seed=3))
    assert any(p.type == "data-om-observation-failed" for p in parts)
    assert len(await going_on.get_unobserved_messages("t")) > 0


async def test_buffering_failure_is_reported_as_a_buffering_failed_part():
    om, clock, parts = _om({"model": f"omlab/{DownObserver.name}", "bufferTokens": 0.2, "failurePolicy": "continue"})
    messages = make_conversation(900, seed=4)  # below the threshold: only buffering runs
    await feed_and_settle(om, clock, messages)
    failed = [p.data for p in parts if p.type == "data-om-buffering-failed"]
    assert failed and failed[0]["operationType"] == "observation" and "provider is down" in failed[0]["error"]
    assert failed[0]["tokensAttempted"] > 0 and "cycleId" in failed[0]


async def test_clear_forgets_the_memory_and_keeps_the_messages():
    om, clock, _ = _om({"bufferTokens": False})
    messages = make_conversation(2_500, seed=5)
    await feed_and_settle(om, clock, messages)
    assert (await om.get_observations("t")).strip()
    await om.clear("t")
    assert await om.get_observations("t") == ""
    assert len(await om.get_unobserved_messages("t")) == len(messages)


async def test_buffer_on_idle_buffers_what_is_left_at_the_end_of_a_turn():
    om, clock, parts = _om({"bufferTokens": 0.5, "bufferOnIdle": True})
    messages = make_conversation(300, seed=6)  # far below one buffering interval
    await feed_and_settle(om, clock, messages)
    assert not any(p.type == "data-om-buffering-start" for p in parts)
    await om.end_turn("t")
    await om.settle()
    assert any(p.type == "data-om-buffering-start" for p in parts)
    assert (await om.get_record("t")).buffered_chunks

    off, clock, parts = _om({"bufferTokens": 0.5})
    await feed_and_settle(off, clock, make_conversation(300, seed=6))
    await off.end_turn("t")
    await off.settle()
    assert not any(p.type == "data-om-buffering-start" for p in parts)
