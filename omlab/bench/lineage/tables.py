"""The ``lineage`` and ``lineage_questions`` tables of a run, from its frames and its dataset.

Pure: the run's ``steps``, ``events`` and ``answers`` frames (as the ``omlab.bench.results``
getters return them; ``answers`` with its ``judge_correct``/``f1`` score columns) plus the
conversations the run replayed (for the evidence turn ids and their text, which the run file does
not hold) in, two DataFrames out. Evidence turns are found as the replay named their messages
(``<thread>-m00042``, conversation order; :func:`omlab.bench.run.replay.conversation_messages`), without
building the messages: a conversation's text is only read for its evidence and its length.

**Token ages** (``ingested_at_tokens``, ``dropped_at_tokens``, ``final_tokens``) are the message
tokens ingested up to that point, estimated by the share of the conversation's characters times
its recorded token count (``conversations.n_message_tokens``; characters / 4 without it).

**Loss cause of a question**, first rule that applies: ``answered_right`` (the verdict is right:
the judge's, else F1 ≥ 0.5); ``no_evidence`` (the question cites no turn); ``lost_at_observation``
(an evidence turn was observed but no observation line came from it); ``lost_at_reflection`` (an
evidence turn's lines were all dropped by a reflection); ``present_answered_wrong`` (every
evidence turn was in the actor's context: as lines, or as a raw unobserved message) or
``present_unjudged`` (the same, no verdict).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from itertools import accumulate

import numpy as np
import pandas as pd

from omlab.bench.datasets.anonymised_ids import message_id, thread_key
from omlab.bench.datasets.schema import Conversation
from omlab.bench.lineage.trace import LINEAGE_EVENT_TYPES, ConversationTrace, MessageTrace, trace_conversation

LOSS_CAUSES: tuple[str, ...] = (
    "lost_at_observation",
    "lost_at_reflection",
    "present_answered_wrong",
    "present_unjudged",
    "answered_right",
    "no_evidence",
)
"""The ``lineage_questions.loss_cause`` values, in the order the views list them."""
F1_RIGHT = 0.5


def lineage_frames(
    conversations: Iterable[Conversation],
    steps: pd.DataFrame,
    events: pd.DataFrame,
    answers: pd.DataFrame,
    *,
    n_message_tokens: Mapping[str, int | None] | None = None,
    scope: str = "thread",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``lineage`` and ``lineage_questions`` rows (without ``run_id``) of one run.

    Args:
        conversations: The conversations the run replayed, with their questions.
        steps: The run's ``steps`` frame.
        events: The run's ``events`` frame (at least :data:`LINEAGE_EVENT_TYPES`).
        answers: The run's ``answers_df`` frame (``judge_correct``, ``f1`` when scored).
        n_message_tokens: Per conversation, its message tokens (``conversations`` table).
        scope: ``thread`` or ``resource`` (raw unobserved messages of other sessions are not in a
            resource-scope question's context).
    """
    evidence_rows: list[dict] = []
    question_rows: list[dict] = []
    verdicts = _verdicts(answers)
    steps_by = {key: frame for key, frame in steps.groupby("conversation_id", sort=False)} if len(steps) else {}
    wanted = events[_is_in(events["type"], LINEAGE_EVENT_TYPES)] if len(events) else events
    events_by = {key: frame for key, frame in wanted.groupby("conversation_id", sort=False)} if len(wanted) else {}
    tokens_of = dict(n_message_tokens or {})
    for conversation in conversations:
        questions = [q for q in conversation.questions]
        if not questions:
            continue
        thread = thread_key(conversation.id)
        turns = list(conversation.iter_turns())
        # a message's text is its turn's content (one text part; none when empty)
        messages = [(message_id(thread, index), turn.content or "") for index, turn in enumerate(turns, start=1)]
        message_of_turn = {turn.id: mid for turn, (mid, _) in zip(turns, messages, strict=True)}
        cited = {message_of_turn[t] for q in questions for t in q.evidence_ids if t in message_of_turn}
        conv_events = events_by.get(conversation.id, _empty_like(events))
        trace = trace_conversation(
            messages,
            cited,
            steps_by.get(conversation.id, _empty_like(steps)),
            conv_events.sort_values("seq") if len(conv_events) else conv_events,
        )
        ages = _TokenAges(messages, tokens_of.get(conversation.id), steps_by.get(conversation.id))
        for question in questions:
            rows = [
                _evidence_row(
                    conversation.id, question.id, turn_id, trace, trace.messages[message_of_turn[turn_id]], ages, scope
                )
                for turn_id in dict.fromkeys(question.evidence_ids)
                if turn_id in message_of_turn
            ]
            evidence_rows.extend(rows)
            question_rows.append(_question_row(conversation.id, question, rows, verdicts.get(question.id)))
    return pd.DataFrame(evidence_rows), pd.DataFrame(question_rows)


def _evidence_row(
    conversation_id: str,
    question_id: str,
    turn_id: str,
    trace: ConversationTrace,
    message: MessageTrace,
    ages: _TokenAges,
    scope: str,
) -> dict:
    fate = message.fate
    if fate == "unobserved":
        in_context, as_ = scope == "thread", "message" if scope == "thread" else None
    elif message.tracked:
        in_context, as_ = True, "observation"
    else:
        in_context, as_ = False, None
    return {
        "conversation_id": conversation_id,
        "question_id": question_id,
        "evidence_id": turn_id,
        "message_id": message.message_id,
        "evidence_text": message.text,
        "ingest_step": message.ingest_step,
        "ingested_at": message.ingested_at,
        "ingested_at_tokens": ages.at_message(message.message_id),
        "cycle_id": message.cycle_id,
        "cycle_kind": message.cycle_kind,
        "buffered_step": message.buffered_step,
        "observed_step": message.observed_step,
        "match": message.match,
        "lines": json.dumps(message.lines, ensure_ascii=False),
        "observed_generation": message.observed_generation,
        "generations": json.dumps(message.generations),
        "survived_generations": sum(g["fate"] != "dropped" for g in message.generations),
        "merged_generation": message.merged_generation,
        "dropped_generation": message.dropped_generation,
        "dropped_step": message.dropped_step,
        "dropped_at_tokens": ages.at_step(message.dropped_step),
        "final_generation": trace.final_generation,
        "final_tokens": ages.total,
        "fate": fate,
        "final_lines": json.dumps(message.tracked, ensure_ascii=False),
        "final_coverage": trace.final_coverage(message),
        "in_context": in_context,
        "in_context_as": as_,
    }


def _question_row(conversation_id: str, question, rows: list[dict], correct: bool | None) -> dict:
    fates = [row["fate"] for row in rows]
    lost_obs = sum(f == "lost_at_observation" for f in fates)
    lost_refl = sum(f == "dropped" for f in fates)
    if correct is True:
        cause = "answered_right"
    elif not rows:
        cause = "no_evidence"
    elif lost_obs:
        cause = "lost_at_observation"
    elif lost_refl:
        cause = "lost_at_reflection"
    elif all(row["in_context"] for row in rows):
        cause = "present_answered_wrong" if correct is False else "present_unjudged"
    else:  # unobserved turns a resource-scope question cannot see
        cause = "lost_at_observation"
    return {
        "conversation_id": conversation_id,
        "question_id": question.id,
        "question_type": question.type,
        "is_abstention": question.is_abstention,
        "n_evidence": len(rows),
        "n_observed": sum(bool(json.loads(row["lines"])) for row in rows),
        "n_lost_at_observation": lost_obs,
        "n_lost_at_reflection": lost_refl,
        "n_in_context": sum(bool(row["in_context"]) for row in rows),
        "correct": correct,
        "loss_cause": cause,
    }


class _TokenAges:
    """Message tokens ingested up to a message or a step (see the module docstring)."""

    def __init__(self, messages: list[tuple[str, str]], total_tokens: int | None, steps: pd.DataFrame | None) -> None:
        self._running = list(accumulate(len(text) for _, text in messages))  # characters up to each message
        self._chars = (self._running[-1] if self._running else 0) or 1
        self.total = int(total_tokens) if total_tokens else -(-self._chars // 4)
        self._position = {mid: index for index, (mid, _) in enumerate(messages)}
        self._steps = steps
        self._by_step: dict[int, str] | None = None

    def at_message(self, message_id: str) -> int | None:
        index = self._position.get(message_id)
        return None if index is None else round(self.total * self._running[index] / self._chars)

    def at_step(self, step: int | None) -> int | None:
        if step is None:
            return None
        message_id = self._step_message().get(step)
        return self.total if message_id is None else self.at_message(message_id)

    def _step_message(self) -> dict[int, str]:
        """The last message of each step, read from the steps once asked for."""
        if self._by_step is None:
            self._by_step = {}
            if self._steps is not None and len(self._steps):
                numbers = self._steps["step"].to_numpy(dtype="int64").tolist()
                for step, mid in zip(numbers, self._steps["message_id"].to_numpy(dtype=object), strict=True):
                    if isinstance(mid, str):
                        self._by_step[step] = mid
        return self._by_step


def _verdicts(answers: pd.DataFrame) -> dict[str, bool | None]:
    verdicts: dict[str, bool | None] = {}
    if len(answers) == 0:
        return verdicts
    judged = answers["judge_correct"] if "judge_correct" in answers else pd.Series(pd.NA, index=answers.index)
    f1 = answers["f1"] if "f1" in answers else pd.Series(float("nan"), index=answers.index)
    for question_id, verdict, score in zip(answers["question_id"], judged, f1, strict=True):
        if not pd.isna(verdict):
            verdicts[question_id] = bool(verdict)
        elif not pd.isna(score):
            verdicts[question_id] = bool(score >= F1_RIGHT)
        else:
            verdicts[question_id] = None
    return verdicts


def _empty_like(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.iloc[0:0]


def _is_in(column: pd.Series, values: Iterable[str]) -> np.ndarray:
    """``column.isin(values)`` as a boolean array, in one pass over plain Python strings (pandas'
    ``isin`` on Arrow strings converts the values one by one)."""
    wanted = frozenset(values)
    objects = column.to_numpy(dtype=object)
    return np.fromiter((value in wanted for value in objects), dtype=bool, count=len(objects))


__all__ = ["F1_RIGHT", "LOSS_CAUSES", "lineage_frames"]
