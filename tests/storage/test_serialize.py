"""Lossless JSON conversion of parts, messages, threads, chunks and records."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.engine.messages import Message, Part
from omlab.engine.record import BufferedChunk, ObservationRecord, Thread
from omlab.storage.serialize import (
    chunk_from_dict,
    chunk_to_dict,
    decode_value,
    encode_value,
    message_from_dict,
    message_to_dict,
    part_from_dict,
    part_to_dict,
    record_from_dict,
    record_to_dict,
    thread_from_dict,
    thread_to_dict,
)

from .samples import PNG_BYTES, make_record, make_thread, rich_message, snapshot


def through_json(data: dict) -> dict:
    """What comes back after strict JSON text (no NaN) — what the stores actually keep."""
    return json.loads(json.dumps(data, allow_nan=False))


# ----------------------------------------------------------------- strategies

offsets = st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))])
# away from year 1 / 9999 so converting to UTC cannot overflow
moments = {"min_value": datetime(2, 1, 1), "max_value": datetime(9998, 12, 31)}
aware_datetimes = st.datetimes(timezones=offsets, **moments)
any_datetimes = aware_datetimes | st.datetimes(**moments)
marker_keys = st.sampled_from(["$bytes", "$datetime", "$tuple", "$float", "$dict"])
leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(max_size=20)
    | any_datetimes
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=8) | marker_keys, inner, max_size=4)
    ),
    max_leaves=8,
)
json_dicts = st.dictionaries(st.text(max_size=8) | marker_keys, values, max_size=4)
opt_text = st.none() | st.text(max_size=30)
opt_int = st.none() | st.integers(min_value=0, max_value=10**9)

parts = st.builds(
    Part,
    type=st.sampled_from(["text", "tool-invocation", "reasoning", "image", "file", "data-om-x", "other"]),
    text=opt_text,
    tool_call_id=opt_text,
    tool_name=opt_text,
    args=values,
    result=values,
    state=st.none() | st.sampled_from(["call", "result", "output-error"]),
    error_text=opt_text,
    data=st.none() | st.binary(max_size=64) | st.text(max_size=30),
    mime_type=opt_text,
    filename=opt_text,
    width=opt_int,
    height=opt_int,
    detail=opt_text,
    size_bytes=opt_int,
    created_at=st.none() | any_datetimes,
    metadata=json_dicts,
    token_cache=st.dictionaries(st.text(max_size=8), json_dicts, max_size=2),
)
ids = st.text(min_size=1, max_size=20)
messages = st.builds(
    Message,
    id=ids,
    role=st.sampled_from(["user", "assistant", "system", "tool"]),
    parts=st.lists(parts, max_size=4),
    created_at=aware_datetimes,
    thread_id=st.none() | ids,
    resource_id=st.none() | ids,
    metadata=json_dicts,
    token_cache=st.dictionaries(st.text(max_size=8), json_dicts, max_size=2),
)
threads = st.builds(
    Thread,
    id=ids,
    resource_id=st.none() | ids,
    created_at=aware_datetimes,
    updated_at=aware_datetimes,
    title=opt_text,
    metadata=json_dicts,
)
chunks = st.builds(
    BufferedChunk,
    id=ids,
    cycle_id=ids,
    observations=st.text(),
    token_count=st.integers(0, 10**6),
    message_ids=st.lists(ids, max_size=4),
    message_tokens=st.integers(0, 10**6),
    last_observed_at=aware_datetimes,
    created_at=aware_datetimes,
    suggested_continuation=opt_text,
    current_task=opt_text,
    thread_title=opt_text,
)
records = st.builds(
    ObservationRecord,
    id=ids,
    scope=st.sampled_from(["thread", "resource"]),
    thread_id=st.none() | ids,
    resource_id=st.none() | ids,
    created_at=aware_datetimes,
    updated_at=aware_datetimes,
    origin_type=st.sampled_from(["initial", "reflection"]),
    generation_count=st.integers(0, 1000),
    active_observations=st.text(),
    observation_token_count=st.integers(0, 10**6),
    last_observed_at=st.none() | aware_datetimes,
    observed_message_ids=st.lists(ids, max_size=4),
    observed_timezone=st.sampled_from(["UTC", "Europe/Paris", "America/New_York"]),
    total_tokens_observed=st.integers(0, 10**9),
    pending_message_tokens=st.integers(0, 10**9),
    buffered_chunks=st.lists(chunks, max_size=3),
    buffered_reflection=opt_text,
    buffered_reflection_tokens=st.integers(0, 10**6),
    buffered_reflection_input_tokens=st.integers(0, 10**6),
    reflected_observation_line_count=st.integers(0, 10**4),
    last_buffered_at_tokens=st.integers(0, 10**6),
    last_buffered_at_time=st.none() | aware_datetimes,
    config=json_dicts,
    metadata=json_dicts,
    superseded_by=st.none() | ids,
)


# ----------------------------------------------------------------- round trips (hypothesis)


@given(values)
def test_free_form_values_round_trip_through_strict_json(value):
    assert decode_value(through_json({"v": encode_value(value)})["v"]) == value


@settings(max_examples=150)
@given(parts)
def test_part_round_trip(part):
    assert snapshot(part_from_dict(through_json(part_to_dict(part)))) == snapshot(part)


@settings(max_examples=100)
@given(messages)
def test_message_round_trip(message):
    assert snapshot(message_from_dict(through_json(message_to_dict(message)))) == snapshot(message)


@given(threads)
def test_thread_round_trip(thread):
    assert snapshot(thread_from_dict(through_json(thread_to_dict(thread)))) == snapshot(thread)


@given(chunks)
def test_chunk_round_trip(chunk):
    assert snapshot(chunk_from_dict(through_json(chunk_to_dict(chunk)))) == snapshot(chunk)


@settings(max_examples=60)
@given(records)
def test_record_round_trip(record):
    assert snapshot(record_from_dict(through_json(record_to_dict(record)))) == snapshot(record)


# ----------------------------------------------------------------- exact formats (hand-written)


def test_bytes_become_base64_marker():
    part = Part(type="image", data=b"\x89PNG", mime_type="image/png")
    assert part_to_dict(part) == {"type": "image", "mime_type": "image/png", "data": {"$bytes": "iVBORw=="}}


def test_default_fields_are_omitted_from_parts():
    assert part_to_dict(Part(type="text", text="hi")) == {"type": "text", "text": "hi"}


def test_datetimes_are_iso_with_offset():
    moment = datetime(2024, 5, 1, 9, 30, 15, 123456, tzinfo=UTC)
    message = Message.of("user", "hi", moment, id="m1")
    data = message_to_dict(message)
    assert data["created_at"] == "2024-05-01T09:30:15.123456+00:00"
    assert encode_value(datetime(2024, 1, 2, 3, 4, tzinfo=timezone(timedelta(hours=2)))) == {
        "$datetime": "2024-01-02T03:04:00+02:00"
    }


def test_message_dict_exact_shape():
    message = Message.of("user", "salut 👋", datetime(2024, 1, 1, tzinfo=UTC), id="m1", thread_id="t")
    assert message_to_dict(message) == {
        "id": "m1",
        "role": "user",
        "created_at": "2024-01-01T00:00:00+00:00",
        "thread_id": "t",
        "resource_id": None,
        "parts": [{"type": "text", "text": "salut 👋"}],
    }


def test_markers_for_tuples_and_non_finite_floats():
    assert encode_value((1, "a")) == {"$tuple": [1, "a"]}
    assert encode_value([math.inf, -math.inf]) == [{"$float": "inf"}, {"$float": "-inf"}]
    decoded = decode_value(through_json({"v": encode_value(math.nan)})["v"])
    assert math.isnan(decoded)


def test_user_dict_that_looks_like_a_marker_is_escaped():
    tricky = {"$bytes": "not base64 at all"}
    assert encode_value(tricky) == {"$dict": {"$bytes": "not base64 at all"}}
    assert decode_value(encode_value(tricky)) == tricky
    # two keys cannot be a marker, so they are left alone
    assert encode_value({"$bytes": "x", "y": 1}) == {"$bytes": "x", "y": 1}


def test_zoneinfo_datetimes_keep_the_instant():
    moment = datetime(2024, 7, 1, 12, 0, tzinfo=ZoneInfo("Europe/Paris"))
    back = decode_value(through_json({"v": encode_value(moment)})["v"])
    assert back == moment
    assert back.utcoffset() == timedelta(hours=2)


def test_naive_datetimes_stay_naive():
    naive = datetime(2024, 1, 1, 12, 0)
    part = part_from_dict(through_json(part_to_dict(Part(type="text", created_at=naive))))
    assert part.created_at == naive and part.created_at.tzinfo is None


def test_rich_message_round_trip_keeps_every_field():
    message = rich_message()
    back = message_from_dict(through_json(message_to_dict(message)))
    assert snapshot(back) == snapshot(message)
    image = back.parts[4]
    assert isinstance(image.data, bytes) and image.data == PNG_BYTES
    assert back.parts[2].result["total"] == 2**70
    assert back.parts[7].created_at.utcoffset() == timedelta(hours=2)


def test_record_with_chunks_round_trip_is_exact():
    record = make_record("rec-1", 2, superseded_by="rec-2")
    back = record_from_dict(through_json(record_to_dict(record)))
    assert snapshot(back) == snapshot(record)
    assert back.buffered_chunks[1].id == "rec-1-c2"
    assert back.metadata["blob"] == b"\x00\x01"


def test_thread_om_metadata_round_trip():
    thread = make_thread("t1", om={"currentTask": "book a flight ✈", "lastObservedAt": "2024-05-01T09:00:00Z"})
    back = thread_from_dict(through_json(thread_to_dict(thread)))
    assert back.om == {"currentTask": "book a flight ✈", "lastObservedAt": "2024-05-01T09:00:00Z"}


def test_record_payload_missing_optional_fields_takes_defaults():
    record = record_from_dict(
        {
            "id": "r",
            "scope": "thread",
            "thread_id": "t",
            "created_at": "2024-01-01T00:00:00+00:00",
            "updated_at": "2024-01-01T00:00:00+00:00",
        }
    )
    assert record.generation_count == 0
    assert record.resource_id is None
    assert record.buffered_chunks == [] and record.last_observed_at is None


# ----------------------------------------------------------------- errors


def test_unsupported_values_name_where_they_were_found():
    with pytest.raises(TypeError, match=r"Part\.args\['tags'\].*set"):
        part_to_dict(Part(type="tool-invocation", args={"tags": {"a", "b"}}))
    with pytest.raises(TypeError, match="dict key 1"):
        encode_value({1: "one"}, "Thread 't' metadata")
    record = make_record("rec-x", 0)
    record.config = {"callback": object()}
    with pytest.raises(TypeError, match=r"ObservationRecord 'rec-x' config\['callback'\]"):
        record_to_dict(record)


def test_unknown_and_missing_fields_are_rejected():
    with pytest.raises(ValueError, match="unknown field.*'colour'.*Part"):
        part_from_dict({"type": "text", "colour": "red"})
    with pytest.raises(ValueError, match="Message payload is missing.*'created_at'"):
        message_from_dict({"id": "m", "role": "user"})
    data = record_to_dict(make_record("rec-1", 0))
    data["surprise"] = 1
    with pytest.raises(ValueError, match="'surprise'"):
        record_from_dict(data)
