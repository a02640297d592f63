"""``omlab export``: the LongMemEval hypotheses go through a copy of the official metric computation
and give omlab's numbers; LoCoMo predictions score as the official F1 does; tables keep every float."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from omlab.bench.datasets.schema import Question
from omlab.bench.results import answers_df, calls_df, metrics_df, runs_df, scores_df
from omlab.bench.scoring import judge_messages, locomo_f1
from omlab.cli.main import main
from omlab.llm.offline import get_offline_model

from .official_longmemeval import SIX_TYPES, evaluate_qa, print_qa_metrics, read_hypotheses

ROOT = Path(__file__).resolve().parents[2]
FACTS = {
    "single-session-user": ("Which city did I move to?", "Lisbon", "I just moved to Lisbon for work."),
    "single-session-assistant": ("What wine did you suggest?", "a Douro red", "You suggested a Douro red."),
    "single-session-preference": (
        "Any dinner ideas for tonight?",
        "The user is vegetarian; suggest vegetarian dishes.",
        "I have been vegetarian for years.",
    ),
    "multi-session": ("How many bikes do I own?", "2", "I own 2 bikes, a road bike and a gravel bike."),
    "temporal-reasoning": (
        "How many days before the race did I buy shoes?",
        "3 days",
        "I bought new running shoes 3 days before the race.",
    ),
    "knowledge-update": ("What is my job now?", "nurse", "I changed jobs, I am a nurse now."),
}


def _record(question_id: str, qtype: str, question: str, answer: str, fact: str) -> dict:
    sessions = [
        [
            {"role": "user", "content": fact, "has_answer": True},
            {"role": "assistant", "content": "Thanks for telling me."},
        ],
        [{"role": "user", "content": "The weather was grey today."}, {"role": "assistant", "content": "Stay dry."}],
    ]
    return {
        "question_id": question_id,
        "question_type": qtype,
        "question": question,
        "answer": answer,
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": [f"answer_{question_id}", f"filler_{question_id}"],
        "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/03 (Wed) 09:00"],
        "haystack_sessions": sessions,
        "answer_session_ids": [f"answer_{question_id}"],
    }


def _references() -> list[dict]:
    records = [_record(f"q{i}", qtype, *FACTS[qtype]) for i, qtype in enumerate(SIX_TYPES)]
    records.append(
        _record("q9_abs", "single-session-user", "Which city did my sister move to?", "never said", "I moved.")
    )
    records.append(_record("q10", "multi-session", "How many bikes do I have?", "2", "I own 2 bikes."))
    return records


@pytest.fixture(scope="module")
def lme_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export")
    references = _references()
    (folder / "lme.json").write_text(json.dumps(references), encoding="utf-8")
    suite = folder / "lme.toml"
    suite.write_text(
        """
[suite]
name = "export-roundtrip"
[dataset]
kind = "longmemeval"
path = "lme.json"
[engine]
observation = { messageTokens = 1000, bufferTokens = false }
reflection = { observationTokens = 2000 }
[latency]
default = { kind = "fixed", seconds = 1 }
[scoring]
verdict = "official"
[run]
workers = 1
""",
        encoding="utf-8",
    )
    results = folder / "results"
    assert main(["run", str(suite), "--results", str(results), "--quiet"]) == 0
    (run_id,) = runs_df(results)["run_id"]
    return folder, results, run_id, references


def _offline_judge(reference: dict, hypothesis: str) -> str:
    """The evaluator's judge call, with omlab's offline judge standing in for GPT-4o."""
    question = Question(
        id=reference["question_id"],
        type=reference["question_type"],
        question=reference["question"],
        answer=str(reference["answer"]),
        is_abstention="_abs" in reference["question_id"],
    )
    return get_offline_model("judge").generate(judge_messages(question, hypothesis), max_output_tokens=10).text


def test_longmemeval_export_scored_officially_gives_omlabs_numbers(lme_run, tmp_path, capsys):
    _, results, run_id, references = lme_run
    out = tmp_path / "hyp.jsonl"
    assert main(["export", run_id, "--format", "longmemeval", "--out", str(out), "--results", str(results)]) == 0
    hypotheses = read_hypotheses(out)
    assert len(hypotheses) == len(references)
    official = print_qa_metrics(evaluate_qa(hypotheses, references, _offline_judge), references)
    metrics = metrics_df(results, run_id).set_index(["name", "group_key"])["value"]
    assert 0 < official["overall"] < 1  # a round trip that can tell right from wrong
    assert official["overall"] == pytest.approx(metrics[("accuracy", "all")], abs=1e-12)
    assert official["task_averaged"] == pytest.approx(metrics[("task_averaged_accuracy", "all")], abs=1e-12)
    assert official["abstention"] == pytest.approx(metrics[("accuracy", "abstention")], abs=1e-12)
    for qtype in SIX_TYPES:
        assert official[f"type:{qtype}"] == pytest.approx(metrics[("accuracy", qtype)], abs=1e-12)


def test_tables_export_keeps_every_float_exactly(lme_run, tmp_path):
    _, results, run_id, _ = lme_run
    for fmt in ("csv", "parquet"):
        folder = tmp_path / fmt
        assert main(["export", "latest", "--format", fmt, "--out", str(folder), "--results", str(results)]) == 0
        read = pd.read_csv if fmt == "csv" else pd.read_parquet
        calls = read(folder / f"calls.{fmt}")
        original = calls_df(results, run_id)
        assert len(calls) == len(original) and len(calls) > 0
        for column in ("cost_usd", "latency_s"):
            assert calls[column].tolist() == original[column].tolist() or (
                calls[column].isna().equals(original[column].isna())
                and (calls[column].dropna().to_numpy() == original[column].dropna().to_numpy()).all()
            )
        answers = read(folder / f"answers.{fmt}")
        assert sorted(answers["question_id"]) == sorted(answers_df(results, run_id)["question_id"])
        scores = read(folder / f"scores.{fmt}")
        expected = scores_df(results, run_id).sort_values(["question_id", "scorer"])["value"].to_numpy()
        got = scores.sort_values(["question_id", "scorer"])["value"].to_numpy()
        assert ((got == expected) | (pd.isna(got) & pd.isna(expected))).all()


def test_locomo_export_is_what_the_official_f1_scores(tmp_path):
    folder = tmp_path
    (folder / "locomo.json").write_bytes((ROOT / "datasets" / "samples" / "locomo_sample.json").read_bytes())
    suite = folder / "locomo.toml"
    suite.write_text(
        """
[suite]
name = "export-locomo"
[dataset]
kind = "locomo"
path = "locomo.json"
[engine]
observation = { messageTokens = 1000, bufferTokens = false }
reflection = { observationTokens = 2000 }
[latency]
default = { kind = "fixed", seconds = 1 }
[run]
workers = 1
""",
        encoding="utf-8",
    )
    results = folder / "results"
    assert main(["run", str(suite), "--results", str(results), "--quiet"]) == 0
    out = folder / "pred.json"
    assert main(["export", "latest", "--format", "locomo", "--out", str(out), "--results", str(results)]) == 0
    samples = json.loads(out.read_text(encoding="utf-8"))
    source = json.loads((folder / "locomo.json").read_text(encoding="utf-8"))
    assert [s["sample_id"] for s in samples] == [s["sample_id"] for s in source]
    (run_id,) = runs_df(results)["run_id"]
    f1 = scores_df(results, run_id, scorers="f1").set_index("question_id")["value"]
    items = [item for sample in samples for item in sample["qa"]]
    assert len(items) == sum(len(s["qa"]) for s in source)
    for item, original in zip(items, source[0]["qa"], strict=True):
        assert item["question"] == original["question"] and item["category"] == original["category"]
        gold = item.get("answer", item.get("adversarial_answer"))  # as the official evaluation.py reads it
        assert locomo_f1(item["prediction"], str(gold), item["category"]) == f1[item["question_id"]]
