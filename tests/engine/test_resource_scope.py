"""Resource scope: one memory shared by several threads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import ClassVar

import pytest

from omlab import ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.errors import ConfigError
from omlab.engine.messages import Message
from omlab.engine.resource_cycle import plan_batches
from omlab.engine.scheduler import VirtualScheduler
from omlab.engine.thread_sections import obscure_thread_id
from omlab.llm.offline import register_offline_model
from omlab.llm.offline.base import message_text
from omlab.llm.offline.observer import OfflineObserver

START = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)
THREADS = ["answer_4be1b6b4_1", "answer_4be1b6b4_2", "session-c", "session-d", "session-e"]


class SpyObserver(OfflineObserver):
    name = "spy-observer"
    requests: ClassVar[list[list[dict]]] = []

    def generate(self, messages, **kwargs):
        SpyObserver.requests.append(messages)
        return super().generate(messages, **kwargs)


register_offline_model("spy-observer", SpyObserver)


def _om(obscure=True, max_batch=1_500, message_tokens=2_000):
    clock = VirtualClock(START)
    parts = []
    om = ObservationalMemory(
        {
            "scope": "resource",
            "obscureThreadIds": obscure,
            "observation": {
                "model": "omlab/spy-observer",
                "messageTokens": message_tokens,
                "maxTokensPerBatch": max_batch,
            },
            "reflection": {"model": "omlab/reflector", "observationTokens": 100_000},
        },
        scheduler=VirtualScheduler(clock),
        on_event=parts.append,
    )
    return om, clock, parts


def _conversation(per_thread: int = 14) -> list[Message]:
    out = []
    when = START
    for round_ in range(per_thread):
        for t_index, thread in enumerate(THREADS):
            role = "user" if round_ % 2 == 0 else "assistant"
            size = 1 + t_index  # threads of different sizes
            text = (
                f"Round {round_} of conversation {t_index}: I am planning a trip to Porto with {size} friends. " * size
            )
            out.append(Message.of(role, text, when, id=f"{thread}-{round_:03d}", thread_id=thread))
            when += timedelta(minutes=1)
    return out


def test_plan_batches_picks_largest_first_and_packs_by_thread():
    t0 = START
    per_thread = {
        "a": (500, t0 + timedelta(minutes=3)),
        "b": (3_000, t0 + timedelta(minutes=2)),
        "c": (800, t0),
        "d": (200, t0 + timedelta(minutes=1)),
    }
    # largest first until >= 3_600: b (3000) then c (800) -> 3800; ordered by oldest: c, b
    assert plan_batches(per_thread, 3_600, 1_000) == [["c"], ["b"]]
    assert plan_batches(per_thread, 10_000, 1_000) == [["c", "d"], ["b"], ["a"]]
    assert plan_batches(per_thread, 10_000, 10_000) == [["c", "d", "b", "a"]]


async def test_threads_share_one_memory_batches_respect_the_limit_and_ids_are_obscured():
    SpyObserver.requests = []
    om, clock, parts = _om()
    observed: list[str] = []
    sent: list[str] = []
    for message in _conversation():
        clock.set(message.created_at)
        sent.append(message.id)
        result = await om.add_messages(message.thread_id, [message], resource_id="user-1")
        observed.extend(result.observed_message_ids)
    final = await om.observe("session-c")
    observed.extend(final.observed_message_ids)
    # every message of every thread observed exactly once
    assert len(observed) == len(set(observed))
    assert set(observed) | {m.id for m in await om.get_unobserved_messages("session-c")} == set(sent)
    assert not await om.get_unobserved_messages("session-c")
    # one record for the resource, thread sections inside it
    record = await om.get_record("session-c")
    assert record.scope == "resource" and record.thread_id is None and record.resource_id == "user-1"
    for thread in THREADS:
        assert f'<thread id="{obscure_thread_id(thread)}">' in record.active_observations
        assert thread not in record.active_observations
    # batches respect maxTokensPerBatch (thread-granular: a thread alone may exceed it)
    for request in SpyObserver.requests:
        text = message_text(request[1])
        history = text.split("## New Message History to Observe", 1)[1]
        blocks = history.count('<thread id="')
        assert blocks >= 1
        for thread in THREADS:  # no raw id reaches a model
            assert thread not in text and thread not in message_text(request[0])
    starts = [p.data for p in parts if p.type == "data-om-observation-start"]
    assert any(len(s["threadIds"]) > 1 for s in starts)
    assert all(any(len(r) for r in [s["threadIds"]]) for s in starts)
    # per-thread cursors were written
    for thread in THREADS:
        assert om.storage.get_thread(thread).om["lastObservedAt"]


async def test_batch_sizes_stay_within_max_tokens_per_batch():
    SpyObserver.requests = []
    om, clock, _parts = _om(max_batch=1_200)
    for message in _conversation(10):
        clock.set(message.created_at)
        await om.add_messages(message.thread_id, [message], resource_id="user-1")
    # each request's thread blocks: every block alone may be large, but two together stay <= limit
    for request in SpyObserver.requests:
        history = message_text(request[1]).split("## New Message History to Observe", 1)[1]
        sections = [s for s in history.split('<thread id="')[1:]]
        if len(sections) > 1:
            sizes = [om.counter.count_string(s) for s in sections]
            assert sum(sizes) <= 1_200 * 1.3  # history formatting adds a little over message tokens


async def test_other_threads_appear_as_separate_reference_context():
    om, _clock, _ = _om(obscure=False, message_tokens=50_000)
    a = Message.of("user", "In thread A I asked about Porto hotels.", START, id="a1")
    b = Message.of("user", "In thread B I asked about sourdough starters.", START + timedelta(minutes=1), id="b1")
    await om.add_messages("A", [a], resource_id="user-1")
    await om.add_messages("B", [b], resource_id="user-1")
    context = await om.build_context("A")
    system = "\n".join(m["content"] for m in context if m["role"] == "system")
    raw = [m["content"] for m in context if m["role"] != "system"]
    assert (
        "START_OTHER_CONVERSATIONS_BLOCK" in system
        and "sourdough" in system
        and '<other-conversation id="B">' in system
    )
    assert raw == ["In thread A I asked about Porto hotels."]


async def test_state_reloads_per_thread_cursors(tmp_path):
    path = tmp_path / "om.duckdb"
    clock = VirtualClock(START)
    options = {
        "scope": "resource",
        "storage": str(path),
        "observation": {"model": "omlab/observer", "messageTokens": 2_000},
        "reflection": {"model": "omlab/reflector", "observationTokens": 100_000},
    }
    om = ObservationalMemory(options, scheduler=VirtualScheduler(clock))
    messages = _conversation(8)
    for m in messages:
        clock.set(m.created_at)
        await om.add_messages(m.thread_id, [m], resource_id="user-1")
    pending = sorted(m.id for m in await om.get_unobserved_messages("session-c"))
    log = await om.get_observations("session-c")
    om.storage.close()
    again = ObservationalMemory(options, scheduler=VirtualScheduler(VirtualClock(clock.now())))
    assert sorted(m.id for m in await again.get_unobserved_messages("session-c")) == pending
    assert await again.get_observations("session-c") == log
    again.storage.close()


def test_resource_scope_rejects_async_buffering():
    with pytest.raises(ConfigError):
        ObservationalMemory({"scope": "resource", "observation": {"bufferTokens": 0.2}})


async def test_resource_scope_needs_a_resource_id():
    om, _, _ = _om()
    with pytest.raises(Exception, match="resource id"):
        await om.add_messages("lonely", [Message.of("user", "hi", START)])
