"""Notebook tables: percentages, thousands separators, whole numbers, sorted by the swept values."""

from __future__ import annotations

import pandas as pd
import pytest

from omlab.viz.tables import notebook_table, number_cell, percent_cell


def test_cells():
    assert [number_cell(v) for v in (3.0, 12_345, 1234.567, float("nan"), "x")] == ["3", "12,345", "1,234.57", "", "x"]
    assert percent_cell(0.625) == "62.5%" and percent_cell(None) == ""


def test_table_formats_shares_as_percent_and_sorts_by_swept_values():
    frame = pd.DataFrame(
        {
            "block_after": [2.0, 1.1, 1.5],
            "accuracy": [0.5, 0.25, 0.125],
            "context_tokens_peak": [13718.0, 11155.0, 12967.0],
        }
    )
    html = notebook_table(frame, sort_by=["block_after"]).to_html()
    assert html.index("11,155") < html.index("12,967") < html.index("13,718")
    assert "25.0%" in html and "0.25" not in html


def test_unknown_column_is_named():
    with pytest.raises(ValueError, match="nope"):
        notebook_table(pd.DataFrame({"a": [1]}), sort_by=["nope"])
