"""Documented options exercised inside a running engine rather than as configuration: the
Reflector's own extractors (synchronous and buffered), extraction failures on the end events, the
buffered reflection's ``inputObservationTokens`` in the status part, and ``shareTokenBudget``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import ClassVar

from conversation_factory import feed_and_settle, make_conversation

from omlab import Extractor, ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.scheduler import FixedLatency, VirtualScheduler
from omlab.llm.offline import register_offline_model
from omlab.llm.offline.base import OfflineResult
from omlab.llm.offline.reflector import OfflineReflector

START = datetime(2025, 3, 3, tzinfo=UTC)
OPEN_QUESTIONS = Extractor("Open questions", "Questions the user asked that are still unanswered.")


class QuestioningReflector:
    """The offline Reflector, plus an ``<open-questions>`` section; remembers its system prompts."""

    name = "questioning-reflector"
    systems: ClassVar[list[str]] = []

    def generate(self, messages, *, max_output_tokens=None, temperature=None):
        QuestioningReflector.systems.append(messages[0]["content"])
        inner = OfflineReflector().generate(messages, max_output_tokens=max_output_tokens, temperature=temperature)
        text = inner.text + "\n<open-questions>\nwhich ferry to take\n</open-questions>\n"
        return OfflineResult(text, inner.input_tokens, inner.output_tokens)


register_offline_model(QuestioningReflector.name, QuestioningReflector)


def _om(observation: dict, reflection: dict, latency: float = 1.0, **options):
    clock, parts = VirtualClock(START), []
    om = ObservationalMemory(
        {
            "observation": {"model": "omlab/observer", **observation},
            "reflection": {"model": f"omlab/{QuestioningReflector.name}", **reflection},
            **options,
        },
        scheduler=VirtualScheduler(clock, FixedLatency(latency)),
        on_event=parts.append,
    )
    return om, clock, parts


def _data(parts, type_, operation=None):
    return [p.data for p in parts if p.type == type_ and (operation is None or p.data["operationType"] == operation)]


async def test_reflection_extract_runs_with_a_synchronous_reflection():
    QuestioningReflector.systems = []
    om, clock, parts = _om(
        {"messageTokens": 600, "bufferTokens": False},
        {"observationTokens": 1_200, "extract": [OPEN_QUESTIONS]},
    )
    await feed_and_settle(om, clock, make_conversation(12_000, seed=5))
    ends = _data(parts, "data-om-observation-end", "reflection")
    assert ends, "no synchronous reflection ran"
    assert ends[0]["extractedValues"]["open-questions"] == "which ferry to take"
    assert any("<open-questions>" in system and "still unanswered" in system for system in QuestioningReflector.systems)
    assert om.storage.get_thread("t").om["extracted"]["open-questions"] == "which ferry to take"


async def test_reflection_extract_runs_with_a_buffered_reflection():
    QuestioningReflector.systems = []
    om, clock, parts = _om(
        {"messageTokens": 600, "bufferTokens": 0.25},
        {"observationTokens": 1_200, "bufferActivation": 0.5, "extract": [OPEN_QUESTIONS]},
    )
    await feed_and_settle(om, clock, make_conversation(12_000, seed=6))
    buffered = _data(parts, "data-om-buffering-end", "reflection")
    assert buffered, "no buffered reflection ran"
    assert buffered[0]["extractedValues"]["open-questions"] == "which ferry to take"
    assert om.storage.get_thread("t").om["extracted"]["open-questions"] == "which ferry to take"
    assert any("<open-questions>" in system for system in QuestioningReflector.systems)


async def test_a_failing_extractor_is_reported_on_the_end_event_and_the_cycle_commits():
    def refuse(_context):
        raise RuntimeError("mood service unavailable")

    mood = Extractor({"name": "User mood", "instructions": refuse})
    om, clock, parts = _om(
        {"messageTokens": 600, "bufferTokens": False, "extract": [mood]}, {"observationTokens": 50_000}
    )
    await feed_and_settle(om, clock, make_conversation(2_000, seed=7))
    ends = _data(parts, "data-om-observation-end", "observation")
    assert ends and ends[0]["observations"].strip(), "the cycle did not commit its observations"
    failures = ends[0]["extractionFailures"]
    assert [f["slug"] for f in failures] == ["user-mood"]
    assert "mood service unavailable" in failures[0]["error"]


async def test_the_status_part_reports_the_buffered_reflections_input_while_and_after_it_runs():
    om, clock, parts = _om(
        {"messageTokens": 600, "bufferTokens": 0.25},
        {"observationTokens": 1_200, "bufferActivation": 0.5},
        latency=60.0,  # the reflection is still running while a few messages arrive
    )
    await feed_and_settle(om, clock, make_conversation(12_000, seed=8))
    statuses = [p.data["windows"]["buffered"]["reflection"] for p in parts if p.type == "data-om-status"]
    running = [s for s in statuses if s["status"] == "running"]
    complete = [s for s in statuses if s["status"] == "complete"]
    assert running and complete, {s["status"] for s in statuses}
    assert all(s["inputObservationTokens"] == 0 for s in running)  # known only when it is done
    slices = {d["tokensBuffered"] for d in _data(parts, "data-om-buffering-end", "reflection")}
    assert {s["inputObservationTokens"] for s in complete} <= slices
    assert all(s["observationTokens"] > 0 for s in complete)


async def test_share_token_budget_lets_messages_use_the_unused_observation_space():
    def first_observation(parts):
        starts = [p.data for p in parts if p.type == "data-om-observation-start"]
        return starts[0]["tokensToObserve"] if starts else None

    shared, clock, shared_parts = _om(
        {"messageTokens": 600, "bufferTokens": False}, {"observationTokens": 2_000}, shareTokenBudget=True
    )
    await feed_and_settle(shared, clock, make_conversation(6_000, seed=9))
    plain, clock, plain_parts = _om({"messageTokens": 600, "bufferTokens": False}, {"observationTokens": 2_000})
    await feed_and_settle(plain, clock, make_conversation(6_000, seed=9))

    shared_status = [p.data["windows"]["active"]["messages"] for p in shared_parts if p.type == "data-om-status"]
    assert shared_status[0]["threshold"] == 2_600  # nothing observed yet: the whole budget
    assert min(s["threshold"] for s in shared_status) >= 600
    assert any(s["threshold"] < 2_600 for s in shared_status), "the threshold never shrank as observations grew"
    assert all(
        p.data["windows"]["active"]["messages"]["threshold"] == 600 for p in plain_parts if p.type == "data-om-status"
    )
    assert first_observation(shared_parts) > 2_000 > first_observation(plain_parts)
