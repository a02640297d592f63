"""What ``omlab/reader`` reads from its chat messages: the question, the current date, and the
memory context cut into snippets (observation lines, sentences of raw messages)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from omlab.llm.offline.base import message_text
from omlab.llm.offline.text_terms import parse_date
from omlab.llm.types import ChatMessage

# --- reading the request --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Snippet:
    """One candidate piece of memory. ``position`` grows with recency; ``day`` is its date group."""

    text: str
    position: int
    day: date | None
    source: str  # "observation" | "message" | "system"


@dataclass(frozen=True, slots=True)
class ReaderRequest:
    question: str
    current_date: date | None
    snippets: tuple[Snippet, ...]


_QUESTION_LINE_RE = re.compile(r"^[ \t]*Question:[ \t]*", re.IGNORECASE | re.MULTILINE)
_CURRENT_DATE_RE = re.compile(r"^[ \t]*Current Date:[ \t]*(?P<date>.+)$", re.IGNORECASE | re.MULTILINE)
_TODAY_RE = re.compile(r"today(?:'s date)? is[ \t]*(?P<date>[^\n]+)", re.IGNORECASE)
_OBS_OPEN_RE = re.compile(r"<observations>", re.IGNORECASE)
_OBS_CLOSE_RE = re.compile(r"</observations>", re.IGNORECASE)
_SKIP_BLOCK_RE = re.compile(
    r"<(system-reminder|current-task|suggested-response|thread-title)>.*?(?:</\1>|$)",
    re.IGNORECASE | re.DOTALL,
)
_DATE_HEADER_RE = re.compile(r"^\s*(?:Date|Session Date):\s*(?P<date>.+)$", re.IGNORECASE)
_IGNORED_LINE_RE = re.compile(
    r"^\s*(?:</?thread\b[^>]*>|</?observation-group\b[^>]*>|--- message boundary .* ---|\[[^\]]*\blater\]|"
    r"#+ ?Session \d+:?|Session Content:|History Chats?:?)\s*$",
    re.IGNORECASE,
)
_LINE_PREFIX_RE = re.compile(
    r"^\s*(?:(?:[*\-•]|\d+[.)])\s+)?(?:(?:🔴|🟡|🟢|✅)\ufe0f?\s*)*(?:\(\d{1,2}:\d{2}(?:\s?[AaPp][Mm])?\)\s*)?"
)
_ANSWER_CUE_RE = re.compile(r"\n\s*Answer\b[^\n]*$", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def parse_reader_request(messages: Sequence[ChatMessage]) -> ReaderRequest:
    """The question (last user message), the current date and the memory snippets before it.

    The last user message may be ``Current Date: …`` / ``Question: …`` (anything before the
    ``Question:`` line is context too, as in LongMemEval's full-history prompts). System messages
    that contain an ``<observations>`` block contribute only the lines inside it; without one,
    every system line counts (minus ``<system-reminder>``/``<current-task>``/``<suggested-response>``
    blocks). User and assistant messages contribute their sentences.

    Raises:
        ValueError: no user message, or an empty question.
    """
    last_user = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)
    if last_user is None:
        raise ValueError("reader request has no user message (the question goes in the last user message)")
    final = message_text(messages[last_user])
    marks = list(_QUESTION_LINE_RE.finditer(final))
    preamble, question = (final[: marks[-1].start()], final[marks[-1].end() :]) if marks else ("", final)
    question = _ANSWER_CUE_RE.sub("", question).strip()
    if not question:
        raise ValueError("reader request has an empty question in its last user message")
    current = _current_date(final, [message_text(m) for m in messages[:last_user] if m.get("role") == "system"])
    preamble = _CURRENT_DATE_RE.sub("", preamble)

    context: list[ChatMessage] = list(messages[:last_user]) + [{"role": "user", "content": preamble}]
    system_text = "\n".join(message_text(m) for m in context if m.get("role") == "system")
    observations_only = bool(_OBS_OPEN_RE.search(system_text))
    builder = _SnippetBuilder()
    inside = False
    for message in context:
        text = message_text(message)
        if message.get("role") == "system":
            text = _SKIP_BLOCK_RE.sub("", text)
            for line in text.splitlines():
                if _OBS_OPEN_RE.search(line):
                    inside = True
                    line = _OBS_OPEN_RE.split(line, maxsplit=1)[1]
                closes = bool(_OBS_CLOSE_RE.search(line))
                if closes:
                    line = _OBS_CLOSE_RE.split(line, maxsplit=1)[0]
                if inside or not observations_only:
                    builder.add_line(line, "observation" if inside else "system")
                if closes:
                    inside = False
        else:
            builder.add_message(text)
    return ReaderRequest(question, current, tuple(builder.snippets))


def _current_date(final: str, system_texts: list[str]) -> date | None:
    match = _CURRENT_DATE_RE.search(final)
    if match:
        return parse_date(match.group("date"))
    for text in reversed(system_texts):
        today = _TODAY_RE.search(text)
        if today:
            return parse_date(today.group("date"))
    return None


class _SnippetBuilder:
    """Cuts context text into snippets, tracking date headers and position."""

    def __init__(self) -> None:
        self.snippets: list[Snippet] = []
        self.day: date | None = None

    def add_line(self, line: str, source: str) -> None:
        if not line.strip() or _IGNORED_LINE_RE.match(line):
            return
        header = _DATE_HEADER_RE.match(line)
        if header:
            self.day = parse_date(header.group("date")) or self.day
            return
        prefix = _LINE_PREFIX_RE.match(line)
        body = re.sub(r"\s+", " ", line[prefix.end() if prefix else 0 :]).strip()
        if not body:
            return
        if source == "observation":  # one observation line is one fact
            self._add(body, source)
        else:
            for sentence in _sentences(body):
                self._add(sentence, source)

    def add_message(self, text: str) -> None:
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("[") and stripped.endswith("]"):
                turns = _json_turns(stripped)
                if turns is not None:
                    for turn in turns:
                        self.add_message(turn)
                    continue
            self.add_line(line, "message")

    def _add(self, text: str, source: str) -> None:
        if any(ch.isalnum() for ch in text):
            self.snippets.append(Snippet(text, len(self.snippets), self.day, source))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END_RE.split(text) if s.strip()]


def _json_turns(text: str) -> list[str] | None:
    """LongMemEval's JSON session content: ``[{"role": ..., "content": ...}, ...]``."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, list) or not all(isinstance(t, dict) and "content" in t for t in data):
        return None
    return [str(t["content"]) for t in data]
