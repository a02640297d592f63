"""End to end through the CLI on a tiny offline suite: run, strict cached rerun, report, browse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from omlab.bench.results import answers_df, calls_df, events_df, metrics_df, runs_df
from omlab.cli.main import main

from .suites import stable_metrics, write_suite

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    suite = write_suite(folder)
    results = folder / "results"
    assert main(["run", str(suite), "--results", str(results), "--workers", "1", "--quiet"]) == 0
    (run_id,) = runs_df(results)["run_id"]
    return suite, results, run_id


def test_run_writes_events_calls_answers_and_metrics(first_run, capsys):
    _, results, run_id = first_run
    assert len(events_df(results, run_id)) > 0
    calls = calls_df(results, run_id)
    assert {"observer", "reflector", "actor", "judge"} <= set(calls["role"])
    assert not calls["cached"].any()
    answers = answers_df(results, run_id)
    assert len(answers) == 8 and answers["hypothesis"].notna().all()
    assert answers["judge_correct"].notna().all() and answers["retention"].notna().any()
    metrics = metrics_df(results, run_id)
    assert {"accuracy", "retention", "blocked_s", "cost_usd", "compression_observation"} <= set(metrics["name"])


def test_strict_rerun_makes_no_new_model_call_and_reproduces_the_metrics(first_run, capsys):
    suite, results, run_id = first_run
    argv = [
        "run",
        str(suite),
        "--results",
        str(results),
        "--workers",
        "1",
        "--quiet",
        "--new",
        "--cache-mode",
        "strict",
        "--no-prepared",
    ]
    assert main(argv) == 0
    rerun = [r for r in runs_df(results)["run_id"] if r != run_id][-1]
    calls = calls_df(results, rerun)
    assert len(calls) == len(calls_df(results, run_id))
    assert calls["cached"].all(), "every call (observer and reflector included) came from the cache"
    assert calls["error"].isna().all()
    assert stable_metrics(metrics_df(results, rerun)) == stable_metrics(metrics_df(results, run_id))
    paid = metrics_df(results, rerun, names="cost_usd_paid")
    assert paid["value"].tolist() == [0.0] * len(paid)
    assert paid.loc[paid["group_key"] == "all", "value"].tolist() == [0.0]
    out = capsys.readouterr().out
    assert rerun in out and " · accuracy " in out and "failed=0" in out  # the same headline as omlab runs


def test_report_in_both_formats(first_run, capsys):
    _, results, run_id = first_run
    assert main(["report", run_id, "--results", str(results)]) == 0
    markdown = (results / "reports" / run_id / "report.md").read_text(encoding="utf-8")
    for heading in (
        "## Headline",
        "## Accuracy by question type",
        "## Cost by role, model and tier",
        "## Compression and context size",
        "## Blocking and activations",
    ):
        assert heading in markdown
    assert "role:observer" in markdown
    assert (
        main(
            [
                "report",
                "latest",
                "--results",
                str(results),
                "--format",
                "html",
                "--out",
                str(results / "html"),
            ]
        )
        == 0
    )
    assert "<table>" in (results / "html" / "report.html").read_text(encoding="utf-8")


def test_events_and_calls_listing(first_run, capsys):
    _, results, run_id = first_run
    assert (
        main(
            [
                "events",
                "list",
                run_id,
                "--results",
                str(results),
                "--type",
                "data-om-activation",
                "--limit",
                "3",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "data-om-activation" in out and "data-om-status" not in out and "(3 of " in out
    assert main(["calls", "list", run_id, "--results", str(results), "--role", "actor"]) == 0
    out = capsys.readouterr().out
    assert "omlab/reader" in out and "(8 of 8 calls" in out and "question_id" in out
    assert main(["calls", "list", run_id, "--results", str(results), "--role", "observer"]) == 0
    assert "question_id" not in capsys.readouterr().out  # memory calls belong to no question


def test_cache_and_datasets_commands(first_run, capsys, tmp_path):
    _, results, _ = first_run
    assert main(["cache", "info", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert "prepared memories: 2 conversations" in out and "omlab/observer" in out
    assert main(["datasets", "list"]) == 0
    assert "longmemeval" in capsys.readouterr().out
    target = tmp_path / "syn.jsonl"
    assert (
        main(
            [
                "datasets",
                "build",
                "synthetic",
                "--seeds",
                "3",
                "--target-tokens",
                "2000",
                "--n-questions",
                "2",
                "--out",
                str(target),
            ]
        )
        == 0
    )
    assert target.read_text(encoding="utf-8").count("\n") == 1
    scratch = tmp_path / "scratch"
    write_suite(tmp_path)
    assert main(["cache", "clear", "--prepared", "--results", str(scratch)]) == 0
    assert "removed 0 prepared memories" in capsys.readouterr().out


def test_sweep_prints_one_row_per_cell(tmp_path, capsys):
    suite = write_suite(
        tmp_path, name="tinysweep", seeds="[11]", extra='[grid]\n"observation.bufferTokens" = [0.2, 0.5]\n'
    )
    results = tmp_path / "results"
    assert main(["sweep", str(suite), "--results", str(results), "--workers", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "buffer_tokens" in out and "blocked_s" in out and "sync_observations" in out
    assert len(runs_df(results)) == 2
    (csv,) = (results / "reports" / "sweeps").glob("tinysweep-*.csv")
    assert csv.read_text(encoding="utf-8").count("\n") == 3


def test_bad_suite_exits_2_naming_file_and_key(tmp_path, capsys):
    suite = write_suite(tmp_path, extra='[replay]\ningest = "session"\n')
    assert main(["run", str(suite), "--results", str(tmp_path / "r"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert str(suite) in err and "replay.ingest" in err


def test_process_pool_run_through_the_installed_script(tmp_path):
    """The real ``omlab`` entry point with two worker processes (forkserver) on two conversations."""
    suite = write_suite(tmp_path, prices=False)  # priced runs import litellm in the fork server (slow)
    results = tmp_path / "results"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "omlab.cli.main",
            "run",
            str(suite),
            "--results",
            str(results),
            "--workers",
            "2",
            "--quiet",
        ],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (run_id,) = runs_df(results)["run_id"]
    assert len(answers_df(results, run_id)) == 8
    assert metrics_df(results, run_id, names="questions")["value"].tolist() == [8.0]
