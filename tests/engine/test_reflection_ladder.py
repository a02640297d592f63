"""The reflection ladder against Reflectors that misbehave, and hints across activation."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import ClassVar

import pytest
from conversation_factory import make_conversation

from omlab import ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.reflector import ReflectorRunner, start_level
from omlab.engine.scheduler import FixedLatency, VirtualScheduler
from omlab.llm.offline import register_offline_model
from omlab.llm.offline.base import OfflineResult, message_text
from omlab.llm.offline.observer import OfflineObserver
from omlab.tokens.tokenx import estimate_token_count

START = datetime(2025, 3, 3, tzinfo=UTC)


class StubbornReflector:
    """Returns the observations it was given, unchanged: it never compresses."""

    name = "stubborn-reflector"
    calls = 0

    def generate(self, messages, **_):
        StubbornReflector.calls += 1
        text = message_text(messages[-1])
        body = text.split("## OBSERVATIONS TO REFLECT ON\n\n", 1)[1].split("\n\n---\n\n", 1)[0]
        return OfflineResult(f"<observations>\n{body}\n</observations>", 10, 10)


class EmptyReflector:
    name = "empty-reflector"

    def generate(self, messages, **_):
        return OfflineResult("<observations>\n</observations>", 10, 1)


class LoopingReflector:
    """A degenerate repetition loop."""

    name = "looping-reflector"

    def generate(self, messages, **_):
        return OfflineResult(
            "<observations>\n" + "* 🔴 (10:00) User stated the same thing again and again\n" * 300 + "</observations>",
            10,
            3000,
        )


class HintlessObserver(OfflineObserver):
    """The offline observer without continuation hints, after its first call."""

    name = "hintless-observer"
    calls = 0

    def generate(self, messages, **kwargs):
        HintlessObserver.calls += 1
        result = super().generate(messages, **kwargs)
        if HintlessObserver.calls > 1:
            text = result.text.split("</observations>")[0] + "</observations>"
            return OfflineResult(text, result.input_tokens, estimate_token_count(text))
        return result


for model in (StubbornReflector, EmptyReflector, LoopingReflector, HintlessObserver):
    register_offline_model(model.name, model)


def _om(reflector: str, *, buffering=False, observer="omlab/observer", observation_tokens=1_500, **observation):
    clock = VirtualClock(START)
    parts = []
    obs = {"model": observer, "messageTokens": 1_500}
    obs.update(observation)
    if not buffering:
        obs["bufferTokens"] = False
    om = ObservationalMemory(
        {"observation": obs, "reflection": {"model": reflector, "observationTokens": observation_tokens}},
        scheduler=VirtualScheduler(clock, FixedLatency(1.0)),
        on_event=parts.append,
    )
    return om, clock, parts


async def _feed(om, clock, messages):
    for message in messages:
        clock.set(message.created_at)
        await om.add_messages("t", [message])


async def test_a_reflector_that_never_compresses_is_bounded_and_never_wipes_memory():
    StubbornReflector.calls = 0
    # small observation cycles (~75 log tokens each): the back-off must skip several of them
    om, clock, parts = _om("omlab/stubborn-reflector", messageTokens=300)
    await _feed(om, clock, make_conversation(30_000, seed=21))
    log = await om.get_observations("t")
    assert log.strip(), "memory kept"
    assert len(await om.get_history("t")) == 1, "no generation from a reflection that did not shrink the log"
    cycles = [p for p in parts if p.type == "data-om-observation-start" and p.data["operationType"] == "reflection"]
    distinct = {p.data["cycleId"] for p in cycles}
    # each cycle climbs the ladder at most from level 1 to 4: at most 4 attempts
    assert StubbornReflector.calls <= 4 * len(distinct)
    # and cycles are backed off: far fewer than the number of steps over the threshold
    steps_over = sum(
        1
        for p in parts
        if p.type == "data-om-status" and p.data["windows"]["active"]["observations"]["tokens"] >= 1_500
    )
    assert len(distinct) < max(2, steps_over // 3)
    failures = [p.data["error"] for p in parts if p.type == "data-om-observation-failed"]
    assert any("Did not compress below threshold" in e for e in failures)
    # an unproductive attempt is retried only after the log grew by a tenth of the threshold
    sizes = []
    for p in cycles:
        if not sizes or sizes[-1][0] != p.data["cycleId"]:
            sizes.append((p.data["cycleId"], p.data["tokensToObserve"]))
    for (_, before), (_, after) in itertools.pairwise(sizes):
        assert after - before >= 150


async def test_empty_and_degenerate_reflections_are_never_committed():
    for name in ("omlab/empty-reflector", "omlab/looping-reflector"):
        om, clock, parts = _om(name)
        await _feed(om, clock, make_conversation(20_000, seed=22))
        assert len(await om.get_history("t")) == 1
        assert (await om.get_observations("t")).strip()
        assert any(p.type == "data-om-observation-failed" and p.data["operationType"] == "reflection" for p in parts)


def test_start_levels_follow_the_reference():
    assert start_level("google/gemini-2.5-flash") == 2
    assert start_level("openai/gpt-4o") == 1
    assert start_level("google/gemini-2.5-flash", manual=True) == 0


async def test_ladder_escalates_until_the_target_is_met():
    class Client:
        levels: ClassVar[list[int]] = []

        async def complete(self, request):
            level = request.metadata["compressionLevel"]
            Client.levels.append(level)
            from omlab.llm.types import ModelResponse, Usage

            lines = 40 if level < 3 else 5
            text = (
                "<observations>\nDate: Mar 3, 2025\n"
                + "".join(f"* 🔴 (10:{i:02d}) User stated fact number {i} about their garden\n" for i in range(lines))
                + "</observations>"
            )
            return ModelResponse(text=text, usage=Usage(1, 1), model="test/model")

    runner = ReflectorRunner(
        model="test/model",
        settings=None,
        provider_options=None,
        instruction=None,
        client=Client(),
        count=estimate_token_count,
    )
    result = await runner.reflect("* 🔴 (10:00) x\n" * 400, target=200, first_level=1)
    assert Client.levels == [1, 2, 3]
    assert result.met_target and [a.outcome for a in result.attempts] == ["too-large", "too-large", "accepted"]


async def test_activation_keeps_hints_when_chunks_bring_none():
    HintlessObserver.calls = 0
    om, clock, parts = _om(
        "omlab/reflector", buffering=True, observer="omlab/hintless-observer", observation_tokens=100_000
    )
    messages = make_conversation(3_000, seed=23)
    # a first, synchronous observation gives the thread its hints
    for message in messages[:6]:
        clock.set(message.created_at)
        await om.add_messages("t", [message])
    await om.observe("t")
    task = om.storage.get_thread("t").om.get("currentTask")
    assert task
    # then buffered chunks without hints get activated
    later = make_conversation(6_000, seed=24, start=messages[-1].created_at + timedelta(hours=1))
    await _feed(om, clock, later)
    assert any(p.type == "data-om-activation" for p in parts)
    assert om.storage.get_thread("t").om.get("currentTask") == task


@pytest.mark.parametrize("estimator", ["tokenx", "tiktoken"])
def test_buffered_reflection_covers_lines_worth_its_budget(estimator):
    from omlab.engine.token_counter import TokenCounter

    counter = TokenCounter(estimator=estimator)
    lines = ["Date: Jan 1, 2024"] + ["* short"] * 10 + ["* a much longer observation line with many more words"] * 10
    text = "\n".join(lines)
    count = counter.count_string
    covered, tokens, chars = counter.log_leading_lines(text, 40)
    assert text[:chars] == "\n".join(lines[:covered])
    assert sum(count(line) for line in lines[:covered]) >= 40
    assert sum(count(line) for line in lines[: covered - 1]) < 40
    assert tokens == counter.count_log("\n".join(lines[:covered]))
    assert counter.log_leading_lines(text, 10_000) == (len(lines), counter.count_log(text), len(text))
    assert counter.log_leading_lines("", 5) == (1, 0, 0)
    joined = counter.count_log_joined(text, counter.count_log(text), "Date: Feb 2, 2024\n* later")
    assert joined == counter.count_log(text + "\n\nDate: Feb 2, 2024\n* later")
    assert counter.count_log_joined(text, 7, "") == 7


async def test_the_failed_marker_before_a_reflection_retry_says_retrying():
    # issue 20 item 4: a consumer must tell "this attempt failed, another follows" from a failed cycle
    om, clock, parts = _om("omlab/stubborn-reflector", messageTokens=300)
    await _feed(om, clock, make_conversation(6_000, seed=21))
    failed = [
        p.data for p in parts if p.type == "data-om-observation-failed" and p.data["operationType"] == "reflection"
    ]
    retries = [f for f in failed if "retrying at level" in f["error"]]
    assert retries, "the stubborn reflector was retried"
    assert all(f["retrying"] is True for f in retries)
    assert all("retrying" not in f for f in failed if f not in retries)
