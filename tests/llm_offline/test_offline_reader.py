"""omlab/reader: the retrieval-based answerer on hand-made memory contexts."""

from __future__ import annotations

import json
import re
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.llm.client import ModelClient
from omlab.llm.offline import get_offline_model, offline_model_names
from omlab.llm.offline.reader import ABSTENTION_ANSWER, OfflineReader
from omlab.llm.offline.reader_ranking import topic_terms
from omlab.llm.offline.reader_request import parse_reader_request
from omlab.llm.offline.text_terms import content_terms, normalise_tokens, parse_date, stem
from omlab.llm.types import ModelRequest

INSTRUCTIONS = (
    "The observations below are your memory of earlier conversations with this user.\n\n"
    "How to use this memory:\n- Prefer the most recent information about the current state of things.\n"
    "- Follow the suggested response if there is one."
)
LOG = """Date: May 1, 2023 (4 weeks ago)
* 🔴 (09:12) User stated they have 2 kids, Emma and Leo.
* (09:14) Assistant suggested three parks near Alfama.
* 🔴 (09:20) User stated they adopted a cat named Luna.

[1 week later]

Date: May 8, 2023 (3 weeks ago)
* 🔴 (13:56) User stated they went to a pottery class yesterday (meaning May 7, 2023 - 3 weeks ago)
* 🔴 (14:05) User stated they moved to Lisbon last week.
* 🔴 (14:20) User stated their sister Ana finished a marathon.

Date: May 20, 2023 (10 days ago)
* 🔴 (10:00) User stated they now have 3 kids after the baby arrived.
* 🔴 (10:05) User stated they ran a 10K in 52 minutes."""


def actor_context(log: str = LOG, raw: list[dict] | None = None) -> list[dict]:
    """The shape of omlab.engine.context.build_actor_context: memory system messages, raw messages."""
    return [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "system", "content": "<observations>"},
        *({"role": "system", "content": chunk} for chunk in log.split("\n\n[1 week later]\n\n")),
        {"role": "system", "content": "</observations>"},
        {"role": "system", "content": "<current-task>\nPrimary: book a dentist in Porto\n</current-task>"},
        {
            "role": "system",
            "content": "<system-reminder>Answer the latest message naturally.</system-reminder>",
        },
        *(raw or []),
    ]


def ask(
    question: str, context: list[dict] | None = None, *, current_date: str | None = "2023/05/30 (Tue) 23:40"
) -> str:
    prompt = f"Current Date: {current_date}\nQuestion: {question}" if current_date else question
    messages = (actor_context() if context is None else context) + [{"role": "user", "content": prompt}]
    return OfflineReader().generate(messages).text


# --- answers ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What is the name of my cat?", "Luna"),
        ("Where did I move to?", "Lisbon"),
        ("Who are my kids?", "Emma and Leo"),
        ("How long did it take me to run the 10K?", "52 minutes"),
        ("Who finished a marathon?", "Ana"),
    ],
)
def test_a_fact_from_the_observation_log(question, answer):
    assert ask(question) == answer


def test_a_knowledge_update_gives_the_latest_value():
    assert ask("How many kids do I have?") == "3 kids"
    # Same lines, order reversed: recency, not wording, decided.
    lines = LOG.splitlines()
    swapped = "\n".join(
        line.replace("now have 3 kids", "have 2 kids, Emma and Leo").replace(
            "have 2 kids, Emma and Leo.", "now have 3 kids"
        )
        for line in lines
    )
    assert ask("How many kids do I have?", actor_context(swapped)) == "2 kids"


def test_a_newer_raw_message_updates_the_log():
    raw = [
        {"role": "user", "content": "Big news for the family. We now have 4 kids since the twins came!"},
        {"role": "assistant", "content": "Congratulations!"},
    ]
    assert ask("How many kids do I have now?", actor_context(raw=raw)) == "4 kids"


def test_dates_come_from_the_meaning_note_or_the_date_group():
    assert ask("When did I go to the pottery class?") == "May 7, 2023"
    assert ask("When did I move to Lisbon?") == "May 8, 2023"  # no note: the date group


def test_days_ago_is_computed_from_the_current_date():
    # May 30 - May 7 = 23 days; May 30 - May 20 = 10 days.
    assert ask("How many days ago did I go to the pottery class?") == "23 days"
    assert ask("How many days ago did I run the 10K?") == "10 days"
    assert ask("How many weeks ago did I go to the pottery class?") == "3 weeks"


@pytest.mark.parametrize(
    "question",
    [
        "What is the name of my hamster?",
        "What is my favourite colour?",
        "How should I use this memory?",  # the instructions are not memory
        "Which dentist in Porto did I book?",  # nor is the current task
    ],
)
def test_abstention_when_nothing_covers_the_question(question):
    assert ask(question) == ABSTENTION_ANSWER


def test_empty_memory_abstains():
    assert ask("What is the name of my cat?", context=[]) == ABSTENTION_ANSWER


def test_full_history_in_the_question_message_longmemeval_style():
    history = "\n".join(
        [
            "### Session 1:",
            "Session Date: 2023/04/10 (Mon) 10:00",
            "Session Content:",
            json.dumps([{"role": "user", "content": "I started Spanish on Duolingo. My streak is 12 days."},
                        {"role": "assistant", "content": "Great job!"}]),
            "",
            "### Session 2:",
            "Session Date: 2023/05/02 (Tue) 18:30",
            "Session Content:",
            json.dumps([{"role": "user", "content": "My Duolingo streak is 34 days now! I bought a Fender guitar for $450."},
                        {"role": "assistant", "content": "Congrats."}]),
        ]
    )  # fmt: skip

    def ask_full(question: str) -> str:
        prompt = f"{history}\n\nCurrent Date: 2023/05/30 (Tue) 23:40\nQuestion: {question}\nAnswer:"
        return OfflineReader().generate([{"role": "user", "content": prompt}]).text

    assert ask_full("How much did I pay for the guitar?") == "$450"
    assert ask_full("When did I buy the guitar?") == "May 2, 2023"
    assert ask_full("How many days ago did I buy the guitar?") == "28 days"
    assert ask_full("What is my Duolingo streak?") == "My Duolingo streak is 34 days now!"
    assert ask_full("What is my sister's name?") == ABSTENTION_ANSWER


def test_plain_question_without_a_date_and_content_parts():
    context = [{"role": "user", "content": [{"type": "text", "text": "I work as a nurse at a big hospital."}]}]
    answer = ask("What do I work as at the hospital?", context, current_date=None)
    assert answer == "I work as a nurse at a big hospital."


# --- parsing ----------------------------------------------------------------------------------------


def test_request_parsing_keeps_only_the_observation_lines():
    request = parse_reader_request(
        actor_context() + [{"role": "user", "content": "Current Date: 2023/05/30 (Tue) 23:40\nQuestion: Where?"}]
    )
    assert request.question == "Where?" and request.current_date == date(2023, 5, 30)
    texts = [s.text for s in request.snippets]
    assert texts[0] == "User stated they have 2 kids, Emma and Leo." and len(texts) == 8
    assert not any("memory" in t or "Porto" in t or "reminder" in t.lower() for t in texts)
    assert [s.day for s in request.snippets[:3]] == [date(2023, 5, 1)] * 3
    assert request.snippets[-1].day == date(2023, 5, 20) and request.snippets[-1].source == "observation"
    assert [s.position for s in request.snippets] == list(range(8))


def test_bad_requests_are_named():
    with pytest.raises(ValueError, match="no user message"):
        OfflineReader().generate([{"role": "system", "content": "memory"}])
    with pytest.raises(ValueError, match="empty question"):
        OfflineReader().generate([{"role": "user", "content": "Current Date: 2023/05/30\nQuestion:   "}])


# --- the normaliser ---------------------------------------------------------------------------------


def test_normalise_tokens_numbers_months_and_contractions():
    assert normalise_tokens("I paid $1,200 on the 3rd of Nov; twenty-five kids don't 3.50") == [
        "i", "paid", "1200", "on", "the", "3", "of", "november", "25", "kids", "dont", "3.5",
    ]  # fmt: skip


def test_stem_meets_word_forms():
    pairs = [("kids", "kid"), ("moved", "moving"), ("cities", "city"), ("movies", "movie"), ("ran", "run"),
             ("bought", "buy"), ("running", "run"), ("named", "name")]  # fmt: skip
    for a, b in pairs:
        assert stem(a) == stem(b), (a, b)
    assert stem("glasses") == "glass" and stem("bus") == "bus"


def test_question_topics():
    assert topic_terms("What is the name of my hamster?") == [stem("name"), stem("hamster")]
    assert content_terms("How many kids do I have?") == [stem("many"), "kid"]


def test_parse_date_formats():
    assert parse_date("2023/05/30 (Tue) 23:40") == date(2023, 5, 30)
    assert parse_date("1:56 pm on 8 May, 2023") == date(2023, 5, 8)
    assert parse_date("Dec 4, 2025 (2 weeks ago)") == date(2025, 12, 4)
    assert parse_date("no date here") is None


# --- invariants and wiring --------------------------------------------------------------------------

WORDS = [
    "cat",
    "dog",
    "Lisbon",
    "Porto",
    "guitar",
    "piano",
    "sister",
    "teacher",
    "nurse",
    "blue",
    "green",
    "Luna",
]


@settings(max_examples=60, deadline=None)
@given(
    facts=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), min_size=0, max_size=6),
    asked=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_the_reader_never_invents_words_and_is_deterministic(facts, asked):
    log = "Date: May 1, 2023\n" + "\n".join(
        f"* 🔴 (09:{i:02d}) User stated my {' '.join(f)}." for i, f in enumerate(facts)
    )
    context = actor_context(log)
    question = f"What about my {' '.join(asked)}?"
    answer = ask(question, context)
    assert answer == ask(question, context)
    if answer != ABSTENTION_ANSWER:
        known = set(normalise_tokens(log)) | {"they", "their"}
        assert set(normalise_tokens(answer)) <= known, answer


def test_registered_and_reachable_through_the_client():
    assert {"reader", "judge"} <= set(offline_model_names())
    assert isinstance(get_offline_model("reader"), OfflineReader)


async def test_through_model_client():
    messages = actor_context() + [{"role": "user", "content": "Question: What is the name of my cat?"}]
    response = await ModelClient().complete(ModelRequest(model="omlab/reader", messages=messages, role="actor"))
    assert response.text == "Luna" and response.cost_usd == 0.0
    assert response.usage.input_tokens > 100 and response.usage.output_tokens >= 1
    assert re.fullmatch(r"omlab/reader", response.model)
