"""The explorer's state: a run, a conversation and a step, and what the memory looked like there.

Plain Python (no ipywidgets), so it is tested without a kernel; :mod:`omlab.viz.widgets.explorer`
draws it.

**Which step an event belongs to.** The engine ends every step with one ``data-om-status`` part,
so the k-th status part (in ``seq`` order) closes step k and every event before it and after the
previous one happened during step k; events after the last status part belong to the final
``finalize`` row. This is exact for replays (the harness and :func:`omlab.viz.simulate.simulate`
record every part). Without status parts (e.g. a frame filtered by type) events are placed by time
instead: the last step whose ``ts`` is at or before the event.

**The observation text at a step** is rebuilt from the data parts up to that step, which carry
the text they add (decided instead of storing a snapshot per step, which would multiply the
results size by the number of steps): an observation cycle's ``data-om-observation-end`` and a
buffered chunk's ``data-om-activation`` (``operationType: observation``) append their
``observations``; a reflection's ``data-om-observation-end`` or ``data-om-activation``
(``operationType: reflection``) carries the whole new log and replaces it. The lines are the
engine's; the chunk separators are a blank line (the engine's ``--- message boundary (time) ---``
delimiters carry a time the parts do not record).

**What a step changed in the log** (:func:`log_changes`) compares the log at the end of the
previous step with the log at the end of this one line by line, as multisets: a line of the new
log is *added* when the old log had no (unmatched) copy of it, and every old line with no copy
left in the new log is *removed*. Order is ignored on purpose: a reflection that keeps a line but
moves it has not changed what the memory holds. Blank lines (chunk separators) never count.

**The raw messages in context** at a step are the unobserved suffix of the messages ingested so
far: the engine always observes the oldest unobserved messages first, so the suffix is the one
whose token counts add up to the step's ``pending_tokens`` (less the engine's fixed
once-per-conversation overhead). This needs the conversation's
messages (``messages=``), since the results do not store message text; it is exact when the run
counted tokens with tokenx (the default).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from omlab.bench.datasets.schema import Conversation
from omlab.bench.results import ResultsCatalog, events_df, runs_df, steps_df
from omlab.engine.messages import Message
from omlab.engine.token_counter import TOKENS_PER_CONVERSATION, TokenCounter

STATUS_TYPE = "data-om-status"
_APPENDS = {("data-om-observation-end", "observation"), ("data-om-activation", "observation")}
_REPLACES = {("data-om-observation-end", "reflection"), ("data-om-activation", "reflection")}
EVENT_COLUMNS: tuple[str, ...] = (
    "step",
    "seq",
    "ts",
    "type",
    "operation_type",
    "triggered_by",
    "tokens_in",
    "tokens_out",
    "cycle_id",
)
"""Columns of :meth:`ExplorerState.events_near`."""

Source = ResultsCatalog | str | Path | Mapping[str, pd.DataFrame] | Any


@dataclass(frozen=True)
class LogLine:
    """One line of the observation log, and whether the step being looked at added it."""

    text: str
    added: bool


@dataclass(frozen=True)
class LogChanges:
    """What one step changed in the observation log (see :func:`log_changes`).

    Attributes:
        lines: The log after the step, every line in order, the added ones marked.
        removed: The lines of the log before the step that are gone after it, in their old order.
    """

    lines: tuple[LogLine, ...]
    removed: tuple[str, ...]

    @property
    def added(self) -> tuple[str, ...]:
        """The added lines, in log order."""
        return tuple(line.text for line in self.lines if line.added)


def log_changes(before: str, after: str) -> LogChanges:
    """The lines ``after`` added to the log ``before`` and the ones it removed.

    Lines are compared with surrounding whitespace stripped, as multisets (see the module
    docstring): of repeated lines (a date header in two chunks) the first copies are the kept
    ones, so a header repeated by a new chunk counts as added. Blank lines are never added or
    removed.
    """
    available = Counter(key for key in map(str.strip, before.splitlines()) if key)
    lines: list[LogLine] = []
    for text in after.splitlines():
        key = text.strip()
        if key and available[key] > 0:
            available[key] -= 1
            lines.append(LogLine(text, added=False))
        else:
            lines.append(LogLine(text, added=bool(key)))
    # ``available`` now counts the old copies nothing matched: the last ones of each line are gone
    kept = Counter(key for key in map(str.strip, before.splitlines()) if key)
    for key, left in available.items():
        kept[key] -= left
    removed: list[str] = []
    for text in before.splitlines():
        key = text.strip()
        if not key:
            continue
        if kept[key] > 0:
            kept[key] -= 1
        else:
            removed.append(text)
    return LogChanges(tuple(lines), tuple(removed))


def event_steps(steps: pd.DataFrame, events: pd.DataFrame) -> np.ndarray:
    """The step each event (rows of one conversation, in ``seq`` order) happened in.

    See the module docstring: by ``data-om-status`` parts when their count matches the steps,
    else by time.
    """
    if len(events) == 0:
        return np.array([], dtype="int64")
    numbers = steps["step"].to_numpy(dtype="int64")
    is_status = (events["type"].astype(str) == STATUS_TYPE).to_numpy()
    # one status part per ingest step; the finalize row (the last) emits none
    if is_status.sum() in (len(numbers), len(numbers) - 1) and len(numbers):
        closed_before = np.cumsum(is_status) - is_status
        index = np.minimum(closed_before, len(numbers) - 1)
        return numbers[index]
    step_times = pd.to_datetime(steps["ts"], utc=True).to_numpy(dtype="datetime64[ns]")
    event_times = pd.to_datetime(events["ts"], utc=True).to_numpy(dtype="datetime64[ns]")
    index = np.clip(np.searchsorted(step_times, event_times, side="right") - 1, 0, len(numbers) - 1)
    return numbers[index]


def observation_log(events: pd.DataFrame) -> str:
    """The observation log after ``events`` (in order), rebuilt as the module docstring says."""
    chunks: list[str] = []
    for type_, operation, payload in zip(events["type"], events["operation_type"], events["payload"], strict=True):
        key = (str(type_), str(operation))
        if key not in _APPENDS and key not in _REPLACES:
            continue
        text = _payload(payload).get("observations")
        if not isinstance(text, str):
            continue
        if key in _REPLACES:
            chunks = [text.strip()] if text.strip() else []
        elif text.strip():
            chunks.append(text.strip())
    return "\n\n".join(chunks)


def unobserved_suffix(
    messages: Sequence[Message], counts: Sequence[int], upto: int, pending_tokens: int
) -> list[Message]:
    """The messages ``messages[:upto + 1]`` still unobserved when ``pending_tokens`` were pending.

    Pending tokens are the messages' counts plus the once-per-conversation overhead
    (``TOKENS_PER_CONVERSATION``) when there are any, so this is the longest suffix whose counts
    sum to at most ``pending_tokens`` minus that overhead (exactly that when the counts are the
    engine's).
    """
    budget = pending_tokens - TOKENS_PER_CONVERSATION if pending_tokens > 0 else 0
    total, start = 0, upto + 1
    while start > 0 and total + counts[start - 1] <= budget:
        start -= 1
        total += counts[start]
    return list(messages[start : upto + 1])


class ExplorerState:
    """Selection (run, conversation, step) over recorded or simulated results, and derived views.

    Args:
        source: A :class:`~omlab.bench.results.ResultsCatalog` or results directory; a
            :class:`~omlab.viz.simulate.SimulationResult`; or a mapping with ``steps`` and
            ``events`` frames (the results getters' columns).
        messages: The conversations' messages, to show the raw messages in context: a mapping
            ``conversation_id -> messages`` or :class:`~omlab.bench.datasets.schema.Conversation` objects
            (their ids then match the replay's message ids).
    """

    def __init__(
        self, source: Source, *, messages: Mapping[str, Sequence[Message]] | Iterable[Conversation] | None = None
    ) -> None:
        self._catalog: ResultsCatalog | None = None
        self._frames: dict[str, pd.DataFrame] = {}
        if isinstance(source, (ResultsCatalog, str, Path)):
            self._catalog = source if isinstance(source, ResultsCatalog) else ResultsCatalog(source)
        elif isinstance(source, Mapping):
            missing = [name for name in ("steps", "events") if name not in source]
            if missing:
                raise ValueError(f"ExplorerState: the frames mapping needs {missing}; it has {sorted(source)}")
            self._frames = {name: source[name] for name in ("steps", "events")}
        elif hasattr(source, "steps") and hasattr(source, "events"):
            self._frames = {"steps": source.steps, "events": source.events}
        else:
            raise TypeError(
                "ExplorerState: source must be a ResultsCatalog, a results directory, a "
                f"SimulationResult or a mapping of frames, got {type(source).__name__}"
            )
        self._messages = _messages_by_conversation(messages)
        self._counter = TokenCounter()
        self._counts: dict[str, list[int]] = {}
        self.run_id: str | None = None
        self.conversation_id: str | None = None
        self.step: int | None = None
        self._event_steps = np.array([], dtype="int64")
        self.steps = pd.DataFrame()
        """Steps of the selected conversation, in step order."""
        self.events = pd.DataFrame()
        """Events of the selected conversation, in ``seq`` order, with a ``step`` column."""

    # ------------------------------------------------------------------ choices

    def runs(self) -> pd.DataFrame:
        """The runs to pick from, newest first: ``run_id``, ``suite``, ``config_name``, ``status``
        and ``label`` (:func:`run_label`).

        Newest is the latest ``started_at`` (ties and runs without one: the larger run id, which
        for generated ids is the later start).
        """
        if self._catalog is not None:
            runs = runs_df(self._catalog).drop_duplicates("run_id", keep="last")
            if "started_at" in runs.columns:
                started = pd.to_datetime(runs["started_at"], utc=True, errors="coerce")
            else:
                started = pd.Series(pd.NaT, index=runs.index, dtype="datetime64[ns, UTC]")
            runs = (
                runs.assign(_started=started, run_id=runs["run_id"].astype(str))
                .sort_values(["_started", "run_id"], ascending=False, na_position="last", kind="stable")
                .reset_index(drop=True)
            )
            frame = pd.DataFrame(
                {
                    "run_id": runs["run_id"],
                    "suite": runs["suite"].fillna("").astype(str),
                    "config_name": runs["config_name"].fillna("").astype(str),
                    "status": runs["status"].fillna("").astype(str),
                }
            )
        else:
            ids = (
                sorted(self._frames["steps"]["run_id"].dropna().astype(str).unique(), reverse=True)
                if "run_id" in self._frames["steps"].columns
                else []
            )
            frame = pd.DataFrame({"run_id": ids, "suite": "", "config_name": "", "status": "finished"}, dtype=object)
        labels = [run_label(r.run_id, r.suite, r.config_name, r.status) for r in frame.itertuples()]
        return frame.assign(label=pd.Series(labels, index=frame.index, dtype=object))

    def conversations(self, run_id: str | None = None) -> list[str]:
        """Conversation ids of ``run_id`` (default: the selected run) that have steps."""
        run_id = run_id if run_id is not None else self.run_id
        steps = self._load("steps", run_id, None)
        return sorted(steps["conversation_id"].dropna().astype(str).unique())

    def step_range(self) -> tuple[int, int]:
        """First and last step number of the selection."""
        self._require_selection()
        return int(self.steps["step"].iloc[0]), int(self.steps["step"].iloc[-1])

    # ------------------------------------------------------------------ selection

    def select(self, run_id: str | None = None, conversation_id: str | None = None) -> None:
        """Pick a run (default: the only or newest one) and a conversation (default: the first),
        and move to the last step.

        Raises:
            ValueError: An unknown run or conversation, or a run with no steps.
        """
        if run_id is None:
            runs = self.runs()
            if runs.empty:
                raise ValueError("ExplorerState: there are no runs to select")
            run_id = str(runs["run_id"].iloc[0])
        known = set(self.runs()["run_id"].astype(str))
        if run_id not in known:
            raise ValueError(f"ExplorerState: no run {run_id!r}; runs: {sorted(known)}")
        conversations = self.conversations(run_id)
        if not conversations:
            raise ValueError(f"ExplorerState: run {run_id!r} has no engine steps")
        if conversation_id is None:
            conversation_id = conversations[0]
        if conversation_id not in conversations:
            raise ValueError(
                f"ExplorerState: run {run_id!r} has no conversation {conversation_id!r}; it has {conversations[:10]}"
            )
        steps = self._load("steps", run_id, conversation_id).sort_values("step", kind="stable").reset_index(drop=True)
        events = self._load("events", run_id, conversation_id).sort_values("seq", kind="stable").reset_index(drop=True)
        events = events.assign(step=event_steps(steps, events))
        self.run_id, self.conversation_id = run_id, conversation_id
        self.steps, self.events = steps, events
        self._event_steps = np.unique(events.loc[_listed(events), "step"].to_numpy(dtype="int64"))
        self.step = int(steps["step"].iloc[-1])

    def set_step(self, n: int) -> None:
        """Move to step ``n``.

        Raises:
            ValueError: ``n`` is outside :meth:`step_range`.
        """
        first, last = self.step_range()
        if not first <= int(n) <= last:
            raise ValueError(f"ExplorerState: step {n} is outside {first}..{last}")
        self.step = int(n)

    # ------------------------------------------------------------------ derived views

    def step_row(self) -> pd.Series:
        """The selected step's ``steps`` row (the last row at or before ``step``)."""
        self._require_selection()
        at_or_before = self.steps[self.steps["step"] <= self.step]
        return at_or_before.iloc[-1]

    def timeline_frame(self) -> pd.DataFrame:
        """The selected conversation's steps (what the sawtooth draws), ``selected`` marking the step."""
        self._require_selection()
        return self.steps.assign(selected=self.steps["step"] == self.step)

    def observation_text(self) -> str:
        """The observation log at the end of the selected step (see the module docstring)."""
        self._require_selection()
        return observation_log(self.events[self.events["step"] <= self.step])

    def observation_changes(self) -> LogChanges:
        """What the selected step changed in the observation log: :func:`log_changes` between the
        log at the end of the previous step and at the end of this one."""
        self._require_selection()
        before = observation_log(self.events[self.events["step"] < self.step])
        return log_changes(before, self.observation_text())

    def steps_with_events(self) -> list[int]:
        """The steps of the selection with at least one event :meth:`events_near` lists (status
        parts and debug events do not count), in order."""
        self._require_selection()
        return [int(step) for step in self._event_steps]

    def previous_event_step(self) -> int | None:
        """The last step before the selected one that has events (None when there is none)."""
        self._require_selection()
        index = int(np.searchsorted(self._event_steps, self.step, side="left"))
        return int(self._event_steps[index - 1]) if index > 0 else None

    def next_event_step(self) -> int | None:
        """The first step after the selected one that has events (None when there is none)."""
        self._require_selection()
        index = int(np.searchsorted(self._event_steps, self.step, side="right"))
        return int(self._event_steps[index]) if index < len(self._event_steps) else None

    def events_near(
        self, window: int = 5, *, include_status: bool = False, include_debug: bool = False
    ) -> pd.DataFrame:
        """Events of steps ``step - window`` .. ``step + window`` (:data:`EVENT_COLUMNS`), in order.

        ``data-om-status`` parts (one per step) and debug events are left out unless asked for.
        """
        self._require_selection()
        if window < 0:
            raise ValueError(f"ExplorerState.events_near: window must be >= 0, got {window}")
        events = self.events
        chosen = (events["step"] >= self.step - window) & (events["step"] <= self.step + window)
        chosen &= _listed(events, include_status=include_status, include_debug=include_debug)
        columns = [c for c in EVENT_COLUMNS if c in events.columns]
        return events.loc[chosen, columns].reset_index(drop=True)

    def messages_in_context(self) -> list[Message] | None:
        """The raw (unobserved) messages the actor carried at the selected step, oldest first;
        None when the conversation's messages were not given."""
        self._require_selection()
        messages = self._messages.get(str(self.conversation_id))
        if messages is None:
            return None
        counts = self._counts.get(str(self.conversation_id))
        if counts is None:
            counts = self._counts[str(self.conversation_id)] = [self._counter.count_message(m) for m in messages]
        row = self.step_row()
        position = {m.id: i for i, m in enumerate(messages)}
        message_id = row.get("message_id")
        upto = position.get(str(message_id), len(messages) - 1) if isinstance(message_id, str) else len(messages) - 1
        pending = row.get("pending_tokens")
        pending = 0 if pd.isna(pending) else int(pending)
        return unobserved_suffix(messages, counts, upto, pending)

    # ------------------------------------------------------------------ internals

    def _require_selection(self) -> None:
        if self.step is None:
            raise ValueError("ExplorerState: nothing selected yet; call select(run_id, conversation_id)")

    def _load(self, table: str, run_id: str | None, conversation_id: str | None) -> pd.DataFrame:
        if self._catalog is not None:
            if run_id is None:
                return pd.DataFrame(columns=["conversation_id"])
            getter = steps_df if table == "steps" else events_df
            return getter(self._catalog, run_id, conversation_id)
        frame = self._frames[table]
        if run_id is not None and "run_id" in frame.columns:
            frame = frame[frame["run_id"].astype(str) == str(run_id)]
        if conversation_id is not None:
            frame = frame[frame["conversation_id"].astype(str) == str(conversation_id)]
        return frame


def run_label(run_id: str, suite: str, config_name: str, status: str) -> str:
    """How the run picker names a run: ``20261204T045512-3fa9c2 · quickstart [default] · finished``
    (the parts a run did not record left out)."""
    parts = [str(run_id)]
    described = " ".join(part for part in (suite, f"[{config_name}]" if config_name else "") if part)
    parts += [part for part in (described, status) if part]
    return " · ".join(parts)


def _listed(events: pd.DataFrame, *, include_status: bool = False, include_debug: bool = False) -> pd.Series:
    """Which ``events`` the explorer lists: not the per-step status parts nor debug events,
    unless asked for."""
    chosen = pd.Series(True, index=events.index)
    if not include_status and "type" in events.columns:
        chosen &= events["type"].astype(str) != STATUS_TYPE
    if not include_debug and "kind" in events.columns:
        chosen &= events["kind"].astype(str) != "debug"
    return chosen


def _payload(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value:
        try:
            loaded = json.loads(value)
        except json.JSONDecodeError:
            return {}
        return loaded if isinstance(loaded, dict) else {}
    return {}


def _messages_by_conversation(messages: Any) -> dict[str, list[Message]]:
    if messages is None:
        return {}
    if isinstance(messages, Mapping):
        return {str(key): list(value) for key, value in messages.items()}
    from omlab.bench.run.replay import conversation_messages

    return {conversation.id: conversation_messages(conversation) for conversation in messages}


__all__ = [
    "EVENT_COLUMNS",
    "ExplorerState",
    "LogChanges",
    "LogLine",
    "event_steps",
    "log_changes",
    "observation_log",
    "run_label",
    "unobserved_suffix",
]
