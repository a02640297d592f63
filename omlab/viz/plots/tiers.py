"""Which ``ModelByInputTokens`` tier served the routed calls, and what share of the work each took.

A router picks the tier whose ``upTo`` threshold covers a call's input size. For each tier (and
the model it resolved to) the plot shows its share of the routed calls, of their input tokens and,
when calls are priced, of their cost, each bar labelled with the absolute number. Shares put
counts, tokens and dollars on one axis: a tier that takes few calls but most tokens stands out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from omlab.viz.plots import _format as fmt
from omlab.viz.plots._canvas import axes_or_new, draw_no_data, legend_below
from omlab.viz.plots._frames import has_rows, numeric, require_columns, select_value
from omlab.viz.plots.cost import tier_label
from omlab.viz.style import BLUE, FIGSIZE_BARS, FONT, GREEN, ORANGE, plain_text_plot, style_axes

PLOT = "plot_tier_routing"
CALL_COLUMNS: tuple[str, ...] = (
    "role",
    "resolved_model",
    "tier",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)
"""``calls_df`` columns the tier plot needs."""

_X_LIMIT = 1.45  # past 100%, so the labels of a 100% bar fit inside the axes
_MEASURES: tuple[tuple[str, str, str], ...] = (
    ("share_calls", "calls", BLUE),
    ("share_input_tokens", "input tokens", ORANGE),
    ("share_cost", "cost", GREEN),
)


def tier_table(calls: pd.DataFrame, *, role: str | None = None) -> pd.DataFrame:
    """One row per (tier, resolved model) among routed calls (``tier`` not null), smallest tier first.

    Columns: ``tier`` (the ``upTo`` threshold), ``resolved_model``, ``label``, ``calls``,
    ``input_tokens``, ``output_tokens``, ``cost_usd``, and the shares ``share_calls``,
    ``share_input_tokens``, ``share_cost`` (NaN when no routed call has a price).

    Raises:
        ValueError: Missing columns or an unknown ``role``.
    """
    require_columns(calls, CALL_COLUMNS, frame_name="calls", plot=PLOT)
    if role is not None:
        calls = select_value(calls, "role", role, plot=PLOT, option="role")
    routed = calls.assign(tier=numeric(calls["tier"]))
    routed = routed[routed["tier"].notna()]
    columns = [
        "tier",
        "resolved_model",
        "label",
        "calls",
        "routing_tokens_min",
        "routing_tokens_max",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "share_calls",
        "share_input_tokens",
        "share_cost",
    ]
    if routed.empty:
        return pd.DataFrame(columns=columns)
    # runs written before routing_tokens was recorded have no such column: their range is unknown
    routing = numeric(routed["routing_tokens"]) if "routing_tokens" in routed.columns else np.nan
    routed = routed.assign(
        resolved_model=routed["resolved_model"].fillna("unresolved").astype(str),
        input_tokens=numeric(routed["input_tokens"]).fillna(0),
        output_tokens=numeric(routed["output_tokens"]).fillna(0),
        cost_usd=numeric(routed["cost_usd"]).fillna(0),
        routing_tokens=routing,
        calls=1,
    )
    groups = routed.groupby(["tier", "resolved_model"], as_index=False)
    table = (
        groups[["calls", "input_tokens", "output_tokens", "cost_usd"]]
        .sum()
        .merge(
            groups.agg(routing_tokens_min=("routing_tokens", "min"), routing_tokens_max=("routing_tokens", "max")),
            on=["tier", "resolved_model"],
        )
        .sort_values(["tier", "calls"], ascending=[True, False], kind="stable")
        .reset_index(drop=True)
    )
    table["label"] = [_label(row) for row in table.itertuples()]
    table["share_calls"] = table["calls"] / table["calls"].sum()
    table["share_input_tokens"] = (
        table["input_tokens"] / table["input_tokens"].sum() if table["input_tokens"].sum() > 0 else np.nan
    )
    table["share_cost"] = table["cost_usd"] / table["cost_usd"].sum() if table["cost_usd"].sum() > 0 else np.nan
    return table[columns]


def _label(row) -> str:
    """``≤ 700 tokens\n→ model\nrouted on 120–690 tokens``: the tier, its model and the inputs the
    router chose it for (the prompt sent is larger: instructions, previous observations)."""
    label = f"{tier_label(row.tier)}\n→ {row.resolved_model}"
    if pd.isna(row.routing_tokens_min):
        return label
    low, high = fmt.tokens(row.routing_tokens_min), fmt.tokens(row.routing_tokens_max)
    return f"{label}\nrouted on {low if low == high else f'{low}–{high}'} tokens"


@plain_text_plot
def plot_tier_routing(
    calls: pd.DataFrame, *, role: str | None = None, title: str | None = None, ax: Axes | None = None
) -> Axes:
    """Grouped horizontal bars per tier: share of routed calls, input tokens and cost.

    Args:
        calls: ``calls_df`` rows (see :data:`CALL_COLUMNS`).
        role: Only this role's calls (``"observer"``, ``"reflector"``...).
        title: Replaces the default title.
        ax: Draw here; a new figure is made when None.

    Returns:
        The Axes; a "no data" note when no call was routed by a ``ModelByInputTokens``.

    Raises:
        ValueError: See :func:`tier_table`.
    """
    ax = axes_or_new(ax, FIGSIZE_BARS)
    scope = f" ({role} calls)" if role else ""
    default_title = f"ModelByInputTokens routing{scope}: what each tier took"
    if not has_rows(calls):
        return draw_no_data(ax, title=title or default_title, reason="no model calls")
    table = tier_table(calls, role=role)
    if table.empty:
        return draw_no_data(ax, title=title or default_title, reason="no call was routed by input size")
    measures = [m for m in _MEASURES if table[m[0]].notna().any()]
    height = 0.8 / len(measures)
    rows = np.arange(len(table))[::-1].astype(float)
    absolute = {
        "share_calls": lambda r: f"{int(r['calls'])} calls",
        "share_input_tokens": lambda r: f"{fmt.tokens(r['input_tokens'])} input tok",
        "share_cost": lambda r: fmt.usd(r["cost_usd"]),
    }
    for position, (column, name, color) in enumerate(measures):
        offsets = rows + (len(measures) - 1) / 2 * height - position * height
        ax.barh(offsets, table[column], height=height * 0.92, color=color, label=f"share of {name}")
        for offset, (_, row) in zip(offsets, table.iterrows(), strict=True):
            ax.annotate(
                f"{fmt.percent(row[column])} · {absolute[column](row)}",
                (row[column], offset),
                xytext=(4, 0),
                textcoords="offset points",
                va="center",
                fontsize=FONT.annotation,
            )
    ax.set_yticks(rows, list(table["label"]))
    ax.set_xlim(0, _X_LIMIT)
    ax.xaxis.set_major_formatter(fmt.PERCENT_AXIS)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    legend_below(ax, ncol=len(measures))
    style_axes(
        ax,
        title=title or default_title,
        xlabel="share of all routed calls / tokens / cost",
        ylabel="",
        grid_axis="x",
    )
    return ax
