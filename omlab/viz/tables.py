"""Tables as a notebook shows them: shares as percentages, thousands separated, whole numbers whole.

:func:`notebook_table` returns a pandas ``Styler``: the notebook renders it as an HTML table, which
stays in the saved file like any other output. The numbers underneath are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from pandas.io.formats.style import Styler

PERCENT_COLUMNS: frozenset[str] = frozenset(
    {"accuracy", "retention", "evidence_retention", "f1", "share", "relative", "judge_accuracy"}
)
"""Columns that hold shares (0..1) wherever they appear; :func:`notebook_table` shows them as %."""


def number_cell(value: object, digits: int = 2) -> str:
    """``1,234`` for whole numbers, ``1,234.57`` otherwise, empty for missing values."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def percent_cell(value: object, digits: int = 1) -> str:
    """A share as a percentage (``0.625`` -> ``62.5%``), empty for missing values."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return f"{float(value):.{digits}%}"


def notebook_table(
    frame: pd.DataFrame,
    *,
    percent: Sequence[str] = (),
    sort_by: Sequence[str] = (),
    digits: int = 2,
) -> Styler:
    """``frame`` styled for a notebook: ``percent`` columns (and any of :data:`PERCENT_COLUMNS`) as
    percentages, other numbers via :func:`number_cell`, rows sorted by ``sort_by`` (the swept
    values, say), index hidden.

    Raises:
        ValueError: A ``percent`` or ``sort_by`` column that ``frame`` does not have.
    """
    missing = [c for c in (*percent, *sort_by) if c not in frame.columns]
    if missing:
        raise ValueError(f"notebook_table: no column(s) {missing} in the frame; columns: {list(frame.columns)}")
    if sort_by:
        frame = frame.sort_values(list(sort_by), kind="stable", ignore_index=True)
    shares = [c for c in frame.columns if c in percent or c in PERCENT_COLUMNS]
    formats = {
        column: (percent_cell if column in shares else (lambda v, d=digits: number_cell(v, d)))
        for column in frame.columns
        if pd.api.types.is_numeric_dtype(frame[column]) and not pd.api.types.is_bool_dtype(frame[column])
    }
    return frame.style.format(formats, na_rep="").hide(axis="index")


__all__ = ["PERCENT_COLUMNS", "notebook_table", "number_cell", "percent_cell"]
