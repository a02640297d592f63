"""The extractive observer: input contract, output format, priorities, dates, dedup, compression."""

from __future__ import annotations

import re
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.llm.offline import get_offline_model, offline_model_names
from omlab.llm.offline.observer import OfflineObserver, observation_key
from omlab.llm.offline.transcript_parser import message_pieces, parse_observer_request
from omlab.tokens.tokenx import estimate_token_count
from tests.llm_offline.synthetic_chat import observer_message, synthetic_history

FULL_MESSAGE = """## Previous Observations

Date: Dec 3, 2025
* 🔴 (10:00) User stated they have two kids.

---

Do not repeat these existing observations. Your new observations will be appended to the existing observations.

## Prior Thread Metadata
- prior current-task: Primary: find a school
- prior suggested-response: Ask about the kids' ages
Use the prior current-task and suggested-response as continuity hints.

## New Message History to Observe

Dec 4 2025:
User (2:30 PM): Hi! I just moved to Lisbon last week and I'm looking for a dentist. I have two kids.
Assistant: Here are three dentists near Alfama:
1. **Clínica Alfama** – Rua dos Remédios 12.
2. **Sorriso Lisboa** – English-speaking staff.
Would you like me to check availability?
Tool Call web_search (2:31 PM): {"query": "dentist lisbon"}
Tool Result web_search (2:31 PM): [{"title": "Best dentists"}]
User (2:35 PM): Can you book Sorriso Lisboa for next Friday at 10am?
Note: my insurance is Médis.
User: thanks, that worked!
Dec 5 2025:
User (12:05 AM): ok
System-reminder (12:06 AM): The user prefers short answers.
Image (12:30 PM): [Image #1: receipt.png]

---

## Your Task

Extract new observations from the message history above."""


def run(text: str) -> str:
    return OfflineObserver().generate([{"role": "system", "content": "sys"}, {"role": "user", "content": text}]).text


def history_only(history: str) -> str:
    return observer_message(history)


def observation_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("* ")]


# --- parsing the contract -----------------------------------------------------------------------


def test_parse_full_contract() -> None:
    request = parse_observer_request(FULL_MESSAGE)
    assert request.previous_observations == "Date: Dec 3, 2025\n* 🔴 (10:00) User stated they have two kids."
    assert request.prior.current_task == "Primary: find a school"
    assert request.prior.suggested_response == "Ask about the kids' ages"
    assert not request.multi_thread
    entries = request.threads[0].entries
    assert [e.role for e in entries] == [
        "User", "Assistant", "Tool Call", "Tool Result", "User", "User", "User", "System-reminder", "Image",
    ]  # fmt: skip
    assert entries[1].minutes == 14 * 60 + 30  # an omitted time repeats the previous one
    assert entries[1].text.splitlines()[1].startswith("1. **Clínica Alfama**")
    assert entries[2].tool == "web_search"
    assert entries[4].text == "Can you book Sorriso Lisboa for next Friday at 10am?\nNote: my insurance is Médis."
    assert entries[6].day == date(2025, 12, 5) and entries[6].minutes == 5
    assert entries[8].minutes == 12 * 60 + 30


def test_parse_the_engines_own_prompt() -> None:
    from omlab.engine.prompts import observer_user_prompt

    text = observer_user_prompt(
        history="Dec 4 2025:\nUser (9:00 AM): I have 3 cats.",
        previous_observations="Date: Dec 1, 2025\n* 🔴 (08:00) User stated they live in Oslo.",
        truncated=True,
        prior_metadata=[("current-task", "Primary: adopt a cat"), ("suggested-response", "Ask which breed")],
        buffering=True,
    )
    request = parse_observer_request(text)
    assert request.previous_observations == "Date: Dec 1, 2025\n* 🔴 (08:00) User stated they live in Oslo."
    assert request.prior.current_task == "Primary: adopt a cat"
    assert request.prior.suggested_response == "Ask which breed"
    assert [(e.role, e.text) for e in request.threads[0].entries] == [("User", "I have 3 cats.")]


def test_parse_without_optional_sections() -> None:
    request = parse_observer_request(history_only("Dec 4 2025:\nUser (9:00 AM): hello there"))
    assert request.previous_observations == ""
    assert request.prior.current_task is None
    assert request.threads[0].entries[0].text == "hello there"


def test_missing_history_section_is_named() -> None:
    with pytest.raises(ValueError, match="## New Message History to Observe"):
        parse_observer_request("## Previous Observations\n\nfoo\n\n## Your Task\n\nbar")


def test_entry_before_any_date_header_is_an_error() -> None:
    with pytest.raises(ValueError, match="before any date header"):
        parse_observer_request(history_only("User (9:00 AM): hi"))


def test_unknown_label_needs_a_time_to_be_a_speaker() -> None:
    request = parse_observer_request(history_only("Dec 4 2025:\nUser (9:00 AM): a\nSignal (9:01 AM): b\nNote: c"))
    entries = request.threads[0].entries
    assert [(e.role, e.text) for e in entries] == [("User", "a"), ("Signal", "b\nNote: c")]
    request = parse_observer_request(history_only("Dec 4 2025:\nUser (9:00 AM): a\nReminder (9:02 AM): b"))
    assert request.threads[0].entries[1].role == "Reminder"


def test_parse_multi_thread() -> None:
    history = (
        '<thread id="t1">\nDec 4 2025:\nUser (9:00 AM): I love jazz.\n</thread>\n'
        '<thread id="t2">\nDec 5 2025:\nUser (10:00 AM): What is 2+2?\n</thread>'
    )
    request = parse_observer_request(history_only(history))
    assert request.multi_thread
    assert [(t.thread_id, len(t.entries)) for t in request.threads] == [("t1", 1), ("t2", 1)]


def test_content_parts_are_joined() -> None:
    parts = [{"type": "text", "text": "## New Message History to Observe\n\nDec 4 2025:"}]
    parts.append({"type": "text", "text": "User (9:00 AM): I have 3 cats.\n\n---\n\n## Your Task\n\nGo."})
    result = OfflineObserver().generate([{"role": "user", "content": parts}])
    assert "* 🔴 (09:00) User stated they have 3 cats." in result.text


def test_message_pieces() -> None:
    text = "Intro here. Second one!\n- item **one**\n```\ncode\nmore\n```\n## Heading"
    assert message_pieces(text) == [
        ("Intro here.", False), ("Second one!", False), ("item **one**", True),
        ("[code block, 2 lines]", False), ("Heading", False),
    ]  # fmt: skip


# --- output format --------------------------------------------------------------------------------


def test_full_output() -> None:
    out = run(FULL_MESSAGE)
    assert out.startswith("<observations>\nDate: Dec 4, 2025\n")
    lines = out.splitlines()
    assert lines[2] == (
        "* 🔴 (14:30) User stated they just moved to Lisbon last week and they're looking for a dentist."
        " (meaning Nov 24-30, 2025)"
    )  # "I have two kids." is already in Previous Observations and "Hi!" is small talk.
    assert lines[3] == "* 🟡 (14:30) Assistant suggested three dentists near Alfama: Clínica Alfama; Sorriso Lisboa"
    assert lines[4] == '* 🟡 (14:31) Assistant called web_search {"query": "dentist lisbon"}'
    assert lines[5] == '  * -> [{"title": "Best dentists"}]'
    assert (
        lines[6]
        == "* 🔴 (14:35) User asked: can you book Sorriso Lisboa for next Friday at 10am? (meaning Dec 5, 2025)"
    )
    assert lines[7] == "* 🔴 (14:35) User stated Note: their insurance is Médis."
    assert lines[8].startswith(
        '* ✅ (14:35) User confirmed it is done ("thanks, that worked!") — the request: User asked'
    )
    assert lines[9:13] == [
        "Date: Dec 5, 2025",
        "* 🟢 (00:05) User said: ok",
        "* 🟢 (00:06) System reminder (not from the user): The user prefers short answers.",
        "* 🟡 (12:30) User shared [Image #1: receipt.png]",
    ]
    assert lines[13:] == [
        "</observations>",
        "<current-task>",
        (
            "Primary: none open — completed: User asked: can you book Sorriso Lisboa for next Friday at 10am?"
            " (meaning Dec 5, 2025); waiting for the user's next request"
        ),
        "</current-task>",
        "<suggested-response>",
        "Continue the conversation naturally from the user's last message.",
        "</suggested-response>",
    ]


def test_times_are_24_hour() -> None:
    history = (
        "Dec 4 2025:\nUser (12:05 AM): I have 1 dog.\nUser (12:30 PM): I have 2 cats.\nUser (11:59 PM): I have 3 fish."
    )
    times = [re.search(r"\((\d\d:\d\d)\)", line)[1] for line in observation_lines(run(history_only(history)))]
    assert times == ["00:05", "12:30", "23:59"]


def test_empty_history() -> None:
    assert run(history_only("")) == "<observations>\n</observations>"


def test_token_counts() -> None:
    messages = [{"role": "system", "content": "You observe."}, {"role": "user", "content": FULL_MESSAGE}]
    result = OfflineObserver().generate(messages)
    assert result.input_tokens == estimate_token_count("You observe.") + estimate_token_count(FULL_MESSAGE)
    assert result.output_tokens == estimate_token_count(result.text)


def test_registered_by_name() -> None:
    assert {"observer", "reflector"} <= set(offline_model_names())
    assert isinstance(get_offline_model("observer"), OfflineObserver)


def test_no_user_message_is_an_error() -> None:
    with pytest.raises(ValueError, match="no user message"):
        OfflineObserver().generate([{"role": "system", "content": "x"}])


# --- classification and priorities ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "line"),
    [
        ("I have 3 kids.", "* 🔴 (09:00) User stated they have 3 kids."),
        ("My favourite colour is teal.", "* 🔴 (09:00) User stated their favourite colour is teal."),
        ("What is the capital of Peru?", "* 🔴 (09:00) User asked: what is the capital of Peru?"),
        ("how do I reset my router", "* 🔴 (09:00) User asked: how do I reset my router"),
        ("I'd like to book a table for two.", "* 🔴 (09:00) User wants to book a table for two."),
        ("I'm planning to visit Porto.", "* 🔴 (09:00) User plans to visit Porto."),
        ("I need a new laptop.", "* 🔴 (09:00) User needs a new laptop."),
        (
            "Find me a cheap flight to Rome.",
            "* 🔴 (09:00) User asked the assistant to find them a cheap flight to Rome.",
        ),
        ("That sounds like fun.", "* 🟡 (09:00) User stated that sounds like fun."),
        ("Thanks!", "* 🟢 (09:00) User said: Thanks!"),
        ("ok", "* 🟢 (09:00) User said: ok"),
        ("Great, thank you so much!", "* 🟢 (09:00) User said: Great, thank you so much!"),
    ],
)
def test_user_line_classes(message: str, line: str) -> None:
    assert observation_lines(run(history_only(f"Dec 4 2025:\nUser (9:00 AM): {message}"))) == [line]


@pytest.mark.parametrize("message", ["that worked", "thanks, solved", "done", "perfect, it works", "It works now!"])
def test_completion_is_marked_done(message: str) -> None:
    history = f"Dec 4 2025:\nUser (9:00 AM): Can you fix my script?\nAssistant: Try this.\nUser (9:10 AM): {message}"
    out = run(history_only(history))
    assert observation_lines(out)[-1].startswith(f'* ✅ (09:10) User confirmed it is done ("{message}")')
    assert "Primary: none open — completed: User asked: can you fix my script?" in out
    assert "Acknowledge that it is done" in out


@pytest.mark.parametrize(
    "message",
    ["it doesn't work", "that worked but now I get an error", "Perfect!", "is it done?", "still not fixed"],
)
def test_no_completion_without_confirmation(message: str) -> None:
    out = run(history_only(f"Dec 4 2025:\nUser (9:00 AM): {message}"))
    assert "✅" not in out


def test_system_reminder_is_not_user_speech() -> None:
    out = run(history_only("Dec 4 2025:\nSystem-reminder (9:00 AM): I prefer short answers."))
    assert observation_lines(out) == ["* 🟢 (09:00) System reminder (not from the user): I prefer short answers."]


def test_several_tool_calls_are_grouped() -> None:
    history = (
        "Dec 4 2025:\nUser (9:00 AM): Check the weather in Oslo and Bergen.\n"
        'Tool Call weather (9:01 AM): {"city": "Oslo"}\nTool Result weather (9:01 AM): -3C snow\n'
        'Tool Call weather: {"city": "Bergen"}\nTool Error weather: timeout\nAssistant: Oslo is -3C.'
    )
    lines = run(history_only(history)).splitlines()
    start = lines.index("* 🟡 (09:01) Assistant made 2 tool calls (weather ×2)")
    assert lines[start + 1 : start + 3] == [
        '  * -> weather {"city": "Oslo"}: -3C snow',
        '  * -> weather {"city": "Bergen"}: error: timeout',
    ]


def test_relative_dates_and_vague_words() -> None:
    history = "Dec 4 2025:\nUser (9:00 AM): I visited my mom yesterday.\nUser (9:05 AM): I went hiking recently."
    lines = observation_lines(run(history_only(history)))
    assert lines == [
        "* 🔴 (09:00) User stated they visited their mom yesterday. (meaning Dec 3, 2025)",
        "* 🔴 (09:05) User stated they went hiking recently.",
    ]


def test_previous_observations_are_not_repeated() -> None:
    history = "Dec 4 2025:\nUser (9:00 AM): I have 3 cats.\nUser (9:01 AM): I live in Oslo."
    previous = "Date: Dec 1, 2025\n* 🔴 (08:00) User stated they have 3 cats."
    lines = observation_lines(run(observer_message(history, previous)))
    assert lines == ["* 🔴 (09:01) User stated they live in Oslo."]


def test_long_messages_are_compressed_to_key_sentences() -> None:
    filler = " ".join(["The weather was nice and everything felt calm."] * 12)
    message = f"{filler} I paid $450 for the new bike in Berlin. {filler}"
    (line,) = observation_lines(run(history_only(f"Dec 4 2025:\nUser (9:00 AM): {message}")))
    assert "$450" in line and "Berlin" in line
    assert len(line.split()) <= 55
    assert "…" in line


def test_multi_thread_output() -> None:
    history = (
        '<thread id="t1">\nDec 4 2025:\nUser (9:00 AM): I love jazz.\n</thread>\n'
        '<thread id="t2">\nDec 5 2025:\nUser (10:00 AM): What is 2+2?\n</thread>'
    )
    out = run(history_only(history))
    assert out.splitlines()[:4] == [
        "<observations>", '<thread id="t1">', "Date: Dec 4, 2025", "* 🔴 (09:00) User stated they love jazz."
    ]  # fmt: skip
    t2 = out[out.index('<thread id="t2">') :]
    assert t2.splitlines()[1:3] == ["Date: Dec 5, 2025", "* 🔴 (10:00) User asked: what is 2+2?"]
    assert "<current-task>\nPrimary: the user's latest request — User asked: what is 2+2?\n</current-task>" in t2
    assert out.endswith("</suggested-response>\n</thread>\n</observations>")
    assert out.count("<current-task>") == 2


def test_prior_current_task_is_carried_over() -> None:
    message = (
        "## Prior Thread Metadata\n- prior current-task: Primary: find a school\n"
        "- prior suggested-response: Ask about ages\nUse them as hints.\n\n"
        + history_only("Dec 4 2025:\nUser (9:00 AM): My son is 7.")
    )
    out = run(message)
    assert "<current-task>\nPrimary: find a school\n</current-task>" in out
    assert observation_lines(out) == ["* 🔴 (09:00) User stated their son is 7."]


# --- invariants, compression, speed ---------------------------------------------------------------

line_text = st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), max_size=80)


@settings(max_examples=60, deadline=None)
@given(messages=st.lists(st.tuples(st.sampled_from(["User", "Assistant", "Reasoning"]), line_text), max_size=6))
def test_any_history_gives_wellformed_deterministic_output(messages: list[tuple[str, str]]) -> None:
    history = "Dec 4 2025:\n" + "\n".join(f"{role} (9:00 AM): {text.strip()}" for role, text in messages)
    first, second = run(history_only(history)), run(history_only(history))
    assert first == second
    assert first.startswith("<observations>\n")
    for line in first.split("</observations>")[0].splitlines()[1:]:
        assert line.startswith(("Date: ", "* 🔴 (", "* 🟡 (", "* 🟢 (", "* ✅ (", "  * -> ")), line


def test_observation_key_ignores_bullet_emoji_time_and_case() -> None:
    assert observation_key("* 🔴 (14:30) User stated: They have 2 KIDS!") == "user stated they have 2 kids"


def test_compression_ratio_on_realistic_chat(capsys: pytest.CaptureFixture[str]) -> None:
    history = synthetic_history(seed=7, days=12, exchanges_per_day=6)
    out = run(history_only(history))
    observations = out.split("<current-task>")[0]
    ratio = estimate_token_count(history) / estimate_token_count(observations)
    with capsys.disabled():
        print(f"\n[observer] synthetic chat compression: {ratio:.2f}x")
    assert ratio >= 3.0
    assert out.count("Date: ") == 12
