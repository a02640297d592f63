"""Sample engine objects shared by the storage tests."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from omlab.engine.messages import Message, Part
from omlab.engine.record import BufferedChunk, ObservationRecord, Thread

T0 = datetime(2024, 5, 1, 9, 30, tzinfo=UTC)
PNG_BYTES = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\xff"


def at(seconds: float) -> datetime:
    """``T0`` plus ``seconds``."""
    return T0 + timedelta(seconds=seconds)


def snapshot(obj: Any) -> dict[str, Any]:
    """A comparable view of an engine dataclass (Part and Message have no ``__eq__``)."""
    return dataclasses.asdict(obj)


def text_message(id: str, seconds: float, text: str = "hi", *, thread_id: str = "t1", role: str = "user") -> Message:
    return Message(
        id=id,
        role=role,
        parts=[Part(type="text", text=text)],
        created_at=at(seconds),
        thread_id=thread_id,
        resource_id="r1",
    )


def rich_message() -> Message:
    """A message with a part of every kind, unicode, emojis, bytes and nested tool data."""
    return Message(
        id="msg-rich-✨",
        role="assistant",
        created_at=datetime(2024, 5, 1, 9, 30, 15, 123456, tzinfo=UTC),
        thread_id="t1",
        resource_id="r1",
        metadata={"mastra": {"sealed": True}, "source": "ünïcödé 🙂"},
        token_cache={"v1:tokenx|text:abc": 12},
        parts=[
            Part(type="text", text="Bonjour 👋 — café, 日本語, עברית\nsecond line\ttab"),
            Part(type="reasoning", text="thinking… 🤔"),
            Part(
                type="tool-invocation",
                tool_call_id="call_1",
                tool_name="search",
                args={"query": "météo 🌧", "filters": {"days": [1, 2, 3], "exact": False}, "n": None},
                result={
                    "hits": [{"title": "A", "score": 0.75}, {"title": "B", "score": 1e-9}],
                    "total": 2**70,
                },
                state="result",
            ),
            Part(
                type="tool-invocation",
                tool_call_id="call_2",
                tool_name="fail",
                args=["a", 1],
                state="output-error",
                error_text="boom 💥",
            ),
            Part(
                type="image",
                data=PNG_BYTES,
                mime_type="image/png",
                width=640,
                height=480,
                detail="high",
                size_bytes=len(PNG_BYTES),
                filename="photo 📷.png",
            ),
            Part(type="image", data="https://example.com/cat.png", mime_type="image/png"),
            Part(type="file", data="JVBERi0xLjQK", mime_type="application/pdf", filename="report.pdf"),
            Part(
                type="data-om-observation-start",
                metadata={"cycleId": "c-1", "startedAt": "2024-05-01T09:30:15Z", "tokens": 1234},
                created_at=datetime(2024, 5, 1, 9, 30, 16, tzinfo=timezone(timedelta(hours=2))),
            ),
            Part(
                type="text",
                text="cached",
                token_cache={"v1:tokenx|text:cached": 1},
                metadata={"mastra": {"sealedAt": 1714555815000}},
            ),
            Part(type="custom-thing", args={"anything": [True, None, 1.5]}),
        ],
    )


def make_thread(id: str, resource_id: str | None = "r1", seconds: float = 0, **metadata: Any) -> Thread:
    return Thread(
        id=id,
        resource_id=resource_id,
        created_at=at(seconds),
        updated_at=at(seconds + 1),
        title=f"thread {id}",
        metadata=dict(metadata),
    )


def make_chunk(id: str, seconds: float) -> BufferedChunk:
    return BufferedChunk(
        id=id,
        cycle_id=f"cycle-{id}",
        observations=f"* 🔴 (09:{int(seconds):02d}) fact {id}",
        token_count=7,
        message_ids=[f"m-{id}-1", f"m-{id}-2"],
        message_tokens=120,
        last_observed_at=at(seconds + 0.001),
        created_at=at(seconds + 5),
        suggested_continuation="carry on",
        current_task=None,
        thread_title="Trip ✈",
    )


def make_record(
    id: str,
    generation: int,
    *,
    scope: str = "thread",
    thread_id: str | None = "t1",
    resource_id: str | None = "r1",
    superseded_by: str | None = None,
    seconds: float | None = None,
    observations: str = "",
) -> ObservationRecord:
    created = at(100 * generation if seconds is None else seconds)
    return ObservationRecord(
        id=id,
        scope=scope,
        thread_id=thread_id,
        resource_id=resource_id,
        created_at=created,
        updated_at=created + timedelta(seconds=3),
        origin_type="initial" if generation == 0 else "reflection",
        generation_count=generation,
        active_observations=observations or f"Date: May 1, 2024\n* 🔴 (09:30) generation {generation}",
        observation_token_count=11 * (generation + 1),
        last_observed_at=created - timedelta(seconds=1),
        observed_message_ids=[f"m{generation}a", f"m{generation}b"],
        observed_timezone="Europe/Paris",
        total_tokens_observed=1000 + generation,
        pending_message_tokens=42,
        buffered_chunks=[make_chunk(f"{id}-c1", 10), make_chunk(f"{id}-c2", 20)],
        buffered_reflection="condensed ✂",
        buffered_reflection_tokens=5,
        buffered_reflection_input_tokens=50,
        reflected_observation_line_count=3,
        last_buffered_at_tokens=300,
        last_buffered_at_time=created + timedelta(milliseconds=1),
        config={"observation": {"messageTokens": 30000, "bufferTokens": 0.2}, "_overrides": {}},
        metadata={"note": "ok", "blob": b"\x00\x01"},
        superseded_by=superseded_by,
    )
