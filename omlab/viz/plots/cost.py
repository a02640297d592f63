"""What a run spent on model calls, by role, model or ``ModelByInputTokens`` tier.

With prices, the bars are dollars *as configured* (``cost_usd``: every call's tokens priced with
the run's own prices, calls served from the response cache included), split by a second dimension (by default the role when bars
are models or tiers, the model when bars are roles). Offline runs on omlab's built-in models cost
nothing, so when every cost is 0 or missing the plot shows input and output tokens instead and
says so in its title. The title also gives what the run *paid* (``cost_usd_paid``: only the calls
sent to a provider in this run; cached calls cost nothing), labelled, when the frame has it.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from omlab.viz.plots import _format as fmt
from omlab.viz.plots._canvas import axes_or_new, draw_no_data, legend_below
from omlab.viz.plots._frames import has_rows, numeric, require_columns
from omlab.viz.style import (
    FIGSIZE_BARS,
    FONT,
    GREY,
    ROLE_ORDER,
    TOKEN_PART_COLORS,
    categorical_colors,
    plain_text_plot,
    style_axes,
)

PLOT = "plot_cost_breakdown"
CALL_COLUMNS: tuple[str, ...] = (
    "role",
    "requested_model",
    "resolved_model",
    "tier",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)
"""``calls_df`` columns the cost plot needs."""

Dimension = Literal["role", "model", "tier"]
Metric = Literal["auto", "cost", "tokens"]
_DIMENSIONS = ("role", "model", "tier")
NO_TIER = "no tier"


def call_groups(calls: pd.DataFrame, dimension: Dimension) -> pd.Series:
    """The label of each call along ``dimension``.

    ``model`` is the resolved model (the requested one when the call never resolved), ``tier``
    reads ``≤ 10k tokens`` for a ``ModelByInputTokens`` threshold and ``no tier`` for calls that
    were not routed.
    """
    if dimension == "role":
        return calls["role"].astype(str)
    if dimension == "model":
        return calls["resolved_model"].where(calls["resolved_model"].notna(), calls["requested_model"]).astype(str)
    if dimension == "tier":
        return numeric(calls["tier"]).map(tier_label)
    raise ValueError(f"{PLOT}: by/stack must be one of {_DIMENSIONS}, got {dimension!r}")


def tier_label(threshold: float) -> str:
    """``≤ 10k tokens`` for a tier threshold, ``no tier`` for NaN."""
    return NO_TIER if pd.isna(threshold) else f"≤ {fmt.tokens(threshold)} tokens"


def cost_table(
    calls: pd.DataFrame,
    *,
    by: Dimension = "role",
    stack: Dimension | None = None,
    metric: Literal["cost", "tokens"] = "cost",
) -> pd.DataFrame:
    """The numbers behind the bars: one row per ``by`` group, one column per segment.

    With ``metric="cost"`` the segments are the ``stack`` groups (one ``total`` column when
    ``stack`` is None) holding summed ``cost_usd``; with ``metric="tokens"`` they are ``input``
    and ``output`` token sums. Rows are in display order: roles in pipeline order, tiers by
    threshold, anything else by total, largest first. A ``calls`` column counts the calls.
    """
    require_columns(calls, CALL_COLUMNS, frame_name="calls", plot=PLOT)
    groups = call_groups(calls, by)
    if metric == "tokens":
        table = (
            pd.DataFrame(
                {
                    "input": numeric(calls["input_tokens"]).fillna(0),
                    "output": numeric(calls["output_tokens"]).fillna(0),
                }
            )
            .groupby(groups)
            .sum()
        )
    elif metric == "cost":
        costs = numeric(calls["cost_usd"]).fillna(0)
        if stack is None:
            table = costs.groupby(groups).sum().to_frame("total")
        else:
            table = costs.groupby([groups, call_groups(calls, stack)]).sum().unstack(fill_value=0.0)
            table = table[_ordered(table.sum(axis=0), stack, calls)]
    else:
        raise ValueError(f"{PLOT}: metric must be 'auto', 'cost' or 'tokens', got {metric!r}")
    table = table.loc[_ordered(table.sum(axis=1), by, calls)]
    table.columns = table.columns.astype(str)
    table.columns.name = None
    table.index.name = by
    table["calls"] = groups.value_counts().reindex(table.index).to_numpy()
    return table


def _ordered(totals: pd.Series, dimension: Dimension, calls: pd.DataFrame) -> list[str]:
    names = list(totals.index)
    if dimension == "role":
        return [r for r in ROLE_ORDER if r in names] + sorted(n for n in names if n not in ROLE_ORDER)
    if dimension == "tier":
        thresholds = numeric(calls["tier"])
        position = dict(zip(thresholds.map(tier_label), thresholds.fillna(float("inf")), strict=True))
        return sorted(names, key=lambda name: position[name])
    return list(totals.sort_values(ascending=False, kind="stable").index)


@plain_text_plot
def plot_cost_breakdown(
    calls: pd.DataFrame,
    *,
    by: Dimension = "role",
    stack: Dimension | None | Literal["auto"] = "auto",
    metric: Metric = "auto",
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Horizontal stacked bars of cost (or tokens) per role, model or tier, totals at the bar ends.

    Args:
        calls: ``calls_df`` rows (see :data:`CALL_COLUMNS`).
        by: One bar per ``"role"``, ``"model"`` or ``"tier"``.
        stack: Split each cost bar by this dimension; ``"auto"`` = ``"model"`` when ``by`` is
            ``"role"``, else ``"role"``; None = no split. Ignored for tokens.
        metric: ``"cost"`` (USD), ``"tokens"`` (input + output), or ``"auto"``: cost unless every
            cost is 0 or missing (an offline run), then tokens with a title that says so.
        title: Replaces the default title.
        ax: Draw here; a new figure is made when None.

    Returns:
        The Axes; a "no data" note when there are no calls.

    Raises:
        ValueError: Missing columns or an unknown ``by`` / ``stack`` / ``metric``.
    """
    ax = axes_or_new(ax, FIGSIZE_BARS)
    if by not in _DIMENSIONS:
        raise ValueError(f"{PLOT}: by must be one of {_DIMENSIONS}, got {by!r}")
    if metric not in ("auto", "cost", "tokens"):
        raise ValueError(f"{PLOT}: metric must be 'auto', 'cost' or 'tokens', got {metric!r}")
    if not has_rows(calls):
        return draw_no_data(ax, title=title or f"Cost by {by}", reason="no model calls")
    require_columns(calls, CALL_COLUMNS, frame_name="calls", plot=PLOT)
    unpriced = not (numeric(calls["cost_usd"]).fillna(0) > 0).any()
    resolved = ("tokens" if unpriced else "cost") if metric == "auto" else metric
    if stack == "auto":
        stack = "model" if by == "role" else "role"
    if stack is not None and stack not in _DIMENSIONS:
        raise ValueError(f"{PLOT}: stack must be one of {_DIMENSIONS}, 'auto' or None, got {stack!r}")
    table = cost_table(calls, by=by, stack=None if stack == by else stack, metric=resolved)
    counts = table.pop("calls")

    segments = list(table.columns)
    colors = TOKEN_PART_COLORS if resolved == "tokens" else categorical_colors(segments)
    rows = np.arange(len(table))[::-1]  # first group on top
    left = np.zeros(len(table))
    for segment in segments:
        values = table[segment].to_numpy(dtype=float)
        label = f"{segment} tokens" if resolved == "tokens" else segment
        ax.barh(
            rows,
            values,
            left=left,
            color=colors.get(segment, GREY) if segment != "total" else GREY,
            height=0.65,
            label=label,
        )
        left += values
    value_text = fmt.usd if resolved == "cost" else (lambda v: f"{fmt.tokens(v)} tok")
    for row, total in zip(rows, left, strict=True):
        ax.annotate(
            value_text(total),
            (total, row),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=FONT.annotation,
        )
    ax.set_yticks(rows, [f"{name}\n({n} calls)" for name, n in zip(table.index, counts, strict=True)])
    ax.set_xlim(0, max(float(left.max()), 1e-12) * 1.18)
    ax.xaxis.set_major_formatter(fmt.USD_AXIS if resolved == "cost" else fmt.TOKENS_AXIS)
    if len(segments) > 1:
        legend_below(
            ax,
            ncol=min(len(segments), 3),
            title=None if resolved == "tokens" else stack,
            title_fontsize=FONT.legend,
        )
    if resolved == "cost":
        default_title = f"Cost as configured by {by}: total {fmt.usd(float(left.sum()))}"
        if "cost_usd_paid" in calls.columns:
            paid = float(numeric(calls["cost_usd_paid"]).fillna(0).sum())
            default_title += f" (paid in this run: {fmt.usd(paid)})"
        xlabel = "cost as configured (USD)"
    else:
        default_title = f"Tokens by {by}: total {fmt.tokens(float(left.sum()))}"
        if metric == "auto":
            default_title += " (offline run: no prices, every cost is $0)"
        xlabel = "tokens (input + output)"
    style_axes(ax, title=title or default_title, xlabel=xlabel, ylabel="", grid_axis="x")
    return ax
