"""A LoCoMo run whose judge fails on every question still ends with a report: ``omlab run
--report`` and ``omlab report RUN --plots`` write report.md and the plots, the run exits 3
(incomplete) and the report keeps the accuracy-by-type rows with n 0 and their missing counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from omlab.bench.results import runs_df
from omlab.cli.main import main
from omlab.llm.offline import register_offline_model

ROOT = Path(__file__).resolve().parents[2]
LOCOMO_SAMPLE = ROOT / "datasets" / "samples" / "locomo_sample.json"


class _DownJudge:
    """A judge whose every call fails (an outage that outlasts the retries)."""

    name = "down-judge"

    def generate(self, messages, **_):
        raise ConnectionError("judge endpoint unreachable")


register_offline_model(_DownJudge.name, _DownJudge)

SUITE = """
[suite]
name = "locomo-judge-down"
[dataset]
kind = "locomo"
path = "locomo.json"
[engine]
observation = { messageTokens = 1000, bufferTokens = false }
reflection = { observationTokens = 2000 }
[models]
judge = "omlab/down-judge"
[latency]
default = { kind = "fixed", seconds = 1 }
[retry]
judge = { max_retries = 0 }
[cache]
mode = "off"
[run]
workers = 1
"""


@pytest.fixture(scope="module")
def judge_down_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("judge-down")
    (folder / "locomo.json").write_bytes(LOCOMO_SAMPLE.read_bytes())
    suite = folder / "suite.toml"
    suite.write_text(SUITE, encoding="utf-8")
    results = folder / "results"
    code = main(["run", str(suite), "--results", str(results), "--quiet", "--no-prepared", "--report"])
    (run_id,) = runs_df(results)["run_id"]
    return code, results, run_id


def test_a_run_whose_judge_always_fails_exits_3_with_a_report(judge_down_run):
    code, results, run_id = judge_down_run
    assert code == 3
    report = results / "reports" / run_id / "report.md"
    assert report.is_file()
    text = report.read_text(encoding="utf-8")
    assert "## Plots" in text
    (status,) = [line for line in text.splitlines() if line.startswith("| status |")]
    assert status.count("INCOMPLETE") == 1 and "ConnectionError" not in status
    failures = text.split("## Failures")[1].split("##")[0]
    assert "| demo-1 | judge | demo-1:q001: ModelCallError" in failures
    by_type = text.split("## Accuracy by question type")[1].split("##")[0]
    for category in ("single-hop", "multi-hop", "temporal", "open-domain"):
        assert f"| {category} | — |  | 0 | 1 |" in by_type


def test_the_report_command_draws_the_plots_of_a_run_without_verdicts(judge_down_run, tmp_path):
    _, results, run_id = judge_down_run
    assert main(["report", run_id, "--results", str(results), "--plots", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "report.md").is_file()
    assert list(tmp_path.glob("*.png"))
