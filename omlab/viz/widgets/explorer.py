"""The explorer view: pick a run and a conversation, scrub through its steps.

Shows the sawtooth (:func:`~omlab.viz.plots.plot_context_timeline`) with a vertical line at the
selected step, the observation log at that step, the raw messages still in context (when the
conversation's messages were given) and the events around the step. The state lives in
:class:`~omlab.viz.widgets.explorer_state.ExplorerState`; this module only lays it out.

The timeline is drawn once per selection; moving the step only moves its line and re-renders the
PNG (about a tenth of a second).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from omlab.viz.plots import plot_context_timeline
from omlab.viz.style import FIGSIZE_WIDE, GREY
from omlab.viz.widgets._display import (
    StaticCopy,
    figure_png,
    frame_html,
    ipywidgets,
    png_html,
    show,
    static_html,
    text_html,
)
from omlab.viz.widgets.explorer_state import ExplorerState

EVENT_WINDOW = 5
"""Steps either side of the selected one whose events are listed."""


class ExplorerView:
    """ipywidgets layout over an :class:`ExplorerState`; display it, or its :attr:`widget`.

    Args:
        state: The state to show (a selection is made if it has none).
        event_window: Steps either side of the selected one whose events are listed.
    """

    def __init__(self, state: ExplorerState, *, event_window: int = EVENT_WINDOW) -> None:
        widgets = ipywidgets()
        self.state = state
        self.event_window = event_window
        if state.step is None:
            state.select()
        runs = state.runs()
        self.run = widgets.Dropdown(
            description="run",
            layout=widgets.Layout(width="60%"),
            options=[(f"{r.run_id} · {r.label}", r.run_id) for r in runs.itertuples()],
            value=state.run_id,
        )
        self.conversation = widgets.Dropdown(
            description="conversation",
            options=state.conversations(),
            value=state.conversation_id,
            layout=widgets.Layout(width="40%"),
        )
        first, last = state.step_range()
        self.step = widgets.IntSlider(
            description="step",
            min=first,
            max=last,
            value=state.step,
            continuous_update=False,
            layout=widgets.Layout(width="95%"),
        )
        self.static = StaticCopy()
        self.timeline = widgets.Image(format="png")
        self.info = widgets.HTML()
        self.observations = widgets.HTML()
        self.messages = widgets.HTML()
        self.events = widgets.HTML()
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.run, self.conversation]),
                self.step,
                self.timeline,
                self.info,
                widgets.HBox(
                    [
                        widgets.VBox(
                            [widgets.HTML("<b>observation log at this step</b>"), self.observations],
                            layout=widgets.Layout(width="50%"),
                        ),
                        widgets.VBox(
                            [widgets.HTML("<b>raw messages in context</b>"), self.messages],
                            layout=widgets.Layout(width="50%"),
                        ),
                    ]
                ),
                widgets.HTML(f"<b>events within {event_window} steps</b>"),
                self.events,
            ]
        )
        self._figure: Figure | None = None
        self._marker: Any = None
        self._updating = False
        self.run.observe(self._on_run, names="value")
        self.conversation.observe(self._on_conversation, names="value")
        self.step.observe(self._on_step, names="value")
        self._draw_selection()

    def _ipython_display_(self) -> None:
        show(self.widget, self.static)

    # ------------------------------------------------------------------ callbacks

    def _on_run(self, change: dict[str, Any]) -> None:
        if self._updating:
            return
        self.state.select(change["new"])
        self._updating = True
        try:
            self.conversation.options = self.state.conversations()
            self.conversation.value = self.state.conversation_id
        finally:
            self._updating = False
        self._draw_selection()

    def _on_conversation(self, change: dict[str, Any]) -> None:
        if self._updating or change["new"] is None:
            return
        self.state.select(self.state.run_id, change["new"])
        self._draw_selection()

    def _on_step(self, change: dict[str, Any]) -> None:
        if self._updating:
            return
        self.state.set_step(change["new"])
        self._draw_step()

    # ------------------------------------------------------------------ drawing

    def _draw_selection(self) -> None:
        """New run or conversation: redraw the timeline and reset the slider to the state's step."""
        state = self.state
        figure = Figure(figsize=FIGSIZE_WIDE, layout="constrained")
        ax = figure.add_subplot()
        plot_context_timeline(state.steps, state.events, conversation_id=state.conversation_id, ax=ax)
        self._marker = ax.axvline(state.step, color=GREY, linewidth=1.5, linestyle="-", zorder=5)
        self._figure = figure
        first, last = state.step_range()
        self._updating = True
        try:
            self.step.min, self.step.max = min(first, self.step.min), max(last, self.step.max)
            self.step.min, self.step.max = first, last
            self.step.value = state.step
        finally:
            self._updating = False
        self._draw_step()

    def _draw_step(self) -> None:
        state = self.state
        if self._marker is not None and self._figure is not None:
            self._marker.set_xdata([state.step, state.step])
            self.timeline.value = figure_png(self._figure)
        row = state.step_row()
        self.info.value = (
            f"step {state.step}: {_number(row['pending_tokens']):,.0f} raw message tokens pending, "
            f"{_number(row['observation_tokens']):,.0f} observation tokens, "
            f"{_number(row['buffered_chunks']):.0f} buffered chunk(s), blocked {_number(row['blocked_s']):.1f} s"
        )
        self.observations.value = text_html(state.observation_text(), empty="no observations yet")
        messages = state.messages_in_context()
        if messages is None:
            self.messages.value = (
                "<i>not available: pass messages= (the conversations) to ExplorerState to see them</i>"
            )
        else:
            lines = [f"[{m.role}] {m.text}" for m in messages]
            self.messages.value = text_html("\n".join(lines), empty="no raw messages in context")
        self.events.value = frame_html(state.events_near(self.event_window))
        self.static.set(
            static_html(
                [
                    png_html(self.timeline.value, alt="context timeline"),
                    f"<div>{self.info.value}</div>",
                    self.observations.value,
                    self.events.value,
                ],
                title=f"explorer: run {state.run_id}, conversation {state.conversation_id}, step {state.step}",
            )
        )


def _number(value: Any) -> float:
    """A step column's value as a float, 0 when the run did not record it."""
    return 0.0 if pd.isna(value) else float(value)


def explore(
    source: Any, *, messages: Any = None, run_id: str | None = None, conversation_id: str | None = None
) -> ExplorerView:
    """An explorer over ``source`` (see :class:`ExplorerState`), selecting ``run_id`` /
    ``conversation_id`` (default: the newest run, its first conversation). Display the result."""
    state = ExplorerState(source, messages=messages)
    state.select(run_id, conversation_id)
    return ExplorerView(state)


__all__ = ["EVENT_WINDOW", "ExplorerView", "explore"]
