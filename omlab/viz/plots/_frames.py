"""Checks and conversions for the frames plots receive (DuckDB getters give nullable dtypes)."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd


def has_rows(frame: pd.DataFrame | None) -> bool:
    """True when ``frame`` exists and has at least one row."""
    return frame is not None and len(frame) > 0


def require_columns(frame: pd.DataFrame, columns: Iterable[str], *, frame_name: str, plot: str) -> None:
    """Raise a ValueError naming the plot, the frame and the missing columns.

    A frame with no columns at all (``pd.DataFrame()``) passes: plots treat it as empty.
    """
    if len(frame.columns) == 0:
        return
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{plot}: {frame_name} frame is missing columns {missing}; it has {list(frame.columns)}")


def numeric(series: pd.Series) -> pd.Series:
    """``series`` as float64, with NULL / NA / unparsable values as NaN."""
    return pd.to_numeric(series, errors="coerce").astype("float64")


def flag(series: pd.Series) -> pd.Series:
    """``series`` as plain bool, NULL / NA counting as False."""
    return series.astype("boolean").fillna(False).astype(bool)


def utc_times(series: pd.Series) -> pd.Series:
    """``series`` as tz-aware UTC datetimes (naive values are taken to be UTC already)."""
    return pd.to_datetime(series, utc=True)


def select_value(frame: pd.DataFrame, column: str, value: object, *, plot: str, option: str) -> pd.DataFrame:
    """Rows where ``column == value``; a ValueError lists the available values if there are none."""
    chosen = frame[frame[column].astype(str) == str(value)]
    if chosen.empty:
        available = sorted(frame[column].dropna().astype(str).unique())
        raise ValueError(f"{plot}: {option}={value!r} not found; available: {available}")
    return chosen


def single_value(frame: pd.DataFrame, column: str, *, plot: str, option: str) -> object:
    """The one distinct value of ``column``; a ValueError asks the caller to pick when there are several."""
    values = sorted(frame[column].dropna().astype(str).unique())
    if len(values) > 1:
        shown = ", ".join(values[:8]) + (", ..." if len(values) > 8 else "")
        raise ValueError(f"{plot}: the frame holds {len(values)} values of {column} ({shown}); pick one with {option}=")
    return values[0] if values else None
