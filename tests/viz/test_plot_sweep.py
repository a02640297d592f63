"""Sweep heatmaps: the grid (hand-computed), setting order, cell texts for several value kinds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from omlab.viz.plots import plot_sweep_heatmap, sweep_grid
from tests.viz.frames import no_data_note, render, title


def _sweep():
    rows = []
    for buffer_tokens in (6000, 2000):
        for block_after in (36_000, None, 31_000):
            for conversation, extra in (("a", 0.0), ("b", 2.0)):
                if buffer_tokens == 6000 and block_after == 31_000:
                    continue  # a combination the sweep did not run
                rows.append(
                    {
                        "buffer_tokens": buffer_tokens,
                        "block_after": block_after,
                        "conversation": conversation,
                        "blocked_s": buffer_tokens / 1000 + extra + (0 if block_after is None else 1),
                        "accuracy": 0.5 + extra / 10,
                        "cost_usd": 0.25,
                        "sync_observations": 3 + extra,
                    }
                )
    return pd.DataFrame(rows)


def test_grid_means_and_order():
    grid = sweep_grid(_sweep())
    assert list(grid.columns) == ["2,000", "6,000"]
    assert list(grid.index) == ["31,000", "36,000", "none"]  # numbers ascending, missing last
    assert grid.loc["36,000", "2,000"] == 2 + 1 + 1  # mean of 3 and 5
    assert grid.loc["none", "6,000"] == 6 + 1
    assert math.isnan(grid.loc["31,000", "6,000"])


def test_other_aggregates_and_kinds_of_setting():
    sweep = pd.DataFrame({"mode": ["b", "a", False, 2.5], "size": [1, 1, 1, 1], "v": [1.0, 2.0, 3.0, 4.0]})
    grid = sweep_grid(sweep, x="mode", y="size", value="v", agg="max")
    assert list(grid.columns) == ["2.5", "a", "b", "false"]
    assert grid.loc["1"].tolist() == [4.0, 2.0, 1.0, 3.0]


def test_heatmap_annotates_every_cell():
    ax = plot_sweep_heatmap(_sweep())
    render(ax)
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 6
    assert texts.count("–") == 1
    assert "4" in texts and "7" in texts  # whole numbers read as counts
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2,000", "6,000"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["31,000", "36,000", "none"]
    assert ax.get_xlabel() == "bufferTokens (ratio of messageTokens, or tokens)"
    assert ax.get_ylabel() == "blockAfter (× messageTokens, or tokens)"
    assert title(ax).splitlines() == [
        "Blocked time (virtual s) by bufferTokens × blockAfter",
        "each cell: mean of up to 2 rows; – = not run",
    ]
    assert len(ax.figure.axes) == 2  # the colour bar


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("accuracy", "60.0%"),
        ("cost_usd", "$0.250"),
        ("sync_observations", "4"),
    ],
)
def test_any_value_column(value, expected):
    ax = plot_sweep_heatmap(_sweep(), value=value)
    assert expected in [t.get_text() for t in ax.texts]


def test_cell_format_override_and_colormap():
    ax = plot_sweep_heatmap(_sweep(), cell_format="{:.1f} s", cmap="magma")
    assert "4.0 s" in [t.get_text() for t in ax.texts]
    image = ax.images[0]
    assert image.get_cmap().name.startswith("magma")
    assert np.ma.is_masked(image.get_array())


def test_bad_input_and_empty():
    with pytest.raises(ValueError, match="agg must be"):
        plot_sweep_heatmap(_sweep(), agg="mode")
    with pytest.raises(ValueError, match="missing columns.*peak_context_tokens"):
        plot_sweep_heatmap(_sweep(), value="peak_context_tokens")
    assert no_data_note(plot_sweep_heatmap(_sweep().iloc[0:0])) == "no data: empty sweep"
