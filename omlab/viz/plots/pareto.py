"""Cost against accuracy across configs or runs, with the Pareto front marked.

A config is on the front when no other config is at least as cheap *and* at least as accurate
while being strictly better on one of the two. Those are the only configs worth choosing; the
rest are shown in grey.

A front can be read out of noise, so the plot says when it should not be: the accuracy CI of each
point is drawn when the points frame has one, the title notes when accuracy is the same at every
point (the "front" is then just the cheapest config), and when every CI overlaps every other (the
accuracy differences may be noise).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from omlab.viz.plots import _format as fmt
from omlab.viz.plots._canvas import axes_or_new, draw_no_data, legend_below
from omlab.viz.plots._frames import has_rows, numeric, require_columns
from omlab.viz.plots._labels import PointLabel, place_labels
from omlab.viz.style import (
    BLACK,
    FIGSIZE_SQUARE,
    FONT,
    GREY,
    VERMILLION,
    column_label,
    plain_text_plot,
    style_axes,
)

PLOT = "plot_cost_vs_accuracy"
POINT_COLUMNS: tuple[str, ...] = ("label", "cost_usd", "accuracy")
"""Columns of the points frame (the accuracy CI, ``lo``/``hi`` or the sweep table's
``accuracy_lo``/``accuracy_hi``, is drawn when present)."""
_LABEL_ALL_UP_TO = 15
_NAMES_INLINE_UP_TO = 4
"""More labelled positions than this get numbers beside the points and their names in the key."""


def pareto_front(df: pd.DataFrame, x: str, y: str, *, minimize_x: bool = True, maximize_y: bool = True) -> pd.Series:
    """Which rows are Pareto-optimal in ``(x, y)``.

    Row ``i`` is dominated when some row ``j`` is at least as good on both columns and strictly
    better on one ("good" = low ``x`` and high ``y`` by default). Identical rows do not dominate
    each other, so duplicates of a front point are all on the front. Rows with a missing ``x`` or
    ``y`` are never on the front and never dominate.

    Returns:
        A boolean Series aligned with ``df.index``.

    Raises:
        ValueError: A missing column.
    """
    missing = [c for c in (x, y) if c not in df.columns]
    if missing:
        raise ValueError(f"pareto_front: frame is missing columns {missing}; it has {list(df.columns)}")
    xs = numeric(df[x]).to_numpy() * (1.0 if minimize_x else -1.0)
    ys = numeric(df[y]).to_numpy() * (-1.0 if maximize_y else 1.0)
    valid = np.isfinite(xs) & np.isfinite(ys)
    # After the sign flips both columns are "lower is better"; [j, i] asks "does j dominate i?".
    no_worse = (xs[:, None] <= xs[None, :]) & (ys[:, None] <= ys[None, :])
    better = (xs[:, None] < xs[None, :]) | (ys[:, None] < ys[None, :])
    dominated = (no_worse & better & valid[:, None]).any(axis=0)
    return pd.Series(valid & ~dominated, index=df.index, name="pareto")


@plain_text_plot
def plot_cost_vs_accuracy(
    points: pd.DataFrame,
    *,
    x: str = "cost_usd",
    y: str = "accuracy",
    label: str = "label",
    log_x: bool = False,
    ci: tuple[str, str] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Scatter of configs/runs by cost and accuracy; the Pareto front is joined, coloured and named.

    Args:
        points: One row per config or run: ``label``, ``cost_usd``, ``accuracy`` (0-1), optional
            ``lo``/``hi`` or ``accuracy_lo``/``accuracy_hi`` (the accuracy CI, as the sweep
            table names it).
        x: Cost column (lower is better).
        y: Accuracy column (higher is better, a 0-1 fraction).
        label: Column naming each point. Every point is named when there are at most 15,
            otherwise only the front.
        log_x: Logarithmic cost axis (for costs spanning orders of magnitude).
        ci: The (low, high) columns of the ``y`` CI; None finds ``lo``/``hi``, else
            ``<y>_lo``/``<y>_hi``, and draws no bars when neither is there.
        title: Replaces the default title (the notes on accuracy stay under it).
        ax: Draw here; a new figure is made when None.

    Returns:
        The Axes; a "no data" note when there are no points.

    Raises:
        ValueError: Missing columns (``ci`` included, when given).
    """
    ax = axes_or_new(ax, FIGSIZE_SQUARE)
    if not has_rows(points):
        return draw_no_data(ax, title=title or "Cost vs accuracy", reason="no configs to compare")
    require_columns(points, (label, x, y), frame_name="points", plot=PLOT)
    frame = points.assign(_x=numeric(points[x]), _y=numeric(points[y])).dropna(subset=["_x", "_y"])
    if frame.empty:
        return draw_no_data(ax, title=title or "Cost vs accuracy", reason=f"every point lacks {x} or {y}")
    on_front = pareto_front(frame, "_x", "_y").to_numpy()

    interval = _ci_columns(points, y, ci)
    if interval is not None:
        frame = frame.assign(
            _lo=numeric(frame[interval[0]]).fillna(frame["_y"]), _hi=numeric(frame[interval[1]]).fillna(frame["_y"])
        )
        ax.errorbar(
            frame["_x"],
            frame["_y"],
            yerr=np.vstack([(frame["_y"] - frame["_lo"]).clip(lower=0), (frame["_hi"] - frame["_y"]).clip(lower=0)]),
            fmt="none",
            ecolor=GREY,
            elinewidth=1.0,
            capsize=3,
            zorder=1,
            label="95% CI",
        )
    ax.scatter(
        frame.loc[~on_front, "_x"],
        frame.loc[~on_front, "_y"],
        s=36,
        color=GREY,
        alpha=0.7,
        zorder=2,
        label=f"dominated ({int((~on_front).sum())})",
    )
    front = frame[on_front].sort_values(["_x", "_y"])
    ax.scatter(
        front["_x"],
        front["_y"],
        s=64,
        color=VERMILLION,
        edgecolor=BLACK,
        linewidth=0.6,
        zorder=3,
        label=f"Pareto front ({len(front)}): nothing is cheaper and as accurate",
    )
    ax.plot(front["_x"], front["_y"], drawstyle="steps-post", color=VERMILLION, linewidth=1.2, zorder=2)
    if log_x:
        ax.set_xscale("log")
    else:
        if x == "cost_usd":
            ax.xaxis.set_major_formatter(fmt.USD_AXIS)
        span = float(frame["_x"].max() - frame["_x"].min()) or max(abs(float(frame["_x"].max())), 1e-6)
        ax.set_xlim(float(frame["_x"].min()) - 0.08 * span, float(frame["_x"].max()) + 0.2 * span)
    ax.yaxis.set_major_formatter(fmt.PERCENT_AXIS)
    free = x == "cost_usd" and not (frame["_x"] > 0).any()
    default_title = "Cost vs accuracy" + (" (every cost is $0: offline run)" if free else "")
    style_axes(
        ax,
        title="\n".join([title or default_title, *_accuracy_notes(frame, y, interval is not None)]),
        xlabel=column_label(x) + " (lower is better)",
        ylabel=column_label(y) + " (higher is better)",
        grid_axis="both",
    )
    named = range(len(frame)) if len(frame) <= _LABEL_ALL_UP_TO else np.flatnonzero(on_front)
    groups = _point_groups(frame, label, on_front, named)
    labels = _point_labels(groups)
    handles, _ = ax.get_legend_handles_labels()
    if len(groups) > _NAMES_INLINE_UP_TO:
        # many points: a number beside each (short, so they do not collide), the names in the key
        labels, key = _numbered(groups, x, y)
        handles += [Line2D([], [], linestyle="none", label=entry) for entry in key]
    legend_below(ax, handles=handles, ncol=1)  # the legend is part of the layout the labels are placed in
    left_out = place_labels(ax, labels)
    if left_out:
        ax.text(
            1.0,
            1.01,
            f"{left_out} label{'s' if left_out > 1 else ''} left out where they would overlap",
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=FONT.annotation,
            color=GREY,
            in_layout=False,
        )
    return ax


def _numbered(groups: list[_Group], x: str, y: str) -> tuple[list[PointLabel], list[str]]:
    """A number beside each labelled position, in cost order (coincident points share one label,
    ``2, 3``), and the key lines ``"2, 3: name, name · $0.148 · 66.7%"``."""
    labels, key, first = [], [], 1
    for group in sorted(groups, key=lambda g: (g.x, -g.y)):
        numbers = ", ".join(str(n) for n in range(first, first + len(group.names)))
        first += len(group.names)
        labels.append(PointLabel(group.x, group.y, numbers, BLACK if group.on_front else GREY))
        cost = fmt.usd(group.x) if x == "cost_usd" else f"{group.x:.4g}"
        value = fmt.percent(group.y) if 0 <= group.y <= 1 else f"{group.y:.4g}"
        key.append(f"{numbers}: {', '.join(group.names)} · {cost} · {value}")
    # front points first: when numbers collide, the ones that matter most are placed
    return sorted(labels, key=lambda label: label.color != BLACK), key


def _ci_columns(points: pd.DataFrame, y: str, ci: tuple[str, str] | None) -> tuple[str, str] | None:
    if ci is not None:
        require_columns(points, ci, frame_name="points", plot=PLOT)
        return ci
    for candidate in (("lo", "hi"), (f"{y}_lo", f"{y}_hi")):
        if all(column in points.columns for column in candidate) and points[list(candidate)].notna().any().any():
            return candidate
    return None


def _accuracy_notes(frame: pd.DataFrame, y: str, has_ci: bool) -> list[str]:
    """Why the front may mean little: one accuracy everywhere, or CIs that all overlap."""
    if len(frame) < 2:
        return []
    values = frame["_y"]
    if values.max() == values.min():
        return [f"{column_label(y)} does not vary: {fmt.percent(float(values.iloc[0]))} at every point"]
    if has_ci and frame["_lo"].max() <= frame["_hi"].min():
        return [f"every 95% CI overlaps every other: the {column_label(y)} differences may be noise"]
    return []


class _Group(NamedTuple):
    """The points at one position: where, their names, and whether they are on the front."""

    x: float
    y: float
    names: list[str]
    on_front: bool


def _point_groups(frame: pd.DataFrame, label: str, on_front: np.ndarray, named) -> list[_Group]:
    """The named points grouped by position, front points first, then by cost."""
    groups: dict[tuple[float, float], list[int]] = {}
    for i in named:
        groups.setdefault((float(frame["_x"].iloc[i]), float(frame["_y"].iloc[i])), []).append(int(i))
    ordered = sorted(groups.items(), key=lambda item: (not on_front[item[1][0]], item[0]))
    return [
        _Group(x, y, [str(frame[label].iloc[i]) for i in rows], bool(on_front[rows[0]])) for (x, y), rows in ordered
    ]


def _point_labels(groups: list[_Group]) -> list[PointLabel]:
    """One label per position (coincident points share it), front points first, then by cost:
    when labels collide, the ones that matter most are placed first."""
    labels = []
    for group in groups:
        names = group.names
        text = (
            names[0]
            if len(names) == 1
            else (", ".join(names) if len(names) <= 3 else f"{', '.join(names[:2])} and {len(names) - 2} more")
        )
        labels.append(PointLabel(group.x, group.y, text, BLACK if group.on_front else GREY))
    return labels
