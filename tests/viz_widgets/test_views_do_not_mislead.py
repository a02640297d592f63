"""What the views show beyond their state: the what-if baseline, a y axis that holds still, stale
values marked, whole numbers printed whole, and the static copy every view leaves behind."""

from __future__ import annotations

import pytest

from omlab.viz.widgets import WhatIfState
from omlab.viz.widgets._display import STATIC_CLASS, frame_html, pre_html
from omlab.viz.widgets.whatif import WhatIfView
from tests.viz_widgets.samples import SMALL, small_sample


@pytest.fixture()
def view():
    return WhatIfView(WhatIfState(small_sample(), **SMALL), debounce_s=0)


def test_what_if_draws_the_first_run_under_the_new_one(view):
    view.sliders["block_after"].value = 2.0
    labels = view.timeline_figure().axes[0].get_legend_handles_labels()[1]
    assert "first run: raw messages" in labels and "first run: observation log" in labels


def test_what_if_y_axis_never_shrinks_while_sliding(view):
    view.sliders["block_after"].value = 2.0  # more context before the actor blocks: a taller plot
    tall = view.timeline_figure().axes[0].get_ylim()
    view.sliders["block_after"].value = 1.1
    assert view.timeline_figure().axes[0].get_ylim() == tall


def test_what_if_marks_values_stale_after_refused_settings(view):
    view.sliders["block_after"].value = 1.0
    assert "stale" in view.table.value and "last valid settings" in view.status.value
    view.sliders["block_after"].value = 1.5
    assert "stale" not in view.table.value


def test_whole_numbers_print_without_decimals():
    import pandas as pd

    table = frame_html(pd.DataFrame({"metric": ["calls", "avg"], "value": [12.0, 1234.56]}), digits=1)
    assert ">12<" in table and "12.0" not in table and "1,234.6" in table


def test_text_blocks_wrap_between_words():
    assert "word-break:normal" in pre_html("some text")


def test_every_view_keeps_a_static_copy(view):
    assert STATIC_CLASS in view.static.html and "data:image/png;base64," in view.static.html
    assert "blocked (virtual s)" in view.static.html
