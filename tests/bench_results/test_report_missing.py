"""The report says what is missing: the questions left out of each figure, the LongMemEval types a
task average lacks, and a run that ended incomplete."""

from __future__ import annotations

import pandas as pd

from omlab.bench.report.run_report import report_sections


def _metrics(rows):
    return pd.DataFrame(
        [
            {"name": n, "group_key": g, "value": v, "lo": None, "hi": None, "n": k, "n_missing": m}
            for n, g, v, k, m in rows
        ],
        columns=["name", "group_key", "value", "lo", "hi", "n", "n_missing"],
    )


def _section(sections, title):
    return next(s for s in sections if s.title == title)


def test_every_score_figure_has_its_missing_count_and_the_task_average_names_the_absent_types():
    metrics = _metrics(
        [
            ("accuracy", "all", 0.75, 4, 1),
            ("accuracy", "knowledge-update", 1.0, 1, 1),
            ("task_averaged_accuracy", "all", float("nan"), 4, 1),
            ("task_type_absent", "multi-session", 1.0, None, None),
            ("task_type_absent", "temporal-reasoning", 1.0, None, None),
            ("questions", "all", 5, 5, None),
        ]
    )
    header = pd.Series({"run_id": "R", "status": "finished", "config_json": "{}"})
    sections = report_sections(header, metrics)
    headline = {row[0]: row for row in _section(sections, "Headline").rows}
    assert headline["accuracy (micro)"][1:] == ["75.0%", "", "4", "1"]
    assert headline["task-averaged accuracy"][1] == "—"  # official protocol: missing, never a number
    assert headline["task-averaged accuracy"][4] == "1; types absent: multi-session, temporal-reasoning"
    assert headline["questions"][4] == ""  # a count has nothing missing
    by_type = _section(sections, "Accuracy by question type").rows
    assert by_type == [["knowledge-update", "100.0%", "", "1", "1"]]


def test_an_incomplete_run_says_so_once_in_a_short_status_and_lists_the_failures_apart():
    judge_error = "; ".join(f"c1:q{i:03d}: ModelCallError: judge endpoint unreachable " + "x" * 200 for i in range(12))
    header = pd.Series(
        {
            "run_id": "R",
            "status": "incomplete",
            "config_json": "{}",
            "error": "INCOMPLETE: 1 failed phase; 0 questions unanswered, 12 answered but not scored\n"
            f"  c1 judge: {judge_error}",
        }
    )
    sections = report_sections(header, _metrics([]))
    run = {row[0]: row[1] for row in _section(sections, "Run").rows}
    assert run["status"] == (
        "INCOMPLETE: 1 failed phase; 0 questions unanswered, 12 answered but not scored "
        "(run the same command again to retry the failed parts)"
    )
    assert [section.title for section in sections].index("Failures") == 1  # right after the run
    failures = _section(sections, "Failures")
    assert failures.columns == ["conversation", "phase", "error"]
    assert failures.rows == [["c1", "judge", judge_error]]


def test_the_failures_come_from_the_runs_failed_phases_and_questions_when_given():
    header = pd.Series({"run_id": "R", "status": "incomplete", "config_json": "{}", "error": "INCOMPLETE: …"})
    failed = pd.DataFrame(
        [
            {"conversation_id": "c2", "phase": "prepare", "error": "RuntimeError: observer down"},
            {"conversation_id": "c1", "phase": "answer (c1:q004)", "error": "ModelCallError: 500"},
        ]
    )
    rows = _section(report_sections(header, _metrics([]), failures=failed), "Failures").rows
    assert rows == [["c2", "prepare", "RuntimeError: observer down"], ["c1", "answer (c1:q004)", "ModelCallError: 500"]]


def test_a_complete_run_has_no_failures_section():
    header = pd.Series({"run_id": "R", "status": "finished", "config_json": "{}"})
    assert "Failures" not in [s.title for s in report_sections(header, _metrics([]))]


def test_the_report_names_the_verdict_parsing_rule_a_judged_run_used():
    header = pd.Series(
        {
            "run_id": "R",
            "status": "finished",
            "dataset": "longmemeval",
            "phases": ["prepare", "answer", "judge"],
            "config_json": '{"scoring": {"verdict": "parity", "protocol": "omlab"}}',
        }
    )
    run = {row[0]: row[1] for row in _section(report_sections(header, _metrics([])), "Run").rows}
    assert "judge verdicts parsed as parity (the reference OM harness's rule" in run["QA protocol"]
    unjudged = header.copy()
    unjudged["phases"] = ["prepare", "answer"]
    run = {row[0]: row[1] for row in _section(report_sections(unjudged, _metrics([])), "Run").rows}
    assert "verdicts" not in run["QA protocol"]
