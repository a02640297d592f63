"""Inputs that cannot fool a run: refused at suite load (name and fix), or accepted with a warning
that names the record, is counted in the run and listed in the report."""

from __future__ import annotations

import json

import pytest

from omlab.bench.datasets import load_jsonl
from omlab.bench.report.run_report import write_report
from omlab.bench.results import metrics_df, runs_df
from omlab.cli.main import main

from .corpus import REFUSED, WARNED, conversation, write_case, write_jsonl, write_suite


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_at_suite_load_with_the_name_and_the_fix(case, tmp_path, capsys):
    kind, file_name, text, expected = REFUSED[case]
    suite = write_suite(tmp_path, kind, write_case(tmp_path, file_name, text))
    results = tmp_path / "results"
    assert main(["run", str(suite), "--results", str(results), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert str(suite) in error
    for phrase in expected:
        assert phrase in error, error
    assert not (results / "runs").exists() or not any((results / "runs").iterdir())  # no run was started


@pytest.mark.parametrize("case", sorted(WARNED))
def test_each_odd_input_gets_a_warning_naming_its_record(case, tmp_path):
    from omlab.bench.datasets.checks import input_warnings

    kind, build, record_text = WARNED[case]
    path = write_jsonl(tmp_path, "odd.jsonl", build())
    _, conversations = load_jsonl(path)
    warnings = input_warnings(conversations)
    assert [w.kind for w in warnings] == [kind], warnings
    assert record_text in warnings[0].record


def test_a_well_formed_conversation_gets_no_warning(tmp_path):
    from omlab.bench.datasets.checks import input_warnings

    _, conversations = load_jsonl(write_jsonl(tmp_path, "fine.jsonl", conversation()))
    assert input_warnings(conversations) == []


def test_odd_inputs_run_and_are_counted_in_the_run_and_listed_in_the_report(tmp_path, capsys):
    records = []
    for index, name in enumerate(sorted(WARNED)):
        record = WARNED[name][1]()
        record["id"] = record["id"] and f"{record['id']}-{index}"
        for question in record["questions"]:
            question["id"] = f"q{index}"
        records.append(record)
    suite = write_suite(tmp_path, "jsonl", write_jsonl(tmp_path, "odd.jsonl", *records))
    results = tmp_path / "results"
    assert main(["run", str(suite), "--results", str(results), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "warning: blank_turn" in captured.err
    assert "warnings=8" in captured.out
    (run_id,) = runs_df(results)["run_id"]
    config = json.loads(runs_df(results)["config_json"].iloc[0])
    assert sorted(w["kind"] for w in config["warnings"]) == sorted(kind for kind, _, _ in WARNED.values())
    metrics = metrics_df(results, run_id).set_index(["name", "group_key"])["value"]
    assert metrics[("warnings", "all")] == 8
    assert metrics[("warnings", "empty_id")] == 2
    report = write_report(results, run_id).read_text(encoding="utf-8")
    assert "## Warnings" in report
    for warning in config["warnings"]:
        assert warning["record"].replace("|", "\\|") in report
