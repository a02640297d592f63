"""Extractors, thread titles, temporal markers, attachments and retrieval, through the engine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import ClassVar

import pytest

from omlab import ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.errors import ConfigError
from omlab.engine.extractors import Extractor
from omlab.engine.messages import Message, Part
from omlab.engine.scheduler import VirtualScheduler
from omlab.llm.offline import register_offline_model
from omlab.llm.offline.base import OfflineResult, message_text
from omlab.llm.offline.observer import OfflineObserver

START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


class RecordingObserver:
    """The offline observer, plus canned extra sections; remembers every request it saw."""

    name = "recording-observer"
    requests: ClassVar[list[list[dict]]] = []
    extra = ""

    def generate(self, messages, *, max_output_tokens=None, temperature=None):
        RecordingObserver.requests.append(messages)
        inner = OfflineObserver().generate(messages, max_output_tokens=max_output_tokens, temperature=temperature)
        text = inner.text + RecordingObserver.extra
        return OfflineResult(text, inner.input_tokens, inner.output_tokens)


register_offline_model("recording-observer", RecordingObserver)


@pytest.fixture(autouse=True)
def _reset():
    RecordingObserver.requests = []
    RecordingObserver.extra = ""


def _om(**options):
    clock = VirtualClock(START)
    parts = []
    observation = {
        "model": "omlab/recording-observer",
        "messageTokens": 250,
        "bufferTokens": False,
        **options.pop("observation", {}),
    }
    om = ObservationalMemory(
        {
            "observation": observation,
            "reflection": {"model": "omlab/reflector", "observationTokens": 50_000},
            **options,
        },
        scheduler=VirtualScheduler(clock),
        on_event=parts.append,
    )
    return om, clock, parts


def _talk(n: int, start: datetime = START, gap: timedelta = timedelta(minutes=1)) -> list[Message]:
    out = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        text = (
            f"I adopted a beagle named Biscuit {i} weeks ago and she loves the park near Alfama."
            if role == "user"
            else "That sounds lovely; beagles need long walks and a lot of sniffing time."
        )
        out.append(Message.of(role, text, start + gap * i, id=f"m{i:03d}"))
    return out


async def _feed(om, clock, messages, thread="t"):
    results = []
    for message in messages:
        clock.set(message.created_at)
        results.append(await om.add_messages(thread, [message]))
    return results


async def test_inline_custom_extractor_values_reach_metadata_and_end_event():
    RecordingObserver.extra = "\n<user-mood>\ncheerful\n</user-mood>\n"
    om, clock, parts = _om(observation={"extract": [Extractor("User mood", "The user's mood in one word.")]})
    await _feed(om, clock, _talk(12))
    system = RecordingObserver.requests[0][0]["content"]
    assert "<user-mood>" in system and "The user's mood in one word." in system
    end = next(p.data for p in parts if p.type == "data-om-observation-end")
    assert end["extractedValues"]["user-mood"] == "cheerful"
    thread = om.storage.get_thread("t")
    assert thread.om["extracted"]["user-mood"] == "cheerful"
    # the next cycle shows the prior value to the Observer
    await _feed(om, clock, _talk(12, START + timedelta(hours=1)))
    later_user = RecordingObserver.requests[-1][1]["content"]
    assert "prior user-mood: cheerful" in later_user


def test_duplicate_and_reserved_extractor_slugs_are_rejected_at_construction():
    with pytest.raises(ConfigError, match="observation.extract"):
        _om(observation={"extract": [Extractor("Mood", "a"), Extractor("mood", "b")]})
    with pytest.raises(ConfigError):
        _om(observation={"extract": [Extractor("Current task", "x")]})


async def test_thread_title_updates_the_thread_and_emits_an_event():
    RecordingObserver.extra = "\n<thread-title>Biscuit the beagle</thread-title>\n"
    om, clock, parts = _om(observation={"threadTitle": True})
    await _feed(om, clock, _talk(12))
    updates = [p.data for p in parts if p.type == "data-om-thread-update"]
    assert updates and updates[0]["newTitle"] == "Biscuit the beagle" and updates[0]["oldTitle"] is None
    assert om.storage.get_thread("t").title == "Biscuit the beagle"
    assert "<thread-title>" in RecordingObserver.requests[0][0]["content"]


async def test_temporal_markers_are_persisted_emitted_and_shown_to_the_observer():
    om, clock, parts = _om(temporalMarkers=True)
    first = _talk(4)
    later = _talk(10, START + timedelta(hours=3))
    for m in later:
        m.id = "late-" + m.id
    await _feed(om, clock, first + later)
    markers = [p.data for p in parts if p.type == "data-om-temporal-marker"]
    assert len(markers) == 1 and "hours later" in markers[0]["text"]
    stored = [m.id for m in om.storage.get_messages("t")]
    assert markers[0]["messageId"] in stored
    seen = "\n".join(message_text(r[1]) for r in RecordingObserver.requests)
    assert "System-reminder" in seen and "hours later" in seen


async def test_attachments_follow_observe_attachments():
    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")

    def with_image():
        msgs = _talk(12)
        msgs[0].parts.append(Part(type="image", data=png, mime_type="image/png", filename="dog.png"))
        return msgs

    om, clock, _ = _om()
    await _feed(om, clock, with_image())
    content = RecordingObserver.requests[0][1]["content"]
    assert isinstance(content, list) and any(p.get("type") == "image_url" for p in content)
    assert "[Image #1: dog.png]" in message_text(RecordingObserver.requests[0][1])

    RecordingObserver.requests = []
    om, clock, _ = _om(observation={"observeAttachments": False})
    await _feed(om, clock, with_image())
    content = RecordingObserver.requests[0][1]["content"]
    assert isinstance(content, str) and "[Image #1: dog.png]" in content


async def test_retrieval_groups_point_at_their_messages_and_the_recall_tool_pages_them():
    om, clock, _ = _om(retrieval=True)
    await _feed(om, clock, _talk(30))
    log = await om.get_observations("t")
    assert "<observation-group" in log and 'range="m000:' in log
    context = await om.build_context("t", current_date=START + timedelta(days=1))
    system = "\n".join(m["content"] for m in context if m["role"] == "system")
    assert "## Group `" in system and "recall" in system.lower()
    tool = om.recall_tool("t")
    page = tool.run({"cursor": "m000", "limit": 5})
    assert page["count"] == 5 and page["hasNextPage"] is True and "[m000]" in page["messages"]
    back = tool.run({"cursor": "m010", "page": -1, "limit": 5})
    assert back["count"] == 5 and back["hasPrevPage"] is True
    hint = tool.run({"cursor": "m000:m011"})
    assert "m000" in str(hint) and "m011" in str(hint)


def test_vector_retrieval_needs_an_embedder():
    with pytest.raises(ConfigError, match="retrieval.vector"):
        _om(retrieval={"vector": True})


async def test_manage_working_memory_keeps_a_working_memory_document():
    RecordingObserver.extra = "\n<working-memory>\n# User\n- Dog: Biscuit (beagle)\n</working-memory>\n"
    om, clock, parts = _om(observation={"manageWorkingMemory": True})
    await _feed(om, clock, _talk(12))
    assert "<working-memory>" in RecordingObserver.requests[0][0]["content"]
    thread = om.storage.get_thread("t")
    assert "Biscuit" in str(thread.metadata.get("workingMemory"))
    end = next(p.data for p in parts if p.type == "data-om-observation-end")
    assert "working-memory" in end["extractedValues"]
