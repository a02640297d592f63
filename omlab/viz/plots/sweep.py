"""A sweep over two settings as an annotated heatmap (e.g. bufferTokens × blockAfter → blocked time).

Any numeric column can be the cell value: blocked seconds, accuracy, cost, synchronous
observations, peak context tokens. Several rows for one cell (conversations, seeds) are
aggregated (mean by default). Setting values may be numbers, strings, booleans (``false`` turns
buffering off) or missing (``none``); numbers sort numerically and come first.

The colours must not overstate a difference: the title prints the spread of the cells, and a
spread smaller than :data:`MIN_PROPORTION_SPAN` (accuracy-like values) or
:data:`MIN_RELATIVE_SPAN` of the largest value (everything else) is drawn on a colour scale that
wide, so 3.6 points of accuracy never look like the whole palette. Cells that are all equal are
one neutral colour, titled "no variation". Counts read as whole numbers, on the cells and on the
colour bar. Accuracy-like cells backed by one row each also show ``n`` and the 95% CI when the
sweep has ``<value>_n`` / ``<value>_lo`` / ``<value>_hi`` columns (the sweep table has them for
accuracy).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.ticker import FuncFormatter, MaxNLocator

from omlab.bench.report.metrics import COUNT_METRICS
from omlab.viz.plots import _format as fmt
from omlab.viz.plots._canvas import axes_or_new, draw_no_data
from omlab.viz.plots._frames import has_rows, numeric, require_columns
from omlab.viz.style import FIGSIZE_SQUARE, FONT, LIGHT_GREY, column_label, plain_text_plot, style_axes

PLOT = "plot_sweep_heatmap"
MISSING_LABEL = "none"
Aggregate = Literal["mean", "median", "sum", "min", "max"]
ValueKind = Literal["proportion", "usd", "count", "tokens", "number"]

MIN_PROPORTION_SPAN = 0.20
"""The narrowest colour scale (as a fraction) for accuracy-like cells. With a few hundred
questions a 95% CI is several points wide on each side, so a smaller spread is mostly noise and
should only tint the cells, not run through the whole palette."""
MIN_RELATIVE_SPAN = 0.20
"""The narrowest colour scale for other values, as a share of the largest absolute cell value:
peak contexts of 30,000 and 30,500 tokens differ by under 2% and are drawn nearly alike."""
NO_VARIATION_COLOR = "#F2F2F2"
"""The one colour of a heatmap whose cells are all equal (paler than the grey of cells not run)."""


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


def value_kind(value: str, values: np.ndarray) -> ValueKind:
    """What the cells measure, from the value column's name and values: a 0-1 proportion, dollars,
    a count (a known count column, or whole numbers in a column not named for tokens), a token
    amount (other whole numbers), or any other number."""
    finite = values[np.isfinite(values)]
    if "accuracy" in value or value in ("f1", "recall", "retention"):
        return "proportion"
    if value.endswith("usd"):
        return "usd"
    if value in COUNT_METRICS:
        return "count"
    if len(finite) and np.all(np.equal(np.mod(finite, 1), 0)):
        return "tokens" if "token" in value else "count"
    return "number"


def _count(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def cell_formatter(value: str, values: np.ndarray) -> Callable[[float], str]:
    """How a cell reads, chosen by :func:`value_kind`.

    Percentages for accuracy-like values, dollars for costs, ``1,234`` for counts (a mean of
    counts that is not whole keeps one decimal), ``12.3k`` for token amounts, else three
    significant digits.
    """
    kind = value_kind(value, values)
    if kind == "proportion":
        return fmt.percent
    if kind == "usd":
        return fmt.usd
    if kind == "count":
        return _count
    if kind == "tokens":
        return fmt.tokens
    return lambda v: f"{v:.3g}"


def colour_range(values: np.ndarray, kind: ValueKind) -> tuple[float, float]:
    """``(vmin, vmax)`` of the colour scale: the cells' range, widened around its middle to at
    least :data:`MIN_PROPORTION_SPAN` (proportions, kept inside 0-1) or :data:`MIN_RELATIVE_SPAN`
    of the largest absolute value (others, kept at or above 0 when no cell is negative).

    Raises:
        ValueError: No finite value.
    """
    finite = values[np.isfinite(values)]
    if not len(finite):
        raise ValueError(f"{PLOT}: no finite cell value to scale colours to")
    low, high = float(finite.min()), float(finite.max())
    if kind == "proportion":
        min_span = MIN_PROPORTION_SPAN
        floor, ceiling = (0.0, 1.0) if 0.0 <= low and high <= 1.0 else (-math.inf, math.inf)
    else:
        min_span = MIN_RELATIVE_SPAN * max(abs(low), abs(high))
        floor, ceiling = (0.0 if low >= 0 else -math.inf), math.inf
    if high - low >= min_span:
        return low, high
    middle = (low + high) / 2
    vmin, vmax = middle - min_span / 2, middle + min_span / 2
    if vmin < floor:
        vmin, vmax = floor, floor + min_span
    if vmax > ceiling:
        vmin, vmax = ceiling - min_span, ceiling
    return vmin, vmax


def _spread_note(kind: ValueKind, low: float, high: float, vmin: float, vmax: float, text_of) -> str:
    """``spread 3.6 pp; colours span 20 pp`` (proportions) or ``spread 500; colours span 6.1k``."""
    widened = (vmax - vmin) > (high - low) * (1 + 1e-9)
    if kind == "proportion":
        note = f"spread {100 * (high - low):.1f} pp"
        return note + (f"; colours span {100 * (vmax - vmin):.0f} pp" if widened else "")
    note = f"spread {text_of(high - low)}"
    return note + (f"; colours span {text_of(vmax - vmin)}" if widened else "")


def _interval_grids(
    sweep: pd.DataFrame, x: str, y: str, value: str, rows_per_cell: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame] | None:
    """The n, CI low and CI high of each cell backed by exactly one row (NaN elsewhere: an
    interval of one run says nothing about a mean of several), or None without those columns."""
    columns = (f"{value}_n", f"{value}_lo", f"{value}_hi")
    if not all(column in sweep.columns for column in columns):
        return None
    single = rows_per_cell == 1
    grids = tuple(sweep_grid(sweep, x=x, y=y, value=column, agg="max").where(single) for column in columns)
    if not any(grid.notna().any().any() for grid in grids):
        return None
    return grids  # type: ignore[return-value]


def _bare(column: str) -> str:
    """A column's label without its unit: ``bufferTokens (tokens)`` -> ``bufferTokens``."""
    return column_label(column).split(" (")[0]


@plain_text_plot
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
    default_heading = f"{column_label(value)} by {x} × {y}"
    if not has_rows(sweep):
        return draw_no_data(ax, title=title or default_heading, reason="empty sweep")
    grid = sweep_grid(sweep, x=x, y=y, value=value, agg=agg)
    data = grid.to_numpy()
    finite = data[np.isfinite(data)]
    if not len(finite):
        return draw_no_data(ax, title=title or default_heading, reason=f"no {value} values")
    kind = value_kind(value, data)
    text_of = cell_formatter(value, data) if cell_format is None else cell_format.format
    rows_per_cell = (
        pd.Series(1, index=sweep.index)
        .groupby([_ordered_labels(sweep[y])[0].rename(y), _ordered_labels(sweep[x])[0].rename(x)])
        .sum()
        .unstack(x)
        .reindex(index=grid.index, columns=grid.columns)
    )
    intervals = _interval_grids(sweep, x, y, value, rows_per_cell) if kind == "proportion" else None
    low, high = float(finite.min()), float(finite.max())
    varies = high > low
    if varies:
        vmin, vmax = colour_range(data, kind)
        colormap = matplotlib.colormaps[cmap].with_extremes(bad=LIGHT_GREY)
    else:  # one colour: a gradient would invent differences that are not there
        vmin, vmax = low - 0.5, low + 0.5
        colormap = ListedColormap([NO_VARIATION_COLOR]).with_extremes(bad=LIGHT_GREY)
    image = ax.imshow(np.ma.masked_invalid(data), cmap=colormap, origin="lower", aspect="auto", vmin=vmin, vmax=vmax)
    for (row, column), cell in np.ndenumerate(data):
        if np.isfinite(cell):
            red, green, blue, _alpha = colormap(image.norm(cell))
            dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
            text = text_of(cell)
            if intervals is not None:
                text += _interval_text(*(grid.iloc[row, column] for grid in intervals))
            ax.text(
                column,
                row,
                text,
                ha="center",
                va="center",
                fontsize=FONT.label if text.count("\n") == 0 else FONT.annotation,
                color="white" if dark else "black",
            )
        else:
            ax.text(column, row, "–", ha="center", va="center", fontsize=FONT.label, color="black")
    ax.set_xticks(range(data.shape[1]), list(grid.columns))
    ax.set_yticks(range(data.shape[0]), list(grid.index))
    if varies:
        colorbar = ax.figure.colorbar(image, ax=ax, shrink=0.9, format=FuncFormatter(lambda v, _pos: text_of(v)))
        if kind == "count":
            colorbar.ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        colorbar.set_label(column_label(value), fontsize=FONT.label)
        colorbar.ax.tick_params(labelsize=FONT.tick)
    per_cell = int(rows_per_cell.max().max())
    notes = ([f"each cell: {agg} of up to {per_cell} rows"] if per_cell > 1 else []) + (
        ["– = not run"] if np.isnan(data).any() else []
    )
    if intervals is not None:
        notes.append("n questions, 95% CI")
    if varies:
        scale = _spread_note(kind, low, high, vmin, vmax, text_of)
    else:
        scale = f"no variation: {text_of(low)} in every cell" if len(finite) > 1 else "a single cell"
    heading = column_label(value)
    lines = [f"{heading[0].upper()}{heading[1:]} by {_bare(x)} × {_bare(y)}", scale] + (
        ["; ".join(notes)] if notes else []
    )
    default_title = "\n".join(lines)
    style_axes(ax, title=title or default_title, xlabel=column_label(x), ylabel=column_label(y), grid_axis="")
    for spine in ax.spines.values():
        spine.set_visible(False)
    return ax


def _interval_text(n: float, lo: float, hi: float) -> str:
    """The line under a cell's value, ``n=300, CI 45.0–55.0%``, with the parts the sweep has."""
    parts = [f"n={n:,.0f}"] if np.isfinite(n) else []
    if np.isfinite(lo) and np.isfinite(hi):
        parts.append(f"CI {100 * lo:.1f}–{100 * hi:.1f}%")
    return "\n" + ", ".join(parts) if parts else ""
