"""Under ``protocol = "official"`` the actor's message is the official query byte for byte:
the context, ``"\\n\\n"`` and ``QA_PROMPT`` (``QA_PROMPT_CAT_5``) formatted with the question,
as one string (``get_gpt_answers`` in LoCoMo's ``task_eval/gpt_utils.py``).

The official code path runs offline (``official_gpt_utils``) and its queries are compared with
omlab's, given the same context (the official transcript): against the user's copy of the
official file, named by ``OMLAB_LOCOMO_GPT_UTILS`` (the file or a LoCoMo checkout; LoCoMo is
CC BY-NC, so it is never committed), and always against a stand-in we wrote that follows the
documented construction with its own wording.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from omlab.bench.datasets import load_locomo
from omlab.bench.scoring.locomo_protocol import locomo_protocol, official_file

from .official_gpt_utils import load_gpt_utils, official_queries, official_transcript

ROOT = Path(__file__).resolve().parents[2]
LOCOMO_SAMPLE = ROOT / "datasets" / "samples" / "locomo_sample.json"
STAND_IN = Path(__file__).parent / "data" / "gpt_utils_stand_in.txt"
OFFICIAL_ENV = "OMLAB_LOCOMO_GPT_UTILS"


def _assert_queries_equal(path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    protocol = locomo_protocol(path)
    _, (conversation,) = load_locomo(LOCOMO_SAMPLE, caption_style="official")
    (sample,) = json.loads(LOCOMO_SAMPLE.read_text(encoding="utf-8"))
    # the official code draws each category 5 order at random: make it draw omlab's
    choices = iter(
        [
            0.0 if protocol.options(question)["a"] == protocol.not_mentioned else 0.9
            for question in conversation.questions
            if question.category == 5
        ]
    )
    module = load_gpt_utils(path, monkeypatch)
    sent = official_queries(module, sample, choices)
    transcript = official_transcript(module, sample)
    a, b = conversation.metadata["speaker_a"], conversation.metadata["speaker_b"]
    assert len(sent) == len(conversation.questions)
    for question, official in zip(conversation.questions, sent, strict=True):
        # the official code takes the two names in a set's order (it varies between processes);
        # omlab puts speaker_a first
        openings = [protocol.start(a, b), protocol.start(b, a)]
        opening = next((o for o in openings if official.startswith(o)), None)
        assert opening is not None, f"{question.id}: the official query opens otherwise: {official[:120]!r}"
        ours, _ = protocol.query(opening + transcript, question)
        assert ours == official, question.id
    return len(sent)


def test_omlab_builds_the_documented_query_of_the_stand_in(monkeypatch):
    assert _assert_queries_equal(STAND_IN, monkeypatch) == 5  # every category, 5 included


def test_omlab_builds_the_official_files_query_byte_for_byte(monkeypatch):
    given = os.environ.get(OFFICIAL_ENV)
    if not given:
        pytest.skip(f"set {OFFICIAL_ENV} to LoCoMo's task_eval/gpt_utils.py (or the checkout) to compare with it")
    path = official_file(given)
    if not path.is_file():
        pytest.skip(f"{OFFICIAL_ENV}={given}: no {path}")
    assert _assert_queries_equal(path, monkeypatch) == 5


def test_the_official_prompt_keeps_its_newlines_and_follows_the_context_after_a_blank_line():
    protocol = locomo_protocol(STAND_IN)
    assert protocol.answer_prompt.startswith("\nSTAND-IN") and protocol.answer_prompt.endswith("Short answer:\n")
    _, (conversation,) = load_locomo(LOCOMO_SAMPLE)
    single_hop = next(q for q in conversation.questions if q.category == 4)
    text, options = protocol.query("CONTEXT", single_hop)
    assert options is None
    assert (
        text
        == f"CONTEXT\n\n\nSTAND-IN: answer in a short phrase, with words from the context.\n\nQuestion: {single_hop.question} Short answer:\n"
    )
