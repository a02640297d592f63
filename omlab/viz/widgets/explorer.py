"""The explorer view: pick a run and a conversation, scrub through its steps.

Shows the sawtooth (:func:`~omlab.viz.plots.plot_context_timeline`) with a vertical line at the
selected step, the observation log at that step with the lines the step added highlighted and the
ones it removed listed, the raw messages still in context (when the conversation's messages were
given) and the events around the step. Previous / next event buttons jump to the nearest step where
something happened; the play button walks the slider step by step. The state lives in
:class:`~omlab.viz.widgets.explorer_state.ExplorerState`; this module only lays it out.

Text wraps between words only: notebook front ends style ``<pre>`` in outputs with
``word-break: break-all`` (JupyterLab does), which cuts words anywhere, so every text block here
sets ``white-space: pre-wrap; overflow-wrap: break-word; word-break: normal`` itself, and the events
table does not wrap its cells at all (ids and event types break at their hyphens otherwise) but
scrolls sideways.

The timeline is drawn once per selection; moving the step only moves its line and re-renders the
PNG (about a tenth of a second).
"""

from __future__ import annotations

import html
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
from omlab.viz.widgets.explorer_state import ExplorerState, LogChanges

EVENT_WINDOW = 5
"""Steps either side of the selected one whose events are listed."""

PLAY_INTERVAL_MS = 600
"""Time between two steps while playing (a redraw takes about a tenth of a second)."""

WRAP_STYLE = "white-space:pre-wrap;overflow-wrap:break-word;word-break:normal"
"""Wrap text between words only (see the module docstring)."""

ADDED_CLASS = "omlab-log-added"
REMOVED_CLASS = "omlab-log-removed"
_TEXT_BLOCK = f"{WRAP_STYLE};font-family:var(--jp-code-font-family,monospace);font-size:12px;line-height:1.45"
_LINE = "padding-left:6px;border-left:3px solid transparent"
_ADDED = "padding-left:6px;border-left:3px solid #2E7D32;background:#E8F5E9"
_REMOVED = (
    "padding-left:6px;border-left:3px solid #C62828;background:#FDECEA;color:#8E0000;text-decoration:line-through"
)


def log_changes_html(changes: LogChanges, *, height_px: int = 320, empty: str = "no observations yet") -> str:
    """The observation log with the lines a step added highlighted (green left border, class
    :data:`ADDED_CLASS`) and the lines it removed listed under it (struck through, class
    :data:`REMOVED_CLASS`), headed by a count of both.

    The log box scrolls and opens at its end, where new observations are appended (a
    ``column-reverse`` flex box starts scrolled to the bottom).
    """
    added, removed = len(changes.added), len(changes.removed)
    summary = (
        f"<div style='font-size:12px;color:#444;margin-bottom:2px'>this step: "
        f"<span style='color:#2E7D32'><b>+{added}</b> line{'' if added == 1 else 's'} added</span>, "
        f"<span style='color:#C62828'><b>&minus;{removed}</b> removed</span></div>"
    )
    if not any(line.text.strip() for line in changes.lines):
        log = f"<div style='{_TEXT_BLOCK}'><i>{html.escape(empty)}</i></div>"
    else:
        rows = "".join(
            f"<div class='{ADDED_CLASS}' style='{_ADDED}'>{html.escape(line.text)}</div>"
            if line.added
            else f"<div style='{_LINE}'>{html.escape(line.text) or '&nbsp;'}</div>"
            for line in changes.lines
        )
        log = (
            f"<div style='max-height:{height_px}px;overflow:auto;display:flex;flex-direction:column-reverse'>"
            f"<div style='{_TEXT_BLOCK}'>{rows}</div></div>"
        )
    gone = ""
    if removed:
        rows = "".join(
            f"<div class='{REMOVED_CLASS}' style='{_REMOVED}'>{html.escape(text)}</div>" for text in changes.removed
        )
        gone = (
            f"<div style='font-size:12px;color:#C62828;margin-top:6px'>removed at this step "
            f"({removed} line{'' if removed == 1 else 's'})</div>"
            f"<div style='max-height:{height_px // 2}px;overflow:auto;{_TEXT_BLOCK}'>{rows}</div>"
        )
    return summary + log + gone


def _readable(block: str) -> str:
    """``block`` (text from :func:`text_html`) at a readable line height: widget HTML inherits the
    widgets' 28 px control height as its line height."""
    return f"<div style='line-height:1.45'>{block}</div>"


def _unwrapped_table(table: str) -> str:
    """An events table whose cells do not wrap (``white-space`` is inherited) and that scrolls
    sideways when it is wider than the view."""
    return f"<div style='white-space:nowrap;overflow-x:auto'>{table}</div>"


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
            options=[(r.label, r.run_id) for r in runs.itertuples()],
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
            layout=widgets.Layout(width="auto", flex="1 1 auto"),
        )
        self.play = widgets.Play(
            min=first,
            max=last,
            value=state.step,
            step=1,
            interval=PLAY_INTERVAL_MS,
            show_repeat=False,
            tooltip="play through the steps",
        )
        # a kernel-side link, so the view (and its tests) work the same with or without a front end
        widgets.link((self.play, "value"), (self.step, "value"))
        self.previous_event = widgets.Button(
            description="◀ previous event",
            tooltip="go to the last step before this one where an event happened",
            layout=widgets.Layout(width="150px"),
        )
        self.next_event = widgets.Button(
            description="next event ▶",
            tooltip="go to the first step after this one where an event happened",
            layout=widgets.Layout(width="150px"),
        )
        self.previous_event.on_click(lambda _button: self._go_to(self.state.previous_event_step()))
        self.next_event.on_click(lambda _button: self._go_to(self.state.next_event_step()))
        self.static = StaticCopy()
        self.timeline = widgets.Image(format="png")
        self.info = widgets.HTML()
        self.observations = widgets.HTML()
        self.messages = widgets.HTML()
        self.events = widgets.HTML()
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.run, self.conversation]),
                widgets.HBox([self.previous_event, self.play, self.next_event, self.step]),
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

    def _go_to(self, step: int | None) -> None:
        """Move the slider (and with it the state and the play button) to ``step``, if any."""
        if step is not None:
            self.step.value = step

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
            for control in (self.step, self.play):
                # widen first: a new min above the old max (or the reverse) would be refused
                control.min, control.max = min(first, control.min), max(last, control.max)
                control.min, control.max = first, last
            self.play.playing = False
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
            f"<br>{html.escape(_step_events(state))}"
        )
        self.previous_event.disabled = state.previous_event_step() is None
        self.next_event.disabled = state.next_event_step() is None
        self.observations.value = log_changes_html(state.observation_changes())
        messages = state.messages_in_context()
        if messages is None:
            self.messages.value = (
                "<i>not available: pass messages= (the conversations) to ExplorerState to see them</i>"
            )
        else:
            lines = [f"[{m.role}] {m.text}" for m in messages]
            self.messages.value = _readable(text_html("\n".join(lines), empty="no raw messages in context"))
        self.events.value = _unwrapped_table(frame_html(state.events_near(self.event_window)))
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


def _step_events(state: ExplorerState) -> str:
    """``events at this step: data-om-activation (observation), ...`` or that there were none."""
    here = state.events_near(0)
    if here.empty:
        return "no events at this step"
    names = [
        f"{type_} ({operation})" if isinstance(operation, str) and operation else str(type_)
        for type_, operation in zip(here["type"], here.get("operation_type", [None] * len(here)), strict=True)
    ]
    return "events at this step: " + ", ".join(names)


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


__all__ = [
    "ADDED_CLASS",
    "EVENT_WINDOW",
    "PLAY_INTERVAL_MS",
    "REMOVED_CLASS",
    "WRAP_STYLE",
    "ExplorerView",
    "explore",
    "log_changes_html",
]
