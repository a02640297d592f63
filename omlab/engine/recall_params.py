"""The ``recall`` tool's parameters: names (camelCase or snake_case), types and ranges.

A bad parameter raises :class:`RecallError`; the tool turns it into ``{"error": "…"}`` so the agent
can correct itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

_PARAMETERS = (
    "mode",
    "query",
    "cursor",
    "threadId",
    "anchor",
    "page",
    "limit",
    "detail",
    "partType",
    "toolName",
    "partIndex",
    "before",
    "after",
)
_SNAKE_ALIASES = {
    "thread_id": "threadId",
    "part_type": "partType",
    "tool_name": "toolName",
    "part_index": "partIndex",
}


class RecallError(ValueError):
    """A recall request the tool cannot answer; ``fields`` go into the error reply."""

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.fields = fields


def normalise_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The given parameters by camelCase name, ``None`` values dropped; unknown names refused."""
    given: dict[str, Any] = {}
    for key, value in params.items():
        name = _SNAKE_ALIASES.get(key, key)
        if name not in _PARAMETERS:
            raise RecallError(f"unknown parameter {key!r}; recall takes {', '.join(_PARAMETERS)}")
        if value is None:
            continue
        given[name] = value
    return given


def choice_param(p: Mapping[str, Any], name: str, allowed: Sequence[str], default: Any) -> Any:
    value = p.get(name, default)
    if value is default:
        return value
    if value not in allowed:
        raise RecallError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def integer_param(p: Mapping[str, Any], name: str, default: int | None, *, minimum: int | None = None) -> Any:
    value = p.get(name, default)
    if value is default:
        return value
    if (
        isinstance(value, str)
        and re.fullmatch(r"\s*-?[0-9]+\s*", value)
        or isinstance(value, float)
        and value.is_integer()
    ):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecallError(f"{name} must be an integer; got {value!r}")
    if minimum is not None and value < minimum:
        raise RecallError(f"{name} must be >= {minimum}; got {value}")
    return value


def string_param(p: Mapping[str, Any], name: str) -> str | None:
    value = p.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise RecallError(f"{name} must be a string; got {value!r}")
    return value.strip() or None


def date_param(p: Mapping[str, Any], name: str) -> datetime | None:
    value = string_param(p, name)
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise RecallError(
            f"{name}: {value!r} is not an ISO 8601 date (e.g. 2026-03-15 or 2026-03-10T00:00:00Z)"
        ) from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
