"""Checking rows handed over column-wise: an Arrow table, a DataFrame or a dict of columns.

The column-wise twin of :func:`omlab.bench.results.rows.check_row`: the same rules per column
kind, applied to whole columns with Arrow compute kernels instead of one Python call per cell,
so a writer can take millions of rows at close to DuckDB's own append rate. Columns of an
unusual type (a Python list of mixed values, text times, objects in a JSON column) fall back to
the per-value converters of :mod:`omlab.bench.results.rows`, so every input the row path accepts
is accepted here with the same result, and every refusal names the table, column and row.

JSON columns given as text are checked for valid JSON by DuckDB in one pass; only the rows that
might hold a credential (a key or a value shaped like one, found by a vectorised search that can
over-match but never under-match :mod:`omlab.bench.results.redact`'s rules) are re-written in
Python.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from omlab.bench.results import rows as row_rules
from omlab.bench.results.redact import _SECRET_VALUE, _SECRET_WORDS, redact_text, secret_value_pattern, to_safe_json
from omlab.bench.results.rows import RowError
from omlab.bench.results.schema import TABLES, Column, arrow_schema

_UTC_MICROS = pa.timestamp("us", tz="UTC")
# Over-matching on purpose, one regex pass: the key words of redact.is_secret_key with optional
# separators between letters (is_secret_key drops "-", "_" and spaces), a key ending in "token",
# and the key-shaped values redact_text replaces. Only the rows it flags are cleaned in Python.
_SECRET_KEY_WORDS = (*_SECRET_WORDS, "auth", 'token"')


def _spaced(word: str) -> str:
    return "[-_ ]*".join(re.escape(letter) if letter != '"' else letter for letter in word)


_SECRET_HINT = "(?i)(" + "|".join(_spaced(word) for word in _SECRET_KEY_WORDS) + ")|(?-i:" + _SECRET_VALUE.pattern + ")"
_JSON_CHECKER = duckdb.connect(config={"autoload_known_extensions": False, "autoinstall_known_extensions": False})

ColumnData = pa.Table | pa.RecordBatch | Mapping[str, Any]
"""What :func:`check_columns` takes: an Arrow table or batch, a pandas DataFrame, or a mapping of
column name to a sequence, numpy array or Arrow array (all of one length)."""


def is_column_data(value: Any) -> bool:
    """Whether ``value`` is column-wise data rather than row dicts: an Arrow table or batch, a
    DataFrame, or a mapping whose values are all columns (lists, tuples, arrays). A mapping of
    scalars is one row, not columns."""
    if isinstance(value, (pa.Table, pa.RecordBatch)) or _is_dataframe(value):
        return True
    return (
        isinstance(value, Mapping)
        and bool(value)
        and all(isinstance(v, (list, tuple, np.ndarray, pa.Array, pa.ChunkedArray)) for v in value.values())
    )


def check_columns(table: str, data: ColumnData, run_id: str) -> pa.Table:
    """An Arrow table of ``table``'s schema holding ``data``, checked and converted.

    Missing columns take their default (or NULL), ``run_id`` is filled in, and required columns
    must have no NULL. Computed defaults (event ``seq``/``kind``, ``call_id``) are left to the
    writer.

    Raises:
        RowError: an unknown column, columns of different lengths, a value of the wrong type
            (with its row number), another ``run_id``, or a NULL in a required column other
            than the computed ones.
    """
    columns = _as_columns(table, data)
    length = _common_length(table, columns)
    arrays = []
    for column in TABLES[table]:
        given = columns.get(column.name)
        if given is None:
            arrays.append(_constant(column, length, run_id if column.name == "run_id" else column.default))
        else:
            arrays.append(_convert(table, column, given))
    batch = pa.Table.from_arrays(arrays, schema=pa.schema([f.with_nullable(True) for f in arrow_schema(table)]))
    _check_run_id(table, batch, run_id)
    return batch


def check_required(table: str, batch: pa.Table) -> pa.Table:
    """``batch`` with the table's nullability, once every required column is filled.

    Raises:
        RowError: a required column still has a NULL (naming the first such row).
    """
    for column in TABLES[table]:
        if column.required and batch.column(column.name).null_count:
            row = _first_true(pc.is_null(batch.column(column.name)))
            raise RowError(f"{table} row {row} is missing required column {column.name!r}")
    return batch.cast(arrow_schema(table))


def _as_columns(table: str, data: ColumnData) -> dict[str, Any]:
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if _is_dataframe(data):
        data = {name: data[name].to_numpy(dtype=object, na_value=None) for name in data.columns}
    if isinstance(data, pa.Table):
        columns = {name: data.column(name) for name in data.column_names}
    elif isinstance(data, Mapping):
        columns = dict(data)
    else:
        raise RowError(f"{table} columns must be an Arrow table, a DataFrame or a dict of columns")
    known = {column.name for column in TABLES[table]}
    unknown = sorted(set(columns) - known)
    if unknown:
        raise RowError(
            f"{table} has no column {', '.join(map(repr, unknown))}; {table} columns are: "
            + ", ".join(column.name for column in TABLES[table])
        )
    return columns


def _common_length(table: str, columns: Mapping[str, Any]) -> int:
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name}={n}" for name, n in lengths.items())
        raise RowError(f"{table} columns must all have the same length; got {shown}")
    return next(iter(lengths.values()), 0)


def _constant(column: Column, length: int, value: Any) -> pa.Array:
    kind_type = arrow_schema_field_type(column)
    if value is None:
        return pa.nulls(length, type=kind_type)
    return pa.array([value] * length, type=kind_type) if length else pa.array([], type=kind_type)


def arrow_schema_field_type(column: Column) -> pa.DataType:
    """The Arrow type of ``column`` in a batch."""
    return _FIELD_TYPES[column.kind]


def _convert(table: str, column: Column, values: Any) -> pa.Array:
    array = _to_arrow(column, values)
    if array is not None:
        fast = _FAST[column.kind](table, column, array)
        if fast is not None:
            return fast
    return _per_value(table, column, values)


def _to_arrow(column: Column, values: Any) -> pa.Array | None:
    """``values`` as one Arrow array, or None where Arrow's own inference would be wrong."""
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if isinstance(values, pa.Array):
        return values
    if column.kind == "json" and not isinstance(values, np.ndarray):
        return None  # dicts and lists must go through to_safe_json, never become Arrow structs
    try:
        return pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return None


def _text(table: str, column: Column, array: pa.Array) -> pa.Array | None:
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), type=pa.string())
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return None
    array = array.cast(pa.string())
    if column.name in row_rules._REDACTED_TEXT_COLUMNS:
        array = _redact_where_hinted(array)
    return array


def _json(table: str, column: Column, array: pa.Array) -> pa.Array | None:
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), type=pa.string())
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return None
    array = array.cast(pa.string())
    bad = _invalid_json_rows(array)
    if bad is not None:
        value = array[bad].as_py()
        shown = value if len(value) <= 60 else value[:57] + "..."
        raise RowError(f"{table}.{column.name} row {bad} is a string but not valid JSON: {shown!r}")
    hinted = _secret_hints(array)
    if not pc.any(hinted).as_py():
        return array
    cleaned = array.to_pylist()
    for index in np.flatnonzero(hinted.to_numpy(zero_copy_only=False)):
        cleaned[index] = to_safe_json(cleaned[index])
    return pa.array(cleaned, type=pa.string())


def _int(table: str, column: Column, array: pa.Array) -> pa.Array | None:
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), type=pa.int64())
    if pa.types.is_integer(array.type):
        try:
            return array.cast(pa.int64())
        except pa.ArrowInvalid:
            return None  # out of range: the per-value path names the row
    if pa.types.is_floating(array.type):
        whole = pc.fill_null(pc.equal(pc.floor(array), array), True)
        if not pc.all(whole).as_py():
            return None
        try:
            return array.cast(pa.int64())
        except pa.ArrowInvalid:
            return None
    return None


def _float(table: str, column: Column, array: pa.Array) -> pa.Array | None:
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), type=pa.float64())
    if pa.types.is_integer(array.type) or pa.types.is_floating(array.type):
        return array.cast(pa.float64())
    return None


def _bool(table: str, column: Column, array: pa.Array) -> pa.Array | None:
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), type=pa.bool_())
    return array if pa.types.is_boolean(array.type) else None


def _time(table: str, column: Column, array: pa.Array) -> pa.Array | None:
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), type=_UTC_MICROS)
    if pa.types.is_timestamp(array.type):
        if array.type.tz is None:
            if array.null_count == len(array):
                return pa.nulls(len(array), type=_UTC_MICROS)
            row = _first_true(pc.is_valid(array))
            raise RowError(f"{table}.{column.name} row {row} must be timezone-aware (naive times are ambiguous)")
        return array.cast(pa.timestamp(array.type.unit, tz="UTC")).cast(_UTC_MICROS)
    if pa.types.is_integer(array.type) or pa.types.is_floating(array.type):
        if pa.types.is_floating(array.type):
            finite = pc.fill_null(pc.is_finite(array), True)
            if not pc.all(finite).as_py():
                return None
        micros = pc.round(pc.multiply(array.cast(pa.float64()), 1_000_000.0))
        return micros.cast(pa.int64()).cast(_UTC_MICROS)
    return None


def _per_value(table: str, column: Column, values: Any) -> pa.Array:
    convert = row_rules._CONVERTERS[table][column.name]
    converted = []
    for index, value in enumerate(_python_values(values)):
        if value is None:
            converted.append(None)
            continue
        try:
            converted.append(convert(table, column.name, value))
        except RowError as error:
            raise RowError(f"row {index}: {error}") from None
    if column.kind == "time":
        epoch = row_rules._EPOCH
        micros = [None if v is None else (v - epoch) // row_rules._MICROSECOND for v in converted]
        return pa.array(micros, type=pa.int64()).cast(_UTC_MICROS)
    return pa.array(converted, type=_FIELD_TYPES[column.kind])


def _python_values(values: Any) -> Sequence[Any]:
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values.to_pylist()
    if isinstance(values, np.ndarray):
        return values.tolist() if values.dtype != object else list(values)
    return list(values)


def _invalid_json_rows(array: pa.Array) -> int | None:
    """The index of the first non-NULL value of ``array`` that is not valid JSON, or None."""
    if array.null_count == len(array):
        return None
    checked = pa.table({"v": array})
    # A cursor per check: writers in several threads may validate at once.
    with _JSON_CHECKER.cursor() as cursor:
        cursor.register("omlab_json_check", checked)
        if cursor.execute("SELECT bool_and(json_valid(v)) FROM omlab_json_check").fetchall()[0][0] is not False:
            return None
        bad = cursor.execute(
            "SELECT min(i) FROM (SELECT row_number() OVER () - 1 AS i, v FROM omlab_json_check) "
            "WHERE v IS NOT NULL AND NOT json_valid(v)"
        ).fetchall()[0][0]
    return None if bad is None else int(bad)


def _secret_hints(array: pa.Array) -> pa.BooleanArray:
    """Rows of JSON text that may hold a credential key, a key-shaped value or an environment
    credential's value."""
    hints = pc.fill_null(pc.match_substring_regex(array, _SECRET_HINT), False)
    if secret_value_pattern() == _SECRET_VALUE.pattern:
        return hints
    values = pc.fill_null(pc.match_substring_regex(array, secret_value_pattern()), False)
    return pc.or_(hints, values)


def _redact_where_hinted(array: pa.Array) -> pa.Array:
    hinted = pc.fill_null(pc.match_substring_regex(array, secret_value_pattern()), False)
    if not pc.any(hinted).as_py():
        return array
    values = array.to_pylist()
    for index in np.flatnonzero(hinted.to_numpy(zero_copy_only=False)):
        values[index] = redact_text(values[index])
    return pa.array(values, type=pa.string())


def _check_run_id(table: str, batch: pa.Table, run_id: str) -> None:
    given = batch.column("run_id")
    if given.null_count:
        given = pc.fill_null(given, run_id)
    other = pc.not_equal(given, run_id)
    if pc.any(other).as_py():
        row = _first_true(other)
        raise RowError(f"{table} row {row} has run_id {given[row].as_py()!r} but this writer writes run {run_id!r}")


def _first_true(mask: pa.Array | pa.ChunkedArray) -> int:
    if isinstance(mask, pa.ChunkedArray):
        mask = mask.combine_chunks()
    return int(np.flatnonzero(mask.to_numpy(zero_copy_only=False))[0])


def _is_dataframe(value: Any) -> bool:
    return type(value).__name__ == "DataFrame" and hasattr(value, "columns") and hasattr(value, "to_numpy")


_FIELD_TYPES = {
    "text": pa.string(),
    "json": pa.string(),
    "int": pa.int64(),
    "float": pa.float64(),
    "bool": pa.bool_(),
    "time": _UTC_MICROS,
}
_FAST = {"text": _text, "json": _json, "int": _int, "float": _float, "bool": _bool, "time": _time}
