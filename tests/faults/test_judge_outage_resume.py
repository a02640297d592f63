"""A LoCoMo run whose judge provider is down keeps every F1, says it is incomplete (summary, report,
exit status 3) and, once the provider is back, the same command completes it with no duplicate row.

The judge is a real litellm call to an OpenAI-compatible server on 127.0.0.1 that answers every
request with HTTP 500; the fix is the same server answering normally, so the configuration (and
its hash) does not change between the two runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pandas as pd

from omlab.bench.results import answers_df, metrics_df, runs_df, scores_df
from omlab.bench.run.failures import EXIT_INCOMPLETE
from omlab.cli.main import main

from .fault_server import FaultServer

ROOT = Path(__file__).resolve().parents[2]


def _suite(folder: Path, url: str) -> Path:
    shutil.copy(ROOT / "datasets" / "samples" / "locomo_sample.json", folder / "locomo.json")
    path = folder / "locomo.toml"
    path.write_text(
        f"""
[suite]
name = "judge-outage"
[dataset]
kind = "locomo"
path = "locomo.json"
[engine]
observation = {{ messageTokens = 1000, bufferTokens = false }}
reflection = {{ observationTokens = 2000 }}
[models]
judge = {{ model = "openai/judge", modelSettings = {{ api_base = "{url}", api_key = "outage-key" }} }}
[models.prices]
"openai/judge" = {{ input_per_mtok = 2.5, output_per_mtok = 10.0 }}
[latency]
default = {{ kind = "fixed", seconds = 1 }}
[cache]
mode = "off"
[run]
workers = 1
[retry]
judge = {{ max_retries = 1, timeout = 5, backoff = 0.01 }}
""",
        encoding="utf-8",
    )
    return path


def _keys_are_unique(results: Path, run_id: str) -> None:
    connection = duckdb.connect(str(results / "runs" / f"{run_id}.duckdb"), read_only=True)
    try:
        for table, key in (
            ("answers", "question_id"),
            ("scores", "question_id, scorer"),
            ("conversations", "conversation_id, phase"),
            ("metrics", "name, group_key"),
        ):
            duplicates = connection.sql(
                f"SELECT {key}, count(*) FROM {table} GROUP BY ALL HAVING count(*) > 1"
            ).fetchall()
            assert duplicates == [], f"{table}: {duplicates}"
    finally:
        connection.close()


def test_a_judge_outage_keeps_f1_shows_incomplete_and_resume_completes_it(tmp_path, capsys):
    results = tmp_path / "results"
    with FaultServer(rate=1.0, faults=("500",)) as down:
        suite = _suite(tmp_path, down.url)
        port = int(down.url.split(":")[-1].split("/")[0])
        status = main(["run", str(suite), "--results", str(results), "--quiet"])
        assert down.by_model["judge"] >= 4  # categories 1-4 went to the judge and failed
    out = capsys.readouterr().out
    assert status == EXIT_INCOMPLETE
    assert "incomplete" in out and "failed=1 phase, 4 questions" in out
    assert "judge:" in out and "to retry the failed phases" in out
    (run_id,) = runs_df(results)["run_id"]
    assert runs_df(results)["status"].tolist() == ["incomplete"]

    f1 = scores_df(results, run_id)
    assert sorted(f1.loc[f1["scorer"] == "f1", "question_id"]) == sorted(answers_df(results, run_id)["question_id"])
    assert (f1["scorer"] == "judge").sum() == 0
    metrics = metrics_df(results, run_id).set_index(["name", "group_key"])
    assert metrics.loc[("f1", "all"), "n"] == 5 and metrics.loc[("f1", "all"), "n_missing"] == 0
    assert metrics.loc[("failed_phases", "all"), "value"] == 1
    assert metrics.loc[("unscored_questions", "all"), "value"] == 4
    accuracy = metrics.loc[("accuracy", "all")]  # no verdict at all: missing, not 0%
    assert pd.isna(accuracy["value"]) and accuracy["n"] == 0 and accuracy["n_missing"] == 4

    assert main(["report", run_id, "--results", str(results)]) == 0
    assert "INCOMPLETE" in capsys.readouterr().out
    report = (results / "reports" / run_id / "report.md").read_text(encoding="utf-8")
    assert "(INCOMPLETE)" in report.splitlines()[0]
    assert "| failed phases (a resume retries them) | 1 |" in report
    assert "| answered but not scored | 4 |" in report
    capsys.readouterr()

    with FaultServer(rate=0.0, port=port) as back:
        assert main(["run", str(suite), "--results", str(results), "--quiet"]) == 0
        assert back.by_model["judge"] == 4  # only the four failed verdicts were asked again
    out = capsys.readouterr().out
    assert "(resumed)" in out and "failed=0" in out
    assert runs_df(results)["run_id"].tolist() == [run_id]
    assert runs_df(results)["status"].tolist() == ["finished"]
    scores = scores_df(results, run_id)
    assert (scores["scorer"] == "judge").sum() == 4 and (scores["scorer"] == "f1").sum() == 5
    metrics = metrics_df(results, run_id).set_index(["name", "group_key"])
    assert metrics.loc[("accuracy", "all"), "n"] == 4 and metrics.loc[("accuracy", "all"), "n_missing"] == 0
    assert metrics.loc[("failed_phases", "all"), "value"] == 0
    _keys_are_unique(results, run_id)
