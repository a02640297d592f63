"""Every plot draws a frame whose rows carry no value at all (a run whose judge never answered,
a sweep cell that failed): the title and a "no data" note or empty bars, never an exception.

The plots are found by walking ``omlab.viz.plots``, so a new ``plot_*`` function without a case
here fails the first test instead of escaping it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings
from collections.abc import Callable

import pandas as pd
import pytest
from matplotlib.axes import Axes

import omlab.viz.plots
from tests.viz.frames import (
    answers_frame,
    calls_frame,
    events_frame,
    metrics_frame,
    minutes,
    no_data_note,
    render,
    steps_frame,
)

NA = None


def _lineage() -> pd.DataFrame:
    frame = pd.DataFrame(
        [
            {
                "run_id": "R1",
                "conversation_id": "c1",
                "question_id": f"q{i}",
                "evidence_id": f"D1:{i}",
                "fate": NA,
                "observed_generation": NA,
                "dropped_generation": NA,
                "final_generation": NA,
                "ingested_at_tokens": NA,
                "dropped_at_tokens": NA,
                "final_tokens": NA,
            }
            for i in range(3)
        ]
    )
    for column in frame.columns[5:]:
        frame[column] = frame[column].astype("Int64")
    return frame


def _lineage_questions() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "run_id": "R1",
                "conversation_id": "c1",
                "question_id": f"q{i}",
                "question_type": "single-hop",
                "is_abstention": False,
                "loss_cause": NA,
            }
            for i in range(3)
        ]
    )


def _accuracy_metrics(groups: tuple[str, ...] = ("single-hop", "multi-hop", "temporal")) -> pd.DataFrame:
    return metrics_frame(
        [
            {"name": "accuracy", "group_key": key, "value": float("nan"), "lo": NA, "hi": NA, "n": 0}
            for key in ("all", *groups)
        ]
    )


def _unjudged_answers() -> pd.DataFrame:
    return answers_frame(
        [
            {"question_type": t, "judge_correct": NA, "f1": NA, "retention": NA, "judge": NA}
            for t in ("temporal", "multi-hop")
        ]
    )


def _steps() -> pd.DataFrame:
    frame = steps_frame([{"step": i} for i in range(4)])
    for column in (
        "pending_tokens",
        "threshold",
        "observation_tokens",
        "reflect_threshold",
        "block_after",
        "buffered_chunks",
        "buffered_message_tokens",
        "generation",
        "context_tokens",
        "blocked_s",
    ):
        frame[column] = float("nan")
    return frame


def _events() -> pd.DataFrame:
    return events_frame(
        [
            {"ts": minutes(i), "type": kind, "cycle_id": "k1", "tokens_in": NA, "tokens_out": NA}
            for i, kind in enumerate(("data-om-observation-start", "data-om-observation-end"))
        ]
    )


def _calls() -> pd.DataFrame:
    return calls_frame(
        [
            {"role": role, "input_tokens": NA, "output_tokens": NA, "cost_usd": NA, "tier": NA, "latency_s": NA}
            for role in ("observer", "actor", "judge")
        ]
    )


def _points() -> pd.DataFrame:
    return pd.DataFrame({"label": ["a", "b"], "cost_usd": [NA, NA], "accuracy": [NA, NA]})


def _sweep() -> pd.DataFrame:
    return pd.DataFrame(
        {"buffer_tokens": [0.1, 0.1, 0.2, 0.2], "block_after": [1.2, 2.0, 1.2, 2.0], "blocked_s": [NA] * 4}
    )


def _production_log() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "source": ["production", "omlab"],
            "conversation_id": ["t1", "t1"],
            "ts": [pd.NaT, pd.NaT],
            "observation_tokens": [NA, NA],
            "generation": [NA, NA],
        }
    )


def _production_generations(generation: object = 0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "source": ["production", "omlab"],
            "conversation_id": ["t1", "t1"],
            "generation": [generation, generation],
            "started_at": [pd.NaT, pd.NaT],
            "peak_tokens": [NA, NA],
        }
    )


CASES: dict[str, list[Callable[[Callable[..., Axes]], Axes]]] = {
    "plot_accuracy_by_type": [
        lambda plot: plot(_accuracy_metrics()),
        lambda plot: plot(_accuracy_metrics(groups=())),
        lambda plot: plot(_unjudged_answers()),
        lambda plot: plot(_unjudged_answers(), scorer="judge"),
    ],
    "plot_compression": [lambda plot: plot(_events()), lambda plot: plot(_events(), operation="reflection")],
    "plot_context_timeline": [lambda plot: plot(_steps()), lambda plot: plot(_steps(), _events(), x="time")],
    "plot_cost_breakdown": [
        lambda plot: plot(_calls()),
        lambda plot: plot(_calls(), by="model", metric="cost"),
        lambda plot: plot(_calls(), metric="tokens"),
    ],
    "plot_cost_vs_accuracy": [lambda plot: plot(_points()), lambda plot: plot(_points(), log_x=True)],
    "plot_fact_survival": [lambda plot: plot(_lineage()), lambda plot: plot({"a": _lineage()})],
    "plot_loss_causes": [lambda plot: plot(_lineage_questions())],
    "plot_sweep_heatmap": [lambda plot: plot(_sweep())],
    "plot_tier_routing": [lambda plot: plot(_calls())],
    "plot_log_over_time": [lambda plot: plot(_production_log())],
    "plot_generation_tokens": [
        lambda plot: plot(_production_generations()),
        lambda plot: plot(_production_generations(NA)),
    ],
    "plot_reflections": [lambda plot: plot(_production_generations()), lambda plot: plot(_production_generations(NA))],
    "plot_production_comparison": [
        lambda plot: plot(_production_log(), _production_generations(NA))[0],
    ],
}


def _plot_functions() -> dict[str, Callable[..., Axes]]:
    found = {}
    for module_info in pkgutil.iter_modules(omlab.viz.plots.__path__):
        module = importlib.import_module(f"{omlab.viz.plots.__name__}.{module_info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("plot_") and function.__module__ == module.__name__:
                found[name] = function
    return found


def test_every_plot_function_has_an_all_missing_case():
    assert sorted(_plot_functions()) == sorted(CASES)


@pytest.mark.parametrize(
    ("name", "index"), [(name, index) for name, cases in sorted(CASES.items()) for index in range(len(cases))]
)
def test_a_plot_draws_a_frame_with_every_value_missing(name, index):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no all-NaN reductions on the way
        ax = CASES[name][index](_plot_functions()[name])
        render(ax)
    assert isinstance(ax, Axes)


@pytest.mark.parametrize("index", range(len(CASES["plot_accuracy_by_type"])))
def test_accuracy_without_a_single_score_says_so(index):
    from omlab.viz.plots import plot_accuracy_by_type

    ax = CASES["plot_accuracy_by_type"][index](plot_accuracy_by_type)
    assert no_data_note(ax) == "no data: no question has a score"
