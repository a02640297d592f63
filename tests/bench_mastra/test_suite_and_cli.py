"""``kind = "mastra"`` through the suite machinery (a grid, virtual time, reports, no questions)
and ``omlab import``."""

from __future__ import annotations

import json

import pytest

from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite
from omlab.bench.suite.suite_file import SuiteError, parse_suite
from omlab.cli.main import main


def _suite(recorded, **dataset):
    return parse_suite(
        {
            "suite": {"name": "mastra-sweep"},
            "dataset": {"kind": "mastra", "path": str(recorded), "resource": "user-ana", **dataset},
            "engine": {
                "observation": {"messageTokens": 3000, "bufferTokens": 0.2, "blockAfter": 1.2},
                "reflection": {"observationTokens": 4000},
            },
            "grid": {"observation.bufferTokens": [0.2, False]},
            "latency": {"default": {"kind": "fixed", "seconds": 5.0}},
            "replay": {"ingest": "turn"},
        },
        source="mastra.toml",
    )


@pytest.mark.filterwarnings("ignore:observation.blockAfter:UserWarning")
def test_a_sweep_over_imported_threads_reports_without_questions(recorded, tmp_path):
    summaries = run_suite(_suite(recorded), RunOptions(results_dir=tmp_path, workers=1))
    assert [s.status for s in summaries] == ["finished", "finished"]
    assert {s.n_conversations for s in summaries} == {2} and {s.n_questions for s in summaries} == {0}
    by_cell = {}
    for summary in summaries:
        frame = summary.metrics
        metrics = frame[frame["group_key"] == "all"].set_index("name")["value"]
        by_cell[summary.config_name] = metrics
        for name in ("compression_observation", "blocked_s", "context_tokens_peak", "cost_usd"):
            assert name in metrics.index, (summary.config_name, name)
    # buffering off observes synchronously: the actor waits; buffered, it does not
    assert by_cell["bufferTokens=false"]["blocked_s"] > 0 == by_cell["bufferTokens=0.2"]["blocked_s"]
    assert by_cell["bufferTokens=false"]["compression_observation"] > 1


def test_mastra_dataset_keys_are_validated(recorded):
    with pytest.raises(SuiteError, match=r"dataset\.since: must be a date-time with an offset"):
        _suite(recorded, since="2025-03-01T00:00:00")
    with pytest.raises(SuiteError, match=r"dataset\.threads: must be a thread id or a list"):
        _suite(recorded, threads=[1])
    with pytest.raises(SuiteError, match=r"dataset\.path: holds a password: .*PGPASSWORD"):
        _suite("postgresql://me:secret@127.0.0.1:5432/app")
    _suite("postgresql://me@127.0.0.1:5432/app")  # no password: accepted
    with pytest.raises(SuiteError, match=r"dataset\.seeds: unknown key"):
        _suite(recorded, seeds=[1])


def test_omlab_import_prints_the_summary(recorded, capsys):
    assert main(["import", str(recorded), "--resource", "user-ben"]) == 0
    out = capsys.readouterr().out
    assert "threads      1 in 1 resource(s); skipped 1 without messages" in out
    assert "step-start" in out and "(kept as a generic part)" in out
    assert main(["import", str(recorded), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["messages"] == 300 and summary["om_records"] == 5


def test_omlab_import_writes_the_records_and_markers_for_other_tools(recorded, tmp_path, capsys):
    import pandas as pd

    records, markers = tmp_path / "records.parquet", tmp_path / "markers.parquet"
    assert main(["import", str(recorded), "--records", str(records), "--markers", str(markers)]) == 0
    assert len(pd.read_parquet(records)) == 5
    assert set(pd.read_parquet(markers)["type"]) == {
        "data-om-activation",
        "data-om-buffering-end",
        "data-om-buffering-start",
    }


def test_omlab_import_of_a_bad_file_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "x.db"
    bad.write_text("nope\n" * 200)
    assert main(["import", str(bad)]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"omlab import: {bad}: not an SQLite/LibSQL database (file is not a database)"
    )
