"""Column values as both dialects return them, made uniform: JSON columns and timestamps."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from omlab.bench.datasets.mastra.jsonb import decode_jsonb


def json_value(value: Any) -> Any:
    """A JSON column's value: text (SQLite), SQLite JSONB bytes, or what psycopg decoded already."""
    if value is None or isinstance(value, (dict, list, int, float, bool)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return decode_jsonb(bytes(value))
    if isinstance(value, str):
        return json.loads(value) if value else None
    raise TypeError(f"not a JSON column value: {type(value).__name__}")


def time_value(row: dict[str, Any], column: str) -> datetime | None:
    """A timestamp column as an aware UTC datetime (PostgreSQL's ``<column>Z`` twin preferred)."""
    value = row.get(f"{column}Z") if row.get(f"{column}Z") is not None else row.get(column)
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    parsed = datetime.fromisoformat(str(value))
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def bool_value(value: Any) -> bool:
    """SQLite's 0/1 or PostgreSQL's boolean."""
    return bool(value)
