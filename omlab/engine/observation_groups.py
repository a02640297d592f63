"""Observation groups: durable pointers from observations to the raw messages behind them
(retrieval mode, om-reference §8).

With ``retrieval`` on, every observed batch is stored wrapped as::

    <observation-group id="3f9c0a1b2c3d4e5f" range="msg-12:msg-30">
    Date: Mar 4, 2025
    * 🔴 (14:05) User stated …
    </observation-group>

The actor sees each group as a heading it can hand to the ``recall`` tool::

    ## Group `3f9c0a1b2c3d4e5f`
    _range: `msg-12:msg-30`_

The Reflector reads the log with the tags stripped
(:func:`omlab.engine.observation_text.strip_observation_group_tags`); its output is wrapped again by
:func:`reconcile_reflection_groups`.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

GROUP_TAG = "observation-group"
_GROUP = re.compile(r"<observation-group\b([^>]*)>(.*?)</observation-group>", re.DOTALL)
_ATTRIBUTE = re.compile(r'([A-Za-z_][\w-]*)\s*=\s*"([^"]*)"')
_GROUP_HEADING = re.compile(r"^## Group `([^`]+)`[ \t]*\n(?:_range: `[^`]*`_[ \t]*\n)?", re.MULTILINE)
_FORBIDDEN_ID_CHARS = re.compile(r'["<>`\s,]')
_NUMERIC = re.compile(r"^-?[0-9]+$")


@dataclass(frozen=True, slots=True)
class ObservationGroup:
    """One ``<observation-group>``: its id, ``range`` (``"startId:endId"``, or several ranges
    joined with commas after a reflection), optional ``kind`` and trimmed content."""

    id: str
    range: str
    kind: str | None
    text: str

    @property
    def ranges(self) -> list[tuple[str, str]]:
        """The ``(start, end)`` message-id pairs of ``range``."""
        return [parse_range(piece) for piece in self.range.split(",") if piece.strip()]

    @property
    def start_message_id(self) -> str:
        return self.ranges[0][0]

    @property
    def end_message_id(self) -> str:
        return self.ranges[-1][1]


def new_group_id() -> str:
    """A fresh group id: 16 lower-case hex digits."""
    return secrets.token_hex(8)


def parse_range(text: str) -> tuple[str, str]:
    """``"a:b"`` → ``("a", "b")``. Ids may contain colons themselves: with an odd number of
    colons the middle one separates them (``"s1:t3:s1:t9"`` → ``("s1:t3", "s1:t9")``), otherwise
    the first one does. A lone id is its own range.

    Raises:
        ValueError: empty text.
    """
    text = text.strip()
    if not text:
        raise ValueError("an observation-group range must not be empty")
    colons = [i for i, ch in enumerate(text) if ch == ":"]
    if not colons:
        return text, text
    cut = colons[len(colons) // 2] if len(colons) % 2 == 1 else colons[0]
    return text[:cut], text[cut + 1 :]


def _check_id(value: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"observation group: {what} must be a non-empty string, got {value!r}")
    if _FORBIDDEN_ID_CHARS.search(value):
        raise ValueError(
            f"observation group: {what} {value!r} contains a quote, angle bracket, backtick, comma or space"
        )
    return value


def wrap_observation_group(
    text: str,
    *,
    group_id: str,
    start_message_id: str | None = None,
    end_message_id: str | None = None,
    kind: str | None = None,
    range: str | None = None,
) -> str:
    """``text`` wrapped in an ``<observation-group>`` tag (content trimmed, on its own lines).

    Give either ``start_message_id``/``end_message_id`` or a ready ``range`` (e.g. a combined one).

    Raises:
        ValueError: a missing or malformed id or range.
    """
    _check_id(group_id, "group_id")
    if range is None:
        if start_message_id is None or end_message_id is None:
            raise ValueError("observation group: give start_message_id and end_message_id, or range")
        range = f"{_check_id(start_message_id, 'start_message_id')}:{_check_id(end_message_id, 'end_message_id')}"
    elif not range.strip() or re.search(r'["<>`\s]', range):
        raise ValueError(f"observation group: malformed range {range!r}")
    kind_attribute = ""
    if kind is not None:
        _check_id(kind, "kind")
        kind_attribute = f' kind="{kind}"'
    return f'<{GROUP_TAG} id="{group_id}" range="{range}"{kind_attribute}>\n{text.strip()}\n</{GROUP_TAG}>'


def parse_observation_groups(text: str) -> list[ObservationGroup]:
    """Every well-formed group in ``text``, in order. Groups missing an ``id`` or ``range``
    attribute are skipped."""
    groups: list[ObservationGroup] = []
    for match in _GROUP.finditer(text or ""):
        attributes = dict(_ATTRIBUTE.findall(match.group(1)))
        if not attributes.get("id") or not attributes.get("range"):
            continue
        groups.append(
            ObservationGroup(attributes["id"], attributes["range"], attributes.get("kind"), match.group(2).strip())
        )
    return groups


def group_heading(group_id: str, range: str) -> str:
    """The actor-facing heading of a group (two lines)."""
    return f"## Group `{group_id}`\n_range: `{range}`_"


def render_groups_for_context(text: str) -> str:
    """Replace each group by its heading and content, for the actor's context (om-reference
    §4.6); text outside groups is kept. Malformed groups lose their tags and keep their content."""

    def render(match: re.Match[str]) -> str:
        attributes = dict(_ATTRIBUTE.findall(match.group(1)))
        content = match.group(2).strip()
        if not attributes.get("id") or not attributes.get("range"):
            return content
        return f"{group_heading(attributes['id'], attributes['range'])}\n\n{content}"

    return _GROUP.sub(render, text or "")


def combine_ranges(ranges: Sequence[str]) -> str:
    """One range covering several: ``min:max`` when every id is a number, else the distinct
    ranges joined with commas in their order (om-reference §4.4)."""
    pairs = [parse_range(piece) for value in ranges for piece in value.split(",") if piece.strip()]
    if not pairs:
        raise ValueError("combine_ranges needs at least one range")
    ids = [i for pair in pairs for i in pair]
    if all(_NUMERIC.match(i) for i in ids):
        numbers = [int(i) for i in ids]
        return f"{min(numbers)}:{max(numbers)}"
    seen: list[str] = []
    for start, end in pairs:
        piece = f"{start}:{end}"
        if piece not in seen:
            seen.append(piece)
    return ",".join(seen)


def _split_heading_sections(text: str) -> list[tuple[str | None, str]]:
    """``(group id or None, body)`` sections of a reflection written with ``## Group`` headings."""
    matches = list(_GROUP_HEADING.finditer(text))
    sections: list[tuple[str | None, str]] = []
    if not matches:
        return [(None, text)]
    if text[: matches[0].start()].strip():
        sections.append((None, text[: matches[0].start()]))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        sections.append((match.group(1), text[match.end() : end]))
    return sections


def reconcile_reflection_groups(
    reflection: str,
    source_observations: str,
    *,
    group_id: str | None = None,
) -> str:
    """Wrap a Reflector output in groups whose ranges point at the raw messages it came from.

    The simple reconciliation: when the output keeps ``## Group `id``` sections of source
    groups, each such section is wrapped with that group's range (kind ``reflection``); the rest
    (or the whole output, when it has no sections) becomes one ``kind="reflection"`` group whose
    range combines every source group's range. Without source groups the reflection is returned
    unchanged (nothing to point at).
    """
    sources = parse_observation_groups(source_observations)
    body = reflection.strip()
    if not sources or not body:
        return body
    combined = combine_ranges([g.range for g in sources])
    by_id = {g.id: g for g in sources}
    sections = _split_heading_sections(body)
    if all(section_id is None or section_id not in by_id for section_id, _ in sections):
        return wrap_observation_group(body, group_id=group_id or new_group_id(), range=combined, kind="reflection")
    out: list[str] = []
    loose: list[str] = []
    for section_id, section in sections:
        if not section.strip():
            continue
        if section_id in by_id:
            source = by_id[section_id]
            out.append(wrap_observation_group(section, group_id=source.id, range=source.range, kind="reflection"))
        else:
            loose.append(section.strip())
    if loose:
        out.append(
            wrap_observation_group(
                "\n\n".join(loose), group_id=group_id or new_group_id(), range=combined, kind="reflection"
            )
        )
    return "\n\n".join(out)


__all__ = [
    "GROUP_TAG",
    "ObservationGroup",
    "combine_ranges",
    "group_heading",
    "new_group_id",
    "parse_observation_groups",
    "parse_range",
    "reconcile_reflection_groups",
    "render_groups_for_context",
    "wrap_observation_group",
]
