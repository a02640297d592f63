"""The three phases of a benchmark conversation: prepare, answer, judge.

* **prepare**: replay the conversation through the engine (:mod:`omlab.bench.run.replay`) and keep
  the final memory (:mod:`omlab.bench.run.prepared`). With ``prepared_dir`` set, a memory prepared
  earlier under the same key is reused: its rows are copied into this run (model calls flagged
  ``cached``) and nothing is observed again.
* **answer**: each question goes to the actor (``omlab/reader`` by default) with the memory's
  context at the question's date; the context is also scored model-free (retention)
  (:mod:`omlab.bench.run.answering`).
* **judge**: each answer is judged (LongMemEval-style prompts, or LoCoMo F1 + J)
  (:mod:`omlab.bench.run.judging`).

A job (:class:`ConversationJob`) runs the phases one conversation still needs and reports what it
did through ``emit``: rows for a results table, a phase mark, a finished question. The runner
applies these in order, in this process or after they come back from a worker process.

Failures never vanish: an actor call that keeps failing gives the question an ``answers`` row with
status ``failed`` and the error (resume answers it again); a judge call that fails leaves the
question unscored and the conversation's judge phase ``failed`` with the error; a prepare that
fails marks its conversation's questions ``failed`` too. A replay in which every Observer cycle
failed (``failurePolicy = "continue"`` skipped them all) is a failed prepare, not an empty memory
(:mod:`omlab.bench.run.observer_outage`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from omlab.bench.datasets.schema import Conversation, Question
from omlab.bench.run.answering import Answerer, describe_error
from omlab.bench.run.judging import Judge
from omlab.bench.run.observer_outage import ObserverOutageError, observer_outage
from omlab.bench.run.prepared import PreparedMemory, PreparedStore
from omlab.bench.run.replay import call_row, call_text_row, replay_conversation
from omlab.bench.suite.run_settings import RunSettings


@dataclass(frozen=True, slots=True)
class TableRows:
    """Rows for one results table (``steps``, ``events``, ``model_calls``, ``answers``, ``scores``)."""

    table: str
    rows: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class PhaseMark:
    """A conversation's phase finished (``done``) or gave up (``failed``)."""

    conversation_id: str
    phase: str
    status: str
    started_at: datetime
    error: str | None = None
    n_messages: int | None = None
    n_message_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class QuestionDone:
    """A question went through ``phase`` (answered or judged, successfully or not)."""

    conversation_id: str
    question_id: str
    phase: str


@dataclass(frozen=True, slots=True)
class RowGroup:
    """Rows for several tables that must reach the results file together (all or none): a
    question's model calls with its answer or scores, so a resumed run never holds calls of a
    question it asks again."""

    parts: tuple[TableRows, ...]


Record = TableRows | RowGroup | PhaseMark | QuestionDone
Emit = Callable[[Record], None]


@dataclass(frozen=True, slots=True)
class ConversationJob:
    """What one conversation still needs in this run.

    Attributes:
        conversation: The conversation (questions already limited).
        settings: The run's settings.
        done_phases: Phases already marked ``done`` for it in this run.
        answered: Questions already answered successfully in this run.
        hypotheses: Their answers (for judging).
        judged: Questions already judged (a ``judge`` or, for LoCoMo, an ``f1`` score).
    """

    conversation: Conversation
    settings: RunSettings
    done_phases: frozenset[str] = frozenset()
    answered: frozenset[str] = frozenset()
    hypotheses: dict[str, str] = field(default_factory=dict)
    judged: frozenset[str] = frozenset()

    def work_units(self) -> int:
        """How many progress units the job has left: prepare (1) + questions to answer + to judge."""
        return sum(self.work_by_phase().values())

    def work_by_phase(self) -> dict[str, int]:
        """Progress units left per phase: ``prepare`` (0 or 1 conversation), ``answer`` and
        ``judge`` (questions)."""
        phases = self.settings.phases
        questions = [q.id for q in self.conversation.questions]
        return {
            "prepare": int("prepare" in phases and "prepare" not in self.done_phases),
            "answer": sum(q not in self.answered for q in questions) if "answer" in phases else 0,
            "judge": sum(q not in self.judged for q in questions) if "judge" in phases else 0,
        }


async def run_conversation(job: ConversationJob, emit: Emit, *, limits: Any = None) -> None:
    """Run the phases ``job`` still needs, reporting everything through ``emit``."""
    settings, conversation = job.settings, job.conversation
    phases = settings.phases
    prepared: PreparedMemory | None = None
    if "prepare" in phases and "prepare" not in job.done_phases:
        prepared = await prepare(conversation, settings, emit, limits=limits)
        if prepared is None:
            _fail_questions(
                conversation,
                [q for q in conversation.questions if q.id not in job.answered],
                "prepare failed (see the conversation's prepare mark)",
                emit,
            )
            return
    hypotheses = dict(job.hypotheses)
    if "answer" in phases:
        pending = [q for q in conversation.questions if q.id not in job.answered]
        if pending or "answer" not in job.done_phases:
            if pending and prepared is None:
                prepared = await load_prepared(conversation, settings, limits=limits)
            hypotheses.update(await answer(conversation, pending, prepared, settings, emit, limits=limits))
    if "judge" in phases:
        pending = [q for q in conversation.questions if q.id not in job.judged and q.id in hypotheses]
        unanswered = [q for q in conversation.questions if q.id not in job.judged and q.id not in hypotheses]
        if pending or unanswered or "judge" not in job.done_phases:
            await judge(
                conversation,
                [(q, hypotheses[q.id]) for q in pending],
                settings,
                emit,
                unanswered=len(unanswered),
                limits=limits,
            )


def run_conversation_in_worker(job: ConversationJob) -> list[Record]:
    """Process-pool entry point: run ``job`` on a private event loop and return its records."""
    records: list[Record] = []
    asyncio.run(run_conversation(job, records.append))
    return records


# --------------------------------------------------------------------------- prepare


async def prepare(
    conversation: Conversation, settings: RunSettings, emit: Emit, *, limits: Any = None
) -> PreparedMemory | None:
    """Replay (or reuse) the conversation's memory; emit its rows and the prepare mark."""
    started = _now()
    store = PreparedStore(settings.prepared_dir) if settings.prepared_dir else None
    key = settings.prepare_key(conversation)
    prepared = store.load(key) if store is not None else None
    if prepared is not None and observer_outage(prepared.rows.events):
        prepared = None  # never reuse a memory its Observer never wrote: observe again
    made: list[Any] = []  # every model call of the replay, kept even when it fails
    try:
        if prepared is None:
            prepared = await _replay(conversation, settings, limits, made)
            outage = observer_outage(prepared.rows.events)
            if outage:
                raise ObserverOutageError(outage)
            if store is not None:
                store.save(key, prepared)
            calls = prepared.rows.model_calls
        else:
            calls = [_reused_call(row, settings.prices) for row in prepared.rows.model_calls]
    except Exception as error:  # noqa: BLE001 - recorded on the mark; the run goes on
        if made:  # what the failed replay paid for is still a row each (cost, errors)
            emit(TableRows("model_calls", [call_row(conversation.id, call) for call in made]))
        emit(PhaseMark(conversation.id, "prepare", "failed", started, error=describe_error(error)))
        return None
    rows = prepared.rows
    tables = (("steps", rows.steps), ("events", rows.events), ("model_calls", calls), ("call_texts", rows.call_texts))
    for table, table_rows in tables:
        if table_rows:
            emit(TableRows(table, _for_conversation(table_rows, conversation.id)))
    emit(
        PhaseMark(
            conversation.id,
            "prepare",
            "done",
            started,
            n_messages=prepared.summary.get("n_messages"),
            n_message_tokens=prepared.summary.get("n_message_tokens"),
        )
    )
    return prepared


async def load_prepared(conversation: Conversation, settings: RunSettings, *, limits: Any = None) -> PreparedMemory:
    """The prepared memory of a conversation this run prepared earlier. If the cache lost it
    (cleared, or reuse disabled), replay again without emitting rows: the run has them already."""
    if settings.prepared_dir:
        store = PreparedStore(settings.prepared_dir)
        key = settings.prepare_key(conversation)
        prepared = store.load(key)
        if prepared is None:
            prepared = await _replay(conversation, settings, limits)
            store.save(key, prepared)
        return prepared
    return await _replay(conversation, settings, limits)


async def _replay(
    conversation: Conversation, settings: RunSettings, limits: Any, made: list[Any] | None = None
) -> PreparedMemory:
    """The conversation's replay; ``made`` (when given) collects every model call as it ends."""
    replay = settings.replay

    def make_client(on_call: Callable[[Any], None]) -> Any:
        if made is None:
            return settings.make_client(on_call, limits=limits)
        return settings.make_client(lambda call: (made.append(call), on_call(call)), limits=limits)

    result = await replay_conversation(
        conversation,
        settings.engine_options,
        make_client=make_client,
        latency=settings.latency_for(conversation.id),
        ingest=replay.ingest,
        timezone=replay.timezone,
        scope=replay.scope,
        debug_payloads=replay.debug_payloads,
        speaker_names=settings.speaker_names(),
    )
    return await PreparedMemory.from_replay(result)


# --------------------------------------------------------------------------- answer and judge


async def answer(
    conversation: Conversation,
    questions: list[Question],
    prepared: PreparedMemory | None,
    settings: RunSettings,
    emit: Emit,
    *,
    limits: Any = None,
) -> dict[str, str]:
    """Answer ``questions`` (:mod:`omlab.bench.run.answering`); emit each question's actor calls,
    answer and retention scores, then the answer mark. Returns the successful hypotheses."""
    started = _now()
    answerer = Answerer(conversation, prepared, settings, limits=limits)
    hypotheses: dict[str, str] = {}
    errors: list[str] = []
    for question in questions:
        done = await answerer.answer(question)
        if done.ok:
            hypotheses[question.id] = done.row["hypothesis"]
        else:
            errors.append(f"{question.id}: {done.row['error']}")
        emit(_question_rows(conversation.id, question.id, done.calls, answers=[done.row], scores=done.scores))
        emit(QuestionDone(conversation.id, question.id, "answer"))
    emit(PhaseMark(conversation.id, "answer", "failed" if errors else "done", started, error=_join(errors)))
    return hypotheses


async def judge(
    conversation: Conversation,
    items: list[tuple[Question, str]],
    settings: RunSettings,
    emit: Emit,
    *,
    unanswered: int = 0,
    limits: Any = None,
) -> None:
    """Score answered questions (:mod:`omlab.bench.run.judging`); emit each question's judge calls and
    scores, then the judge mark (``failed`` when a question stays unscored or unanswered)."""
    started = _now()
    judge_model = Judge(settings, limits=limits)
    errors: list[str] = []
    for question, hypothesis in items:
        done = await judge_model.judge(question, hypothesis)
        if done.error is not None:
            errors.append(f"{question.id}: {done.error}")
        emit(_question_rows(conversation.id, question.id, done.calls, scores=done.scores))
        emit(QuestionDone(conversation.id, question.id, "judge"))
    if unanswered:
        errors.append(f"{unanswered} question(s) have no successful answer to judge")
    emit(PhaseMark(conversation.id, "judge", "failed" if errors else "done", started, error=_join(errors)))


# --------------------------------------------------------------------------- helpers


def _question_rows(
    conversation_id: str,
    question_id: str,
    calls: Iterable[Any],
    *,
    answers: list[dict[str, Any]] | None = None,
    scores: list[dict[str, Any]] | None = None,
) -> RowGroup:
    """One question's model calls, answer and scores, to be written together."""
    calls = list(calls)
    parts = (
        TableRows("model_calls", [call_row(conversation_id, c, question_id) for c in calls]),
        TableRows("call_texts", [call_text_row(conversation_id, c) for c in calls]),
        TableRows("answers", answers or []),
        TableRows("scores", scores or []),
    )
    return RowGroup(tuple(part for part in parts if part.rows))


def _fail_questions(conversation: Conversation, questions: Iterable[Question], error: str, emit: Emit) -> None:
    rows = [
        {
            "conversation_id": conversation.id,
            "question_id": q.id,
            "question_type": q.type,
            "is_abstention": q.is_abstention,
            "category": q.category,
            "question": q.question,
            "gold": q.answer,
            "question_date": q.question_date,
            "status": "failed",
            "error": error,
        }
        for q in questions
    ]
    if rows:
        emit(TableRows("answers", rows))


def _reused_call(row: dict[str, Any], prices: dict[str, Any]) -> dict[str, Any]:
    """A prepared memory's model call as this run records it: not paid again, and priced with
    this run's prices from its tokens (not the cost the preparing run recorded)."""
    from omlab.llm.pricing import price_call

    model, tokens_in, tokens_out = row.get("resolved_model"), row.get("input_tokens"), row.get("output_tokens")
    priced = (
        price_call(model, int(tokens_in), int(tokens_out), overrides=prices)
        if model and row.get("error") is None and tokens_in is not None and tokens_out is not None
        else None
    )
    return {**row, "cached": True, "cost_usd": priced, "cost_usd_paid": 0.0}


def _for_conversation(rows: list[dict[str, Any]], conversation_id: str) -> list[dict[str, Any]]:
    return [{**row, "conversation_id": conversation_id} for row in rows]


def _join(errors: list[str]) -> str | None:
    if not errors:
        return None
    shown = "; ".join(errors[:5])
    return shown + (f"; … and {len(errors) - 5} more" if len(errors) > 5 else "")


def _now() -> datetime:
    return datetime.now(UTC)


__all__ = [
    "ConversationJob",
    "Emit",
    "PhaseMark",
    "QuestionDone",
    "Record",
    "RowGroup",
    "TableRows",
    "answer",
    "judge",
    "load_prepared",
    "prepare",
    "run_conversation",
    "run_conversation_in_worker",
]
