"""omlab/judge: the lexical judge on prompts built by the benchmark's judge templates."""

from __future__ import annotations

import pytest

from omlab.bench.datasets.schema import Question
from omlab.bench.scoring.longmemeval_judge import judge_messages
from omlab.bench.scoring.verdicts import VERDICT_MODES, parse_verdict
from omlab.llm.client import ModelClient
from omlab.llm.offline import get_offline_model
from omlab.llm.offline.judge import (
    OfflineJudge,
    gold_alternatives,
    numbers_match,
    parse_judge_prompt,
    says_not_known,
    token_f1,
)
from omlab.llm.offline.reader import ABSTENTION_ANSWER, OfflineReader
from omlab.llm.types import ModelRequest


def verdict(gold: str, response: str, *, type: str = "single-session-user", abstention: bool = False) -> str:
    question = Question(id="q1", type=type, question="What is it?", answer=gold, is_abstention=abstention)
    return OfflineJudge().generate(judge_messages(question, response)).text


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("Luna", "Your cat is named Luna.", "yes"),
        ("Luna", "Your cat is named Mia.", "no"),
        ("3", "You have 3 kids.", "yes"),
        ("3", "You have three kids.", "yes"),  # number words are numbers
        ("3", "You have 2 kids.", "no"),
        ("$1,200", "It cost 1200 dollars.", "yes"),
        ("May 7, 2023", "You went on 7 May 2023.", "yes"),
        ("May 7, 2023", "You went on May 8, 2023.", "no"),  # the numbers must match
        ("a blue Fender guitar", "You bought a Fender guitar in blue", "yes"),  # F1 = 1
        ("the Golden Gate Park in San Francisco", "Golden Gate Park", "yes"),  # F1 = 2·1·0.6/1.6 = 0.75
        ("the Golden Gate Park in San Francisco", "a park", "no"),  # F1 = 2·1·0.2/1.2 = 0.33
        ("7 days. 8 days (including the last day) is also acceptable.", "8 days", "yes"),
        ("7 days. 8 days (including the last day) is also acceptable.", "9 days", "no"),
        ("Sony or Canon", "A Canon camera", "yes"),
        ("Luna", ABSTENTION_ANSWER, "no"),
        ("Luna", "", "no"),
    ],
)
def test_answer_prompts(gold, response, expected):
    assert verdict(gold, response) == expected


def test_knowledge_update_accepts_older_values_alongside_the_new_one():
    assert verdict("3 kids", "You used to have 2 kids; now you have 3.", type="knowledge-update") == "yes"
    assert verdict("3 kids", "You have 2 kids.", type="knowledge-update") == "no"


def test_temporal_prompts_accept_off_by_one_counts():
    assert verdict("18 days", "19 days", type="temporal-reasoning") == "yes"
    assert verdict("18 days", "20 days", type="temporal-reasoning") == "no"
    assert verdict("18 days", "19 days", type="single-session-user") == "no"


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (ABSTENTION_ANSWER, "yes"),
        ("You never mentioned a hamster, only your cat Luna.", "yes"),
        ("There is no information about that in our conversations.", "yes"),
        ("I can't determine that from what you told me.", "yes"),
        ("Your hamster is called Luna.", "no"),
    ],
)
def test_abstention_prompts(response, expected):
    explanation = "The user never mentioned a hamster; they have a cat."
    assert verdict(explanation, response, abstention=True) == expected


def test_rubric_prompts_need_half_the_rubric_terms():
    rubric = "Suggest Sony lenses for the user's photography."  # content terms: suggest, sony, lens, photography
    assert verdict(rubric, "Try Sony lenses for photography.", type="single-session-preference") == "yes"
    assert verdict(rubric, "Try hiking boots.", type="single-session-preference") == "no"


def test_the_prompt_fields_are_read_back_exactly():
    question = Question(id="q", type="temporal-reasoning", question="How many days\nbetween A and B?", answer="18 days")
    response = "First paragraph.\n\nSecond paragraph with 18 days."
    parsed = parse_judge_prompt(judge_messages(question, response)[0]["content"])
    assert (parsed.question, parsed.gold, parsed.response) == (
        "How many days\nbetween A and B?",
        "18 days",
        response,
    )
    assert parsed.kind == "answer" and parsed.off_by_one is True
    abstention = Question(id="q_abs", type="multi-session", question="?", answer="never said", is_abstention=True)
    assert parse_judge_prompt(judge_messages(abstention, "x")[0]["content"]).kind == "abstention"


def test_other_wordings_with_the_official_labels():
    prompt = (
        "Decide whether the model got it right.\n\nQuestion: Where do I live?\n\nCorrect Answer: Lisbon\n\n"
        "Model Response: You live in Lisbon, Portugal.\n\nIs the model response correct? Answer yes or no only."
    )
    assert OfflineJudge().generate([{"role": "user", "content": prompt}]).text == "yes"
    unanswerable = prompt.replace("Correct Answer: Lisbon", "Explanation: The city was never given.")
    assert OfflineJudge().generate([{"role": "user", "content": unanswerable}]).text == "no"


def test_unrecognised_prompts_are_a_clear_error():
    with pytest.raises(ValueError, match="judge prompt not recognised: expected lines starting with 'Question:'"):
        OfflineJudge().generate([{"role": "user", "content": "Is Lisbon right? yes or no"}])
    with pytest.raises(ValueError, match="no user message"):
        OfflineJudge().generate([{"role": "system", "content": "Question: x"}])


def test_every_verdict_mode_reads_the_output():
    for expected, response in (("yes", "Luna"), ("no", "Mia")):
        text = verdict("Luna", response)
        assert text == expected
        assert {parse_verdict(text, mode) for mode in VERDICT_MODES} == {expected == "yes"}


def test_helpers():
    assert token_f1("blue Fender guitar", "a Fender guitar") == pytest.approx(0.8)  # P=1, R=2/3
    assert numbers_match("7 and 8", "8 and 7") and not numbers_match("7 and 8", "8")
    assert gold_alternatives("7 days. 8 days (including the last day) is also acceptable.") == [
        "7 days. 8 days (including the last day) is also acceptable.", "7 days", "8 days",
    ]  # fmt: skip
    assert gold_alternatives("Lisbon") == ["Lisbon"]
    assert numbers_match("no numbers here", "whatever")
    assert says_not_known("That wasn’t mentioned.") and not says_not_known("It is Luna.")


def test_reader_and_judge_together_on_an_abstention_question():
    context = [{"role": "user", "content": "I adopted a cat named Luna."}]
    answer = (
        OfflineReader().generate([*context, {"role": "user", "content": "Question: What is my hamster called?"}]).text
    )
    assert answer == ABSTENTION_ANSWER
    assert verdict("The user never mentioned a hamster.", answer, abstention=True) == "yes"


async def test_through_model_client():
    assert isinstance(get_offline_model("judge"), OfflineJudge)
    question = Question(id="q", type="multi-session", question="Where do I live?", answer="Lisbon")
    response = await ModelClient().complete(
        ModelRequest(model="omlab/judge", messages=judge_messages(question, "In Lisbon."), role="judge")
    )
    assert response.text == "yes" and response.usage.output_tokens == 1
