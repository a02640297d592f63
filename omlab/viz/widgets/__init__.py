"""Notebook widgets: the run explorer, the what-if panel and the run comparison.

Each is a *state* class in plain Python (selection, settings, derived frames; tested without a
kernel) and a *view* that lays it out with ipywidgets, imported only when a view is built:

* :class:`ExplorerState` / :func:`explore`: pick a run and conversation, scrub through its steps
  (sawtooth with the step marked, observation log, raw messages in context, nearby events);
* :class:`WhatIfState` / :func:`what_if`: sliders that re-simulate a sample conversation offline
  in virtual time (:func:`omlab.viz.simulate.simulate`) and redraw its sawtooth and summary;
* :class:`CompareState` / :func:`compare`: two runs side by side, with metric diffs;
* :class:`QuestionsState` / :func:`questions`: a run's questions filtered by type, verdict and
  loss cause, each with its evidence lineage and memory context.

A view is displayed by leaving it as a cell's last value (or ``display(view)``).
"""

from __future__ import annotations

from typing import Any

from omlab.viz.widgets.compare_state import CompareState, RunSide
from omlab.viz.widgets.explorer_state import ExplorerState
from omlab.viz.widgets.questions_state import QuestionsState
from omlab.viz.widgets.whatif_state import KNOBS, WhatIfState

_VIEWS = {
    "ExplorerView": "omlab.viz.widgets.explorer",
    "explore": "omlab.viz.widgets.explorer",
    "WhatIfView": "omlab.viz.widgets.whatif",
    "what_if": "omlab.viz.widgets.whatif",
    "CompareView": "omlab.viz.widgets.compare",
    "compare": "omlab.viz.widgets.compare",
    "QuestionsView": "omlab.viz.widgets.questions",
    "questions": "omlab.viz.widgets.questions",
}


def __getattr__(name: str) -> Any:
    # Views import ipywidgets (through _display) only when first asked for.
    if name in _VIEWS:
        import importlib

        return getattr(importlib.import_module(_VIEWS[name]), name)
    raise AttributeError(f"module 'omlab.viz.widgets' has no attribute {name!r}")


__all__ = [
    "KNOBS",
    "CompareState",
    "CompareView",
    "ExplorerState",
    "ExplorerView",
    "QuestionsState",
    "QuestionsView",
    "RunSide",
    "WhatIfState",
    "WhatIfView",
    "compare",
    "explore",
    "questions",
    "what_if",
]
