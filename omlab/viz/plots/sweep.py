"""A sweep over two settings as an annotated heatmap (e.g. bufferTokens × blockAfter → blocked time).

Any numeric column can be the cell value: blocked seconds, accuracy, cost, synchronous
observations, peak context tokens. Several rows for one cell (conversations, seeds) are
aggregated (mean by default). Setting values may be numbers, strings, booleans (``false`` turns
buffering off) or missing (``none``); numbers sort numerically and come first.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter

from omlab.viz.plots import _format as fmt
from omlab.viz.plots._canvas import axes_or_new, draw_no_data
from omlab.viz.plots._frames import has_rows, numeric, require_columns
from omlab.viz.style import FIGSIZE_SQUARE, FONT, LIGHT_GREY, column_label, style_axes

PLOT = "plot_sweep_heatmap"
MISSING_LABEL = "none"
Aggregate = Literal["mean", "median", "sum", "min", "max"]


def setting_label(value: object) -> str:
    """How a setting value reads on an axis: ``6,000``, ``0.25``, ``false``, ``none``."""
    return _setting_key(value)[2]


def _setting_key(value: object) -> tuple[int, float, str]:
    """(kind, number, label): numbers first in numeric order, then other values, then missing."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return (2, 0.0, MISSING_LABEL)
    if isinstance(value, bool | np.bool_):
        return (1, 0.0, str(bool(value)).lower())
    if isinstance(value, int | float | np.integer | np.floating):
        number = float(value)
        label = f"{number:,.0f}" if number.is_integer() else f"{number:g}"
        return (0, number, label)
    return (1, 0.0, str(value))


def _ordered_labels(values: pd.Series) -> tuple[pd.Series, list[str]]:
    keys = values.astype(object).map(_setting_key)
    order = [key[2] for key in sorted(set(keys))]
    return keys.map(lambda key: key[2]), list(dict.fromkeys(order))


def sweep_grid(
    sweep: pd.DataFrame,
    *,
    x: str = "buffer_tokens",
    y: str = "block_after",
    value: str = "blocked_s",
    agg: Aggregate = "mean",
) -> pd.DataFrame:
    """The heatmap's numbers: rows are ``y`` labels, columns ``x`` labels, cells ``agg(value)``.

    Rows and columns are in setting order (see the module docstring); combinations the sweep did
    not run are NaN.

    Raises:
        ValueError: Missing columns or an unknown ``agg``.
    """
    if agg not in ("mean", "median", "sum", "min", "max"):
        raise ValueError(f"{PLOT}: agg must be mean, median, sum, min or max, got {agg!r}")
    require_columns(sweep, (x, y, value), frame_name="sweep", plot=PLOT)
    x_labels, x_order = _ordered_labels(sweep[x])
    y_labels, y_order = _ordered_labels(sweep[y])
    cells = numeric(sweep[value]).groupby([y_labels.rename(y), x_labels.rename(x)]).agg(agg)
    grid = cells.unstack(x).reindex(index=y_order, columns=x_order)
    return grid.astype("float64")


def cell_formatter(value: str, values: np.ndarray) -> Callable[[float], str]:
    """How a cell reads, chosen from the value column's name and values.

    Percentages for accuracy-like values, dollars for costs, ``12.3k`` for whole counts, else
    three significant digits.
    """
    finite = values[np.isfinite(values)]
    if "accuracy" in value or value in ("f1", "recall", "retention"):
        return fmt.percent
    if value.endswith("usd"):
        return fmt.usd
    if len(finite) and np.all(np.equal(np.mod(finite, 1), 0)):
        return fmt.tokens
    return lambda v: f"{v:.3g}"


def _bare(column: str) -> str:
    """A column's label without its unit: ``bufferTokens (tokens)`` -> ``bufferTokens``."""
    return column_label(column).split(" (")[0]


def plot_sweep_heatmap(
    sweep: pd.DataFrame,
    *,
    x: str = "buffer_tokens",
    y: str = "block_after",
    value: str = "blocked_s",
    agg: Aggregate = "mean",
    cell_format: str | None = None,
    cmap: str = "viridis",
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Annotated heatmap of ``value`` over a grid of two settings, with a colour bar.

    Args:
        sweep: One row per run (or per run × conversation) with columns ``x``, ``y``, ``value``.
        x: Setting on the horizontal axis.
        y: Setting on the vertical axis (lowest value at the bottom).
        value: Numeric column shown in the cells.
        agg: How several rows of one cell combine.
        cell_format: A ``str.format`` pattern for the cell texts (e.g. ``"{:.0f} s"``); chosen
            from ``value`` when None (see :func:`cell_formatter`).
        cmap: Matplotlib colormap name.
        title: Replaces the default title.
        ax: Draw here; a new figure is made when None.

    Returns:
        The Axes; a "no data" note when the sweep has no rows. Cells the sweep did not run are
        grey and read "–".

    Raises:
        ValueError: See :func:`sweep_grid`.
    """
    ax = axes_or_new(ax, FIGSIZE_SQUARE)
    if not has_rows(sweep):
        return draw_no_data(ax, title=title or f"{column_label(value)} by {x} × {y}", reason="empty sweep")
    grid = sweep_grid(sweep, x=x, y=y, value=value, agg=agg)
    data = grid.to_numpy()
    colormap = matplotlib.colormaps[cmap].with_extremes(bad=LIGHT_GREY)
    image = ax.imshow(np.ma.masked_invalid(data), cmap=colormap, origin="lower", aspect="auto")
    text_of = cell_formatter(value, data) if cell_format is None else cell_format.format
    for (row, column), cell in np.ndenumerate(data):
        if np.isfinite(cell):
            red, green, blue, _alpha = colormap(image.norm(cell))
            dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
            ax.text(
                column,
                row,
                text_of(cell),
                ha="center",
                va="center",
                fontsize=FONT.label,
                color="white" if dark else "black",
            )
        else:
            ax.text(column, row, "–", ha="center", va="center", fontsize=FONT.label, color="black")
    ax.set_xticks(range(data.shape[1]), list(grid.columns))
    ax.set_yticks(range(data.shape[0]), list(grid.index))
    colorbar = ax.figure.colorbar(image, ax=ax, shrink=0.9, format=FuncFormatter(lambda v, _pos: text_of(v)))
    colorbar.set_label(column_label(value), fontsize=FONT.label)
    colorbar.ax.tick_params(labelsize=FONT.tick)
    per_cell = int(
        pd.Series(1, index=sweep.index)
        .groupby([_ordered_labels(sweep[y])[0], _ordered_labels(sweep[x])[0]])
        .sum()
        .max()
    )
    notes = ([f"each cell: {agg} of up to {per_cell} rows"] if per_cell > 1 else []) + (
        ["– = not run"] if np.isnan(data).any() else []
    )
    heading = column_label(value)
    default_title = f"{heading[0].upper()}{heading[1:]} by {_bare(x)} × {_bare(y)}" + (
        f"\n{'; '.join(notes)}" if notes else ""
    )
    style_axes(ax, title=title or default_title, xlabel=column_label(x), ylabel=column_label(y), grid_axis="")
    for spine in ax.spines.values():
        spine.set_visible(False)
    return ax
