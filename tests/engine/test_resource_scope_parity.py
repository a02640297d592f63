"""Resource scope keeps what thread scope has: custom extractors (their prompt, their per-thread
values, prior values and events), retrieval's observation-group pointers, and the hook's
``providerMetadata``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import ClassVar

from omlab import Extractor, ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message
from omlab.engine.observation_groups import parse_observation_groups
from omlab.engine.scheduler import VirtualScheduler
from omlab.engine.thread_sections import merge_thread_section, split_thread_sections
from omlab.llm.offline import register_offline_model
from omlab.llm.offline.base import OfflineResult, message_text

START = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)
THREADS = ["trip", "garden"]


class ThreadBlockObserver:
    """Answers a multi-thread request with one block per thread it was shown, each with a line
    about the thread and a ``<user-mood>`` section naming the thread."""

    name = "thread-block-observer"
    requests: ClassVar[list[list[dict]]] = []

    def generate(self, messages, *, max_output_tokens=None, temperature=None):
        ThreadBlockObserver.requests.append(messages)
        shown = re.findall(r'<thread id="([^"]+)">', message_text(messages[-1]))
        blocks = [
            f'<thread id="{thread}">\nDate: May 1, 2025\n* 🔴 (09:00) User talked in {thread}.\n'
            f"<user-mood>calm in {thread}</user-mood>\n</thread>"
            for thread in dict.fromkeys(shown)
        ]
        text = "<observations>\n" + "\n".join(blocks) + "\n</observations>"
        return OfflineResult(text, 100, 40)


register_offline_model("thread-block-observer", ThreadBlockObserver)


def _om(**options):
    clock = VirtualClock(START)
    parts = []
    hooks: list[dict] = []

    async def on_observation_end(info):
        hooks.append(info)

    om = ObservationalMemory(
        {
            "scope": "resource",
            "observation": {
                "model": "omlab/thread-block-observer",
                "messageTokens": 300,
                "extract": [Extractor("User mood", "The user's mood in one word.")],
            },
            "reflection": {"model": "omlab/reflector", "observationTokens": 100_000},
            "hooks": {"onObservationEnd": on_observation_end},
            **options,
        },
        scheduler=VirtualScheduler(clock),
        on_event=parts.append,
    )
    return om, clock, parts, hooks


async def _talk(om, clock, rounds: int, start: datetime = START) -> None:
    when = start
    for round_ in range(rounds):
        for thread in THREADS:
            role = "user" if round_ % 2 == 0 else "assistant"
            text = f"Round {round_} in {thread}: we keep talking about the plan for the weekend and the weather."
            message = Message.of(role, text, when, id=f"{thread}-{when:%H%M}-{round_:03d}", thread_id=thread)
            clock.set(when)
            await om.add_messages(thread, [message], resource_id="user-1")
            when += timedelta(minutes=1)


async def test_custom_extractors_run_per_thread_in_resource_scope():
    ThreadBlockObserver.requests = []
    om, clock, parts, _ = _om()
    await _talk(om, clock, 6)
    assert ThreadBlockObserver.requests, "the Observer never ran"
    system = ThreadBlockObserver.requests[0][0]["content"]
    assert "<user-mood>" in system and "The user's mood in one word." in system
    for thread in THREADS:
        stored = om.storage.get_thread(thread)
        assert stored.om["extracted"]["user-mood"] == f"calm in {thread}"
    end = next(p.data for p in parts if p.type == "data-om-observation-end")
    assert end["extractedValuesByThread"] == {t: {"user-mood": f"calm in {t}"} for t in end["threadIds"]}
    assert end["extractedValues"]["user-mood"].startswith("calm in ")
    # the next cycle shows each thread its own previous value
    await _talk(om, clock, 6, START + timedelta(hours=1))
    later = message_text(ThreadBlockObserver.requests[-1][-1])
    for thread in THREADS:
        assert f"calm in {thread}" in later


async def test_the_hook_gets_the_provider_metadata_in_resource_scope():
    om, clock, _, hooks = _om()
    await _talk(om, clock, 6)
    ends = [h for h in hooks if h.get("error") is None]
    assert ends and ends[0]["providerMetadata"] == {"offline": True}


async def test_retrieval_wraps_each_thread_section_in_an_observation_group():
    om, clock, _, _ = _om(retrieval={"vector": False, "scope": "resource"})
    await _talk(om, clock, 12)
    record = await om.get_record("trip")
    sections = [(t, body) for t, body in split_thread_sections(record.active_observations) if t]
    assert sections
    for thread, body in sections:
        groups = parse_observation_groups(body)
        assert groups, f"section {thread} has no observation group"
        for group in groups:
            start, end = group.range.split(":")
            assert start.startswith(thread) and end.startswith(thread)
    # the same-day batches merged into one section each still parse as whole groups
    assert sum(len(parse_observation_groups(body)) for _, body in sections) >= 3


def test_a_same_day_group_merges_whole_into_its_thread_section():
    first = '<observation-group id="g1" range="a:b">\nDate: May 1, 2025\n* (09:00) one\n</observation-group>'
    second = '<observation-group id="g2" range="c:d">\nDate: May 1, 2025\n* (10:00) two\n</observation-group>'
    log = merge_thread_section("", "t", first, START)
    log = merge_thread_section(log, "t", second, START + timedelta(hours=1))
    assert log.count('<thread id="t">') == 1
    body = split_thread_sections(log)[0][1]
    assert [g.id for g in parse_observation_groups(body)] == ["g1", "g2"]
    assert body.count("<observation-group") == body.count("</observation-group>") == 2


async def test_each_observed_thread_gets_its_own_observation_complete_debug_event():
    om, clock, parts, _ = _om()
    debug = []
    om.on_debug_event(debug.append)
    await _talk(om, clock, 6)
    end = next(p.data for p in parts if p.type == "data-om-observation-end")
    assert len(end["threadIds"]) == 2  # one cycle observed both threads
    completes = [e for e in debug if e.type == "observation_complete"]
    first_cycle = completes[: len(end["threadIds"])]
    assert [e.thread_id for e in first_cycle] == end["threadIds"]
    for event in first_cycle:
        fields = event.fields
        assert fields["observations"].startswith('<thread id="') and event.thread_id in fields["observations"]
        assert f"User talked in {event.thread_id}" in fields["observations"]
        assert fields["messages"] and all(event.thread_id in m["content"] for m in fields["messages"])
        assert f"User talked in {event.thread_id}" in fields["rawObserverOutput"]  # that thread's own output
    # the batch's usage is reported once, on the first thread's event
    assert first_cycle[0].fields["usage"]["totalTokens"] > 0 and first_cycle[1].fields["usage"] is None
