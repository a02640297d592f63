"""The what-if panel: sliders for the buffering and reflection settings, the sawtooth they give.

Each slider change (debounced, see :mod:`omlab.viz.widgets.debounce`) re-simulates the sample
offline in virtual time (:class:`~omlab.viz.widgets.whatif_state.WhatIfState`) and redraws the
sawtooth and a summary table beside the first simulation's figures. Settings the engine refuses
show its message above the (unchanged) last valid figures.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from omlab.engine.messages import Message
from omlab.viz.plots import plot_context_timeline
from omlab.viz.simulate import Sample
from omlab.viz.style import FIGSIZE_WIDE, LIGHT_GREY, plain_texts
from omlab.viz.widgets._display import (
    StaticCopy,
    figure_png,
    frame_html,
    ipywidgets,
    message_html,
    number_text,
    png_html,
    show,
    static_html,
)
from omlab.viz.widgets.debounce import Debouncer
from omlab.viz.widgets.whatif_state import KNOBS, WhatIfState


class WhatIfView:
    """ipywidgets layout over a :class:`WhatIfState`; display it, or its :attr:`widget`.

    Args:
        state: The state to drive (simulated already, or simulated now).
        debounce_s: Quiet time after the last slider change before simulating (0: at once).
    """

    def __init__(self, state: WhatIfState, *, debounce_s: float = 0.3) -> None:
        widgets = ipywidgets()
        self.state = state
        if state.result is None and state.error is None:
            state.update()
        self.baseline = state.summary
        self.sliders: dict[str, Any] = {}
        for knob in KNOBS:
            kind = widgets.IntSlider if knob.integer else widgets.FloatSlider
            value = state.values[knob.name]
            self.sliders[knob.name] = kind(
                description=knob.label,
                min=knob.minimum,
                max=knob.maximum,
                step=knob.step,
                value=value,
                continuous_update=False,
                style={"description_width": "150px"},
                layout=widgets.Layout(width="480px"),
            )
        self.status = widgets.HTML()
        self.timeline = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="1100px"))
        self.table = widgets.HTML()
        self.static = StaticCopy()
        self.baseline_steps = state.steps
        self.y_top = 0.0
        # sliders with the status under them, the summary beside them, the plot below: all of it
        # fits a 1440x900 screen (the figure is shorter than the other timelines for that)
        self.widget = widgets.VBox(
            [
                widgets.HBox([widgets.VBox([*self.sliders.values(), self.status]), self.table]),
                self.timeline,
            ]
        )
        self.debouncer = Debouncer(self._simulate, debounce_s)
        for slider in self.sliders.values():
            slider.observe(self._on_change, names="value")
        self._draw()

    def _ipython_display_(self) -> None:
        show(self.widget, self.static)

    def values(self) -> dict[str, Any]:
        """The sliders' current values, by setting name."""
        return {name: slider.value for name, slider in self.sliders.items()}

    def _on_change(self, change: dict[str, Any]) -> None:
        self.status.value = message_html(None, "simulating...")
        self.debouncer.call(self.values())

    def _simulate(self, values: dict[str, Any]) -> None:
        self.state.update(**values)
        self._draw()

    def _draw(self) -> None:
        state = self.state
        result = state.result
        note = (
            ""
            if result is None
            else (
                f"simulated {len(result.steps) - 1} messages ({result.summary['n_message_tokens']:,.0f} tokens) "
                f"in {result.summary['wall_s']:.2f} s"
            )
        )
        stale = state.error is not None and result is not None
        if stale:
            note = "the plot and the table still show the last valid settings"
        self.status.value = message_html(state.error, note)
        if result is not None and not stale:
            self.timeline.value = figure_png(self.timeline_figure())
        self.table.value = frame_html(summary_table(state.summary_frame(), self.baseline, stale=stale), digits=1)
        self.static.set(
            static_html(
                [
                    f"<div>{html.escape(settings_text(state.values))}</div>",
                    self.status.value,
                    self.table.value,
                    png_html(self.timeline.value, alt="what-if context timeline") if self.timeline.value else "",
                ],
                title="what-if panel",
            )
        )

    def timeline_figure(self) -> Figure:
        """The sawtooth of the current simulation over the first one's, on a y axis that only grows
        (so moving a slider never rescales what the eye compares)."""
        state = self.state
        figure = Figure(figsize=(FIGSIZE_WIDE[0], 4.0), layout="constrained")
        ax = figure.add_subplot()
        baseline = self.baseline_steps
        if len(baseline):
            for column, label in (
                ("pending_tokens", "first run: raw messages"),
                ("observation_tokens", "first run: observation log"),
            ):
                ax.plot(baseline["step"], baseline[column], color=LIGHT_GREY, linewidth=2.4, label=label, zorder=1)
        plot_context_timeline(
            state.steps, state.events, ax=ax, title="What-if: context over the sample conversation (grey: first run)"
        )
        self.y_top = max(self.y_top, ax.get_ylim()[1])
        ax.set_ylim(0, self.y_top)
        return plain_texts(figure)


def summary_table(summary: pd.DataFrame, baseline: dict[str, float], *, stale: bool = False) -> pd.DataFrame:
    """``metric``, the current value and the first run's, side by side; the current column says
    when it is stale (the settings last asked for were refused)."""
    if summary.empty:
        return summary
    now = "now (stale: last valid settings)" if stale else "now"
    return pd.DataFrame(
        {
            "metric": summary["metric"],
            now: summary["value"],
            "first run": [baseline.get(n, float("nan")) for n in summary["name"]],
        }
    )


def settings_text(values: dict[str, Any]) -> str:
    """The settings as ``name=value`` pairs, integers without decimals."""
    return ", ".join(
        f"{name}={number_text(value) if isinstance(value, float | int) else value}" for name, value in values.items()
    )


def what_if(sample: Sample | Sequence[Message] | None = None, *, debounce_s: float = 0.3, **values: Any) -> WhatIfView:
    """A what-if panel over ``sample`` (default: the built-in ~40k-token sample), starting from
    ``values`` (see :data:`omlab.viz.simulate.DEFAULT_SETTINGS`). Display the result."""
    return WhatIfView(WhatIfState(sample, **values), debounce_s=debounce_s)


__all__ = ["WhatIfView", "settings_text", "summary_table", "what_if"]
