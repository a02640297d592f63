"""Following evidence messages through one conversation's recorded events.

The events of a replay say everything needed, in ``seq`` order:

* a synchronous observation cycle's ``data-om-observation-end`` carries the lines it added and
  (since results schema 3) the ``messageIds`` it covered;
* ``data-om-buffering-end`` carries a buffered chunk's lines and ``messageIds``; the
  ``data-om-activation`` (``operationType: observation``) with the same ``cycleId`` puts them in
  the log;
* a reflection's ``data-om-observation-end`` or ``data-om-activation`` (``operationType:
  reflection``) carries the whole new log: a new generation. In resource scope an observation's
  ``data-om-observation-end`` also carries the whole log (its ``threadIds`` say so); its new lines
  are the ones the log did not have.

An evidence message is *covered* by the cycle whose ``messageIds`` hold it (``match =
"message_id"``); its lines are the cycle's lines that come from it (by content,
:mod:`omlab.bench.lineage.lines`). Runs recorded before ``messageIds`` existed are matched by
content only (``match = "content"``): the first lines appended after the message was ingested
that come from it. Each later generation keeps, rewrites (``merged``) or drops its lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from omlab.bench.lineage.lines import Generation, coverage, lines_from_message, log_lines, words

STATUS_TYPE = "data-om-status"
LINEAGE_EVENT_TYPES: tuple[str, ...] = (
    STATUS_TYPE,
    "data-om-observation-end",
    "data-om-buffering-end",
    "data-om-activation",
)
"""The event types the lineage reads (status parts place the others in their steps)."""


@dataclass(slots=True)
class MessageTrace:
    """What happened to one evidence message (columns of the ``lineage`` table)."""

    message_id: str
    text: str
    ingest_step: int | None = None
    ingested_at: datetime | None = None
    cycle_id: str | None = None
    cycle_kind: str | None = None  # "observation" (synchronous) or "buffered"
    buffered_step: int | None = None
    observed_step: int | None = None
    match: str | None = None
    lines: list[str] = field(default_factory=list)
    observed_generation: int | None = None
    generations: list[dict[str, Any]] = field(default_factory=list)
    merged_generation: int | None = None
    dropped_generation: int | None = None
    dropped_step: int | None = None
    tracked: list[str] = field(default_factory=list)

    @property
    def fate(self) -> str:
        """``unobserved``, ``lost_at_observation``, ``dropped``, ``merged`` or ``kept``."""
        if self.cycle_id is None and not self.lines:
            return "unobserved"
        if not self.lines:
            return "lost_at_observation"
        if self.dropped_generation is not None:
            return "dropped"
        return "merged" if self.merged_generation is not None else "kept"


@dataclass(slots=True)
class ConversationTrace:
    """The traces of a conversation's evidence messages and its final state."""

    messages: dict[str, MessageTrace]
    final_generation: int
    final_lines: list[str]

    def final_coverage(self, trace: MessageTrace) -> float | None:
        """Share of the message's words its surviving lines still hold (None if it has none)."""
        if not trace.tracked:
            return None
        return coverage(words(trace.text), trace.tracked)


def trace_conversation(
    messages: list[tuple[str, str]],
    evidence_ids: set[str],
    steps: pd.DataFrame,
    events: pd.DataFrame,
) -> ConversationTrace:
    """Trace the evidence messages of one conversation.

    Args:
        messages: ``(message_id, text)`` of every message, in conversation order.
        evidence_ids: The message ids to follow.
        steps: The conversation's ``steps`` rows (``step``, ``ts``, ``message_id``).
        events: The conversation's ``events`` rows of :data:`LINEAGE_EVENT_TYPES` (others are
            skipped), in ``seq`` order.
    """
    position = {message_id: index for index, (message_id, _) in enumerate(messages)}
    traces = {mid: MessageTrace(mid, text) for mid, text in messages if mid in evidence_ids}
    step_numbers, step_positions, step_times = _step_index(steps, position)
    for trace in traces.values():
        at = int(np.searchsorted(step_positions, position[trace.message_id], side="left"))
        if at < len(step_numbers):
            trace.ingest_step = int(step_numbers[at])
            trace.ingested_at = step_times[at].to_pydatetime() if step_times is not None else None
    state = _LogState(traces, position)
    types = _objects(events, "type")
    is_status = np.fromiter((t == STATUS_TYPE for t in types), dtype=bool, count=len(types))
    rows = np.flatnonzero(~is_status)
    for type_, operation, cycle_id, payload, step in zip(
        types[rows],
        _objects(events, "operation_type")[rows],
        _objects(events, "cycle_id")[rows],
        _objects(events, "payload")[rows],
        _event_steps(events, steps, is_status)[rows],
        strict=True,
    ):
        state.apply(str(type_), str(operation), cycle_id if isinstance(cycle_id, str) else None, _data(payload), step)
    return ConversationTrace(traces, state.generation, state.lines)


def final_log(events: pd.DataFrame) -> list[str]:
    """The lines of the observation log after one conversation's events (``seq`` order), rebuilt
    as the module docstring says."""
    return _replayed(events, _LogState({}, {})).lines


@dataclass(frozen=True, slots=True)
class Reflection:
    """One reflection of a conversation's log: the generation it made and the log's lines just
    before and just after it (what the Reflector read and what it wrote)."""

    generation: int
    before: list[str]
    after: list[str]


def reflections(events: pd.DataFrame) -> list[Reflection]:
    """The reflections of one conversation's events (``seq`` order), in order, numbered as the
    lineage's ``generations`` number them."""
    state = _LogState({}, {})
    state.reflections = []
    _replayed(events, state)
    return state.reflections


def _replayed(events: pd.DataFrame, state: _LogState) -> _LogState:
    """``state`` after the lineage events of ``events`` (``seq`` order), without steps."""
    for type_, operation, cycle_id, payload in zip(
        _objects(events, "type"),
        _objects(events, "operation_type"),
        _objects(events, "cycle_id"),
        _objects(events, "payload"),
        strict=True,
    ):
        if type_ in LINEAGE_EVENT_TYPES and type_ != STATUS_TYPE:
            state.apply(
                str(type_), str(operation), cycle_id if isinstance(cycle_id, str) else None, _data(payload), None
            )
    return state


def _objects(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A column as plain Python values (one conversion; iterating Arrow strings is slow)."""
    return frame[column].to_numpy(dtype=object)


def _data(payload: Any) -> dict:
    return payload if isinstance(payload, dict) else json.loads(payload) if isinstance(payload, str) else {}


class _LogState:
    """The log as the events rebuild it, and the evidence lines tracked through it."""

    def __init__(self, traces: dict[str, MessageTrace], position: dict[str, int]) -> None:
        self.traces = traces
        self.position = position
        self.lines: list[str] = []
        self.generation = 0
        self.chunks: dict[str, tuple[list[str], list[str], int | None]] = {}
        self.waiting = dict(traces)  # not yet covered by a cycle
        self.live: list[MessageTrace] = []  # observed, lines not dropped yet
        self.reflections: list[Reflection] | None = None  # kept only when asked for

    def apply(self, type_: str, operation: str, cycle_id: str | None, data: dict, step: int | None) -> None:
        text = data.get("observations")
        if operation == "reflection":
            if type_ != "data-om-buffering-end" and isinstance(text, str):
                self._reflect(text, data, step)
            return
        if type_ == "data-om-buffering-end":
            if cycle_id is not None:
                self.chunks[cycle_id] = (_ids(data), log_lines(text if isinstance(text, str) else ""), step)
            return
        if type_ == "data-om-observation-end":
            new = log_lines(text if isinstance(text, str) else "")
            if "threadIds" in data:  # resource scope: the whole log
                known = set(self.lines)
                self.lines = new
                new = [line for line in new if line not in known]
            else:
                self.lines.extend(new)
            self._cover(_ids(data), new, cycle_id, "observation", None, step)
        elif type_ == "data-om-activation":
            ids, new, buffered_step = self.chunks.pop(cycle_id or "", (None, None, None))
            if new is None:
                ids, new = _ids(data), log_lines(text if isinstance(text, str) else "")
            self.lines.extend(new)
            self._cover(ids or _ids(data), new, cycle_id, "buffered", buffered_step, step)

    def _cover(
        self,
        ids: list[str],
        new: list[str],
        cycle_id: str | None,
        kind: str,
        buffered_step: int | None,
        step: int | None,
    ) -> None:
        if ids:
            covered = [self.waiting.pop(mid) for mid in ids if mid in self.waiting]
            match = "message_id"
        else:  # an older run: whichever waiting message, ingested by now, the lines come from
            covered = [
                t
                for t in self.waiting.values()
                if new
                and t.ingest_step is not None
                and (step is None or t.ingest_step <= step)
                and lines_from_message(new, words(t.text))
            ]
            for trace in covered:
                del self.waiting[trace.message_id]
            match = "content"
        for trace in covered:
            trace.cycle_id, trace.cycle_kind, trace.match = cycle_id, kind, match
            trace.buffered_step, trace.observed_step = buffered_step, step
            trace.observed_generation = self.generation
            trace.lines = lines_from_message(new, words(trace.text))
            trace.tracked = list(trace.lines)
            if trace.lines:
                self.live.append(trace)

    def _reflect(self, text: str, data: dict, step: int | None) -> None:
        generation = data.get("generationCount")
        self.generation = generation if isinstance(generation, int) else self.generation + 1
        before, self.lines = self.lines, log_lines(text)
        if self.reflections is not None:
            self.reflections.append(Reflection(self.generation, before, list(self.lines)))  # the log grows in place
        if not self.live:
            return
        carriers = Generation(self.lines).carriers_of([line for trace in self.live for line in trace.tracked])
        still: list[MessageTrace] = []
        for trace in self.live:
            carried: list[str] = []
            rewritten = False
            for line in trace.tracked:
                found = carriers[line]
                rewritten = rewritten or found != [line]
                carried.extend(found)
            carried = list(dict.fromkeys(carried))
            fate = "dropped" if not carried else "merged" if rewritten else "kept"
            trace.generations.append({"generation": self.generation, "step": step, "fate": fate})
            trace.tracked = carried
            if fate == "merged" and trace.merged_generation is None:
                trace.merged_generation = self.generation
            if fate == "dropped":
                trace.dropped_generation, trace.dropped_step = self.generation, step
            else:
                still.append(trace)
        self.live = still


def _ids(data: dict) -> list[str]:
    ids = data.get("messageIds")
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def _step_index(
    steps: pd.DataFrame, position: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, pd.DatetimeIndex | None]:
    """Ingest steps (those with a known message) by the conversation position of their last message."""
    if len(steps) == 0 or "message_id" not in steps:
        return np.array([], dtype="int64"), np.array([], dtype="int64"), None
    at = np.fromiter((position.get(m, -1) for m in _objects(steps, "message_id")), dtype="int64", count=len(steps))
    known = np.flatnonzero(at >= 0)
    numbers = steps["step"].to_numpy(dtype="int64")[known]
    order = np.argsort(numbers, kind="stable")
    rows = known[order]
    times = pd.DatetimeIndex(pd.to_datetime(steps["ts"].iloc[rows], utc=True)) if "ts" in steps else None
    return numbers[order], at[rows], times


def _event_steps(events: pd.DataFrame, steps: pd.DataFrame, is_status: np.ndarray) -> np.ndarray:
    """The step each event happened in (``is_status``: which events are status parts). The engine
    ends every ingest step with one ``data-om-status`` part, so the k-th one closes the k-th step
    and the events after it belong to the next (the final ``finalize`` row takes the rest).
    Without status parts: the first step whose time is at or after the event's (a step's row is
    stamped when it ends)."""
    if len(events) == 0 or len(steps) == 0:
        return np.full(len(events), None, dtype=object)
    ordered = steps.sort_values("step")
    numbers = ordered["step"].to_numpy(dtype="int64")
    if is_status.any():
        index = np.minimum(np.cumsum(is_status) - is_status, len(numbers) - 1)
    else:
        step_times = pd.to_datetime(ordered["ts"], utc=True).to_numpy(dtype="datetime64[ns]")
        event_times = pd.to_datetime(events["ts"], utc=True).to_numpy(dtype="datetime64[ns]")
        index = np.clip(np.searchsorted(step_times, event_times, side="left"), 0, len(numbers) - 1)
    return np.array(numbers[index].tolist(), dtype=object)  # Python ints: they go into JSON


__all__ = [
    "LINEAGE_EVENT_TYPES",
    "ConversationTrace",
    "MessageTrace",
    "Reflection",
    "final_log",
    "reflections",
    "trace_conversation",
]
