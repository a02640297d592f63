"""Production's Observational Memory beside omlab's replay of the same thread.

Pure functions of the frames of ``omlab.bench.report.production`` (``log_over_time_df`` and
``generations_df``): the observation log's tokens over time, the peak tokens of each generation,
and the reflections over time, each with one colour per source (production grey, omlab blue).
:func:`plot_production_comparison` draws the three side by side.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from omlab.viz.plots._canvas import axes_or_new, draw_no_data, legend_below
from omlab.viz.plots._frames import has_rows, require_columns, utc_times
from omlab.viz.style import BLUE, FIGSIZE_BARS, FIGSIZE_WIDE, GREY, plain_text_plot, style_axes

PLOT = "plot_production_comparison"
COLORS = {"production": GREY, "omlab": BLUE}
LABELS = {"production": "production (stored by Mastra)", "omlab": "omlab replay"}
LOG_COLUMNS = ("source", "conversation_id", "ts", "observation_tokens", "generation")
GENERATION_COLUMNS = ("source", "conversation_id", "generation", "started_at", "peak_tokens")


def _one_thread(frame: pd.DataFrame, conversation_id: object) -> tuple[pd.DataFrame, object]:
    if conversation_id is None:
        conversation_id = min(frame["conversation_id"].astype(str))
    chosen = frame[frame["conversation_id"].astype(str) == str(conversation_id)]
    if chosen.empty:
        known = ", ".join(sorted(set(frame["conversation_id"].astype(str))))
        raise ValueError(f"{PLOT}: no conversation_id {conversation_id!r} (have {known})")
    return chosen, conversation_id


def _known(frame: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """The rows where every one of ``columns`` has a value (times parsed, numbers numeric)."""
    known = frame.copy()
    for column in columns:
        if column in ("ts", "started_at"):
            known[column] = utc_times(known[column])
        else:
            known[column] = pd.to_numeric(known[column], errors="coerce")
    return known.dropna(subset=list(columns))


def _time_axis(ax: Axes) -> None:
    locator = mdates.AutoDateLocator(maxticks=6)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))


@plain_text_plot
def plot_log_over_time(log: pd.DataFrame, ax: Axes | None = None, *, conversation_id: object = None) -> Axes:
    """Observation log tokens over time for each source (step lines)."""
    ax = axes_or_new(ax, FIGSIZE_WIDE)
    title = "Observation log size over time"
    if not has_rows(log):
        return draw_no_data(ax, title=title, reason="no log rows")
    require_columns(log, LOG_COLUMNS, frame_name="log", plot=PLOT)
    thread, conversation_id = _one_thread(log, conversation_id)
    thread = _known(thread, "ts", "observation_tokens")
    if thread.empty:
        return draw_no_data(ax, title=title, reason="no log size recorded")
    for source, group in thread.groupby("source", sort=False):
        group = group.sort_values("ts", kind="stable")
        ax.step(
            group["ts"],
            group["observation_tokens"],
            where="post",
            color=COLORS.get(source, GREY),
            label=LABELS.get(source, source),
            linewidth=1.6,
        )
    style_axes(ax, title=f"{title} · {conversation_id}", xlabel="time (UTC)", ylabel="observation tokens")
    _time_axis(ax)
    legend_below(ax)
    return ax


@plain_text_plot
def plot_generation_tokens(
    generations: pd.DataFrame, ax: Axes | None = None, *, conversation_id: object = None
) -> Axes:
    """Peak observation tokens of each generation, the sources' bars side by side."""
    ax = axes_or_new(ax, FIGSIZE_BARS)
    title = "Tokens per generation"
    if not has_rows(generations):
        return draw_no_data(ax, title=title, reason="no generations")
    require_columns(generations, GENERATION_COLUMNS, frame_name="generations", plot=PLOT)
    thread, conversation_id = _one_thread(generations, conversation_id)
    thread = _known(thread, "generation", "peak_tokens")
    if thread.empty:
        return draw_no_data(ax, title=title, reason="no generation has its tokens")
    sources = [s for s in ("production", "omlab") if s in set(thread["source"])]
    count = int(thread["generation"].max()) + 1
    width = 0.8 / max(len(sources), 1)
    for index, source in enumerate(sources):
        rows = thread[thread["source"] == source]
        x = rows["generation"].to_numpy(dtype=float) + (index - (len(sources) - 1) / 2) * width
        ax.bar(x, rows["peak_tokens"], width=width, color=COLORS.get(source, GREY), label=LABELS.get(source, source))
    ax.set_xticks(np.arange(count))
    style_axes(
        ax,
        title=f"{title} · {conversation_id}",
        xlabel="generation (0 = before any reflection)",
        ylabel="peak observation tokens",
    )
    legend_below(ax)
    return ax


@plain_text_plot
def plot_reflections(generations: pd.DataFrame, ax: Axes | None = None, *, conversation_id: object = None) -> Axes:
    """Reflections so far over time for each source (a step at each generation's start)."""
    ax = axes_or_new(ax, FIGSIZE_BARS)
    title = "Reflections"
    if not has_rows(generations):
        return draw_no_data(ax, title=title, reason="no generations")
    require_columns(generations, GENERATION_COLUMNS, frame_name="generations", plot=PLOT)
    thread, conversation_id = _one_thread(generations, conversation_id)
    thread = _known(thread, "generation", "started_at")
    if thread.empty:
        return draw_no_data(ax, title=title, reason="no generation has its start time")
    for source, group in thread.groupby("source", sort=False):
        group = group.sort_values("generation")
        total = int(group["generation"].max())
        ax.step(
            group["started_at"],
            group["generation"],
            where="post",
            color=COLORS.get(source, GREY),
            label=f"{LABELS.get(source, source)}: {total}",
            linewidth=1.6,
            marker="o",
            markersize=4,
        )
    style_axes(ax, title=f"{title} · {conversation_id}", xlabel="time (UTC)", ylabel="reflections so far")
    _time_axis(ax)
    legend_below(ax, ncol=1)
    return ax


@plain_text_plot
def plot_production_comparison(
    log: pd.DataFrame,
    generations: pd.DataFrame,
    axes: Sequence[Axes] | None = None,
    *,
    conversation_id: object = None,
) -> Sequence[Axes]:
    """The three comparison plots of one thread on ``axes`` (three of them) or a new wide figure."""
    if axes is None:
        figure = Figure(figsize=(16.0, 4.8), layout="constrained")
        axes = figure.subplots(1, 3, gridspec_kw={"width_ratios": [2, 1, 1]})
    if len(axes) != 3:
        raise ValueError(f"{PLOT}: needs 3 axes, got {len(axes)}")
    plot_log_over_time(log, axes[0], conversation_id=conversation_id)
    plot_generation_tokens(generations, axes[1], conversation_id=conversation_id)
    plot_reflections(generations, axes[2], conversation_id=conversation_id)
    return list(axes)
