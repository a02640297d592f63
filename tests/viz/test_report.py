"""write_run_plots: which files a run gets, their names, and that they are real PNGs."""

from __future__ import annotations

import pandas as pd
from matplotlib import pyplot as plt

from omlab.viz.report import file_stem, write_run_plots
from tests.viz.frames import (
    answers_frame,
    calls_frame,
    events_frame,
    metrics_frame,
    minutes,
    sawtooth_steps,
    steps_frame,
)

PNG = b"\x89PNG\r\n\x1a\n"


def _events():
    return events_frame(
        [
            {
                "ts": minutes(3),
                "type": "data-om-observation-end",
                "operation_type": "observation",
                "tokens_in": 31_000,
                "tokens_out": 5_000,
            },
            {
                "ts": minutes(6),
                "type": "data-om-activation",
                "operation_type": "observation",
                "tokens_in": 18_000,
                "tokens_out": 3_000,
            },
        ]
    )


def _calls(tiered: bool):
    return calls_frame(
        [
            {
                "role": "observer",
                "tier": 10_000 if tiered else None,
                "input_tokens": 5_000,
                "output_tokens": 300,
            },
            {"role": "judge", "resolved_model": "omlab/judge", "input_tokens": 400, "output_tokens": 5},
        ]
    )


def test_writes_every_applicable_plot_as_png(tmp_path):
    before = plt.get_fignums()
    steps = pd.concat([sawtooth_steps("c1"), sawtooth_steps("c/2")])
    answers = answers_frame(
        [
            {"question_type": "multi-session", "judge": True},
            {"question_type": "temporal-reasoning", "judge": False},
        ]
    )
    out = tmp_path / "plots"
    paths = write_run_plots(
        out,
        steps=steps,
        events=_events(),
        calls=_calls(tiered=True),
        answers=answers,
        run_label="20240501T090000-abc123 default",
    )
    assert [p.name for p in paths] == [
        "20240501T090000-abc123-default-context-c-2.png",
        "20240501T090000-abc123-default-context-c1.png",
        "20240501T090000-abc123-default-compression-observation.png",
        "20240501T090000-abc123-default-cost-by-role.png",
        "20240501T090000-abc123-default-cost-by-model.png",
        "20240501T090000-abc123-default-cost-by-tier.png",
        "20240501T090000-abc123-default-tier-routing.png",
        "20240501T090000-abc123-default-accuracy-by-type.png",
    ]
    for path in paths:
        assert path.parent == out
        assert path.read_bytes()[:8] == PNG
        assert path.stat().st_size > 5_000
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths)
    assert plt.get_fignums() == before


def test_skips_what_has_no_data(tmp_path):
    paths = write_run_plots(
        tmp_path,
        steps=steps_frame([]),
        events=None,
        calls=_calls(tiered=False),
        answers=None,
        metrics=metrics_frame([]),
        run_label="r",
    )
    assert [p.name for p in paths] == ["r-cost-by-role.png", "r-cost-by-model.png"]
    assert write_run_plots(tmp_path / "none", steps=None, events=None, calls=None, run_label="r") == []


def test_reflection_plot_only_with_reflection_cycles_and_timelines_capped(tmp_path):
    events = pd.concat(
        [
            _events(),
            events_frame(
                [
                    {
                        "ts": minutes(7),
                        "type": "data-om-observation-end",
                        "operation_type": "reflection",
                        "tokens_in": 41_000,
                        "tokens_out": 15_000,
                    }
                ]
            ),
        ],
        ignore_index=True,
    )
    steps = pd.concat([sawtooth_steps(f"c{i}") for i in range(5)])
    names = [
        p.name
        for p in write_run_plots(
            tmp_path, steps=steps, events=events, calls=None, run_label="r", max_timelines=2, dpi=50
        )
    ]
    assert names == [
        "r-context-c0.png",
        "r-context-c1.png",
        "r-compression-observation.png",
        "r-compression-reflection.png",
    ]


def test_accuracy_prefers_metrics_and_falls_back_to_other_scorers(tmp_path):
    metrics = metrics_frame([{"group_key": "multi-session", "value": 0.5, "lo": 0.4, "hi": 0.6, "n": 10}])
    assert [
        p.name for p in write_run_plots(tmp_path, steps=None, events=None, calls=None, metrics=metrics, run_label="m")
    ] == ["m-accuracy-by-type.png"]
    f1_only = answers_frame([{"question_type": "temporal", "f1": 0.5}])
    assert [
        p.name for p in write_run_plots(tmp_path, steps=None, events=None, calls=None, answers=f1_only, run_label="a")
    ] == ["a-accuracy-by-type.png"]
    unscored = answers_frame([{"question_type": "temporal"}])
    assert write_run_plots(tmp_path, steps=None, events=None, calls=None, answers=unscored, run_label="u") == []


def test_file_stem():
    assert file_stem("run 1/a:b") == "run-1-a-b"
    assert file_stem("...") == "run"


def test_notebook_markdown_escapes_dollars_so_no_row_turns_into_latex():
    from omlab.bench.report.run_report import notebook_markdown

    text = "| cost | $0.25 |\n| judge | $1.50 |\n| already | \\$2 |"
    escaped = notebook_markdown(text)
    assert escaped.count("\\$") == 3 and "$" not in escaped.replace("\\$", "")
