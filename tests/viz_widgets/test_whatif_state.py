"""WhatIfState (driven directly), the Debouncer, and the what-if view driven through its sliders."""

from __future__ import annotations

import math
import threading
import time

import pytest

from omlab.viz.simulate import DEFAULT_SETTINGS, simulate
from omlab.viz.widgets import KNOBS, WhatIfState
from omlab.viz.widgets.debounce import Debouncer
from omlab.viz.widgets.whatif import WhatIfView
from omlab.viz.widgets.whatif_state import SUMMARY_LABELS
from tests.viz_widgets.samples import SMALL, small_sample


def comparable(summary: dict[str, float]) -> dict[str, float]:
    """The summary without its wall time and NaN entries (NaN != NaN)."""
    return {k: v for k, v in summary.items() if k != "wall_s" and not math.isnan(v)}


@pytest.fixture()
def state():
    return WhatIfState(small_sample(), **SMALL)


def test_starts_from_the_defaults_and_simulates(state):
    assert state.values == {**DEFAULT_SETTINGS, **SMALL}
    assert state.runs == 1 and state.error is None
    expected = simulate(small_sample(), **state.values)
    assert comparable(state.summary) == comparable(expected.summary)
    assert len(state.steps) == len(small_sample().messages) + 1


def test_update_resimulates_with_the_new_values(state):
    before = state.summary
    assert state.update(block_after=2.0, buffer_tokens=0.4) is True
    assert state.runs == 2
    assert state.values["block_after"] == 2.0 and state.values["buffer_tokens"] == 0.4
    expected = simulate(small_sample(), **{**SMALL, "block_after": 2.0, "buffer_tokens": 0.4})
    assert comparable(state.summary) == comparable(expected.summary)
    assert state.summary["context_tokens_peak"] != before["context_tokens_peak"]
    assert state.steps["block_after"].iloc[0] == pytest.approx(2.0 * SMALL["message_tokens"])


def test_refused_settings_keep_the_last_valid_result_and_say_why(state):
    valid = state.result
    assert state.update(block_after=1.0) is False
    assert "observation.blockAfter" in state.error
    assert state.result is valid and state.runs == 1
    assert state.values["block_after"] == 1.0  # what was asked for is remembered
    assert state.update(block_after=1.3) is True
    assert state.error is None and state.runs == 2


def test_unknown_setting_is_a_type_error(state):
    with pytest.raises(TypeError, match="buffer_token"):
        state.update(buffer_token=0.3)
    with pytest.raises(TypeError, match="unknown"):
        WhatIfState(small_sample(), run=False, latency=3)


def test_summary_frame_rows(state):
    frame = state.summary_frame()
    assert frame["name"].tolist() == [n for n in SUMMARY_LABELS if n in state.summary]
    assert frame["metric"].tolist() == [SUMMARY_LABELS[n] for n in frame["name"]]
    blocked = frame.loc[frame["name"] == "blocked_s", "value"].item()
    assert blocked == state.summary["blocked_s"] == state.steps["blocked_s"].sum()


def test_not_run_until_asked():
    lazy = WhatIfState(small_sample(), run=False, **SMALL)
    assert lazy.result is None and lazy.runs == 0 and lazy.steps.empty and lazy.summary == {}
    assert lazy.summary_frame().empty


def test_knob_ranges_hold_the_defaults():
    assert {k.name for k in KNOBS} == set(DEFAULT_SETTINGS)
    for knob in KNOBS:
        assert knob.minimum <= DEFAULT_SETTINGS[knob.name] <= knob.maximum, knob.name


# ---------------------------------------------------------------------------- debounce


def test_debouncer_runs_only_the_last_call_of_a_burst():
    calls = []
    debouncer = Debouncer(calls.append, delay_s=0.05)
    for value in range(5):
        debouncer.call(value)
    debouncer.flush()
    time.sleep(0.1)
    assert calls == [4]
    debouncer.call(9)
    debouncer.flush()
    assert calls == [4, 9]


def test_debouncer_runs_never_overlap():
    active, overlaps, done = [0], [], threading.Event()

    def slow(value: int) -> None:
        active[0] += 1
        overlaps.append(active[0])
        time.sleep(0.05)
        active[0] -= 1
        if value == 2:
            done.set()

    debouncer = Debouncer(slow, delay_s=0.01)
    debouncer.call(1)
    time.sleep(0.03)  # the first run is going on
    debouncer.call(2)
    assert done.wait(2)
    assert max(overlaps) == 1


def test_debouncer_without_delay_runs_at_once():
    calls = []
    Debouncer(calls.append, delay_s=0).call("now")
    assert calls == ["now"]
    with pytest.raises(ValueError, match="delay_s"):
        Debouncer(calls.append, delay_s=-1)


# ---------------------------------------------------------------------------- view


def test_view_resimulates_and_redraws_on_slider_changes(state):
    view = WhatIfView(state, debounce_s=0)
    first_png = view.timeline.value
    assert first_png[:4] == b"\x89PNG"
    assert "blocked (virtual s)" in view.table.value
    assert set(view.values()) == set(DEFAULT_SETTINGS)
    view.sliders["block_after"].value = 2.0
    assert state.runs == 2 and state.values["block_after"] == 2.0
    assert view.timeline.value != first_png
    assert "simulated" in view.status.value


def test_view_shows_the_engine_message_for_refused_settings(state):
    view = WhatIfView(state, debounce_s=0)
    shown = view.timeline.value
    view.sliders["block_after"].value = 1.0
    assert "invalid settings" in view.status.value and "observation.blockAfter" in view.status.value
    assert view.timeline.value == shown  # the last valid figure stays
    view.sliders["block_after"].value = 1.5
    assert "invalid" not in view.status.value


def test_view_debounces_bursts(state):
    view = WhatIfView(state, debounce_s=0.05)
    view.sliders["buffer_tokens"].value = 0.3
    view.sliders["buffer_tokens"].value = 0.35
    view.sliders["buffer_tokens"].value = 0.4
    view.debouncer.flush()
    time.sleep(0.1)
    view.debouncer.flush()
    assert state.runs == 2 and state.values["buffer_tokens"] == 0.4


def test_views_need_ipywidgets_only_when_built(state, monkeypatch):
    import subprocess
    import sys

    code = (
        "import sys, omlab.viz.widgets as w; from omlab.viz.widgets import what_if, explore, compare; "
        "print('ipywidgets' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # as if it were not installed
    with pytest.raises(ImportError, match="pip install 'ipywidgets"):
        WhatIfView(state)
