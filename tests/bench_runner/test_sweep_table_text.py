"""How ``omlab sweep`` prints its table and finds the swept settings in it."""

from __future__ import annotations

import math

import pandas as pd

from omlab.cli.sweep import format_table, swept_columns


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": ["r1", "r2"],
            "config_name": ["bufferTokens=0.1", "bufferTokens=0.2"],
            "buffer_tokens": [0.1, 0.2],
            "blocked_s": [12.0, 3.0],
            "accuracy": [0.5, math.nan],
            "cost_usd": [0.1234567, 0.2],
            "accuracy_lo": [0.45, math.nan],
            "accuracy_hi": [0.55, math.nan],
            "accuracy_n": [1300.0, math.nan],
        }
    )


def test_the_interval_columns_are_not_taken_for_swept_settings():
    # one grid key: no heatmap can be drawn, whatever metric columns follow it
    assert swept_columns(_table()) == ["buffer_tokens"]


def test_interval_bounds_print_as_percentages_and_n_as_a_whole_number():
    lines = format_table(_table()).splitlines()
    header, first = lines[0].split(), lines[1].split()
    row = dict(zip(header, first, strict=True))
    assert row["accuracy"] == "50.0%" and row["accuracy_lo"] == "45.0%" and row["accuracy_hi"] == "55.0%"
    assert row["accuracy_n"] == "1,300"
    assert row["blocked_s"] == "12.0" and row["cost_usd"] == "0.1235"


def test_counts_print_as_whole_numbers():
    table = _table().fillna(0.5).assign(sync_observations=[2.0, 1200.0], activations=[19.0, 0.0])
    lines = format_table(table).splitlines()
    rows = [dict(zip(lines[0].split(), line.split(), strict=True)) for line in lines[1:]]
    assert [row["sync_observations"] for row in rows] == ["2", "1,200"]
    assert [row["activations"] for row in rows] == ["19", "0"]
