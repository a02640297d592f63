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
        "spread 5",  # 3 to 8 s: wide enough to keep the data's own colour range
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


def _two_by_two(value: str, cells: list[float], **extra: list[float]) -> pd.DataFrame:
    """One row per cell of a 2 × 2 grid, ``value`` (and any ``extra`` column) in row order."""
    grid = [(x, y) for y in (1.1, 1.5) for x in (0.1, 0.2)]
    return pd.DataFrame(
        {"buffer_tokens": [x for x, _ in grid], "block_after": [y for _, y in grid], value: cells, **extra}
    )


def test_a_small_accuracy_spread_does_not_fill_the_colour_range():
    sweep = _two_by_two("accuracy", [0.500, 0.512, 0.524, 0.536])
    ax = plot_sweep_heatmap(sweep, value="accuracy")
    norm = ax.images[0].norm
    assert norm.vmax - norm.vmin == pytest.approx(0.20)  # the minimum span for proportions
    assert norm.vmin <= 0.500 and norm.vmax >= 0.536
    assert "spread 3.6 pp" in title(ax)
    assert "colours span 20 pp" in title(ax)


def test_a_proportion_range_stays_inside_zero_to_one():
    ax = plot_sweep_heatmap(_two_by_two("accuracy", [0.95, 0.97, 0.98, 1.0]), value="accuracy")
    norm = ax.images[0].norm
    assert (norm.vmin, norm.vmax) == pytest.approx((0.8, 1.0))


def test_a_wide_spread_keeps_the_data_range():
    ax = plot_sweep_heatmap(_two_by_two("accuracy", [0.2, 0.4, 0.6, 0.7]), value="accuracy")
    norm = ax.images[0].norm
    assert (norm.vmin, norm.vmax) == pytest.approx((0.2, 0.7))
    assert "spread 50.0 pp" in title(ax) and "colours span" not in title(ax)


def test_a_small_relative_spread_of_a_magnitude_is_not_stretched():
    ax = plot_sweep_heatmap(
        _two_by_two("context_tokens_peak", [30_000, 30_200, 30_400, 30_500]), value="context_tokens_peak"
    )
    norm = ax.images[0].norm
    assert norm.vmax - norm.vmin == pytest.approx(0.2 * 30_500)
    assert "spread 500" in title(ax)


def test_no_variation_is_one_neutral_colour_and_says_so():
    ax = plot_sweep_heatmap(_two_by_two("accuracy", [0.5333] * 4), value="accuracy")
    render(ax)
    assert "no variation: 53.3% in every cell" in title(ax)
    assert len(ax.figure.axes) == 1  # no colour bar: there is no scale to read
    image = ax.images[0]
    colours = {tuple(image.to_rgba(v)) for v in np.ravel(image.get_array())}
    assert len(colours) == 1


def test_counts_get_integer_colorbar_ticks_and_cell_labels():
    ax = plot_sweep_heatmap(_two_by_two("sync_observations", [0, 1, 2, 3]), value="sync_observations")
    render(ax)
    colorbar_ax = ax.figure.axes[1]
    norm = ax.images[0].norm
    ticks = [t for t in colorbar_ax.get_yticks() if norm.vmin <= t <= norm.vmax]
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks)
    big = plot_sweep_heatmap(_two_by_two("activations", [1200, 1210, 1250, 1300]), value="activations")
    assert sorted(t.get_text() for t in big.texts) == ["1,200", "1,210", "1,250", "1,300"]


def test_accuracy_cells_show_n_and_the_confidence_interval():
    sweep = _two_by_two(
        "accuracy",
        [0.5, 0.6, 0.7, 0.8],
        accuracy_lo=[0.45, 0.55, 0.65, 0.75],
        accuracy_hi=[0.55, 0.65, 0.75, 0.85],
        accuracy_n=[300, 300, 300, 120],
    )
    ax = plot_sweep_heatmap(sweep, value="accuracy")
    texts = [t.get_text() for t in ax.texts]
    assert "50.0%\nn=300, CI 45.0–55.0%" in texts
    assert "80.0%\nn=120, CI 75.0–85.0%" in texts
    assert "95% CI" in title(ax)


def test_intervals_are_left_out_of_cells_that_average_several_rows():
    sweep = pd.concat(
        [
            _two_by_two(
                "accuracy", [0.5, 0.6, 0.7, 0.8], accuracy_n=[10] * 4, accuracy_lo=[0.4] * 4, accuracy_hi=[0.9] * 4
            )
        ]
        * 2
    )
    ax = plot_sweep_heatmap(sweep, value="accuracy")
    assert sorted(t.get_text() for t in ax.texts) == ["50.0%", "60.0%", "70.0%", "80.0%"]
