"""A `$` in any text omlab draws is a dollar sign, never the start of matplotlib math text."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from matplotlib.figure import Figure
from matplotlib.text import Text

import omlab.viz.plots
from omlab.viz.plots import plot_cost_breakdown
from omlab.viz.widgets.compare import side_by_side
from tests.viz.frames import calls_frame, render


def _math_texts(figure) -> list[str]:
    """The texts of ``figure`` matplotlib would render as math (a pair of unescaped `$`)."""
    return [text.get_text() for text in figure.findobj(Text) if text._preprocess_math(text.get_text())[1]]


def _public_plot_functions():
    for module_info in pkgutil.iter_modules(omlab.viz.plots.__path__):
        module = importlib.import_module(f"omlab.viz.plots.{module_info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("plot_") and function.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", function


def test_every_plot_function_draws_plain_text():
    functions = dict(_public_plot_functions())
    assert len(functions) >= 9, sorted(functions)
    unmarked = [name for name, function in functions.items() if not getattr(function, "plain_text", False)]
    assert not unmarked, f"plot functions without @plain_text_plot: {unmarked}"


def test_the_cost_title_prints_its_dollars():
    calls = calls_frame(
        [
            {"role": "observer", "resolved_model": "m/a", "input_tokens": 5_000, "output_tokens": 500, "cost_usd": 0.6},
            {"role": "judge", "resolved_model": "m/j", "input_tokens": 800, "output_tokens": 10, "cost_usd": 0.003},
        ]
    ).assign(cost_usd_paid=[0.6, 0.0])
    ax = plot_cost_breakdown(calls, by="role")
    assert "$0.603 (paid in this run: $0.600)" in ax.get_title(loc="left")
    assert _math_texts(ax.figure) == []
    render(ax)


def test_a_plot_drawn_on_the_users_axes_with_a_dollar_title_stays_plain():
    figure = Figure()
    ax = figure.add_subplot()
    ax.set_xlabel("from $1 to $2")  # the user's own text on the figure they gave us
    calls = calls_frame([{"role": "observer", "resolved_model": "m/a", "input_tokens": 9, "output_tokens": 1}])
    plot_cost_breakdown(calls, by="role", ax=ax, title="budget $5 of $10")
    assert _math_texts(figure) == []


class _Side:
    def __init__(self, label):
        self.label = label


class _State:
    def sides(self):
        return [_Side("left run"), _Side("right run")]


def test_the_compare_view_titles_print_their_dollars():
    def draw(side, ax):
        ax.plot([0, 1], [0, 1], label="series")
        ax.set_title("total $0.603 (paid in this run: $0.603)", loc="left")

    figure = side_by_side(_State(), draw, (4.0, 3.0))
    assert [ax.get_title(loc="left") for ax in figure.axes] == [
        "left run\ntotal $0.603 (paid in this run: $0.603)",
        "right run\ntotal $0.603 (paid in this run: $0.603)",
    ]
    assert _math_texts(figure) == []
