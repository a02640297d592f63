"""The lineage table of a real offline run with planted facts and a tight reflection threshold.

The oracle is independent of the events the lineage reads: the same conversation is replayed
again through the engine (the offline models are deterministic) and every generation of its
observation log is read from the engine's own record history. A planted fact (a single-session
question's answer value) is dropped by the first generation whose log no longer holds the value.
"""

from __future__ import annotations

import asyncio
import json

import pandas as pd
import pytest
from bench_runner.suites import offline_synthetic_suite

from omlab.bench.datasets import generate_synthetic
from omlab.bench.results import ResultsCatalog
from omlab.bench.run.options import RunOptions
from omlab.bench.run.replay import replay_conversation
from omlab.bench.run.runner import run_suite
from omlab.bench.scoring.f1 import normalize_answer
from omlab.engine.scheduler import MeasuredLatency
from omlab.llm.client import ModelClient

SEED, TOKENS, QUESTIONS = 1, 12000, 20
SUITE = offline_synthetic_suite(
    "tight",
    engine="observation = { messageTokens = 1500, bufferTokens = false }\nreflection = { observationTokens = 600 }",
    target_tokens=TOKENS,
    n_questions=QUESTIONS,
    seed=SEED,
)


def _oracle_generations(conversation) -> list[tuple[int, str]]:
    """(generation, log) of every generation the engine kept, from its record history."""
    options = {
        "observation": {"messageTokens": 1500, "bufferTokens": False, "model": "omlab/observer"},
        "reflection": {"observationTokens": 600, "model": "omlab/reflector"},
    }

    async def replay():
        result = await replay_conversation(
            conversation,
            options,
            make_client=lambda on_call: ModelClient(on_call=on_call),
            latency=MeasuredLatency(),
        )
        history = await result.memory.get_history(result.thread_id)
        return [(r.generation_count, r.active_observations) for r in history]

    return sorted(asyncio.run(replay()))


def _holds(log: str, value: str) -> bool:
    return f" {normalize_answer(value)} " in f" {normalize_answer(log)} "


@pytest.fixture(scope="module")
def tight_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lineage")
    suite = folder / "tight.toml"
    suite.write_text(SUITE, encoding="utf-8")
    [summary] = run_suite(suite, RunOptions(results_dir=folder / "results", progress=False))
    catalog = ResultsCatalog(folder / "results")
    return (
        catalog.read_table("lineage", summary.run_id),
        catalog.read_table("lineage_questions", summary.run_id),
    )


def test_lineage_names_the_generation_that_dropped_each_planted_fact(tight_run):
    lineage, _ = tight_run
    conversation = generate_synthetic(SEED, TOKENS, n_questions=QUESTIONS)
    generations = _oracle_generations(conversation)
    facts = [q for q in conversation.questions if q.type == "single-session-user" and not q.is_abstention]
    dropped, kept = {}, set()
    for question in facts:
        holding = [g for g, log in generations if _holds(log, question.answer)]
        assert holding, f"{question.id}: the observer never wrote {question.answer!r}"
        first_gone = next((g for g, log in generations if g > holding[0] and not _holds(log, question.answer)), None)
        if first_gone is None:
            kept.add(question.id)
        else:
            dropped[question.id] = first_gone
    assert len(dropped) >= 2, "the tight threshold must drop planted facts"
    print(f"dropped {dropped}, kept {sorted(kept)}")

    rows = lineage.set_index("question_id")
    for question_id, generation in dropped.items():
        row = rows.loc[question_id]
        assert row["fate"] == "dropped", question_id
        assert row["dropped_generation"] == generation, question_id
        assert not row["in_context"]
        assert json.loads(row["generations"])[-1] == {
            "generation": generation,
            "step": row["dropped_step"],
            "fate": "dropped",
        }
    for question_id in kept:
        row = rows.loc[question_id]
        assert pd.isna(row["dropped_generation"]) and row["in_context"], question_id


def test_every_evidence_turn_is_traced_by_message_id(tight_run):
    lineage, questions = tight_run
    conversation = generate_synthetic(SEED, TOKENS, n_questions=QUESTIONS)
    cited = {(q.id, t) for q in conversation.questions for t in q.evidence_ids}
    assert set(zip(lineage["question_id"], lineage["evidence_id"], strict=True)) == cited
    covered = lineage["cycle_id"].notna()
    assert covered.sum() > len(lineage) / 2
    assert (lineage.loc[covered, "match"] == "message_id").all()
    raw = lineage[~covered]  # still unobserved at the end: the actor reads the message itself
    assert (raw["fate"] == "unobserved").all() and (raw["in_context_as"] == "message").all()
    assert (lineage.loc[covered, "observed_step"] >= lineage.loc[covered, "ingest_step"]).all()
    assert set(questions["question_id"]) == {q.id for q in conversation.questions}


def test_loss_causes_follow_the_evidence(tight_run):
    lineage, questions = tight_run
    by_question = lineage.groupby("question_id")
    for row in questions.itertuples():
        if not pd.isna(row.correct) and row.correct:
            assert row.loss_cause == "answered_right"
        elif row.n_evidence == 0:
            assert row.loss_cause == "no_evidence"
        elif row.n_lost_at_reflection and not row.n_lost_at_observation:
            assert row.loss_cause == "lost_at_reflection"
            assert (by_question.get_group(row.question_id)["fate"] == "dropped").any()
        elif row.n_in_context == row.n_evidence:
            assert row.loss_cause == "present_answered_wrong"
    assert set(questions["loss_cause"]) >= {"lost_at_reflection"}
