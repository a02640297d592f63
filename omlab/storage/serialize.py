"""Lossless conversion of engine state to JSON-safe dicts and back.

Every ``*_to_dict`` function returns a dict that ``json.dumps`` accepts (strict JSON: no NaN), and
the matching ``*_from_dict`` rebuilds an equal object. Free-form values (tool ``args``/``result``,
``metadata``, ``token_cache``, ``config``, ``Part.data``) may hold JSON values plus a few Python
types that JSON lacks; those are written as single-key *marker* dicts:

====================  =====================================================
Python value          JSON form
====================  =====================================================
``bytes``             ``{"$bytes": "<base64>"}`` (``bytearray`` comes back as ``bytes``)
``datetime``          ``{"$datetime": "<ISO 8601>"}`` (the UTC offset is kept)
``tuple``             ``{"$tuple": [...]}``
NaN / ±infinity       ``{"$float": "nan" | "inf" | "-inf"}``
a dict that looks     ``{"$dict": {...}}`` (so user data can never be mistaken for a marker)
like a marker
====================  =====================================================

Dataclass datetime fields are ISO strings with their offset. Aware datetimes come back with a fixed
offset ``tzinfo`` (a ``ZoneInfo`` becomes ``timezone(timedelta(...))``: the same instant, not the
same zone object); naive datetimes stay naive. Anything else (sets, custom objects, non-string dict
keys) raises ``TypeError`` naming where it was found, rather than being silently altered.
"""

from __future__ import annotations

import base64
import json
import math
from datetime import datetime
from typing import Any

from omlab.engine.messages import Message, Part
from omlab.engine.record import BufferedChunk, ObservationRecord, Thread

__all__ = [
    "chunk_from_dict",
    "chunk_to_dict",
    "decode_value",
    "encode_value",
    "message_from_dict",
    "message_to_dict",
    "part_from_dict",
    "part_to_dict",
    "record_from_dict",
    "record_to_dict",
    "thread_from_dict",
    "thread_to_dict",
]

_BYTES = "$bytes"
_DATETIME = "$datetime"
_TUPLE = "$tuple"
_FLOAT = "$float"
_DICT = "$dict"
_MARKERS = frozenset({_BYTES, _DATETIME, _TUPLE, _FLOAT, _DICT})
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


# --------------------------------------------------------------------------- free-form values


def encode_value(value: Any, where: str = "value") -> Any:
    """Return a JSON-safe form of ``value`` (see the module docstring for the markers).

    ``where`` names the location for error messages, e.g. ``"Part.args"``.
    """
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return {_FLOAT: "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, dict):
        encoded: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(
                    f"cannot serialize {where}: dict key {key!r} is a {type(key).__name__}, JSON keys must be strings"
                )
            encoded[key] = encode_value(item, f"{where}[{key!r}]")
        if len(encoded) == 1 and next(iter(encoded)) in _MARKERS:
            return {_DICT: encoded}
        return encoded
    if isinstance(value, list):
        return [encode_value(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, tuple):
        return {_TUPLE: [encode_value(item, f"{where}[{i}]") for i, item in enumerate(value)]}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {_BYTES: base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, datetime):
        return {_DATETIME: value.isoformat()}
    raise TypeError(
        f"cannot serialize {where}: values of type {type(value).__name__} are not supported "
        "(use JSON values, bytes, datetimes or tuples)"
    )


def decode_value(value: Any) -> Any:
    """Inverse of :func:`encode_value`."""
    if isinstance(value, dict):
        if len(value) == 1:
            ((key, inner),) = value.items()
            if key in _MARKERS:
                return _decode_marker(key, inner)
        return {key: decode_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode_value(item) for item in value]
    return value


def _decode_marker(marker: str, inner: Any) -> Any:
    if marker == _BYTES:
        return base64.b64decode(inner)
    if marker == _DATETIME:
        return datetime.fromisoformat(inner)
    if marker == _TUPLE:
        return tuple(decode_value(item) for item in inner)
    if marker == _FLOAT:
        return _NON_FINITE[inner]
    # _DICT: an escaped user dict whose only key happens to be a marker name
    return {key: decode_value(item) for key, item in inner.items()}


# --------------------------------------------------------------------------- helpers


def _dt(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _parse_dt(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _check_keys(data: dict[str, Any], allowed: frozenset[str], kind: str) -> None:
    unknown = data.keys() - allowed
    if unknown:
        raise ValueError(
            f"unknown field(s) {', '.join(sorted(map(repr, unknown)))} in {kind} payload "
            f"(known: {', '.join(sorted(allowed))})"
        )


def _require(data: dict[str, Any], kind: str, *names: str) -> None:
    missing = [name for name in names if name not in data]
    if missing:
        raise ValueError(f"{kind} payload is missing field(s) {', '.join(map(repr, missing))}")


# --------------------------------------------------------------------------- Part

# Part fields that hold plain scalars (str/int or None) and are written as they are.
_PART_SCALARS = (
    "text",
    "tool_call_id",
    "tool_name",
    "state",
    "error_text",
    "mime_type",
    "filename",
    "width",
    "height",
    "detail",
    "size_bytes",
)
_PART_KEYS = frozenset(("type", *_PART_SCALARS, "args", "result", "data", "created_at", "metadata", "token_cache"))


def part_to_dict(part: Part) -> dict[str, Any]:
    """A JSON-safe dict of ``part``. Fields left at their default (None / empty) are omitted."""
    out: dict[str, Any] = {"type": part.type}
    for name in _PART_SCALARS:
        value = getattr(part, name)
        if value is not None:
            out[name] = value
    # args/result/data are free-form: None is a legitimate value, but it is also the default
    for name in ("args", "result", "data"):
        value = getattr(part, name)
        if value is not None:
            out[name] = encode_value(value, f"Part.{name}")
    if part.created_at is not None:
        out["created_at"] = part.created_at.isoformat()
    if part.metadata:
        out["metadata"] = encode_value(part.metadata, "Part.metadata")
    if part.token_cache:
        out["token_cache"] = encode_value(part.token_cache, "Part.token_cache")
    return out


def part_from_dict(data: dict[str, Any]) -> Part:
    """Rebuild a :class:`Part` from :func:`part_to_dict` output."""
    _check_keys(data, _PART_KEYS, "Part")
    _require(data, "Part", "type")
    part = Part(type=data["type"])
    for name in _PART_SCALARS:
        if name in data:
            setattr(part, name, data[name])
    for name in ("args", "result", "data"):
        if name in data:
            setattr(part, name, decode_value(data[name]))
    if "created_at" in data:
        part.created_at = _parse_dt(data["created_at"])
    if "metadata" in data:
        part.metadata = decode_value(data["metadata"])
    if "token_cache" in data:
        part.token_cache = decode_value(data["token_cache"])
    return part


# --------------------------------------------------------------------------- Message

_MESSAGE_KEYS = frozenset(
    ("id", "role", "parts", "created_at", "thread_id", "resource_id", "metadata", "token_cache", "name")
)


def message_to_dict(message: Message) -> dict[str, Any]:
    """A JSON-safe dict of ``message`` (identity fields always present)."""
    out: dict[str, Any] = {
        "id": message.id,
        "role": message.role,
        "created_at": message.created_at.isoformat(),
        "thread_id": message.thread_id,
        "resource_id": message.resource_id,
        "parts": [part_to_dict(part) for part in message.parts],
    }
    if message.name is not None:
        out["name"] = message.name
    if message.metadata:
        out["metadata"] = encode_value(message.metadata, f"Message {message.id!r} metadata")
    if message.token_cache:
        out["token_cache"] = encode_value(message.token_cache, f"Message {message.id!r} token_cache")
    return out


def message_from_dict(data: dict[str, Any]) -> Message:
    """Rebuild a :class:`Message` from :func:`message_to_dict` output."""
    _check_keys(data, _MESSAGE_KEYS, "Message")
    _require(data, "Message", "id", "role", "created_at")
    return Message(
        id=data["id"],
        role=data["role"],
        parts=[part_from_dict(part) for part in data.get("parts", [])],
        created_at=datetime.fromisoformat(data["created_at"]),
        thread_id=data.get("thread_id"),
        resource_id=data.get("resource_id"),
        metadata=decode_value(data.get("metadata", {})),
        token_cache=decode_value(data.get("token_cache", {})),
        name=data.get("name"),
    )


# --------------------------------------------------------------------------- Thread

_THREAD_KEYS = frozenset(("id", "resource_id", "created_at", "updated_at", "title", "metadata"))


def thread_to_dict(thread: Thread) -> dict[str, Any]:
    """A JSON-safe dict of ``thread`` (its OM state lives in ``metadata["om"]``)."""
    return {
        "id": thread.id,
        "resource_id": thread.resource_id,
        "created_at": thread.created_at.isoformat(),
        "updated_at": thread.updated_at.isoformat(),
        "title": thread.title,
        "metadata": encode_value(thread.metadata, f"Thread {thread.id!r} metadata"),
    }


def thread_from_dict(data: dict[str, Any]) -> Thread:
    """Rebuild a :class:`Thread` from :func:`thread_to_dict` output."""
    _check_keys(data, _THREAD_KEYS, "Thread")
    _require(data, "Thread", "id", "created_at", "updated_at")
    return Thread(
        id=data["id"],
        resource_id=data.get("resource_id"),
        created_at=datetime.fromisoformat(data["created_at"]),
        updated_at=datetime.fromisoformat(data["updated_at"]),
        title=data.get("title"),
        metadata=decode_value(data.get("metadata", {})),
    )


# --------------------------------------------------------------------------- BufferedChunk

_CHUNK_KEYS = frozenset(
    (
        "id",
        "cycle_id",
        "observations",
        "token_count",
        "message_ids",
        "message_tokens",
        "last_observed_at",
        "created_at",
        "suggested_continuation",
        "current_task",
        "thread_title",
    )
)


def chunk_to_dict(chunk: BufferedChunk) -> dict[str, Any]:
    """A JSON-safe dict of a buffered observation chunk."""
    return {
        "id": chunk.id,
        "cycle_id": chunk.cycle_id,
        "observations": chunk.observations,
        "token_count": chunk.token_count,
        "message_ids": list(chunk.message_ids),
        "message_tokens": chunk.message_tokens,
        "last_observed_at": chunk.last_observed_at.isoformat(),
        "created_at": chunk.created_at.isoformat(),
        "suggested_continuation": chunk.suggested_continuation,
        "current_task": chunk.current_task,
        "thread_title": chunk.thread_title,
    }


#: the camelCase spellings other tools (the reference engine) write for chunk fields
_CHUNK_CAMEL = {
    "cycleId": "cycle_id",
    "tokenCount": "token_count",
    "messageIds": "message_ids",
    "messageTokens": "message_tokens",
    "lastObservedAt": "last_observed_at",
    "createdAt": "created_at",
    "suggestedContinuation": "suggested_continuation",
    "currentTask": "current_task",
    "threadTitle": "thread_title",
}


def _loaded_json(value: Any) -> Any:
    """A value that may have been stored as JSON text, decoded (other text is kept as is)."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{", "n"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def chunks_from_stored(value: Any) -> list[BufferedChunk]:
    """A record's ``buffered_chunks`` in any shape a tool may have stored: a list, ``null``, JSON
    text of either, or a single chunk object. Anything else (``{}``, text that is not JSON, a
    number) is no chunk, as the reference reads any stored value that is not an array."""
    value = _loaded_json(value)
    if isinstance(value, dict) and value:
        value = [value]
    if not isinstance(value, list):
        return []
    return [chunk_from_dict(_loaded_json(chunk)) for chunk in value]


def _message_ids(value: Any) -> list[str]:
    value = _loaded_json(value)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(mid) for mid in value]


def chunk_from_dict(data: dict[str, Any]) -> BufferedChunk:
    """Rebuild a :class:`BufferedChunk` from :func:`chunk_to_dict` output (camelCase keys, as the
    reference stores them, are read too)."""
    if not isinstance(data, dict):
        raise TypeError(f"a buffered chunk must be an object, got {type(data).__name__}")
    data = {_CHUNK_CAMEL.get(key, key): value for key, value in data.items()}
    _check_keys(data, _CHUNK_KEYS, "BufferedChunk")
    _require(
        data,
        "BufferedChunk",
        "id",
        "cycle_id",
        "observations",
        "token_count",
        "message_ids",
        "message_tokens",
        "last_observed_at",
        "created_at",
    )
    return BufferedChunk(
        id=data["id"],
        cycle_id=data["cycle_id"],
        observations=data["observations"],
        token_count=data["token_count"],
        message_ids=_message_ids(data["message_ids"]),
        message_tokens=data["message_tokens"],
        last_observed_at=datetime.fromisoformat(data["last_observed_at"]),
        created_at=datetime.fromisoformat(data["created_at"]),
        suggested_continuation=data.get("suggested_continuation"),
        current_task=data.get("current_task"),
        thread_title=data.get("thread_title"),
    )


# --------------------------------------------------------------------------- ObservationRecord

# Record fields copied as they are (str / int / None).
_RECORD_SCALARS = (
    "id",
    "scope",
    "thread_id",
    "resource_id",
    "origin_type",
    "generation_count",
    "active_observations",
    "observation_token_count",
    "observed_timezone",
    "total_tokens_observed",
    "pending_message_tokens",
    "buffered_reflection",
    "buffered_reflection_tokens",
    "buffered_reflection_input_tokens",
    "reflected_observation_line_count",
    "last_buffered_at_tokens",
    "superseded_by",
)
_RECORD_DATETIMES = ("created_at", "updated_at", "last_observed_at", "last_buffered_at_time")
_RECORD_KEYS = frozenset(
    (*_RECORD_SCALARS, *_RECORD_DATETIMES, "observed_message_ids", "buffered_chunks", "config", "metadata")
)


def record_to_dict(record: ObservationRecord) -> dict[str, Any]:
    """A JSON-safe dict of one observation-record generation, buffered chunks included."""
    out: dict[str, Any] = {name: getattr(record, name) for name in _RECORD_SCALARS}
    for name in _RECORD_DATETIMES:
        out[name] = _dt(getattr(record, name))
    out["observed_message_ids"] = list(record.observed_message_ids)
    out["buffered_chunks"] = [chunk_to_dict(chunk) for chunk in record.buffered_chunks]
    out["config"] = encode_value(record.config, f"ObservationRecord {record.id!r} config")
    out["metadata"] = encode_value(record.metadata, f"ObservationRecord {record.id!r} metadata")
    return out


def record_from_dict(data: dict[str, Any]) -> ObservationRecord:
    """Rebuild an :class:`ObservationRecord` from :func:`record_to_dict` output.

    Fields missing from ``data`` take the dataclass default, so payloads written before a field
    was added still load.
    """
    _check_keys(data, _RECORD_KEYS, "ObservationRecord")
    _require(data, "ObservationRecord", "id", "scope", "created_at", "updated_at")
    kwargs: dict[str, Any] = {name: data[name] for name in _RECORD_SCALARS if name in data}
    kwargs.setdefault("thread_id", None)
    kwargs.setdefault("resource_id", None)
    for name in _RECORD_DATETIMES:
        if name in data:
            kwargs[name] = _parse_dt(data[name])
    if "observed_message_ids" in data:
        kwargs["observed_message_ids"] = list(data["observed_message_ids"])
    if "buffered_chunks" in data:
        kwargs["buffered_chunks"] = chunks_from_stored(data["buffered_chunks"])
    if "config" in data:
        kwargs["config"] = decode_value(data["config"])
    if "metadata" in data:
        kwargs["metadata"] = decode_value(data["metadata"])
    return ObservationRecord(**kwargs)
