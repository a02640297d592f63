"""What a reflection dropped of the evidence, and what the Reflector wrote instead.

The ``lineage`` table says *that* an evidence turn's lines were dropped, and by which generation;
the text is already in the run's events (each reflection's part carries the whole new log), so
it is read from there on demand rather than stored again. For each ``dropped`` lineage row,
:func:`reflection_drops` follows the turn's observation lines through the generations before the
drop (the same carrier rule as the lineage, :mod:`omlab.bench.lineage.lines`), so a line the
Reflector had already rewritten shows as the rewritten line it dropped, and pairs each dropped
line with what the dropping generation wrote instead:

* ``closest``: the generation's lines that share the most content words with the dropped line
  (at most :data:`CLOSEST`; a line that kept half its words would have carried it, so these
  keep less); ties go to a line of the same ``(HH:MM)`` time, then to the most similar text;
* ``in_its_place``: when no line shares a word, the lines the Reflector wrote between the lines
  it kept around the dropped one (at most :data:`IN_ITS_PLACE`);
* ``none``: nothing of either (the Reflector wrote nothing there).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from difflib import SequenceMatcher

import pandas as pd

from omlab.bench.lineage.lines import Generation, words
from omlab.bench.lineage.trace import Reflection, reflections

CLOSEST = 2
"""Lines shown as the closest the Reflector wrote, at most."""
IN_ITS_PLACE = 3
"""Lines shown as written in the dropped line's place, at most."""
_TIME_RE = re.compile(r"\((\d{1,2}:\d{2})")
NEIGHBOURS = 20
"""Lines looked at either side of a dropped line for a neighbour the reflection kept."""
DROP_COLUMNS: tuple[str, ...] = (
    "conversation_id",
    "question_id",
    "evidence_id",
    "generation",
    "step",
    "dropped",
    "n_words",
    "how",
    "instead",
    "shared",
    "generation_lines",
)
"""The columns of :func:`reflection_drops`: ``dropped`` the line's text, ``n_words`` its content
words, ``how`` one of ``closest``/``in_its_place``/``none``, ``instead`` the Reflector's lines
(a list), ``shared`` the content words each shares with the dropped line (a list of sorted
lists),
``generation_lines`` the number of lines the dropping generation wrote."""


def reflection_drops(lineage: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """One row per evidence line a reflection dropped (columns :data:`DROP_COLUMNS`).

    Args:
        lineage: A run's ``lineage`` frame (rows of other fates are passed over).
        events: The run's lineage events (:data:`~omlab.bench.lineage.LINEAGE_EVENT_TYPES`) of
            at least the conversations of the dropped rows; a conversation without its
            reflection parts gives no rows.
    """
    rows: list[dict] = []
    if len(lineage) == 0 or "fate" not in lineage or len(events) == 0:
        return pd.DataFrame(rows, columns=list(DROP_COLUMNS))
    dropped = lineage[lineage["fate"] == "dropped"]
    wanted = events[events["conversation_id"].isin(set(dropped["conversation_id"]))]
    events_of = {key: frame for key, frame in wanted.groupby("conversation_id", sort=False)}
    for conversation_id, evidence in dropped.groupby("conversation_id", sort=False):
        mine = events_of.get(conversation_id, wanted.iloc[0:0]).sort_values("seq", kind="stable")
        rows.extend(_drops_of(list(evidence.itertuples()), {r.generation: r for r in reflections(mine)}))
    return pd.DataFrame(rows, columns=list(DROP_COLUMNS))


def instead_of(line: str, reflection: Reflection) -> tuple[str, list[str], list[list[str]]]:
    """What ``reflection`` wrote instead of ``line`` (one of the lines it read): ``(how, lines,
    the content words each shares with it)`` as the module docstring says."""
    line_words = words(line)
    shared = [(len(line_words & words(other)), index) for index, other in enumerate(reflection.after)]
    sharing = [(count, index) for count, index in shared if count > 0]
    if sharing:
        time = _time(line)
        matcher = SequenceMatcher(None, "", line.lower(), autojunk=False)

        def coarse(pair: tuple[int, int]) -> tuple:
            return (-pair[0], time is None or _time(reflection.after[pair[1]]) != time)

        def rank(pair: tuple[int, int]) -> tuple:
            matcher.set_seq1(reflection.after[pair[1]].lower())
            return (*coarse(pair), -matcher.ratio(), pair[1])

        # text similarity only breaks ties, and is slow: compare only the lines that can still place
        keys = sorted(coarse(pair) for pair in sharing)
        last = keys[min(CLOSEST, len(keys)) - 1]
        closest = sorted((pair for pair in sharing if coarse(pair) <= last), key=rank)[:CLOSEST]
        lines = [reflection.after[i] for _, i in closest]
        return "closest", lines, [sorted(line_words & words(other)) for other in lines]
    placed = _in_its_place(line, reflection.before, reflection.after)
    return ("in_its_place", placed, [[] for _ in placed]) if placed else ("none", [], [])


def _time(line: str) -> str | None:
    found = _TIME_RE.search(line)
    return found.group(1) if found else None


def _drops_of(items: list, by_generation: dict[int, Reflection]) -> list[dict]:
    """The drop rows of one conversation's dropped lineage rows: their lines followed generation
    by generation, every row's lines looked up in a generation at once (one index per generation,
    as the lineage does; a long run has dozens of generations of a thousand lines)."""
    tracked = [json.loads(item.lines) if isinstance(item.lines, str) else [] for item in items]
    entries = [json.loads(item.generations) if isinstance(item.generations, str) else [] for item in items]
    found: dict[int, list[dict]] = {}
    for generation in sorted(by_generation):
        reflection = by_generation[generation]
        here = [
            k for k, row_entries in enumerate(entries) if row_entries and row_entries[0].get("generation") == generation
        ]
        following = [k for k in here if _next_fate(entries[k]) != "dropped"]
        carriers = Generation(reflection.after).carriers_of([line for k in following for line in tracked[k]])
        for k in here:
            entry = entries[k].pop(0)
            if entry.get("fate") == "dropped":
                found[k] = [_row(items[k], entry, line, reflection) for line in tracked[k]]
                entries[k] = []
            else:
                tracked[k] = list(dict.fromkeys(line for kept in tracked[k] for line in carriers[kept]))
    # a row whose generations name a reflection the run file lacks gives none
    return [row for k in range(len(items)) for row in found.get(k, [])]


def _next_fate(row_entries: list[dict]) -> str | None:
    """The fate of a row's next generation (None when it has none left)."""
    return row_entries[0].get("fate") if row_entries else None


def _row(item, entry: dict, line: str, reflection: Reflection) -> dict:
    how, instead, shared = instead_of(line, reflection)
    return {
        "conversation_id": item.conversation_id,
        "question_id": item.question_id,
        "evidence_id": item.evidence_id,
        "generation": entry.get("generation"),
        "step": entry.get("step"),
        "dropped": line,
        "n_words": len(words(line)),
        "how": how,
        "instead": instead,
        "shared": shared,
        "generation_lines": len(reflection.after),
    }


def _in_its_place(line: str, before: Sequence[str], after: Sequence[str]) -> list[str]:
    """The lines of ``after`` between the carriers of the nearest lines of ``before`` kept on
    either side of ``line``; [] when neither side has one within :data:`NEIGHBOURS` lines."""
    if line not in before:
        return []
    at = before.index(line)
    generation = Generation(list(after))
    position = {text: index for index, text in enumerate(after)}

    def carried_at(indices: range) -> int | None:
        for index in indices:
            found = generation.carriers(before[index])
            if found:
                return position[found[0]]
        return None

    start = carried_at(range(at - 1, max(-1, at - 1 - NEIGHBOURS), -1))
    end = carried_at(range(at + 1, min(len(before), at + 1 + NEIGHBOURS)))
    if start is None and end is None:
        return []
    low = -1 if start is None else start
    high = len(after) if end is None else end
    return list(after[low + 1 : high])[:IN_ITS_PLACE]


__all__ = ["CLOSEST", "DROP_COLUMNS", "IN_ITS_PLACE", "instead_of", "reflection_drops"]
