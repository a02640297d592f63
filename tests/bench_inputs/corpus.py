"""A small corpus of malformed inputs: each case is one dataset file a user could plausibly write.

``REFUSED`` cases must stop a run at suite load with the name of the problem and its fix;
``WARNED`` cases are accepted, and the run must name the record and count the warning.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def turn(role: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, **extra}


def conversation(conv_id: str = "c1", sessions: list | None = None, questions: list | None = None) -> dict[str, Any]:
    """A well-formed two-session conversation unless told otherwise."""
    if sessions is None:
        sessions = [
            {
                "id": "s1",
                "date": "2024-03-01T09:00:00+00:00",
                "turns": [turn("user", "I adopted a cat named Miso."), turn("assistant", "Lovely name.")],
            },
            {
                "id": "s2",
                "date": "2024-03-08T09:00:00+00:00",
                "turns": [turn("user", "Miso likes the balcony."), turn("assistant", "Cats love a view.")],
            },
        ]
    if questions is None:
        questions = [
            {
                "id": f"{conv_id}-q1",
                "question": "What is my cat called?",
                "answer": "Miso",
                "question_date": "2024-03-10T09:00:00+00:00",
            }
        ]
    return {"id": conv_id, "sessions": sessions, "questions": questions}


def _with_session(index: int, **changes: Any) -> dict[str, Any]:
    record = conversation()
    record["sessions"][index].update(changes)
    return record


def _with_turn(session: int, index: int, **changes: Any) -> dict[str, Any]:
    record = conversation()
    record["sessions"][session]["turns"][index].update(changes)
    return record


def _jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


# name -> (kind, file name, file text, what the refusal must say)
REFUSED: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "empty jsonl file": ("jsonl", "empty.jsonl", "", ("empty",)),
    "blank jsonl file": ("jsonl", "blank.jsonl", "\n\n", ("empty",)),
    "empty locomo file": ("locomo", "empty.json", "", ("empty",)),
    "empty locomo list": ("locomo", "locomo_empty.json", "[]", ("no conversations", "[dataset] path")),
    "empty longmemeval list": ("longmemeval", "lme_empty.json", "[]\n", ("no conversations",)),
    "conversation with no sessions": (
        "jsonl",
        "no_sessions.jsonl",
        _jsonl(conversation(), conversation("c2", sessions=[], questions=[])),
        ("'c2'", "no turns"),
    ),
    "conversation whose sessions have no turns": (
        "jsonl",
        "no_turns.jsonl",
        _jsonl(conversation("c3", sessions=[{"id": "s1", "date": "2024-03-01T09:00:00", "turns": []}], questions=[])),
        ("'c3'", "no turns"),
    ),
    "locomo conversation with only empty sessions": (
        "locomo",
        "locomo_no_turns.json",
        json.dumps(
            [
                {
                    "sample_id": "conv-x",
                    "conversation": {
                        "speaker_a": "Ann",
                        "speaker_b": "Bob",
                        "session_1_date_time": "1:56 pm on 8 May, 2023",
                        "session_1": [],
                    },
                    "qa": [],
                }
            ]
        ),
        ("'conv-x'", "no turns"),
    ),
}

WARNED: dict[str, tuple[str, Callable[[], dict[str, Any]], str]] = {
    # name -> (warning kind, record builder, text the warning's record must contain)
    "turns out of time order": (
        "turns_out_of_order",
        lambda: _with_turn(0, 1, created_at="2024-03-01T08:00:00+00:00"),
        "turn 's1:2'",
    ),
    "sessions out of time order": (
        "sessions_out_of_order",
        lambda: _with_session(1, date="2024-02-01T09:00:00+00:00"),
        "session 's2'",
    ),
    "session after its question's date": (
        "session_after_question",
        lambda: conversation(
            questions=[
                {"id": "early", "question": "Cat?", "answer": "Miso", "question_date": "2024-03-05T09:00:00+00:00"}
            ]
        ),
        "question 'early'",
    ),
    "date far in the future": (
        "future_date",
        lambda: conversation(
            questions=[
                {"id": "later", "question": "Cat?", "answer": "Miso", "question_date": "2999-03-10T09:00:00+00:00"}
            ]
        ),
        "question 'later'",
    ),
    "blank turn": ("blank_turn", lambda: _with_turn(1, 1, content="   "), "turn 's2:2'"),
    "naive and aware timestamps mixed": (
        "mixed_timezones",
        lambda: _with_session(1, date="2024-03-08T09:00:00"),
        "conversation 'c1'",
    ),
    "empty conversation id": ("empty_id", lambda: conversation(conv_id=""), "conversation ''"),
    "empty turn id": ("empty_id", lambda: _with_turn(0, 0, id=""), "turn ''"),
}


def write_case(folder: Path, file_name: str, text: str) -> Path:
    path = folder / file_name
    path.write_text(text, encoding="utf-8")
    return path


def write_jsonl(folder: Path, file_name: str, *records: dict[str, Any]) -> Path:
    return write_case(folder, file_name, _jsonl(*records))


def write_suite(folder: Path, kind: str, data: Path, *, extra: str = "", name: str = "inputs") -> Path:
    """An offline suite over ``data`` (path relative to the suite)."""
    path = folder / f"{name}.toml"
    path.write_text(
        f"""
[suite]
name = "{name}"

[dataset]
kind = "{kind}"
path = "{data.name}"

[engine]
observation = {{ messageTokens = 1200, bufferTokens = false }}
reflection = {{ observationTokens = 1500 }}

[latency]
default = {{ kind = "fixed", seconds = 1 }}

[run]
workers = 1
{extra}
""",
        encoding="utf-8",
    )
    return path
