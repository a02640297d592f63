"""Export of a run's answers in the LongMemEval evaluator's hypothesis JSONL format."""

from __future__ import annotations

import json

import pytest

from omlab.bench.results import export_hypotheses

from .samples import open_writer

RUN = "20240501T093000-aaaaaa"


def _run(tmp_path):
    with open_writer(tmp_path, RUN) as writer:
        writer.add_answers(
            [
                {"question_id": "b_q2", "conversation_id": "c1", "hypothesis": 'Café "Le Zinc"\nparis', "status": "ok"},
                {"question_id": "a_q1_abs", "conversation_id": "c1", "hypothesis": "I don't know.", "status": "ok"},
                {
                    "question_id": "c_q3",
                    "conversation_id": "c2",
                    "hypothesis": None,
                    "status": "failed",
                    "error": "timeout",
                },
            ]
        )


def test_export_writes_one_evaluator_line_per_answered_question(tmp_path):
    _run(tmp_path)
    target = tmp_path / "out" / "hyp.jsonl"
    assert export_hypotheses(tmp_path, RUN, target) == 2
    text = target.read_text(encoding="utf-8")
    assert text == (
        '{"question_id": "a_q1_abs", "hypothesis": "I don\'t know."}\n'
        '{"question_id": "b_q2", "hypothesis": "Café \\"Le Zinc\\"\\nparis"}\n'
    )
    for line in text.splitlines():
        assert set(json.loads(line)) == {"question_id", "hypothesis"}


def test_failed_answers_only_when_asked_and_as_empty_text(tmp_path):
    _run(tmp_path)
    target = tmp_path / "all.jsonl"
    assert export_hypotheses(tmp_path, RUN, target, include_failed=True) == 3
    last = json.loads(target.read_text(encoding="utf-8").splitlines()[-1])
    assert last == {"question_id": "c_q3", "hypothesis": ""}


def test_unknown_run(tmp_path):
    with pytest.raises(ValueError, match="no run"):
        export_hypotheses(tmp_path, "missing", tmp_path / "x.jsonl")
