"""Resource scope with several threads, against the reference engine (``@mastra/memory`` 1.31.0).

The fixture ``tests/fixtures/mastra/resource_three_threads_300.json`` was recorded by
``scripts/record_mastra_trace.sh`` (its ``replay-threads`` drivers): 300 messages of one resource
spread over three threads (each turn, a user message and its reply, in one thread; the first six
turns in ``thread-a``, then runs of 1-3 turns), config ``{"scope": "resource", "observation":
{"messageTokens": 3000, "bufferTokens": false}, "reflection": {"observationTokens": 4000}}``
(the reference has no async buffering in resource scope). Its mock Observer answers a
multi-thread request with one ``<thread id="…">`` block per thread, a ``Date:`` line whenever the
day changes, then the single-thread contract's line for each message it was handed for that
thread; omlab's side answers the same way from the ``(thread, messages)`` list the engine handed
``observe_threads``.

The replay mirrors the reference driver's turns with each message's own thread: a user message
is added and stepped in its thread, a reply is added unstepped (a later reply of a turn steps
first).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from test_mastra_oracle import (  # the module pytest imported (one registration of the mocks)
    REFLECTOR,
    MastraMockReflector,
    first_60_utf16,
    mock_usage,
    parse_time,
)

from omlab import ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message
from omlab.engine.scheduler import VirtualScheduler
from omlab.llm.offline import register_offline_model
from omlab.llm.offline.base import OfflineResult

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mastra" / "resource_three_threads_300.json"
MULTI_OBSERVER = "mastra-mock-multi-observer"
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass
class ThreadsCapture:
    """What the engine handed the Observer: per call, the ``(shown thread id, messages)`` list."""

    calls: list[list[tuple[str, list[Message]]]] = field(default_factory=list)


def _line(message: Message) -> str | None:
    text = first_60_utf16(" ".join(p.text for p in message.parts if p.type == "text" and p.text))
    if not text:
        return None
    who = "User" if message.role == "user" else "Assistant"
    return f"* 🔴 ({message.created_at:%H:%M}) {who} said: {text}"


def multi_thread_reply(threads: list[tuple[str, list[Message]]]) -> str:
    """The recorder's mock answer: per thread a block with a ``Date: Mon D, YYYY`` line whenever
    the (UTC) day changes and one line per message."""
    blocks = []
    for shown, messages in threads:
        lines, day = [], None
        for message in messages:
            line = _line(message)
            if line is None:
                continue
            when = message.created_at
            today = f"{MONTHS[when.month - 1]} {when.day}, {when.year}"
            if today != day:
                lines.append(f"Date: {today}")
            day = today
            lines.append(line)
        blocks.append(f'<thread id="{shown}">\n' + "\n".join(lines) + "\n</thread>")
    return "<observations>\n" + "\n".join(blocks) + "\n</observations>"


def mock_multi_observer_factory(capture: ThreadsCapture) -> type:
    class MastraMockMultiObserver:
        name = MULTI_OBSERVER

        def generate(self, messages: list[dict[str, Any]], **_: Any) -> OfflineResult:
            output = multi_thread_reply(capture.calls[-1])
            return OfflineResult(output, *mock_usage(messages, output))

    return MastraMockMultiObserver


def to_thread_message(raw: dict[str, Any]) -> Message:
    return Message.of(
        raw["role"], raw["content"], parse_time(raw["createdAt"]), id=raw["id"], thread_id=raw["threadId"]
    )


@dataclass
class ThreadStep:
    pending_tokens: int
    observation_tokens: int
    log_sha1: str
    generation_count: int
    last_observed_at: str | None
    observed: list[list[str]]
    observed_by_thread: list[dict[str, list[str]]]
    reflections: list[dict[str, int]]


def _iso(value) -> str | None:
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z") if value else None


async def replay_threads(trace: dict[str, Any]) -> tuple[ObservationalMemory, list[ThreadStep]]:
    capture = ThreadsCapture()
    MastraMockReflector.calls = []
    register_offline_model(MULTI_OBSERVER, mock_multi_observer_factory(capture))
    config = json.loads(json.dumps(trace["config"]))
    config["observation"]["model"] = f"omlab/{MULTI_OBSERVER}"
    config["reflection"]["model"] = f"omlab/{REFLECTOR}"
    clock = VirtualClock(parse_time(trace["messages"][0]["createdAt"]))
    memory = ObservationalMemory(config, scheduler=VirtualScheduler(clock))
    observe_threads = memory.observer.observe_threads

    async def capturing(threads, **kwargs):
        capture.calls.append([(shown, list(messages)) for shown, messages in threads])
        return await observe_threads(threads, **kwargs)

    memory.observer.observe_threads = capturing  # type: ignore[method-assign]
    resource = trace["resourceId"]
    steps: list[ThreadStep] = []
    assistants_in_turn: int | None = None
    for raw in trace["messages"]:
        message = to_thread_message(raw)
        thread = raw["threadId"]
        clock.set(message.created_at)
        calls_before, reflections_before = len(capture.calls), len(MastraMockReflector.calls)
        if message.role == "user":
            assistants_in_turn = 0
            await memory.add_messages(thread, [message], resource_id=resource)
        else:
            if assistants_in_turn is None or assistants_in_turn >= 1:
                await memory.process(thread)
            await memory.add_messages(thread, [message], resource_id=resource, process=False)
            assistants_in_turn = (assistants_in_turn or 0) + 1
        await memory.settle()
        status = await memory.status(thread)
        record = await memory.get_record(thread)
        calls = capture.calls[calls_before:]
        steps.append(
            ThreadStep(
                pending_tokens=status.pending_tokens,
                observation_tokens=status.observation_tokens,
                log_sha1=hashlib.sha1((record.active_observations or "").encode()).hexdigest()[:12],
                generation_count=record.generation_count,
                last_observed_at=_iso(record.last_observed_at),
                observed=[[m.id for _, msgs in call for m in msgs] for call in calls],
                observed_by_thread=[{shown: [m.id for m in msgs] for shown, msgs in call} for call in calls],
                reflections=[
                    {k: c[k] for k in ("compressionLevel", "inputLines", "keptLines")}
                    for c in MastraMockReflector.calls[reflections_before:]
                ],
            )
        )
    return memory, steps


def expected_step(step: dict[str, Any]) -> dict[str, Any]:
    observer = [c for c in step["llmCalls"] if c["kind"] == "observer"]
    return {
        "pendingTokens": step["pendingTokens"],
        "observationTokens": step["observationTokens"],
        "activeObservationsSha1": step["activeObservationsSha1"],
        "generationCount": step["generationCount"],
        "lastObservedAt": step["lastObservedAt"],
        "observed": step.get("observedMessageIds", []),
        "observedByThread": [c["observedByThread"] for c in observer],
        "reflections": step.get("reflectorCalls", []),
    }


def actual_step(step: ThreadStep) -> dict[str, Any]:
    return {
        "pendingTokens": step.pending_tokens,
        "observationTokens": step.observation_tokens,
        "activeObservationsSha1": step.log_sha1,
        "generationCount": step.generation_count,
        "lastObservedAt": step.last_observed_at,
        "observed": step.observed,
        "observedByThread": step.observed_by_thread,
        "reflections": step.reflections,
    }


def agreeing_steps(trace: dict[str, Any], steps: list[ThreadStep]) -> tuple[int, int | None]:
    """(steps that agree on every field, the first step that does not)."""
    same = [expected_step(e) == actual_step(a) for e, a in zip(trace["steps"], steps, strict=True)]
    return sum(same), next((i for i, ok in enumerate(same) if not ok), None)


def in_mode(trace: dict[str, Any], compat: str) -> dict[str, Any]:
    return {**trace, "config": {**trace["config"], "compat": compat}}


@pytest.fixture(scope="module")
def trace() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_the_fixture_is_the_documented_run(trace):
    assert trace["versions"]["@mastra/memory"] == "1.31.0"
    assert trace["config"] == {
        "scope": "resource",
        "observation": {"messageTokens": 3000, "bufferTokens": False},
        "reflection": {"observationTokens": 4000},
    }
    messages = trace["messages"]
    assert len(messages) == len(trace["steps"]) == 300
    per_thread = {t: sum(1 for m in messages if m["threadId"] == t) for t in ("thread-a", "thread-b", "thread-c")}
    assert per_thread == {"thread-a": 162, "thread-b": 88, "thread-c": 50}
    cycles = [i for i, s in enumerate(trace["steps"]) if "observedMessageIds" in s]
    reflections = [i for i, s in enumerate(trace["steps"]) if "reflectorCalls" in s]
    assert (len(cycles), len(reflections), trace["final"]["generationCount"]) == (24, 4, 4)
    # the mock answers in the reference's multi-thread format (the first cycle: thread-b's turn)
    first = next(c for c in trace["steps"][cycles[0]]["llmCalls"] if c["kind"] == "observer")
    assert first["output"].startswith(
        '<observations>\n<thread id="thread-b">\nDate: Mar 4, 2024\n* 🔴 (17:42) User said:'
    )


def test_the_mock_answers_like_the_recorders(trace):
    """omlab's mock, handed what the reference's Observer was handed, answers byte for byte."""
    by_id = {m["id"]: m for m in trace["messages"]}
    compared = 0
    for step in trace["steps"]:
        for call in step["llmCalls"]:
            if call["kind"] == "observer":
                threads = [
                    (t, [to_thread_message(by_id[i]) for i in ids]) for t, ids in call["observedByThread"].items()
                ]
                assert multi_thread_reply(threads) == call["output"]
                compared += 1
    assert compared == 24


def test_every_step_agrees_in_reference_mode(trace):
    _, steps = asyncio.run(replay_threads(in_mode(trace, "reference")))
    for index, (expected, actual) in enumerate(zip(trace["steps"], steps, strict=True)):
        assert actual_step(actual) == expected_step(expected), f"step {index} ({expected['messageId']})"


def test_the_final_log_generations_and_thread_cursors_are_the_references_in_reference_mode(trace):
    memory, _ = asyncio.run(replay_threads(in_mode(trace, "reference")))
    last_thread = trace["messages"][-1]["threadId"]
    assert asyncio.run(memory.get_observations(last_thread)) == trace["final"]["activeObservations"]
    history = asyncio.run(memory.get_history(last_thread))
    assert sorted(
        (r.generation_count, r.observation_token_count, hashlib.sha1(r.active_observations.encode()).hexdigest()[:12])
        for r in history
    ) == sorted((g["generationCount"], g["observationTokenCount"], g["sha1_12"]) for g in trace["final"]["generations"])
    # each thread's cursor: the newest message of its last section (which may hold other threads' messages)
    threads = {t.id: t for t in asyncio.run(memory.list_threads(last_thread))}
    expected = {t: meta["lastObservedAt"] for t, meta in trace["final"]["threadOmMetadataByThread"].items()}
    assert {t: threads[t].om["lastObservedAt"] for t in expected} == expected


def test_the_reference_counts_other_threads_twice_and_files_its_list_under_the_current_thread(trace):
    """Why the default mode parts from the trace at step 12, the first message of thread-b."""
    from omlab.engine.reference_resource import format_messages
    from omlab.engine.token_counter import TokenCounter

    counter = TokenCounter(None)
    messages = [to_thread_message(m) for m in trace["messages"]]
    first_b = next(i for i, m in enumerate(messages) if m.thread_id == "thread-b")
    assert first_b == 12
    listed = counter.count_messages(messages[: first_b + 1])  # every unobserved message, once
    block = f'<other-conversation id="thread-a">\n{format_messages(messages[:first_b], "UTC")}\n</other-conversation>'
    assert (listed, counter.count_string(block)) == (1518, 1240)
    assert trace["steps"][first_b]["pendingTokens"] == listed + counter.count_string(block) == 2758
    # its first cycle (step 14, in thread-b) puts thread-a's twelve messages under thread-b as well
    call = next(c for c in trace["steps"][14]["llmCalls"] if c["kind"] == "observer")
    ids = [m.id for m in messages]
    assert call["observedByThread"] == {"thread-b": ids[12:15] + ids[:12], "thread-a": ids[:12]}


def test_the_default_mode_agrees_until_the_first_message_of_a_second_thread(trace):
    _, steps = asyncio.run(replay_threads(in_mode(trace, "omlab")))
    assert agreeing_steps(trace, steps) == (12, 12)
    differing = {k for k, v in actual_step(steps[12]).items() if expected_step(trace["steps"][12])[k] != v}
    assert differing == {"pendingTokens"}
    assert steps[12].pending_tokens == 1518  # each unobserved message counted once
    # omlab's cycles file each thread's messages under that thread only, and observe each once
    thread_of = {m["id"]: m["threadId"] for m in trace["messages"]}
    observed = [i for step in steps for by_thread in step.observed_by_thread for ids in by_thread.values() for i in ids]
    assert len(observed) == len(set(observed))
    assert all(
        thread_of[i] == thread
        for step in steps
        for call in step.observed_by_thread
        for thread, ids in call.items()
        for i in ids
    )
