"""Turning callers' row dicts into checked, typed rows and Arrow batches.

A row is a dict keyed by column name (any subset of the table's columns). Checking happens when a
row is added, so a bad value fails at the call that passed it, with the table, column and value in
the message; building the Arrow batch at flush time then cannot fail. Accepted values per column
kind (None always means NULL):

* ``text``: ``str``; ``error`` and ``notes`` columns have key-shaped substrings redacted;
* ``json``: anything ``json.dumps(default=str)`` can write, or a JSON string; credential keys are
  dropped (:mod:`omlab.bench.results.redact`);
* ``int``: integers (numpy included) and integral floats; not ``bool``;
* ``float``: real numbers (numpy included); not ``bool``;
* ``bool``: ``bool`` or ``numpy.bool_``;
* ``time``: a timezone-aware ``datetime`` (``pandas.Timestamp`` included), unix seconds
  (``int``/``float``), or an ISO-8601 string with an offset or ``Z``. Naive times are refused.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any

import numpy as np
import pyarrow as pa

from omlab.bench.results.redact import redact_text, to_safe_json
from omlab.bench.results.schema import TABLES, Column, arrow_schema

_REDACTED_TEXT_COLUMNS = frozenset({"error", "notes", "response"})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class RowError(ValueError):
    """A row handed to the results writer has an unknown column or a value of the wrong type."""


def _bad(table: str, column: str, value: Any, expected: str) -> RowError:
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return RowError(f"{table}.{column} must be {expected}, got {type(value).__name__} {shown}")


# Each converter tries the exact common type first: ABC isinstance checks are slow at 1M rows.


def _text(table: str, column: str, value: Any) -> str:
    if type(value) is str or isinstance(value, str):
        return value
    raise _bad(table, column, value, "a string")


def _redacted_text(table: str, column: str, value: Any) -> str:
    return redact_text(_text(table, column, value))


def _json(table: str, column: str, value: Any) -> str:
    try:
        return to_safe_json(value)
    except ValueError as error:
        raise RowError(f"{table}.{column} {error}") from None


def _int(table: str, column: str, value: Any) -> int:
    integral = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    if not (integral or (isinstance(value, float) and value.is_integer())):
        raise _bad(table, column, value, "an integer")
    number = int(value)
    if not _INT64_MIN <= number <= _INT64_MAX:
        raise _bad(table, column, value, "a 64-bit integer")
    return number


def _float(table: str, column: str, value: Any) -> float:
    if type(value) is float:
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    raise _bad(table, column, value, "a number")


def _bool(table: str, column: str, value: Any) -> bool:
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise _bad(table, column, value, "a bool")


def _time(table: str, column: str, value: Any) -> datetime:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        if not math.isfinite(value):
            raise _bad(table, column, value, "a finite unix time")
        return datetime.fromtimestamp(float(value), UTC)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise _bad(table, column, value, "an ISO-8601 time") from None
    else:
        raise _bad(table, column, value, "a timezone-aware datetime, unix seconds or ISO-8601 text")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise _bad(table, column, value, "timezone-aware (naive times are ambiguous)")
    return moment


_Converter = Callable[[str, str, Any], Any]
_BY_KIND: Mapping[str, _Converter] = MappingProxyType(
    {
        "text": _text,
        "json": _json,
        "int": _int,
        "float": _float,
        "bool": _bool,
        "time": _time,
    }
)


def _converter(column: Column) -> _Converter:
    if column.kind == "text" and column.name in _REDACTED_TEXT_COLUMNS:
        return _redacted_text
    return _BY_KIND[column.kind]


# Plain dicts (not MappingProxyType) below: they are read once per cell, and private.
_CONVERTERS: dict[str, dict[str, _Converter]] = {
    table: {c.name: _converter(c) for c in columns} for table, columns in TABLES.items()
}
_DEFAULTS: dict[str, dict[str, Any]] = {
    table: {c.name: c.default for c in columns if c.default is not None} for table, columns in TABLES.items()
}
_REQUIRED: dict[str, tuple[str, ...]] = {
    table: tuple(c.name for c in columns if c.required) for table, columns in TABLES.items()
}
# Values of exactly these types need no conversion (checked inline: a call per cell is costly).
# (Not int: an int must still be range-checked to fit BIGINT.)
_AS_IS = {"text": str, "float": float, "bool": bool}
_PASS_THROUGH: dict[str, dict[str, type]] = {
    table: {
        c.name: _AS_IS[c.kind] for c in columns if c.kind in _AS_IS and _CONVERTERS[table][c.name] is not _redacted_text
    }
    for table, columns in TABLES.items()
}
_SCHEMAS: dict[str, pa.Schema] = {table: arrow_schema(table) for table in TABLES}


def check_row(
    table: str, row: Mapping[str, Any], run_id: str, fill: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any]:
    """A checked copy of ``row`` for ``table``, with ``run_id`` and column defaults filled in.

    ``fill``, if given, may complete the checked copy in place (computed defaults) before the
    required columns are checked.

    Raises:
        RowError: ``row`` is not a mapping, has an unknown column, a value of the wrong type, a
            ``run_id`` other than ``run_id``, or lacks a required column.
    """
    if not isinstance(row, Mapping):
        raise RowError(f"{table} rows must be dicts, got {type(row).__name__}")
    converters = _CONVERTERS[table]
    pass_through = _PASS_THROUGH[table]
    checked = dict(_DEFAULTS[table])
    for column, value in row.items():
        if type(value) is pass_through.get(column):
            checked[column] = value
            continue
        convert = converters.get(column)
        if convert is None:
            raise RowError(f"{table} row has unknown column {column!r}; {table} columns are: {', '.join(converters)}")
        if value is not None:
            checked[column] = convert(table, column, value)
    if checked.setdefault("run_id", run_id) != run_id:
        raise RowError(f"{table} row has run_id {checked['run_id']!r} but this writer writes run {run_id!r}")
    if fill is not None:
        fill(checked)
    for column in _REQUIRED[table]:
        if checked.get(column) is None:
            raise RowError(f"{table} row is missing required column {column!r}")
    return checked


def to_arrow(table: str, rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """An Arrow table of checked ``rows`` (from :func:`check_row`) in the table's column order."""
    rows = list(rows)
    schema = _SCHEMAS[table]
    arrays = []
    for field in schema:
        name = field.name
        if pa.types.is_timestamp(field.type):
            # Arrow converts aware datetimes one Python call at a time; integer microseconds
            # since the epoch are ~5x faster to build and exact.
            micros = [None if (v := row.get(name)) is None else (v - _EPOCH) // _MICROSECOND for row in rows]
            arrays.append(pa.array(micros, type=pa.int64()).cast(field.type))
        else:
            arrays.append(pa.array([row.get(name) for row in rows], type=field.type))
    return pa.Table.from_arrays(arrays, schema=schema)
