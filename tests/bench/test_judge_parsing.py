import json

import pytest

from omlab.bench.datasets.schema import Question
from omlab.bench.scoring.longmemeval_judge import (
    DEFAULT_JUDGE_PROMPTS,
    JUDGE_REQUEST_OPTIONS,
    PROMPT_KEYS,
    JudgePromptError,
    judge_messages,
    judge_prompt,
    load_judge_prompts,
)
from omlab.bench.scoring.verdicts import parse_verdict


def _question(qtype: str = "single-session-user", abstention: bool = False, answer: str = "Graz") -> Question:
    return Question(
        id="q1_abs" if abstention else "q1",
        type=qtype,
        question="Where does my sister live?",
        answer=answer,
        is_abstention=abstention,
    )


def test_judge_messages_is_one_user_message_with_all_parts():
    messages = judge_messages(_question(), "She lives in Graz.")
    assert len(messages) == 1 and messages[0]["role"] == "user"
    content = messages[0]["content"]
    assert "Question: Where does my sister live?" in content
    assert "Reference answer: Graz" in content
    assert "Response: She lives in Graz." in content
    assert content.rstrip().endswith("Reply with a single word: yes or no.")
    assert JUDGE_REQUEST_OPTIONS == {"temperature": 0.0, "max_output_tokens": 10}


def test_prompt_routing_by_abstention_then_type():
    prompts = DEFAULT_JUDGE_PROMPTS
    assert prompts.key_for(_question("multi-session", abstention=True)) == "abstention"
    assert prompts.key_for(_question("temporal-reasoning")) == "temporal-reasoning"
    assert prompts.key_for(_question("multi-hop")) == "default"  # e.g. a LoCoMo type
    abstention = judge_prompt(_question("multi-session", abstention=True, answer="Never said."), "I don't know.")
    assert "cannot be answered" in abstention and "Why it cannot be answered: Never said." in abstention
    assert "off by one" not in abstention
    temporal = judge_prompt(_question("temporal-reasoning", answer="18 days"), "19 days")
    assert "19 days where the reference says 18" in temporal
    update = judge_prompt(_question("knowledge-update"), "Graz, previously Bergen")
    assert "most recent" in update and "older" in update
    preference = judge_prompt(_question("single-session-preference", answer="Suggest tea shops"), "x")
    assert "Rubric: Suggest tea shops" in preference and "every point" in preference
    standard = judge_prompt(_question("multi-session"), "x")
    assert "only part" in standard


def test_braces_in_answers_are_not_format_fields():
    text = judge_prompt(_question(answer="{weird} {}"), "{response}")
    assert "Reference answer: {weird} {}" in text and "Response: {response}" in text


def test_official_style_positional_templates_load(tmp_path):
    templates = {key: f"[{key}] Q={{}} A={{}} R={{}} yes or no?" for key in PROMPT_KEYS}
    path = tmp_path / "official.json"
    path.write_text(json.dumps(templates))
    prompts = load_judge_prompts(path)
    assert prompts.source == str(path)
    assert judge_prompt(_question("knowledge-update"), "Bergen", prompts) == (
        "[knowledge-update] Q=Where does my sister live? A=Graz R=Bergen yes or no?"
    )
    assert judge_prompt(_question(abstention=True), "?", prompts).startswith("[abstention]")
    assert prompts.digest != DEFAULT_JUDGE_PROMPTS.digest
    with pytest.raises(JudgePromptError, match="no judge template for question type 'custom'"):
        prompts.key_for(_question("custom"))


def test_named_templates_with_a_default(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(
        json.dumps(
            {"default": "{response} vs {answer} for {question}", "abstention": "ABS {question} {answer} {response}"}
        )
    )
    prompts = load_judge_prompts(path)
    assert judge_prompt(_question("multi-session"), "Graz", prompts) == ("Graz vs Graz for Where does my sister live?")


@pytest.mark.parametrize(
    "content, problem",
    [
        ({"abstention": "{} {} {}"}, "missing templates for"),
        ({"default": "{} {} {}", "abstention": "{} {} {nope}"}, "key 'abstention': bad template"),
        ({"default": "{0} {}", "abstention": "{} {} {}"}, "key 'default': bad template"),
        ({"default": "{} {} {}", "abstention": "{} {}"}, "must use the response exactly once"),
        ({"default": "{question} {answer}", "abstention": "{} {} {}"}, "must use the response exactly once"),
        ({"default": "{} {} {}", "abstention": "{} {} {}", "bonus": "{} {} {}"}, "unknown keys ['bonus']"),
        ({"default": 3, "abstention": "{} {} {}"}, "key 'default': template must be a string"),
        (["not", "an", "object"], "expected a JSON object"),
    ],
)
def test_bad_prompt_files_name_file_and_key(tmp_path, content, problem):
    path = tmp_path / "prompts.json"
    path.write_text(json.dumps(content))
    with pytest.raises(JudgePromptError) as caught:
        load_judge_prompts(path)
    assert str(path) in str(caught.value) and problem in str(caught.value)


def test_unreadable_prompt_file(tmp_path):
    with pytest.raises(JudgePromptError, match="cannot read"):
        load_judge_prompts(tmp_path / "missing.json")


@pytest.mark.parametrize(
    "reply, parity, official, strict, lenient",
    [
        ("yes", True, True, True, True),
        ("Yes.", True, True, True, True),
        ("  YES. The answer matches.", True, True, True, True),
        ("Yes, because it says Graz.", False, True, True, True),
        ("no", False, False, False, False),
        ("No.", False, False, False, False),
        ("**No**", False, False, False, False),
        ("yesterday", False, True, None, None),
        ("No, it is not yes", False, True, False, None),
        ("The response is correct: yes.", False, True, None, True),
        ("Correct", False, False, True, True),
        ("Incorrect.", False, False, False, False),
        ("I think no", False, False, None, False),
        ("", False, False, None, None),
        ("maybe", False, False, None, None),
    ],
)
def test_parse_verdict_modes(reply, parity, official, strict, lenient):
    assert parse_verdict(reply) is parity  # parity is the default
    assert parse_verdict(reply, "parity") is parity
    assert parse_verdict(reply, "official") is official
    assert parse_verdict(reply, "strict") is strict
    assert parse_verdict(reply, "lenient") is lenient


def test_parse_verdict_rejects_unknown_mode():
    with pytest.raises(ValueError, match="verdict mode"):
        parse_verdict("yes", "fuzzy")  # type: ignore[arg-type]
