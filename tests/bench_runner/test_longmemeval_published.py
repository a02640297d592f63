"""The reference's published LongMemEval setup runs end to end on a LongMemEval-format fixture."""

from __future__ import annotations

import tomllib
from pathlib import Path

from omlab.bench.results import calls_df, events_df, steps_df
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite
from omlab.bench.suite.suite_file import parse_suite

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "benchmarks" / "longmemeval_published.toml"


def _suite(message_tokens: int):
    data = tomllib.loads(SUITE.read_text(encoding="utf-8"))
    data["dataset"]["path"] = str(ROOT / "tests" / "bench" / "fixtures" / "longmemeval_mini.json")
    data["engine"]["observation"]["messageTokens"] = message_tokens  # small, so observation happens
    return parse_suite(data, source=str(SUITE), base_dir=SUITE.parent)


def test_published_setup_runs_in_resource_scope_with_obscured_ids(tmp_path):
    suite = _suite(120)
    assert suite.replay.scope == "resource" and suite.replay.ingest == "pair"
    [summary] = run_suite(suite, RunOptions(results_dir=tmp_path, cache_mode="off", progress=False, workers=1))
    assert summary.status == "finished" and summary.n_questions >= 2
    steps = steps_df(tmp_path, run_id=summary.run_id)
    events = events_df(tmp_path, run_id=summary.run_id)
    calls = calls_df(tmp_path, run_id=summary.run_id)
    # one thread per session, named neutrally; no LongMemEval id anywhere the engine saw
    per_conversation = steps.dropna(subset=["message_id"]).groupby("conversation_id")["thread_id"].nunique()
    assert (per_conversation >= 1).all() and per_conversation.max() > 1
    assert not steps["thread_id"].astype(str).str.contains("answer_|_abs").any()
    observations = events[events["type"] == "data-om-observation-end"]
    assert len(observations) > 0
    text = "\n".join(observations["payload"].astype(str))
    assert '<thread id=\\"' in text or "<thread id=" in text
    assert "answer_" not in text and "_abs" not in text
    assert set(calls["role"]) >= {"observer", "actor", "judge"}
