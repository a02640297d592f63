"""Compression per cycle: how many input tokens each observation (or reflection) cycle turned into one.

An observation cycle reads raw message tokens and writes observation tokens; a reflection cycle
reads the observation log and writes a shorter one. The bars are each cycle's ratio
(``tokens_in / tokens_out``), the line the cumulative ratio (all input so far over all output so
far), which is the number to quote for a run.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import Patch

from omlab.viz.plots import _format as fmt
from omlab.viz.plots._canvas import axes_or_new, draw_no_data, legend_below
from omlab.viz.plots._frames import has_rows, numeric, require_columns, select_value, utc_times
from omlab.viz.style import BLACK, EVENT_COLORS, FIGSIZE_WIDE, GREY, plain_text_plot, style_axes

PLOT = "plot_compression"
EVENT_COLUMNS: tuple[str, ...] = ("ts", "type", "operation_type", "tokens_in", "tokens_out")
"""``events_df`` columns the compression plot needs (``seq`` and ``conversation_id`` are used
when present)."""

Operation = Literal["observation", "reflection"]

SYNC = "synchronous"
ACTIVATED = "buffered, then activated"


def compression_cycles(
    events: pd.DataFrame, *, operation: Operation = "observation", conversation_id: object = None
) -> pd.DataFrame:
    """One row per completed cycle of ``operation``, in time order, with its compression.

    Cycles are ``data-om-observation-end`` parts (synchronous cycles) and ``data-om-activation``
    parts (buffered work made active) whose ``operation_type`` is ``operation``. Rows whose
    ``tokens_out`` is missing or not positive cannot give a ratio and are left out.

    Args:
        events: ``events_df`` rows (see :data:`EVENT_COLUMNS`).
        operation: ``"observation"`` (messages -> observations) or ``"reflection"`` (observations
            -> condensed observations).
        conversation_id: Keep only this conversation's cycles.

    Returns:
        Columns ``cycle`` (1, 2, ...), ``ts``, ``source`` (``"synchronous"`` or ``"buffered, then
        activated"``), ``tokens_in``, ``tokens_out``, ``ratio`` and ``cumulative_ratio``.

    Raises:
        ValueError: Missing columns, an unknown ``operation`` or ``conversation_id``.
    """
    if operation not in ("observation", "reflection"):
        raise ValueError(f"{PLOT}: operation must be 'observation' or 'reflection', got {operation!r}")
    columns = ["cycle", "ts", "source", "tokens_in", "tokens_out", "ratio", "cumulative_ratio"]
    if not has_rows(events):
        return pd.DataFrame(columns=columns)
    require_columns(events, EVENT_COLUMNS, frame_name="events", plot=PLOT)
    if conversation_id is not None:
        events = select_value(events, "conversation_id", conversation_id, plot=PLOT, option="conversation_id")
    event_type = events["type"].astype(str)
    chosen = events[
        event_type.isin(["data-om-observation-end", "data-om-activation"])
        & (events["operation_type"].astype(str) == operation)
    ]
    tokens_in, tokens_out = numeric(chosen["tokens_in"]), numeric(chosen["tokens_out"])
    usable = tokens_in.notna() & (tokens_out > 0)
    chosen, tokens_in, tokens_out = chosen[usable], tokens_in[usable], tokens_out[usable]
    order_keys = ["ts", "seq"] if "seq" in chosen.columns else ["ts"]
    frame = (
        pd.DataFrame(
            {
                "ts": utc_times(chosen["ts"]),
                "seq": chosen["seq"] if "seq" in chosen.columns else 0,
                "source": np.where(chosen["type"].astype(str) == "data-om-activation", ACTIVATED, SYNC),
                "tokens_in": tokens_in,
                "tokens_out": tokens_out,
            }
        )
        .sort_values(order_keys, kind="stable")
        .reset_index(drop=True)
    )
    frame["ratio"] = frame["tokens_in"] / frame["tokens_out"]
    frame["cumulative_ratio"] = frame["tokens_in"].cumsum() / frame["tokens_out"].cumsum()
    frame["cycle"] = np.arange(1, len(frame) + 1)
    return frame[columns]


@plain_text_plot
def plot_compression(
    events: pd.DataFrame,
    *,
    operation: Operation = "observation",
    conversation_id: object = None,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Bar per cycle (its compression ratio) and the cumulative ratio line.

    Args:
        events: ``events_df`` rows (see :data:`EVENT_COLUMNS`).
        operation: ``"observation"`` or ``"reflection"`` cycles.
        conversation_id: Keep only this conversation's cycles.
        title: Replaces the default title.
        ax: Draw here; a new figure is made when None.

    Returns:
        The Axes; a "no data" note when there is no such cycle.
    """
    ax = axes_or_new(ax, FIGSIZE_WIDE)
    cycles = compression_cycles(events, operation=operation, conversation_id=conversation_id)
    what = "Observation" if operation == "observation" else "Reflection"
    if cycles.empty:
        return draw_no_data(
            ax,
            title=title or f"{what} compression per cycle",
            reason=f"no completed {operation} cycles with token counts",
        )
    colors = {SYNC: EVENT_COLORS[operation], ACTIVATED: EVENT_COLORS["activation"]}
    ax.bar(cycles["cycle"], cycles["ratio"], color=[colors[s] for s in cycles["source"]], width=0.8, alpha=0.85)
    ax.plot(
        cycles["cycle"],
        cycles["cumulative_ratio"],
        color=BLACK,
        linewidth=1.8,
        marker="o",
        markersize=3.5,
        label="cumulative (all input so far ÷ all output so far)",
    )
    ax.axhline(1.0, color=GREY, linewidth=0.8, linestyle=":", label="1× (no compression)")
    handles, _labels = ax.get_legend_handles_labels()
    handles = [
        Patch(color=colors[s], label=f"{s} cycle ({int((cycles['source'] == s).sum())})")
        for s in (SYNC, ACTIVATED)
        if (cycles["source"] == s).any()
    ] + handles
    legend_below(ax, handles=handles)
    ax.set_ylim(0, float(cycles["ratio"].max()) * 1.25)
    ax.set_xlim(0.3, max(len(cycles), 8) + 0.7)  # a lone cycle stays a bar, not a wall
    if len(cycles) <= 30:
        ax.set_xticks(cycles["cycle"])
    source = "messages → observations" if operation == "observation" else "observations → reflection"
    overall = fmt.ratio(float(cycles["cumulative_ratio"].iloc[-1]))
    style_axes(
        ax,
        title=title or f"{what} compression per cycle ({source}): overall {overall}",
        xlabel=f"{operation} cycle (in time order)",
        ylabel="compression (input tokens ÷ output tokens)",
    )
    return ax
