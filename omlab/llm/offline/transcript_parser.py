"""Parse the Observer's user message (the engine's input contract) into typed entries.

The message has optional ``## Previous Observations`` and ``## Prior Thread Metadata`` sections,
a required ``## New Message History to Observe`` section and a closing ``## Your Task`` section.
The history is a sequence of date headers (``Dec 4 2025:``) and entry lines
(``Role (2:30 PM): text``); lines that are neither continue the previous entry's text. In
multi-thread (resource scope) input each thread's history is wrapped in ``<thread id="ID">`` …
``</thread>`` lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from omlab.llm.offline.date_phrases import MONTH_ABBREVIATIONS

PREVIOUS_HEADER = "## Previous Observations"
METADATA_HEADER = "## Prior Thread Metadata"
HISTORY_HEADER = "## New Message History to Observe"
TASK_HEADER = "## Your Task"

KNOWN_ROLES = frozenset(
    {"User", "Assistant", "System-reminder", "Reasoning", "Image", "File", "Signal", "Tool", "Developer"}
)

_DATE_HEADER_RE = re.compile(r"^(?P<mon>[A-Z][a-z]{2}) (?P<day>\d{1,2}) (?P<year>\d{4}):$")
_TIME = r"\((?P<time>\d{1,2}:\d{2}(?: ?[AaPp][Mm])?)\)"
_ENTRY_RE = re.compile(
    r"^(?:Tool (?P<tool_kind>Call|Result|Error|Denied) (?P<tool>[^\s:()]+)"
    r"|(?P<label>[A-Za-z][A-Za-z-]*))"
    r"(?: " + _TIME + r")?:(?: (?P<text>.*))?$"
)
_THREAD_OPEN_RE = re.compile(r"""^\s*<thread id=["'](?P<id>[^"']*)["'][^>]*>\s*$""")
_THREAD_CLOSE_RE = re.compile(r"^\s*</thread>\s*$")
_PRIOR_RE = re.compile(r"^\s*- prior (?P<key>current-task|suggested-response):\s?(?P<value>.*)$")
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[]?[A-Z0-9])")
_LIST_ITEM_RE = re.compile(r"^(?:[-*+•]|\d{1,3}[.)])\s+")
_MARKDOWN_RE = re.compile(r"\*\*|__|^#{1,6}\s*")
_PRIOR_THREAD_RE = re.compile(r"""(?:<thread id=["']|\bthread\b[^\w\n]*)(?P<id>[\w.:-]+)""", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Entry:
    """One history line (plus its continuation lines)."""

    role: str
    """``User``, ``Assistant``, ``System-reminder``, ``Reasoning``, ``Image``, ``File``,
    ``Tool Call``/``Tool Result``/``Tool Error``/``Tool Denied``, or another capitalised label."""
    day: date
    minutes: int | None
    """Minutes after midnight; carried over from the previous entry when the line omits it."""
    text: str
    tool: str | None = None


@dataclass(frozen=True, slots=True)
class ThreadHistory:
    """The entries of one thread (``thread_id`` is ``None`` in single-thread input)."""

    thread_id: str | None
    entries: tuple[Entry, ...]


@dataclass(frozen=True, slots=True)
class PriorMetadata:
    current_task: str | None = None
    suggested_response: str | None = None


@dataclass(frozen=True, slots=True)
class ObserverRequest:
    """Everything the offline observer reads from the engine's user message."""

    previous_observations: str
    """Empty when the section is absent."""
    prior: PriorMetadata
    """The first (or only) prior metadata block."""
    threads: tuple[ThreadHistory, ...]
    prior_by_thread: dict[str, PriorMetadata] = field(default_factory=dict)

    @property
    def multi_thread(self) -> bool:
        return any(t.thread_id is not None for t in self.threads)


def parse_observer_request(text: str) -> ObserverRequest:
    """Parse the Observer user message.

    Raises:
        ValueError: the ``## New Message History to Observe`` section is missing, or an entry
            line comes before any date header.
    """
    lines = text.splitlines()
    history_at = _find_header(lines, HISTORY_HEADER, 0)
    if history_at is None:
        raise ValueError(f"observer input has no '{HISTORY_HEADER}' section")
    task_at = _find_last_header(lines, TASK_HEADER, history_at + 1)
    history_end = task_at if task_at is not None else len(lines)
    history = _strip_separator(lines[history_at + 1 : history_end])

    previous_at = _find_header(lines, PREVIOUS_HEADER, 0, history_at)
    metadata_at = _find_header(lines, METADATA_HEADER, 0, history_at)
    previous = ""
    if previous_at is not None:
        end = metadata_at if metadata_at is not None and metadata_at > previous_at else history_at
        previous = _previous_observations(lines[previous_at + 1 : end])
    prior, prior_by_thread = PriorMetadata(), {}
    if metadata_at is not None:
        end = previous_at if previous_at is not None and previous_at > metadata_at else history_at
        prior, prior_by_thread = _prior_metadata(lines[metadata_at + 1 : end])
    return ObserverRequest(previous, prior, _parse_history(history), prior_by_thread)


def parse_clock(value: str) -> int:
    """Minutes after midnight of ``2:30 PM``, ``12:05 AM`` or ``14:30``."""
    value = value.strip().upper()
    meridiem = value[-2:] if value.endswith(("AM", "PM")) else None
    hours, minutes = (int(part) for part in value.removesuffix(meridiem or "").strip().split(":"))
    if meridiem:
        hours = hours % 12 + (12 if meridiem == "PM" else 0)
    return hours * 60 + minutes


def _find_header(lines: list[str], header: str, start: int, stop: int | None = None) -> int | None:
    for index in range(start, len(lines) if stop is None else stop):
        if lines[index].strip() == header:
            return index
    return None


def _find_last_header(lines: list[str], header: str, start: int) -> int | None:
    for index in range(len(lines) - 1, start - 1, -1):
        if lines[index].strip() == header:
            return index
    return None


def _strip_separator(lines: list[str]) -> list[str]:
    """Drop the trailing blank lines and the ``---`` rule that precede the next section."""
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    if end and lines[end - 1].strip() == "---":
        end -= 1
    return lines[:end]


def _previous_observations(lines: list[str]) -> str:
    # The observations are followed by a "---" rule and the do-not-repeat notice.
    cut = len(lines)
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].strip() == "---":
            cut = index
            break
    return "\n".join(lines[:cut]).strip()


def _prior_metadata(lines: list[str]) -> tuple[PriorMetadata, dict[str, PriorMetadata]]:
    blocks: dict[str | None, dict[str, str]] = {}
    thread: str | None = None
    for line in lines:
        match = _PRIOR_RE.match(line)
        if match is None:
            thread_match = _PRIOR_THREAD_RE.search(line)
            if thread_match is not None:
                thread = thread_match.group("id")
            continue
        blocks.setdefault(thread, {}).setdefault(match.group("key"), match.group("value").strip())
    metas = {
        key: PriorMetadata(values.get("current-task") or None, values.get("suggested-response") or None)
        for key, values in blocks.items()
    }
    first = next(iter(metas.values()), PriorMetadata())
    return first, {key: value for key, value in metas.items() if key is not None}


def _parse_history(lines: list[str]) -> tuple[ThreadHistory, ...]:
    threads: list[ThreadHistory] = []
    builder = _ThreadBuilder(None)
    for number, line in enumerate(lines, start=1):
        opened = _THREAD_OPEN_RE.match(line)
        if opened is not None:
            builder.close_into(threads)
            builder = _ThreadBuilder(opened.group("id"))
            continue
        if _THREAD_CLOSE_RE.match(line):
            builder.close_into(threads)
            builder = _ThreadBuilder(None)
            continue
        builder.feed(line, number)
    builder.close_into(threads)
    return tuple(threads)


class _ThreadBuilder:
    """Accumulates the entries of one thread; continuation lines extend the open entry."""

    def __init__(self, thread_id: str | None) -> None:
        self.thread_id = thread_id
        self.entries: list[Entry] = []
        self.day: date | None = None
        self.minutes: int | None = None
        self.open: tuple[str, str | None, date, int | None, list[str]] | None = None

    def feed(self, line: str, number: int) -> None:
        header = _DATE_HEADER_RE.match(line)
        if header is not None:
            self._flush()
            self.day = _parse_day(header)
            return
        entry = _match_entry(line)
        if entry is None:
            if self.open is not None:
                self.open[4].append(line)
            return
        role, tool, time_text, first_line = entry
        if self.day is None:
            raise ValueError(f"'{HISTORY_HEADER}' line {number} comes before any date header: {line[:80]!r}")
        self._flush()
        if time_text is not None:
            self.minutes = parse_clock(time_text)
        self.open = (role, tool, self.day, self.minutes, [first_line])

    def close_into(self, threads: list[ThreadHistory]) -> None:
        self._flush()
        if self.entries or self.thread_id is not None:
            threads.append(ThreadHistory(self.thread_id, tuple(self.entries)))

    def _flush(self) -> None:
        if self.open is None:
            return
        role, tool, day, minutes, text_lines = self.open
        while len(text_lines) > 1 and not text_lines[-1].strip():
            text_lines.pop()
        self.entries.append(Entry(role, day, minutes, "\n".join(text_lines).strip(), tool))
        self.open = None


def _match_entry(line: str) -> tuple[str, str | None, str | None, str] | None:
    match = _ENTRY_RE.match(line)
    if match is None:
        return None
    text = match.group("text") or ""
    time_text = match.group("time")
    if match.group("tool_kind"):
        return f"Tool {match.group('tool_kind')}", match.group("tool"), time_text, text
    label = match.group("label")
    if label.lower() == "system-reminder":
        return "System-reminder", None, time_text, text
    if label in KNOWN_ROLES:
        return label, None, time_text, text
    # An unknown label counts as an entry only with a time, so that a continuation line such as
    # "Note: bring ID" inside a user message is not mistaken for a new speaker.
    if time_text is not None and label[0].isupper() and "-" not in label:
        return label, None, time_text, text
    return None


def _parse_day(match: re.Match[str]) -> date:
    try:
        return date(int(match["year"]), MONTH_ABBREVIATIONS.index(match["mon"]) + 1, int(match["day"]))
    except ValueError:
        raise ValueError(f"'{HISTORY_HEADER}' has an unreadable date header {match.group(0)!r}") from None


def message_pieces(text: str) -> list[tuple[str, bool]]:
    """The sentences and list items of one message's text, as ``(text, is_list_item)``.

    Lines are split into sentences at ``. ! ?`` followed by a capital or digit; list items
    (``-``, ``*``, ``1.``) stay whole and keep their markdown (the bold head names the item);
    fenced code blocks become ``[code block, N lines]``.
    """
    pieces: list[tuple[str, bool]] = []
    code_lines: int | None = None
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("```"):
            if code_lines is None:
                code_lines = 0
            else:
                pieces.append((f"[code block, {code_lines} lines]", False))
                code_lines = None
            continue
        if code_lines is not None:
            code_lines += 1
            continue
        item = _LIST_ITEM_RE.match(stripped)
        if item is not None:
            body = stripped[item.end() :].strip()
            if body:
                pieces.append((body, True))
            continue
        body = strip_markdown(stripped).strip()
        if body:
            pieces += [(s, False) for s in _SENTENCE_SPLIT_RE.split(body) if s.strip()]
    if code_lines is not None:
        pieces.append((f"[code block, {code_lines} lines]", False))
    return pieces


def strip_markdown(text: str) -> str:
    """``text`` without bold/underline markers and a leading heading marker."""
    return _MARKDOWN_RE.sub("", text)
