"""A degenerate Observer cycle under the default failure policy (issue 20 item 3).

Default (``compat="omlab"``): the documented behaviour, ``failurePolicy: "abort"`` propagates the
Observer's error out of ``add_messages``. ``compat="reference"``: as ``@mastra/memory`` 1.31.0
does, the cycle is skipped quietly (nothing committed, the messages stay unobserved, the failed
part is still emitted).
"""

from __future__ import annotations

import pytest
from conversation_factory import make_conversation

from omlab import ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.errors import DegenerateObserverOutputError
from omlab.engine.scheduler import FixedLatency, VirtualScheduler
from omlab.llm.offline import register_offline_model
from omlab.llm.offline.base import OfflineResult


class OneLineLoopObserver:
    """Always answers with one bulleted line repeated 120 times (under 10,000 characters)."""

    name = "policy-looping-observer"

    def generate(self, messages, **_):
        loop = "\n".join(["- The user said the very same thing again, and again, and again."] * 120)
        return OfflineResult(f"<observations>\nDate: Mar 3, 2025\n{loop}\n</observations>", 10, 0)


register_offline_model(OneLineLoopObserver.name, OneLineLoopObserver)


def _memory(compat: str, parts: list) -> tuple[ObservationalMemory, VirtualClock]:
    clock = VirtualClock(make_conversation(10, seed=1)[0].created_at)
    om = ObservationalMemory(
        {
            "compat": compat,
            "observation": {
                "model": f"omlab/{OneLineLoopObserver.name}",
                "messageTokens": 1_000,
                "bufferTokens": False,
            },
            "reflection": {"model": "omlab/reflector"},
        },
        scheduler=VirtualScheduler(clock, FixedLatency(1.0)),
        on_event=parts.append,
    )
    return om, clock


async def test_by_default_a_degenerate_cycle_raises_out_of_add_messages():
    om, clock = _memory("omlab", [])
    with pytest.raises(DegenerateObserverOutputError):
        for message in make_conversation(3_000, seed=5):
            clock.set(message.created_at)
            await om.add_messages("t", [message])


async def test_in_reference_mode_a_degenerate_cycle_is_skipped_quietly_and_commits_nothing():
    parts: list = []
    om, clock = _memory("reference", parts)
    messages = make_conversation(3_000, seed=5)
    for message in messages:
        clock.set(message.created_at)
        await om.add_messages("t", [message])
    record = om.storage.get_head_record("thread", "t", None)
    assert record is None or not record.active_observations.strip()
    assert record is None or record.last_observed_at is None
    failed = [p.data for p in parts if p.type == "data-om-observation-failed"]
    assert failed and all(p["errorType"] == "DegenerateObserverOutputError" for p in failed)
