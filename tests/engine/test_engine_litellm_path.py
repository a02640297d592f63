"""The engine over the real litellm path, offline (litellm's mock_response)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from omlab import ModelWithRetries, ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message
from omlab.engine.scheduler import VirtualScheduler
from omlab.llm.client import ModelClient

START = datetime(2025, 6, 2, 10, 0, tzinfo=UTC)
REPLY = (
    "<observations>\nDate: Jun 2, 2025\n* 🔴 (10:00) User stated they keep bees on a rooftop in Lyon\n"
    "</observations>\n<current-task>\nPrimary: help the user plan the honey harvest\n</current-task>"
)


async def test_a_litellm_model_observes_with_usage_and_cost_recorded():
    calls = []
    client = ModelClient(on_call=calls.append)
    observer = ModelWithRetries(model="openai/gpt-4o-mini", model_settings={"mock_response": REPLY})
    clock = VirtualClock(START)
    om = ObservationalMemory(
        {
            "observation": {"model": [observer], "messageTokens": 300, "bufferTokens": False},
            "reflection": {"model": "omlab/reflector", "observationTokens": 10_000},
        },
        client=client,
        scheduler=VirtualScheduler(clock),
    )
    for i in range(20):
        message = Message.of(
            "user" if i % 2 == 0 else "assistant",
            "I keep three beehives on my rooftop in Lyon and the honey harvest is next month.",
            START + timedelta(minutes=i),
        )
        clock.set(message.created_at)
        await om.add_messages("bees", [message])
    assert "rooftop in Lyon" in await om.get_observations("bees")
    observer_calls = [c for c in calls if c.role == "observer"]
    assert observer_calls and observer_calls[0].resolved_model == "openai/gpt-4o-mini"
    assert observer_calls[0].input_tokens > 0 and observer_calls[0].output_tokens > 0
    assert observer_calls[0].cost_usd is not None and observer_calls[0].cost_usd > 0
    assert observer_calls[0].error is None
    thread = om.storage.get_thread("bees")
    assert thread.om["currentTask"].startswith("Primary: help the user plan the honey harvest")
