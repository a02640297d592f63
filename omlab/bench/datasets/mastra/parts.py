"""Mastra message parts (``content.parts`` of a stored message, format 2) as engine parts.

Mastra stores AI-SDK message parts. Each known type maps onto :class:`omlab.engine.messages.Part`
field by field; every field that has no engine field (``providerMetadata``, a tool call's
``step``, a reasoning part's ``details``, ...) is kept in ``Part.metadata["mastra"]``, so nothing a
part carries is lost but Mastra's token-count caches (``providerMetadata.mastra.tokenEstimate``;
omlab counts tokens itself). Types omlab has no field mapping for (``step-start``, ``source``, types a
later Mastra adds) are kept as parts of their own type with their fields in that same place, and
:func:`part_kind` reports them as ``unknown`` so an import summary counts them.

``data-om-*`` parts are what production's Observational Memory wrote (markers). They are mapped
like any ``data-*`` part (payload in ``metadata["data"]``) but :func:`replay_parts` leaves them out:
a replay produces its own markers, and production's are read as records
(:mod:`omlab.bench.datasets.mastra.records`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from omlab.engine.messages import Part

KNOWN_TYPES = ("text", "reasoning", "tool-invocation", "file", "image")
"""Part types with a field-by-field mapping (``data-*`` parts are known too)."""

OM_MARKER_PREFIX = "data-om-"


def part_kind(part_type: str) -> str:
    """How an import summary groups a part type: ``known``, ``data``, ``om-marker`` or ``unknown``."""
    if part_type.startswith(OM_MARKER_PREFIX):
        return "om-marker"
    if part_type.startswith("data-"):
        return "data"
    return "known" if part_type in KNOWN_TYPES else "unknown"


def created_at_of(value: Any) -> datetime | None:
    """A part's ``createdAt`` (epoch milliseconds or ISO text) as an aware UTC datetime."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def _rest(raw: Mapping[str, Any], used: Iterable[str]) -> dict[str, Any]:
    taken = {"type", "createdAt", *used}
    rest = {key: value for key, value in raw.items() if key not in taken}
    provider = rest.get("providerMetadata")
    if isinstance(provider, Mapping) and isinstance(provider.get("mastra"), Mapping):
        mastra = {k: v for k, v in provider["mastra"].items() if k != "tokenEstimate"}
        provider = {**provider, "mastra": mastra} if mastra else {k: v for k, v in provider.items() if k != "mastra"}
        if provider:
            rest["providerMetadata"] = provider
        else:
            del rest["providerMetadata"]
    return rest


def _with_rest(part: Part, rest: dict[str, Any]) -> Part:
    if rest:
        part.metadata["mastra"] = rest
    return part


def to_part(raw: Mapping[str, Any]) -> Part:
    """One stored Mastra part as an engine part (fields without an engine field in ``metadata["mastra"]``).

    Raises:
        TypeError: the part is not an object with a string ``type``.
    """
    if not isinstance(raw, Mapping) or not isinstance(raw.get("type"), str):
        raise TypeError(f"a part must be an object with a string 'type', got {raw!r}")
    kind = raw["type"]
    created = created_at_of(raw.get("createdAt"))
    if kind == "text":
        return _with_rest(Part(type="text", text=raw.get("text"), created_at=created), _rest(raw, ("text",)))
    if kind == "reasoning":
        text = raw.get("reasoning", raw.get("text"))
        used = ("reasoning",) if "reasoning" in raw else ("text",)
        return _with_rest(Part(type="reasoning", text=text, created_at=created), _rest(raw, used))
    if kind == "tool-invocation" and isinstance(raw.get("toolInvocation"), Mapping):
        call = dict(raw["toolInvocation"])
        part = Part(
            type="tool-invocation",
            tool_call_id=call.pop("toolCallId", None),
            tool_name=call.pop("toolName", None),
            args=call.pop("args", None),
            result=call.pop("result", None),
            state=call.pop("state", None),
            error_text=call.pop("errorText", None),
            created_at=created,
        )
        rest = _rest(raw, ("toolInvocation",))
        if call:
            rest["toolInvocation"] = call
        return _with_rest(part, rest)
    if kind in ("file", "image"):
        data_key = next((k for k in ("data", "url", "image") if k in raw), None)
        mime_key = next((k for k in ("mimeType", "mediaType") if k in raw), None)
        part = Part(
            type=kind,
            data=raw.get(data_key) if data_key else None,
            mime_type=raw.get(mime_key) if mime_key else None,
            filename=raw.get("filename"),
            created_at=created,
        )
        rest = _rest(raw, tuple(k for k in (data_key, mime_key, "filename") if k))
        if data_key and data_key != "data":
            rest["dataField"] = data_key
        if mime_key and mime_key != "mimeType":
            rest["mimeField"] = mime_key
        return _with_rest(part, rest)
    part = Part(type=kind, created_at=created)
    if kind.startswith("data-"):
        part.metadata["data"] = raw.get("data")
        return _with_rest(part, _rest(raw, ("data",)))
    return _with_rest(part, _rest(raw, ()))


def to_raw(part: Part) -> dict[str, Any]:
    """The inverse of :func:`to_part` for parts it made (``createdAt`` as epoch milliseconds)."""
    rest = dict(part.metadata.get("mastra", {}))
    raw: dict[str, Any] = {"type": part.type}
    if part.type in ("text", "reasoning"):
        raw["reasoning" if part.type == "reasoning" and "text" not in rest else "text"] = part.text
    elif part.type == "tool-invocation" and part.tool_name is not None:
        call = {
            "state": part.state,
            "toolCallId": part.tool_call_id,
            "toolName": part.tool_name,
            "args": part.args,
            "result": part.result,
            "errorText": part.error_text,
        }
        call = {k: v for k, v in call.items() if v is not None or k in ("args",)}
        call.update(rest.pop("toolInvocation", {}))
        raw["toolInvocation"] = call
    elif part.type in ("file", "image"):
        data_key, mime_key = rest.pop("dataField", "data"), rest.pop("mimeField", "mimeType")
        for key, value in ((data_key, part.data), (mime_key, part.mime_type), ("filename", part.filename)):
            if value is not None:
                raw[key] = value
    elif part.type.startswith("data-"):
        raw["data"] = part.metadata.get("data")
    raw.update(rest)
    if part.created_at is not None:
        raw["createdAt"] = round(part.created_at.timestamp() * 1000)
    return raw


def replay_parts(parts: Iterable[Mapping[str, Any]]) -> list[Part]:
    """Engine parts for a replay: every part but production's ``data-om-*`` markers."""
    return [to_part(raw) for raw in parts if not str(raw.get("type", "")).startswith(OM_MARKER_PREFIX)]
