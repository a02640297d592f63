"""The what-if panel: sliders for the buffering and reflection settings, the sawtooth they give.

Each slider change (debounced, see :mod:`omlab.viz.widgets.debounce`) re-simulates the sample
offline in virtual time (:class:`~omlab.viz.widgets.whatif_state.WhatIfState`) and redraws the
sawtooth and a summary table beside the first simulation's figures. Settings the engine refuses
show its message above the (unchanged) last valid figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from omlab.engine.messages import Message
from omlab.viz.plots import plot_context_timeline
from omlab.viz.simulate import Sample
from omlab.viz.style import FIGSIZE_WIDE
from omlab.viz.widgets._display import figure_png, frame_html, ipywidgets, message_html, show
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
        self.timeline = widgets.Image(format="png")
        self.table = widgets.HTML()
        self.widget = widgets.VBox(
            [
                widgets.HBox([widgets.VBox(list(self.sliders.values())), self.table]),
                self.status,
                self.timeline,
            ]
        )
        self.debouncer = Debouncer(self._simulate, debounce_s)
        for slider in self.sliders.values():
            slider.observe(self._on_change, names="value")
        self._draw()

    def _ipython_display_(self) -> None:
        show(self.widget)

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
        self.status.value = message_html(state.error, note)
        if result is not None:
            figure = Figure(figsize=FIGSIZE_WIDE, layout="constrained")
            plot_context_timeline(
                result.steps,
                result.events,
                ax=figure.add_subplot(),
                title="What-if: context over the sample conversation",
            )
            self.timeline.value = figure_png(figure)
        table = state.summary_frame()
        if len(table):
            table = table.assign(first=[self.baseline.get(n, float("nan")) for n in table["name"]])
            table = pd.DataFrame({"metric": table["metric"], "now": table["value"], "first run": table["first"]})
        self.table.value = frame_html(table, digits=1)


def what_if(sample: Sample | Sequence[Message] | None = None, *, debounce_s: float = 0.3, **values: Any) -> WhatIfView:
    """A what-if panel over ``sample`` (default: the built-in ~40k-token sample), starting from
    ``values`` (see :data:`omlab.viz.simulate.DEFAULT_SETTINGS`). Display the result."""
    return WhatIfView(WhatIfState(sample, **values), debounce_s=debounce_s)


__all__ = ["WhatIfView", "what_if"]
