"""The comparison view: two runs side by side (two configs, two tiers...).

Their sawtooth timelines (one conversation, chosen in a dropdown), cost breakdowns by role,
accuracy by question type, and two diff tables: the harness metrics and the timeline summary.
The state lives in :class:`~omlab.viz.widgets.compare_state.CompareState`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from omlab.bench.results import ResultsCatalog
from omlab.viz.plots import plot_accuracy_by_type, plot_context_timeline, plot_cost_breakdown
from omlab.viz.plots._canvas import draw_no_data
from omlab.viz.plots.accuracy import scored_column
from omlab.viz.style import FIGSIZE_BARS, FIGSIZE_WIDE, FONT, plain_texts
from omlab.viz.widgets._display import StaticCopy, figure_png, frame_html, ipywidgets, png_html, show, static_html
from omlab.viz.widgets.compare_state import CompareState, RunSide


def side_by_side(
    state: CompareState, draw: Any, figsize: tuple[float, float], *, same_scale: str | None = None
) -> Figure:
    """A figure with ``draw(side, ax)`` for the left and the right run, titled by their labels.

    Both sides share one legend under the figure (two legends under two narrow axes print on top
    of each other and squeeze the axes), and with ``same_scale="y"`` (or ``"x"``) one value scale,
    so equal heights mean equal values.
    """
    width, height = figsize
    figure = Figure(figsize=(width * 1.4, height), layout="constrained")
    axes = figure.subplots(1, 2)
    for side, ax in zip(state.sides(), axes, strict=True):
        draw(side, ax)
        ax.set_title(f"{side.label}\n{ax.get_title(loc='left')}", fontsize=10, loc="left")
    if same_scale:
        share_scale(axes, same_scale)
    shared_legend(figure, axes)
    return plain_texts(figure)


def diff_html(diff: pd.DataFrame, *, max_rows: int = 40, digits: int = 3) -> str:
    """A diff table (:data:`DIFF_COLUMNS`) as HTML: ``relative`` as a signed percent (``-2.0%``,
    never ``-0.0``) and the delta's interval as ``[lo, hi]`` (blank where there is none)."""
    shown = diff.copy()
    shown["relative"] = [f"{value:+.1%}" if pd.notna(value) else "" for value in shown["relative"]]
    shown["delta 95% CI"] = [
        f"[{lo:+.{digits}f}, {hi:+.{digits}f}]" if pd.notna(lo) and pd.notna(hi) else ""
        for lo, hi in zip(shown["delta_lo"], shown["delta_hi"], strict=True)
    ]
    columns = ["name", "group_key", "left", "right", "delta", "delta 95% CI", "relative"]
    return frame_html(shown[columns], max_rows=max_rows, digits=digits)


def share_scale(axes: Any, axis: str) -> None:
    """Give every axes the limits and ticks of the one with the widest ``axis`` range.

    Axes whose ``axis`` measure different things (dollars on one side, tokens on the other) keep
    their own scales.
    """
    labels = {ax.get_ylabel() if axis == "y" else ax.get_xlabel() for ax in axes}
    if len(labels) > 1:
        return
    get_lim = (lambda ax: ax.get_ylim()) if axis == "y" else (lambda ax: ax.get_xlim())
    widest = max(axes, key=lambda ax: get_lim(ax)[1] - get_lim(ax)[0])
    low, high = get_lim(widest)
    ticks = widest.get_yticks() if axis == "y" else widest.get_xticks()
    for ax in axes:
        if axis == "y":
            ax.set_ylim(low, high)
            ax.set_yticks([t for t in ticks if low <= t <= high])
        else:
            ax.set_xlim(low, high)
            ax.set_xticks([t for t in ticks if low <= t <= high])


def shared_legend(figure: Figure, axes: Any) -> None:
    """One legend under ``figure`` with every entry of ``axes`` once.

    Entries are matched by their text up to a per-side detail (``" (12)"`` counts, ``" = 4k"``
    values), which the shared entry leaves out: the two sides' own numbers are in the tables.
    """
    entries: dict[str, Any] = {}
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        for handle, label in zip(handles, labels, strict=True):
            entries.setdefault(_legend_key(label), handle)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if entries:
        figure.legend(
            list(entries.values()),
            list(entries),
            loc="outside lower center",
            ncol=min(3, len(entries)),
            fontsize=FONT.legend,
            frameon=False,
        )


def _legend_key(label: str) -> str:
    for separator in (" = ", " ("):
        label = label.split(separator, 1)[0]
    return label


def draw_timeline(state: CompareState, side: RunSide, ax: Axes) -> Axes:
    """The selected conversation's sawtooth of ``side``."""
    steps, events = state.timeline(side)
    return plot_context_timeline(steps, events, ax=ax)


def draw_cost(side: RunSide, ax: Axes) -> Axes:
    """``side``'s cost (or tokens, when every call was free) by role."""
    return plot_cost_breakdown(side.calls, by="role", ax=ax)


def draw_accuracy(side: RunSide, ax: Axes) -> Axes:
    """``side``'s accuracy by question type, from its metrics or else its scored answers."""
    metrics = side.metrics
    if len(metrics) and (metrics["name"].astype(str) == "accuracy").any():
        return plot_accuracy_by_type(metrics, ax=ax)
    if len(side.answers) and "question_type" in side.answers.columns and scored_column(side.answers):
        return plot_accuracy_by_type(side.answers, ax=ax)
    return draw_no_data(ax, title="Accuracy by question type", reason="no scored answers")


class CompareView:
    """ipywidgets layout over a :class:`CompareState`; display it, or its :attr:`widget`."""

    def __init__(self, state: CompareState) -> None:
        widgets = ipywidgets()
        self.state = state
        conversations = state.conversations()
        self.conversation = widgets.Dropdown(
            description="conversation", options=conversations, value=conversations[0] if conversations else None
        )
        self.static = StaticCopy()
        # the PNG fills the output's width: a 1440-px screen gives each side's axes ~450 px
        self.timelines = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="1300px"))
        self.costs = widgets.Image(format="png")
        self.accuracy = widgets.Image(format="png")
        self.metrics = widgets.HTML()
        self.timeline_table = widgets.HTML()
        left, right = state.sides()
        self.widget = widgets.VBox(
            [
                widgets.HTML(
                    f"<b>left:</b> {left.label} ({left.run_id}) &nbsp; <b>right:</b> {right.label} ({right.run_id})"
                ),
                self.conversation,
                self.timelines,
                widgets.HTML("<b>timeline summary (right - left)</b>"),
                self.timeline_table,
                self.costs,
                self.accuracy,
                widgets.HTML("<b>metrics (group 'all'; right - left)</b>"),
                self.metrics,
            ]
        )
        self.conversation.observe(self._on_conversation, names="value")
        if conversations:
            state.select_conversation(conversations[0])
        self._draw_runs()
        self._draw_conversation()

    def _ipython_display_(self) -> None:
        show(self.widget, self.static)

    def _on_conversation(self, change: dict[str, Any]) -> None:
        self.state.select_conversation(change["new"])
        self._draw_conversation()

    def _draw_runs(self) -> None:
        state = self.state
        self.costs.value = figure_png(side_by_side(state, draw_cost, FIGSIZE_BARS, same_scale="x"))
        self.accuracy.value = figure_png(side_by_side(state, draw_accuracy, FIGSIZE_BARS))
        self.metrics.value = diff_html(state.metrics_diff(), max_rows=80)

    def _draw_conversation(self) -> None:
        state = self.state
        self.timelines.value = figure_png(
            side_by_side(state, lambda side, ax: draw_timeline(state, side, ax), FIGSIZE_WIDE, same_scale="y")
        )
        self.timeline_table.value = diff_html(state.timeline_diff(), digits=1)
        self._draw_static()

    def _draw_static(self) -> None:
        left, right = self.state.sides()
        self.static.set(
            static_html(
                [
                    png_html(self.timelines.value, alt="context timelines"),
                    self.timeline_table.value,
                    png_html(self.costs.value, alt="cost by role"),
                    png_html(self.accuracy.value, alt="accuracy by question type"),
                    self.metrics.value,
                ],
                title=f"comparison: {left.label} vs {right.label}",
            )
        )


def compare(catalog: ResultsCatalog | str | Path, left: str, right: str) -> CompareView:
    """A comparison of runs ``left`` and ``right`` of ``catalog``. Display the result."""
    return CompareView(CompareState(catalog, left, right))


__all__ = [
    "CompareView",
    "compare",
    "draw_accuracy",
    "draw_cost",
    "draw_timeline",
    "share_scale",
    "shared_legend",
    "side_by_side",
]
