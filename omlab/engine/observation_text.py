"""The observation log as text: parsing Observer output, cleaning, ordering and chunking it.

The log format (om-reference §4.1) is line oriented::

    Date: Dec 4, 2025
    * 🔴 (14:30) User stated has two kids
    * 🟡 (14:33) Agent debugging auth issue
      * -> ran git status, found 3 modified files
      * ✅ Tests passing, auth issue resolved

Chunks appended at different times are separated by message-boundary delimiters
(``--- message boundary (2026-01-15T12:10:00.000Z) ---``) so the actor context can be split into
cache-stable system messages. Everything here is a pure function of its input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from omlab.engine.degenerate import MAX_OBSERVATION_LINE_CHARS, is_degenerate
from omlab.engine.line_tags import find_tag

TRUNCATED_LINE_SUFFIX = " … [truncated]"

# --- Observer output parsing -------------------------------------------------------------

# A block's opening tag must start a line, so prose such as "User discussed <observations> tags" is
# not taken for a block. The closing tag normally starts a line too; one that ends the last
# observation line ("...</observations>") is accepted as well (omlab.engine.line_tags).
# Any hint tag at all; a reply without one (every reflection) skips the three section searches.
_ANY_HINT_TAG = re.compile(r"<(?:current-task|suggested-response|thread-title)>", re.IGNORECASE)
_NEXT_SECTION = re.compile(r"^[ \t]*<(?:current-task|suggested-response|thread-title)>", re.IGNORECASE | re.MULTILINE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*]|[0-9]+\.)\s")


def _section_spans(tag: str, text: str) -> list[tuple[int, int, int, int]]:
    """``(start, body_start, body_end, end)`` of every ``<tag>`` section whose opening tag starts a
    line. The section ends at the first closing tag that starts or ends a line (``<tag>x</tag>`` on
    one line, or ``x</tag>`` closing the last line), so a value that mentions ``</tag>`` inside a
    sentence is not cut there."""
    spans: list[tuple[int, int, int, int]] = []
    position = 0
    while (start := find_tag(text, f"<{tag}>", position, at_line_start=True)) is not None:
        closing = find_tag(text, f"</{tag}>", start[1], at_line_start=True, at_line_end=True)
        if closing is None:
            break
        spans.append((start[0], start[1], closing[0], closing[1]))
        position = closing[1]
    return spans


def _first_section(tag: str, text: str) -> str | None:
    spans = _section_spans(tag, text)
    value = text[spans[0][1] : spans[0][2]].strip() if spans else ""
    return value or None


def _remove_sections(tag: str, text: str) -> str:
    spans = _section_spans(tag, text)
    if not spans:
        return text
    pieces, position = [], 0
    for start, _, _, end in spans:
        pieces.append(text[position:start])
        rest = re.match(r"[ \t]*(?:\r?\n)?", text[end:])
        position = end + (rest.end() if rest else 0)
    pieces.append(text[position:])
    return "".join(pieces)


@dataclass(frozen=True)
class ObserverOutput:
    """One Observer (or Reflector) reply, parsed.

    Attributes:
        observations: the cleaned, time-sorted observation text ("" when degenerate or empty).
        current_task: the first ``<current-task>`` section, or None.
        suggested_response: the first ``<suggested-response>`` section, or None.
        thread_title: the first ``<thread-title>`` section, or None.
        extracted: values of the inline extractor sections, keyed by slug (non-empty only).
        degenerate: True when the output was a repetition loop; nothing else is parsed then.
        raw: the unmodified model output.
    """

    observations: str
    current_task: str | None
    suggested_response: str | None
    thread_title: str | None
    extracted: dict[str, str] = field(default_factory=dict)
    degenerate: bool = False
    raw: str = ""


class ThreadOutputs(dict[str, ObserverOutput]):
    """Per-thread results of a multi-thread Observer reply (thread id -> output).

    A plain dict with two extra attributes: ``degenerate`` (the whole reply was a repetition loop;
    the mapping is then empty and the call should be retried) and ``raw`` (the model output).
    """

    def __init__(
        self, items: dict[str, ObserverOutput] | None = None, *, degenerate: bool = False, raw: str = ""
    ) -> None:
        """Create the mapping from *items* (empty by default)."""
        super().__init__(items or {})
        self.degenerate = degenerate
        self.raw = raw


def _extract_inline(text: str, slugs: Sequence[str]) -> tuple[dict[str, str], str]:
    extracted: dict[str, str] = {}
    for slug in slugs:
        if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", slug):
            raise ValueError(f"inline extractor slug {slug!r} must be kebab-case [a-z0-9-]")
        value = _first_section(slug, text)
        if value is not None:
            extracted[slug] = value
        text = _remove_sections(slug, text)
    return extracted, text


def _observation_blocks(text: str) -> list[str]:
    """The contents of every ``<observations>`` block: from an opening tag to the leftmost closing
    tag after it, then on from there."""
    blocks: list[str] = []
    position = 0
    while (opening := find_tag(text, "<observations>", position, at_line_start=True)) is not None:
        closing = find_tag(text, "</observations>", opening[1], at_line_start=True, at_line_end=True)
        if closing is None:  # no later opening can close either
            break
        blocks.append(text[opening[1] : closing[0]])
        position = closing[1]
    return blocks


def _observations_body(text: str) -> str:
    blocks = [block.strip() for block in _observation_blocks(text)]
    if blocks:
        return "\n".join(block for block in blocks if block)
    opening = find_tag(text, "<observations>", at_line_start=True)
    if opening:
        # An unclosed block (output cut off): take it up to the next known section.
        rest = text[opening[1] :]
        following = _NEXT_SECTION.search(rest)
        return (rest[: following.start()] if following else rest).strip()
    # No block at all: keep the list-item lines, but not those of the hint sections
    # ("- Primary: ..." in a current-task is not an observation).
    for tag in ("current-task", "suggested-response", "thread-title"):
        text = _remove_sections(tag, text)
    return "\n".join(line for line in text.split("\n") if _LIST_ITEM.match(line)).strip()


def parse_observer_output(text: str, *, inline_slugs: Sequence[str] = (), sort_lines: bool = True) -> ObserverOutput:
    r"""Parse a single-thread Observer or Reflector reply (om-reference §4.3).

    Steps: degenerate check on the sanitised whole output; strip inline extractor sections
    ``<slug>…</slug>`` (opening tag at line start) into ``extracted``; take every
    ``<observations>`` block whose opening tag starts a line (joined with "\n"), else the
    list-item lines (``-``, ``*``, ``1.``); take the first ``<current-task>``,
    ``<suggested-response>`` and ``<thread-title>`` (opening tag at line start); finally cut
    over-long lines and sort each date group by time. A hint missing as a section falls back to
    an inline extractor of the same slug.

    Args:
        text: the model output.
        inline_slugs: slugs of inline extractors whose sections should be collected.
        sort_lines: sort each date group by time (``compat="reference"``: left as written).

    Raises:
        ValueError: a slug is not kebab-case.
    """
    if is_degenerate(sanitize_observation_lines(text)):
        return ObserverOutput("", None, None, None, {}, True, text)
    extracted, stripped = _extract_inline(text, inline_slugs)
    observations = sanitize_observation_lines(_observations_body(stripped))
    if sort_lines:
        observations = sort_observations_by_time(observations)
    hinted = _ANY_HINT_TAG.search(stripped) is not None
    return ObserverOutput(
        observations=observations,
        current_task=(hinted and _first_section("current-task", stripped)) or extracted.get("current-task"),
        suggested_response=(hinted and _first_section("suggested-response", stripped))
        or extracted.get("suggested-response"),
        thread_title=(hinted and _first_section("thread-title", stripped)) or extracted.get("thread-title"),
        extracted=extracted,
        degenerate=False,
        raw=text,
    )


_THREAD_BLOCK = re.compile(r'<thread\s+id="([^"]+)">(.*?)</thread>', re.IGNORECASE | re.DOTALL)


def _take_first(tag: str, text: str) -> tuple[str | None, str]:
    match = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.IGNORECASE | re.DOTALL)
    if not match:
        return None, text
    return (match.group(1).strip() or None), text[: match.start()] + text[match.end() :]


def parse_multi_thread_output(text: str, *, inline_slugs: Sequence[str] = (), sort_lines: bool = True) -> ThreadOutputs:
    """Parse a multi-thread Observer reply into one ObserverOutput per ``<thread id="…">`` block.

    The blocks are looked for inside the first line-start ``<observations>`` block (or the whole
    text when there is none). Within each block the first current-task, suggested-response and
    thread-title sections are extracted and removed; the rest is the thread's observations.
    Threads that the reply does not mention are simply absent: the caller gives them empty
    results. A degenerate reply yields an empty mapping with ``degenerate=True``.
    """
    if is_degenerate(sanitize_observation_lines(text)):
        return ThreadOutputs(degenerate=True, raw=text)
    blocks = _observation_blocks(text)
    body = blocks[0] if blocks else text
    outputs = ThreadOutputs(raw=text)
    for match in _THREAD_BLOCK.finditer(body):
        thread_id, content = match.group(1), match.group(2)
        if not content.strip():
            continue
        extracted, rest = _extract_inline(content, inline_slugs)
        current_task, rest = _take_first("current-task", rest)
        suggested, rest = _take_first("suggested-response", rest)
        title, rest = _take_first("thread-title", rest)
        sanitized = sanitize_observation_lines(rest.strip())
        outputs[thread_id] = ObserverOutput(
            observations=sort_observations_by_time(sanitized) if sort_lines else sanitized,
            current_task=current_task or extracted.get("current-task"),
            suggested_response=suggested or extracted.get("suggested-response"),
            thread_title=title or extracted.get("thread-title"),
            extracted=extracted,
            degenerate=False,
            raw=content,
        )
    return outputs


# --- cleaning and ordering ---------------------------------------------------------------


def sanitize_observation_lines(text: str, max_chars: int = MAX_OBSERVATION_LINE_CHARS) -> str:
    """Cut every line longer than *max_chars* characters and append ``" … [truncated]"``."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be >= 1, got {max_chars}")
    lines = text.split("\n")
    if all(len(line) <= max_chars for line in lines):
        return text
    return "\n".join(line if len(line) <= max_chars else line[:max_chars] + TRUNCATED_LINE_SUFFIX for line in lines)


_DATE_HEADER_LINE = re.compile(r"^\s*Date:\s")
_OBSERVATION_TIME = re.compile(r"^[*-]\s+(?:\S+\s+)?\(([0-9]{1,2}):([0-9]{2})\s*([AaPp])?\.?(?:[Mm]\.?)?\)")


def _minutes_of(items: list[list[str]]) -> list[int] | None:
    match = _OBSERVATION_TIME.match
    times = []
    for item in items:
        found = match(item[0])
        if found is None:
            return None
        times.append(found.groups())
    unmarked = [meridiem for _, _, meridiem in times].count(None)
    if unmarked == 0:
        return [(int(h) % 12) * 60 + (720 if meridiem in "Pp" else 0) + int(m) for h, m, meridiem in times]
    if unmarked < len(times):
        return None
    # Without AM/PM, "13:35" or "09:15" read as 24-hour and "1:35" as 12-hour, while "10:30" could
    # be either; a mix that cannot be ordered safely is left alone.
    twelve_hour = twenty_four_hour = False
    for hour, _, _ in times:
        if len(hour) == 1:
            twelve_hour = twelve_hour or hour != "0"
        elif hour[0] in "02" or (hour[0] == "1" and hour[1] in "3456789"):
            twenty_four_hour = True
    if twelve_hour and (twenty_four_hour or len({hour for hour, _, _ in times}) > 1):
        return None
    return [int(h) * 60 + int(m) for h, m, _ in times]


def sort_observations_by_time(text: str) -> str:
    """Order the top-level bullets of every ``Date:`` group by their ``(HH:MM)`` [AM/PM] time.

    Indented children travel with their parent and the sort is stable. A group is left exactly
    as written when any top-level bullet has no time, when AM/PM is used on only some of them,
    when the 12-hour/24-hour reading is ambiguous, or when an unindented non-bullet line sits
    among its items. Text before the first ``Date:`` header is never reordered.
    """
    lines = text.split("\n")
    # (first line, end line, new lines) of every group that sorting changes; the rest of the text
    # is left as it is, so a log that is already in order costs one pass and no copy
    changes: list[tuple[int, int, list[str]]] = []
    header: list[str] = []
    items: list[list[str]] = []
    trailing: list[str] = []
    sortable = True
    group_start = -1  # line index of the current group's header; -1 before the first

    def flush(group_end: int) -> None:
        minutes = _minutes_of(items) if sortable and len(items) > 1 else None
        if minutes is None or all(map(int.__le__, minutes, minutes[1:])):
            return  # a stable sort of a non-decreasing sequence changes nothing
        ordered = [item for _, item in sorted(zip(minutes, items, strict=True), key=lambda pair: pair[0])]
        changes.append((group_start, group_end, [*header, *(line for item in ordered for line in item), *trailing]))

    # The cheap tests before each pattern skip most lines (a log holds thousands; reflections
    # parse the whole log back).
    for index, line in enumerate(lines):
        if "Date:" in line and _DATE_HEADER_LINE.match(line):
            if group_start >= 0:
                flush(index)
            header, items, trailing, sortable, group_start = [line], [], [], True, index
        elif group_start < 0:
            continue
        elif line[:1] in ("*", "-") and line[1:2].isspace():
            if items:
                items[-1].extend(trailing)
            trailing = []
            items.append([line])
        elif not items:
            header.append(line)
        elif line.strip() == "":
            trailing.append(line)
        else:
            if not line[:1].isspace():
                sortable = False
            items[-1].extend(trailing)
            items[-1].append(line)
            trailing = []
    if group_start >= 0:
        flush(len(lines))
    if not changes:
        return text
    output: list[str] = []
    position = 0
    for first, end, replaced in changes:
        output.extend(lines[position:first])
        output.extend(replaced)
        position = end
    output.extend(lines[position:])
    return "\n".join(output)


# --- actor-context rendering -------------------------------------------------------------

_ANCHOR_ID = re.compile(r"(^|\n)([^\S\n]*)\[(O[0-9]+(?:-N[0-9]+|\.[0-9]+)*)\][^\S\n]*")
_SEMANTIC_TAG = re.compile(r"\[(?![0-9\s]*items collapsed)[^\]]+\](?!\()")


def optimize_for_context(text: str) -> str:
    """Shrink the stored log for the actor prompt (``optimizeObservationsForContext``).

    Strips ephemeral anchor ids (``[O12]``, ``[O3-N2]``, ``[O1.2]`` at line start), removes the
    🟡 and 🟢 markers (🔴 and ✅ stay), removes ``[semantic, tags]`` while keeping
    ``[N items collapsed…]`` markers and markdown link labels ``[label](url)``, turns ``->``
    (and the whitespace around it) into one space, collapses runs of spaces and of 3+ newlines,
    and trims the result. Note that any other bracketed text, e.g. ``[Image #1: a.png]``, is a
    "tag" too and goes away, as in the reference.
    """
    optimized = _ANCHOR_ID.sub(r"\1\2", text)
    optimized = re.sub(r"🟡\s*", "", optimized)
    optimized = re.sub(r"🟢\s*", "", optimized)
    optimized = _SEMANTIC_TAG.sub("", optimized)
    optimized = re.sub(r"\s*->\s*", " ", optimized)
    optimized = re.sub(r"  +", " ", optimized)
    optimized = re.sub(r"\n{3,}", "\n\n", optimized)
    return optimized.strip()


# --- message boundaries ------------------------------------------------------------------

MESSAGE_BOUNDARY_RE = re.compile(
    r"\n{2,}--- message boundary "
    r"\(([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?Z)\) ---\n{2,}"
)


def format_boundary(dt: datetime) -> str:
    r"""Return the chunk delimiter for *dt*.

    Example: ``"\n\n--- message boundary (2026-01-15T12:10:00.000Z) ---\n\n"``.

    The time is written in UTC with milliseconds, like JavaScript's ``toISOString``. A naive
    datetime is taken to be UTC already.
    """
    utc = dt.astimezone(UTC) if dt.tzinfo is not None else dt
    stamp = utc.strftime("%Y-%m-%dT%H:%M:%S") + f".{utc.microsecond // 1000:03d}Z"
    return f"\n\n--- message boundary ({stamp}) ---\n\n"


def append_with_boundary(existing: str, addition: str, dt: datetime) -> str:
    """Append *addition* to *existing*, separated by the boundary for *dt*.

    An empty *existing* returns *addition* alone (no leading delimiter); an empty *addition*
    returns *existing* unchanged.
    """
    if not existing:
        return addition
    if not addition:
        return existing
    return f"{existing}{format_boundary(dt)}{addition}"


def split_at_boundaries(text: str) -> list[str]:
    """Split the log into its chunks at message-boundary delimiters (trimmed, empties dropped)."""
    return [chunk for _, chunk in chunks_with_boundary_times(text)]


def chunks_with_boundary_times(text: str) -> list[tuple[datetime | None, str]]:
    """Like ``split_at_boundaries`` but pair each chunk with the (UTC) time of the boundary before it.

    The first chunk has no boundary before it and gets None. The boundary time is the
    ``lastObservedAt`` covered by the chunk that follows it.
    """
    pieces = MESSAGE_BOUNDARY_RE.split(text.strip())
    result: list[tuple[datetime | None, str]] = []
    stamps: list[datetime | None] = [None]
    for stamp in pieces[1::2]:
        stamps.append(datetime.fromisoformat(stamp))
    for stamp, chunk in zip(stamps, pieces[0::2], strict=True):
        if chunk.strip():
            result.append((stamp, chunk.strip()))
    return result


# --- line views --------------------------------------------------------------------------

_SCAFFOLDING_LINE = re.compile(
    r"^(?:Date:\s.*|</?[A-Za-z][\w-]*(?:\s[^<>]*)?>|--- message boundary \(.*\) ---"
    r"|\[[0-9]+ observations truncated here\]"
    r"|\[(?:[0-9]+ days?|1 week|[0-9]+ weeks|1 month|[0-9]+ months) later\])$"
)


def observation_lines(text: str) -> list[str]:
    """The lines of *text* that carry an observation, in order and unmodified.

    Left out: blank lines, ``Date:`` headers, lines holding only an XML tag (``<thread id="…">``,
    ``</observation-group>``…), message-boundary delimiters, truncation markers and gap lines.
    """
    return [line for line in text.split("\n") if line.strip() and not _SCAFFOLDING_LINE.match(line.strip())]


_OBSERVATION_GROUP = re.compile(r"<observation-group\b([^>]*)>(.*?)</observation-group>", re.DOTALL)


def strip_observation_group_tags(text: str) -> str:
    """Replace every ``<observation-group …>…</observation-group>`` wrapper by its trimmed content.

    Runs of 3+ newlines are collapsed to one blank line and the result is trimmed (as the
    Reflector input expects).
    """
    if not text:
        return text
    if "<observation-group" not in text and "\n\n\n" not in text:
        return text.strip()  # nothing to replace or collapse (most logs): skip the two scans
    stripped = _OBSERVATION_GROUP.sub(lambda m: m.group(2).strip(), text)
    return re.sub(r"\n{3,}", "\n\n", stripped).strip()
