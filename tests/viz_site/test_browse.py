"""The run browser's data: the run list, its filters and sort keys, and two runs' differences."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from omlab.bench.report.run_index import tag_run
from omlab.bench.results.browse import (
    LIST_COLUMNS,
    config_diff,
    filter_runs,
    flatten,
    metric_diff,
    run_list,
    sort_runs,
)
from tests.viz_site.runs import write_run


@pytest.fixture
def results(tmp_path):
    write_run(tmp_path, "20250301T090000-aaaaaa", suite="quick", metrics={"accuracy": 0.5, "cost_usd": 0.2})
    write_run(
        tmp_path,
        "20250301T090100-bbbbbb",
        suite="sweepy",
        config_name="bufferTokens=0.1",
        config={"sweep_id": "s1"},
        metrics={"accuracy": 0.9},
    )
    write_run(
        tmp_path, "20250301T090200-cccccc", suite="sweepy", config_name="bufferTokens=0.3", config={"sweep_id": "s1"}
    )
    write_run(tmp_path, "20250301T090300-dddddd", suite="quick", status="failed", metrics={"accuracy": 0.1})
    tag_run(tmp_path, "20250301T090000-aaaaaa", ["baseline", "paper"])
    return tmp_path


def test_run_list_has_one_row_per_run_newest_first_with_sweep_duration_and_metrics(results):
    runs = run_list(results)
    assert list(runs.columns[: len(LIST_COLUMNS)]) == list(LIST_COLUMNS)
    assert list(runs["run_id"]) == sorted(runs["run_id"], reverse=True)
    by_id = runs.set_index("run_id")
    assert by_id.loc["20250301T090100-bbbbbb", "sweep_id"] == "s1"
    assert by_id.loc["20250301T090000-aaaaaa", "sweep_id"] == ""
    assert by_id.loc["20250301T090000-aaaaaa", "tags"] == "baseline,paper"
    assert by_id.loc["20250301T090300-dddddd", "status"] == "failed"
    assert by_id.loc["20250301T090000-aaaaaa", "m.accuracy"] == 0.5
    assert math.isnan(by_id.loc["20250301T090200-cccccc", "m.accuracy"])
    assert (runs["duration_s"] >= 0).all()
    assert isinstance(by_id.loc["20250301T090000-aaaaaa", "started_at"], pd.Timestamp)


def test_an_unreadable_run_file_is_a_row_with_its_problem(results):
    (results / "runs" / "20250301T100000-broken.duckdb").write_bytes(b"not a database at all" * 100)
    runs = run_list(results).set_index("run_id")
    assert runs.loc["20250301T100000-broken", "status"] == "unreadable"
    assert runs.loc["20250301T100000-broken", "problem"]
    assert runs.loc["20250301T090000-aaaaaa", "status"] == "finished"


def test_filters_match_suite_config_status_tag_sweep_and_text(results):
    runs = run_list(results)

    def ids(**filters):
        return sorted(filter_runs(runs, **filters)["run_id"].str[-6:])

    assert ids(suite="sweepy") == ["bbbbbb", "cccccc"]
    assert ids(config="bufferTokens=0.3") == ["cccccc"]
    assert ids(status="failed") == ["dddddd"]
    assert ids(tag="paper") == ["aaaaaa"]
    assert ids(tag="pap") == []  # a whole tag, not a substring
    assert ids(sweep="s1") == ["bbbbbb", "cccccc"]
    assert ids(text="BUFFERTOKENS=0.1") == ["bbbbbb"]
    assert ids(suite="quick", status="finished") == ["aaaaaa"]
    assert ids(suite="", text=None) == ["aaaaaa", "bbbbbb", "cccccc", "dddddd"]


def test_an_unknown_filter_is_refused_naming_the_valid_ones(results):
    with pytest.raises(ValueError, match="colour.*filters are: suite, config, status, tag, sweep, text"):
        filter_runs(run_list(results), colour="red")


def test_sort_on_a_metric_puts_runs_without_it_last_either_way(results):
    runs = run_list(results)
    down = sort_runs(runs, "m.accuracy", descending=True)["run_id"].str[-6:].tolist()
    up = sort_runs(runs, "m.accuracy", descending=False)["run_id"].str[-6:].tolist()
    assert down == ["bbbbbb", "aaaaaa", "dddddd", "cccccc"]
    assert up == ["dddddd", "aaaaaa", "bbbbbb", "cccccc"]
    assert sort_runs(runs, "suite", descending=False)["suite"].tolist() == ["quick", "quick", "sweepy", "sweepy"]


def test_an_unknown_sort_key_is_refused_naming_the_valid_ones(results):
    with pytest.raises(ValueError, match=r"cannot sort runs on 'colour'; sort keys are: run_id, suite.*m\.accuracy"):
        sort_runs(run_list(results), "colour")


def test_config_diff_lists_changed_added_and_removed_settings_by_dotted_path():
    a = {"engine": {"observation": {"messageTokens": 4000, "bufferTokens": 0.2}}, "sweep_id": "x", "models": {"a": 1}}
    b = {"engine": {"observation": {"messageTokens": 4000, "bufferTokens": 0.4}}, "sweep_id": "y", "seed": 3}
    diff = config_diff(a, b)
    assert diff.to_dict("records") == [
        {"path": "engine.observation.bufferTokens", "a": "0.2", "b": "0.4"},
        {"path": "models.a", "a": "1", "b": ""},
        {"path": "seed", "a": "", "b": "3"},
    ]
    assert config_diff(a, a).empty
    assert flatten({"x": {"y": [1, 2]}, "z": {}}) == {"x.y": [1, 2], "z": {}}


def test_metric_diff_is_b_minus_a_with_whole_run_rows_first():
    a = pd.DataFrame(
        {"name": ["accuracy", "accuracy", "cost_usd"], "group_key": ["all", "t1", "all"], "value": [0.5, 0.4, 1.0]}
    )
    b = pd.DataFrame({"name": ["accuracy", "retention"], "group_key": ["all", "all"], "value": [0.75, 0.3]})
    diff = metric_diff(a, b)
    assert diff[["name", "group_key"]].values.tolist() == [
        ["accuracy", "all"],
        ["cost_usd", "all"],
        ["retention", "all"],
        ["accuracy", "t1"],
    ]
    assert diff["delta"].iloc[0] == pytest.approx(0.25)
    assert diff["delta"].iloc[1:].isna().all()


def test_run_list_of_an_empty_folder_is_empty_with_its_columns(tmp_path):
    runs = run_list(tmp_path)
    assert runs.empty and list(runs.columns) == list(LIST_COLUMNS)
    assert json.dumps(list(runs.columns))
