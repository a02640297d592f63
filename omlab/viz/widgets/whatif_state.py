"""The what-if panel's state: the slider values and the simulation they give.

Plain Python (no ipywidgets), tested without a kernel; :mod:`omlab.viz.widgets.whatif` draws it.
:meth:`WhatIfState.update` re-runs :func:`omlab.viz.simulate.simulate` on the sample with the new
values. Settings the engine refuses do not raise: :attr:`WhatIfState.error` holds the engine's
:class:`~omlab.engine.errors.ConfigError` message (naming the option) and the last valid
simulation stays on show.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from omlab.engine.errors import ConfigError
from omlab.engine.messages import Message
from omlab.viz.simulate import DEFAULT_SETTINGS, Sample, SimulationResult, sample_conversation, simulate


@dataclass(frozen=True, slots=True)
class Knob:
    """One slider of the panel: the setting it drives, its label and range."""

    name: str
    label: str
    minimum: float
    maximum: float
    step: float
    integer: bool


KNOBS: tuple[Knob, ...] = (
    Knob("message_tokens", "messageTokens", 1_000, 12_000, 250, True),
    Knob("buffer_tokens", "bufferTokens", 0.05, 0.95, 0.05, False),
    Knob("buffer_activation", "bufferActivation", 0.1, 1.0, 0.05, False),
    Knob("block_after", "blockAfter", 1.0, 3.0, 0.05, False),
    Knob("observation_tokens", "observationTokens", 1_000, 20_000, 500, True),
    Knob("observer_latency_s", "observer latency (s)", 0.0, 180.0, 5.0, False),
)
"""The sliders, with ranges fitted to the default ~40k-token sample. ``blockAfter`` of 1.0 is
refused by the engine (it must exceed messageTokens): the panel then shows the engine's message."""

SUMMARY_LABELS: Mapping[str, str] = {
    "blocked_s": "blocked (virtual s)",
    "blocked_steps": "steps that blocked",
    "sync_observations": "synchronous observations",
    "activations": "buffered chunks activated",
    "sync_reflections": "synchronous reflections",
    "reflection_activations": "buffered reflections activated",
    "context_tokens_avg": "avg context (tokens)",
    "context_tokens_peak": "peak context (tokens)",
    "compression_observation": "observation compression (x)",
    "final_observation_tokens": "final observation log (tokens)",
    "calls": "Observer + Reflector calls",
}
"""The summary rows the panel shows, in order, with their labels."""


class WhatIfState:
    """Slider values and the simulation of the sample under them.

    Args:
        sample: A :class:`~omlab.viz.simulate.Sample`, engine messages, or None for the default
            sample (:func:`~omlab.viz.simulate.sample_conversation`).
        run: Simulate the initial values now (default) or wait for the first :meth:`update`.
        **values: Initial values overriding :data:`~omlab.viz.simulate.DEFAULT_SETTINGS`.

    Attributes:
        values: The settings last asked for (valid or not).
        result: The last valid simulation (None before the first).
        error: The engine's message for the settings last asked for, or None if they were valid.
        runs: How many simulations ran.
    """

    def __init__(self, sample: Sample | Sequence[Message] | None = None, *, run: bool = True, **values: Any) -> None:
        self.sample = (
            sample if isinstance(sample, Sample) else (sample_conversation() if sample is None else Sample.of(sample))
        )
        self.values: dict[str, Any] = dict(DEFAULT_SETTINGS)
        self._check_names(values)
        self.values.update(values)
        self.result: SimulationResult | None = None
        self.error: str | None = None
        self.runs = 0
        self._lock = threading.Lock()
        if run:
            self._simulate()

    def update(self, **values: Any) -> bool:
        """Set some values and re-simulate; True when the settings were valid.

        Raises:
            TypeError: A name that is not a setting (not a bad value: that goes to :attr:`error`).
        """
        self._check_names(values)
        self.values.update(values)
        return self._simulate()

    @property
    def steps(self) -> pd.DataFrame:
        """The steps frame of the last valid simulation (empty before the first)."""
        return self.result.steps if self.result is not None else pd.DataFrame()

    @property
    def events(self) -> pd.DataFrame:
        """The events frame of the last valid simulation (empty before the first)."""
        return self.result.events if self.result is not None else pd.DataFrame()

    @property
    def summary(self) -> dict[str, float]:
        """The summary metrics of the last valid simulation (empty before the first)."""
        return dict(self.result.summary) if self.result is not None else {}

    def summary_frame(self) -> pd.DataFrame:
        """:data:`SUMMARY_LABELS` rows: ``metric`` (label), ``value``, ``name`` (the metric key)."""
        summary = self.summary
        names = [name for name in SUMMARY_LABELS if name in summary]
        return pd.DataFrame(
            {"metric": [SUMMARY_LABELS[n] for n in names], "value": [summary[n] for n in names], "name": names}
        )

    def _simulate(self) -> bool:
        with self._lock:  # a debounced view may call from a timer thread while another runs
            try:
                result = simulate(self.sample, **self.values)
            except (ConfigError, ValueError) as error:
                self.error = str(error)
                return False
            self.result, self.error = result, None
            self.runs += 1
            return True

    @staticmethod
    def _check_names(values: Mapping[str, Any]) -> None:
        unknown = sorted(set(values) - set(DEFAULT_SETTINGS) - {"reflector_latency_s"})
        if unknown:
            raise TypeError(
                f"WhatIfState: unknown setting(s) {unknown}; settings: "
                f"{sorted([*DEFAULT_SETTINGS, 'reflector_latency_s'])}"
            )


__all__ = ["KNOBS", "SUMMARY_LABELS", "Knob", "WhatIfState"]
