"""Temporal-gap markers: buckets at every boundary, marker messages, storage order, transcript."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omlab.engine.messages import Message
from omlab.engine.temporal_markers import (
    gap_marker,
    gap_text,
    insert_temporal_markers,
    is_temporal_marker,
    marker_id,
    observer_view,
)
from omlab.engine.transcript import format_history
from omlab.storage import InMemoryStorage

T0 = datetime(2025, 3, 4, 12, 5, tzinfo=UTC)
S = timedelta(seconds=1)
M = timedelta(minutes=1)
H = timedelta(hours=1)
D = timedelta(days=1)


@pytest.mark.parametrize(
    ("gap", "text"),
    [
        (10 * M - S, None),
        (10 * M, "15 minutes later"),
        (22.5 * M - S, "15 minutes later"),
        (22.5 * M, "30 minutes later"),
        (45 * M - S, "30 minutes later"),
        (45 * M, "1 hour later"),
        (90 * M - S, "1 hour later"),
        (90 * M, "2 hours later"),
        (2.5 * H - S, "2 hours later"),
        (2.5 * H, "3 hours later"),
        (4.5 * H - S, "3 hours later"),
        (4.5 * H, "6 hours later"),
        (9 * H - S, "6 hours later"),
        (9 * H, "12 hours later"),
        (18 * H - S, "12 hours later"),
        (18 * H, "1 day later"),
        (36 * H - S, "1 day later"),
        (36 * H, "2 days later"),
        (2.5 * D - S, "2 days later"),
        (2.5 * D, "3 days later"),
        (5.5 * D, "6 days later"),
        (6.5 * D - S, "6 days later"),
        (6.5 * D, "1 week later"),
        (10.5 * D - S, "1 week later"),
        (10.5 * D, "2 weeks later"),
        (17.5 * D - S, "2 weeks later"),
        (17.5 * D, "3 weeks later"),
        (100 * D, "14 weeks later"),  # 100 / 7 = 14.29
    ],
)
def test_gap_buckets_at_every_boundary(gap, text):
    assert gap_text(gap) == text


def test_gap_marker_text_and_timestamp():
    assert gap_marker(T0 - 2 * H, T0) == "[2 hours later — Tue Mar 4 2025, 12:05 UTC]"
    summer = datetime(2025, 7, 1, 14, 5, tzinfo=UTC)
    assert gap_marker(summer - 3 * D, summer, timezone="Europe/Lisbon") == "[3 days later — Tue Jul 1 2025, 15:05 WEST]"
    assert gap_marker(T0, T0 + 9 * M) is None
    assert gap_marker(T0 + 2 * H, T0) is None  # time going backwards is no gap


def _bucket_minutes(text: str) -> float:
    number, unit = text.split()[:2]
    return (
        int(number)
        * {"minutes": 1, "hour": 60, "hours": 60, "day": 1440, "days": 1440, "week": 10080, "weeks": 10080}[unit]
    )


@given(st.lists(st.integers(min_value=10 * 60, max_value=400 * 86_400), min_size=2, max_size=8))
def test_buckets_grow_with_the_gap_and_stay_near_it(seconds):
    buckets = [_bucket_minutes(gap_text(timedelta(seconds=s))) for s in sorted(seconds)]
    assert buckets == sorted(buckets)
    for s in seconds:
        minutes = s / 60
        assert 0.5 * minutes <= _bucket_minutes(gap_text(timedelta(seconds=s))) <= 1.5 * minutes + 5


def _message(id: str, role: str, at: datetime, text: str = "hi") -> Message:
    return Message.of(role, text, at, id=id, thread_id="t1", resource_id="u1")


def test_markers_go_before_user_messages_after_a_long_gap():
    u1 = _message("u1", "user", T0)
    a1 = _message("a1", "assistant", T0 + 5 * H)  # assistants get no marker, however long the gap
    u2 = _message("u2", "user", T0 + 5 * H + 3 * M)  # 3 minutes: no marker
    u3 = _message("u3", "user", T0 + 8 * H)
    out = insert_temporal_markers([u1, a1, u2, u3], previous_message=_message("old", "assistant", T0 - 2 * D))
    assert [m.id for m in out] == ["__temporal_u1", "u1", "a1", "u2", "__temporal_u3", "u3"]
    marker = out[4]
    assert marker.role == "user" and marker.thread_id == "t1" and marker.resource_id == "u1"
    assert marker.text == "<system-reminder>[3 hours later — Tue Mar 4 2025, 20:05 UTC]</system-reminder>"
    assert marker.created_at == u3.created_at - timedelta(milliseconds=1)
    assert marker.metadata["omlab"]["temporalMarker"] is True
    assert marker.metadata["omlab"]["previousMessageId"] == "u2"
    assert out[0].text.startswith("<system-reminder>[2 days later")


def test_inserting_twice_adds_nothing_and_markers_are_not_previous_messages():
    messages = [_message("u1", "user", T0), _message("u2", "user", T0 + H)]
    once = insert_temporal_markers(messages)
    assert [m.id for m in once] == ["u1", "__temporal_u2", "u2"]
    twice = insert_temporal_markers(once)
    assert [m.id for m in twice] == ["u1", "__temporal_u2", "u2"]
    assert insert_temporal_markers([]) == []
    assert [m.id for m in insert_temporal_markers([_message("u9", "user", T0)])] == ["u9"]  # no previous message


def test_is_temporal_marker_by_id_or_metadata():
    assert is_temporal_marker(_message(marker_id("x"), "user", T0))
    tagged = _message("custom", "user", T0)
    tagged.metadata = {"omlab": {"temporalMarker": True}}
    assert is_temporal_marker(tagged)
    assert not is_temporal_marker(_message("u1", "user", T0))


def test_storage_keeps_the_marker_right_before_its_message():
    storage = InMemoryStorage()
    batch = insert_temporal_markers(
        [_message("a", "user", T0), _message("b", "assistant", T0 + M), _message("c", "user", T0 + 2 * H)]
    )
    storage.save_messages(list(reversed(batch)))
    assert [m.id for m in storage.get_messages("t1")] == ["a", "b", "__temporal_c", "c"]


def test_the_observer_reads_markers_as_system_reminders():
    batch = insert_temporal_markers(
        [_message("a", "user", T0, "Hello"), _message("c", "user", T0 + 2 * H, "Back again")]
    )
    transcript = format_history(observer_view(batch))
    assert transcript.split("\n") == [
        "Mar 4 2025:",
        "User (12:05 PM): Hello",
        "System-reminder (2:05 PM): <system-reminder>[2 hours later — Tue Mar 4 2025, 14:05 UTC]</system-reminder>",
        "User: Back again",
    ]
    assert batch[1].role == "user"  # the stored message is untouched


# --- the reference's relative-span wording (issue 20 item 10) ---------------------------------

_MINUTE, _HOUR, _DAY = 60_000, 3_600_000, 86_400_000


@pytest.mark.parametrize(
    ("ms", "expected"),
    [  # formatTemporalGap of @mastra/memory 1.31.0, run with node for each gap
        (9 * _MINUTE, None),
        (10 * _MINUTE, "10 minutes later"),
        (10.5 * _MINUTE, "11 minutes later"),
        (59.5 * _MINUTE, "60 minutes later"),
        (_HOUR, "1 hour later"),
        (2.5 * _HOUR, "2 hours 30 minutes later"),
        (23 * _HOUR + 59 * _MINUTE, "23 hours 59 minutes later"),
        (_DAY, "1 day later"),
        (3 * _DAY + 5 * _HOUR, "3 days 5 hours later"),
        (7 * _DAY, "1 week later"),
        (16 * _DAY + 3 * _HOUR, "2 weeks 2 days later"),
        (30 * _DAY, "1 month later"),
        (45 * _DAY, "1 month 2 weeks later"),
        (365 * _DAY, "1 year later"),
        (800 * _DAY, "2 years 2 months later"),
    ],
)
def test_format_temporal_gap_words_a_span_as_the_reference(ms, expected):
    from omlab.engine.temporal_markers import format_temporal_gap

    assert format_temporal_gap(timedelta(milliseconds=ms)) == expected


def test_reference_markers_use_the_reference_wording_and_timestamp():
    from omlab.engine.temporal_markers import make_marker

    before = Message.of("assistant", "Sure.", datetime(2025, 3, 4, 11, 35, tzinfo=UTC))
    after = Message.of("user", "Back again.", datetime(2025, 3, 4, 14, 5, tzinfo=UTC))
    reference = make_marker(before, after, reference=True)
    assert reference.text == "<system-reminder>2 hours 30 minutes later — 03/04/2025, 2:05 PM UTC</system-reminder>"
    omlab = make_marker(before, after)
    assert omlab.text == "<system-reminder>[3 hours later — Tue Mar 4 2025, 14:05 UTC]</system-reminder>"
