"""The answer and judge phases on the real dataset formats (LoCoMo F1 + J, LongMemEval routing)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from omlab.bench.datasets.schema import Conversation, Question, Session, Turn
from omlab.bench.results import conversations_df, scores_df
from omlab.bench.results.frames import catalog_of
from omlab.bench.run.answering import question_date, question_prompt, retention_scores
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite

SAMPLES = Path(__file__).resolve().parents[2] / "datasets" / "samples"

SUITE = """
[suite]
name = "{name}"
[dataset]
kind = "{kind}"
path = "{path}"
[engine]
observation = {{ messageTokens = 200, bufferTokens = false }}
reflection = {{ observationTokens = 5000 }}
[latency]
default = {{ kind = "fixed", seconds = 2 }}
"""


def _run(tmp_path: Path, kind: str, path: Path):
    suite = tmp_path / f"{kind}.toml"
    suite.write_text(SUITE.format(name=kind, kind=kind, path=path), encoding="utf-8")
    results = tmp_path / "results"
    (summary,) = run_suite(suite, RunOptions(results_dir=results, workers=1, progress=False))
    return results, summary


def test_locomo_gets_f1_for_every_category_and_a_judge_for_one_to_four(tmp_path):
    results, summary = _run(tmp_path, "locomo", SAMPLES / "locomo_sample.json")
    scores = scores_df(results, summary.run_id)
    by_scorer = scores.groupby("scorer")["question_id"].apply(set).to_dict()
    assert by_scorer["f1"] == {f"demo-1:q00{i}" for i in range(1, 6)}
    assert by_scorer["judge"] == {f"demo-1:q00{i}" for i in range(1, 5)}  # no judge for adversarial
    names = set(summary.metrics["name"])
    assert {"f1", "accuracy"} <= names and "task_averaged_accuracy" not in names
    groups = set(summary.metrics.loc[summary.metrics["name"] == "f1", "group_key"])
    assert {"all", "multi-hop", "adversarial"} <= groups
    assert set(conversations_df(results, summary.run_id)["status"]) == {"done"}


def test_longmemeval_abstention_goes_to_the_abstention_judge_prompt(tmp_path):
    results, summary = _run(tmp_path, "longmemeval", SAMPLES / "longmemeval_sample.json")
    scores = scores_df(results, summary.run_id, scorers="judge").set_index("question_id")
    assert set(scores.index) == {"0a1b2c3d", "4e5f6a7b_abs"}
    answers = catalog_of(results).read_table("answers", summary.run_id).set_index("question_id")
    assert bool(answers.loc["4e5f6a7b_abs", "is_abstention"]) is True
    # the offline reader abstains on what was never said and the lexical judge accepts that
    assert "know" in answers.loc["4e5f6a7b_abs", "hypothesis"].lower()
    assert bool(scores.loc["4e5f6a7b_abs", "correct"]) is True
    # retention is not scored for abstention questions (their gold is an explanation)
    retention = scores_df(results, summary.run_id, scorers="retention")
    assert "4e5f6a7b_abs" not in set(retention["question_id"])


def test_question_prompt_and_date():
    asked = datetime(2023, 5, 30, 23, 40, tzinfo=UTC)
    question = Question(id="q", type="t", question="Where do I live?", answer="Lisbon", question_date=asked)
    assert question_prompt(question, asked) == "Current Date: 2023/05/30 (Tue) 23:40\nQuestion: Where do I live?"
    conversation = _conversation()
    undated = Question(id="u", type="t", question="?", answer="x")
    assert question_date(conversation, question) == asked
    assert question_date(conversation, undated) == datetime(2024, 1, 1, 9, 1, tzinfo=UTC)  # last turn


@pytest.mark.parametrize(
    ("question", "scorers"),
    [
        (
            Question(id="a", type="single-session-user", question="?", answer="Lisbon", evidence_ids=["t1"]),
            ["retention", "evidence_retention"],
        ),
        (
            Question(id="b", type="single-session-user", question="?", answer="never said", is_abstention=True),
            [],
        ),
        (
            Question(id="c", type="single-session-preference", question="?", answer="a rubric", evidence_ids=["t1"]),
            ["evidence_retention"],
        ),
        (Question(id="d", type="adversarial", question="?", answer="Lisbon", category=5), []),
    ],
)
def test_retention_rules(question, scorers):
    scores = retention_scores(_conversation(), question, "User said they moved to Lisbon in May.")
    assert [s["scorer"] for s in scores] == scorers
    if "retention" in scorers:
        assert scores[0]["correct"] is True and scores[0]["value"] == 1.0
    assert retention_scores(_conversation(), question, "anything", enabled=False) == []


def _conversation() -> Conversation:
    at = datetime(2024, 1, 1, 9, tzinfo=UTC)
    turns = [
        Turn(id="t1", role="user", content="I moved to Lisbon in May.", created_at=at),
        Turn(id="t2", role="assistant", content="Nice!", created_at=at.replace(minute=1)),
    ]
    return Conversation(id="c", sessions=[Session(id="s", date=at, turns=turns)], questions=[], dataset="test")
