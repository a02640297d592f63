"""The three phases of a benchmark conversation: prepare, answer, judge.

* **prepare**: replay the conversation through the engine (:mod:`omlab.bench.replay`) and keep
  the final memory (:mod:`omlab.bench.prepared`). With ``prepared_dir`` set, a memory prepared
  earlier under the same key is reused: its rows are copied into this run (model calls flagged
  ``cached``) and nothing is observed again.
* **answer**: per question, the engine's ``build_context(thread, current_date=question date)``
  followed by one user message in LongMemEval's question format
  ``Current Date: {date}\\nQuestion: {question}`` goes to the actor (``omlab/reader`` by default),
  at temperature 0 with at most 500 output tokens (the official reader's budget). The context is
  also scored model-free: ``retention`` (is the gold answer still in it; not for abstention,
  preference or adversarial questions) and ``evidence_retention`` (share of the evidence turns'
  content words still in it).
* **judge**: LongMemEval-style datasets (longmemeval, synthetic, jsonl): the judge prompt for the
  question (``judge_messages``) goes to the judge model (``omlab/judge``), its reply is parsed
  with ``parse_verdict`` in the suite's verdict mode. LoCoMo: the official ``f1`` for every
  category plus the judge for categories 1-4 (J).

A job (:class:`ConversationJob`) runs the phases one conversation still needs and reports what it
did through ``emit``: rows for a results table, a phase mark, a finished question. The runner
applies these in order, in this process or after they come back from a worker process.

Failures never vanish: an actor call that keeps failing gives the question an ``answers`` row with
status ``failed`` and the error (resume answers it again); a judge call that fails leaves the
question unscored and the conversation's judge phase ``failed`` with the error; a prepare that
fails marks its conversation's questions ``failed`` too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from omlab.bench.prepared import PreparedMemory, PreparedStore
from omlab.bench.replay import call_row, conversation_messages, replay_conversation
from omlab.bench.run_settings import RunSettings
from omlab.bench.schema import Conversation, Question
from omlab.bench.scoring import (
    JUDGE_REQUEST_OPTIONS,
    answer_retained,
    evidence_retained,
    judge_messages,
    load_judge_prompts,
    locomo_f1,
    parse_verdict,
)
from omlab.engine.clock import VirtualClock
from omlab.engine.memory import ObservationalMemory
from omlab.engine.scheduler import VirtualScheduler
from omlab.llm.types import ModelCall, ModelRequest

ANSWER_MAX_TOKENS = 500
J_CATEGORIES = (1, 2, 3, 4)
_NO_RETENTION_TYPES = frozenset({"single-session-preference"})


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


Record = TableRows | PhaseMark | QuestionDone
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
        phases = self.settings.phases
        questions = [q.id for q in self.conversation.questions]
        units = int("prepare" in phases and "prepare" not in self.done_phases)
        if "answer" in phases:
            units += sum(q not in self.answered for q in questions)
        if "judge" in phases:
            units += sum(q not in self.judged for q in questions)
        return units


async def run_conversation(job: ConversationJob, emit: Emit, *, limits: Any = None) -> None:
    """Run the phases ``job`` still needs, reporting everything through ``emit``."""
    settings, conversation = job.settings, job.conversation
    phases = settings.phases
    prepared: PreparedMemory | None = None
    if "prepare" in phases and "prepare" not in job.done_phases:
        prepared = await prepare(conversation, settings, emit, limits=limits)
        if prepared is None:
            _fail_questions(conversation, [q for q in conversation.questions if q.id not in job.answered],
                            "prepare failed (see the conversation's prepare mark)", emit)
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
            await judge(conversation, [(q, hypotheses[q.id]) for q in pending], settings, emit,
                        unanswered=len(unanswered), limits=limits)


def run_conversation_in_worker(job: ConversationJob) -> list[Record]:
    """Process-pool entry point: run ``job`` on a private event loop and return its records."""
    records: list[Record] = []
    asyncio.run(run_conversation(job, records.append))
    return records


# --------------------------------------------------------------------------- prepare


async def prepare(conversation: Conversation, settings: RunSettings, emit: Emit, *,
                  limits: Any = None) -> PreparedMemory | None:
    """Replay (or reuse) the conversation's memory; emit its rows and the prepare mark."""
    started = _now()
    store = PreparedStore(settings.prepared_dir) if settings.prepared_dir else None
    key = settings.prepare_key(conversation)
    prepared = store.load(key) if store is not None else None
    try:
        if prepared is None:
            prepared = await _replay(conversation, settings, limits)
            if store is not None:
                store.save(key, prepared)
            calls = prepared.rows.model_calls
        else:
            calls = [{**row, "cached": True} for row in prepared.rows.model_calls]
    except Exception as error:  # noqa: BLE001 - recorded on the mark; the run goes on
        emit(PhaseMark(conversation.id, "prepare", "failed", started, error=_describe(error)))
        return None
    rows = prepared.rows
    for table, table_rows in (("steps", rows.steps), ("events", rows.events), ("model_calls", calls)):
        if table_rows:
            emit(TableRows(table, _for_conversation(table_rows, conversation.id)))
    emit(PhaseMark(conversation.id, "prepare", "done", started, n_messages=prepared.summary.get("n_messages"),
                   n_message_tokens=prepared.summary.get("n_message_tokens")))
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


async def _replay(conversation: Conversation, settings: RunSettings, limits: Any) -> PreparedMemory:
    replay = settings.replay
    result = await replay_conversation(
        conversation, settings.engine_options,
        make_client=lambda on_call: settings.make_client(on_call, limits=limits),
        latency=settings.latency_for(conversation.id), ingest=replay.ingest, timezone=replay.timezone,
        scope=replay.scope, debug_payloads=replay.debug_payloads,
    )
    return await PreparedMemory.from_replay(result)


# --------------------------------------------------------------------------- answer


def question_date(conversation: Conversation, question: Question) -> datetime:
    """When the question is asked: its own date, else the time of the conversation's last turn."""
    if question.question_date is not None:
        return question.question_date
    return max(turn.created_at for turn in conversation.iter_turns())


def question_prompt(question: Question, when: datetime) -> str:
    """LongMemEval's question block: ``Current Date: 2023/05/30 (Tue) 23:40\\nQuestion: …``."""
    return f"Current Date: {when:%Y/%m/%d (%a) %H:%M}\nQuestion: {question.question}"


async def answer(conversation: Conversation, questions: list[Question], prepared: PreparedMemory | None,
                 settings: RunSettings, emit: Emit, *, limits: Any = None) -> dict[str, str]:
    """Answer ``questions`` from the prepared memory; emit answers, retention scores, actor calls
    and the answer mark. Returns the hypotheses of the questions answered successfully."""
    started = _now()
    calls: list[ModelCall] = []
    client = settings.make_client(calls.append, limits=limits)
    hypotheses: dict[str, str] = {}
    errors: list[str] = []
    memory = None
    full_tokens = None
    if questions and prepared is not None:
        first_date = question_date(conversation, questions[0])
        memory = ObservationalMemory(settings.engine_options, storage=prepared.storage(), client=client,
                                     scheduler=VirtualScheduler(VirtualClock(first_date)),
                                     timezone=settings.replay.timezone)
        full_tokens = prepared.summary.get("n_message_tokens")
        if full_tokens is None:
            full_tokens = memory.counter.count_messages(conversation_messages(conversation))
    for question in questions:
        before = len(calls)
        row, scores = await _answer_one(conversation, question, memory, prepared, client, settings)
        row["full_history_tokens"] = full_tokens
        if row["status"] == "ok":
            hypotheses[question.id] = row["hypothesis"]
        else:
            errors.append(f"{question.id}: {row['error']}")
        if len(calls) > before:
            emit(TableRows("model_calls", [call_row(conversation.id, c) for c in calls[before:]]))
        emit(TableRows("answers", [row]))
        if scores:
            emit(TableRows("scores", scores))
        emit(QuestionDone(conversation.id, question.id, "answer"))
    emit(PhaseMark(conversation.id, "answer", "failed" if errors else "done", started,
                   error=_join(errors)))
    return hypotheses


async def _answer_one(conversation: Conversation, question: Question, memory: ObservationalMemory | None,
                      prepared: PreparedMemory | None, client: Any, settings: RunSettings,
                      ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    when = question_date(conversation, question)
    row: dict[str, Any] = {
        "conversation_id": conversation.id, "question_id": question.id, "question_type": question.type,
        "is_abstention": question.is_abstention, "category": question.category, "question": question.question,
        "gold": question.answer, "question_date": when, "answer_model": _model_label(settings.models["actor"]),
        "status": "failed", "hypothesis": None, "error": None,
    }
    if memory is None or prepared is None:
        row["error"] = "no prepared memory for this conversation"
        return row, []
    try:
        context = await memory.build_context(prepared.thread_id, current_date=when)
        prompt = [*context, {"role": "user", "content": question_prompt(question, when)}]
        row["context_tokens"] = sum(memory.counter.count_string(_content(m)) for m in prompt)
        response = await client.complete(ModelRequest(model=settings.models["actor"], messages=prompt, role="actor",
                                                      temperature=0.0, max_output_tokens=ANSWER_MAX_TOKENS))
        row.update(status="ok", hypothesis=response.text)
    except Exception as error:  # noqa: BLE001 - the question is recorded as failed, never dropped
        row["error"] = _describe(error)
        return row, []
    scores = _retention_scores(conversation, question, "\n".join(_content(m) for m in context), settings)
    return row, scores


def _retention_scores(conversation: Conversation, question: Question, context_text: str,
                      settings: RunSettings) -> list[dict[str, Any]]:
    if not settings.scoring.retention:
        return []
    scores = []
    if not question.is_abstention and question.type not in _NO_RETENTION_TYPES and question.category != 5:
        kept = answer_retained(question.answer, context_text)
        scores.append({"question_id": question.id, "scorer": "retention", "value": float(kept), "correct": kept})
    turns = conversation.turns_by_id()
    texts = [turns[t].content for t in question.evidence_ids if t in turns]
    if texts:
        coverage = evidence_retained(texts, context_text)
        if coverage == coverage:  # NaN when no evidence turn has content words
            scores.append({"question_id": question.id, "scorer": "evidence_retention", "value": coverage,
                           "details": {"evidence_turns": len(texts)}})
    return scores


# --------------------------------------------------------------------------- judge


async def judge(conversation: Conversation, items: list[tuple[Question, str]], settings: RunSettings, emit: Emit,
                *, unanswered: int = 0, limits: Any = None) -> None:
    """Score answered questions (see the module docstring); emit scores, judge calls and the mark."""
    started = _now()
    calls: list[ModelCall] = []
    client = settings.make_client(calls.append, limits=limits)
    prompts = load_judge_prompts(settings.judge_prompts_path) if settings.judge_prompts_path else None
    errors: list[str] = []
    locomo = settings.dataset_kind == "locomo"
    for question, hypothesis in items:
        before = len(calls)
        scores: list[dict[str, Any]] = []
        try:
            if not locomo or question.category in J_CATEGORIES:
                scores.append(await _judge_one(question, hypothesis, client, settings, prompts))
            if locomo and question.category is not None:
                f1 = locomo_f1(hypothesis, question.answer, question.category)
                scores.append({"question_id": question.id, "scorer": "f1", "value": f1,
                               "details": {"category": question.category}})
        except Exception as error:  # noqa: BLE001 - left unscored; the mark carries the error
            errors.append(f"{question.id}: {_describe(error)}")
            scores = []
        if len(calls) > before:
            emit(TableRows("model_calls", [call_row(conversation.id, c) for c in calls[before:]]))
        if scores:
            emit(TableRows("scores", scores))
        emit(QuestionDone(conversation.id, question.id, "judge"))
    if unanswered:
        errors.append(f"{unanswered} question(s) have no successful answer to judge")
    emit(PhaseMark(conversation.id, "judge", "failed" if errors else "done", started, error=_join(errors)))


async def _judge_one(question: Question, hypothesis: str, client: Any, settings: RunSettings,
                     prompts: Any) -> dict[str, Any]:
    request = ModelRequest(model=settings.models["judge"], messages=judge_messages(question, hypothesis, prompts),
                           role="judge", **JUDGE_REQUEST_OPTIONS)
    response = await client.complete(request)
    verdict = parse_verdict(response.text, settings.scoring.verdict)
    return {
        "question_id": question.id, "scorer": "judge",
        "value": None if verdict is None else float(verdict), "correct": verdict,
        "details": {"reply": response.text, "verdict_mode": settings.scoring.verdict, "judge_model": response.model},
    }


# --------------------------------------------------------------------------- helpers


def _fail_questions(conversation: Conversation, questions: Iterable[Question], error: str, emit: Emit) -> None:
    rows = [{"conversation_id": conversation.id, "question_id": q.id, "question_type": q.type,
             "is_abstention": q.is_abstention, "category": q.category, "question": q.question, "gold": q.answer,
             "question_date": q.question_date, "status": "failed", "error": error} for q in questions]
    if rows:
        emit(TableRows("answers", rows))


def _for_conversation(rows: list[dict[str, Any]], conversation_id: str) -> list[dict[str, Any]]:
    return [{**row, "conversation_id": conversation_id} for row in rows]


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _model_label(spec: Any) -> str:
    from omlab.llm.spec import coerce_model_spec, describe_model

    return describe_model(coerce_model_spec(spec))


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:2000]


def _join(errors: list[str]) -> str | None:
    if not errors:
        return None
    shown = "; ".join(errors[:5])
    return shown + (f"; … and {len(errors) - 5} more" if len(errors) > 5 else "")


def _now() -> datetime:
    return datetime.now(timezone.utc)


__all__ = [
    "ANSWER_MAX_TOKENS",
    "ConversationJob",
    "Emit",
    "PhaseMark",
    "QuestionDone",
    "Record",
    "TableRows",
    "answer",
    "judge",
    "load_prepared",
    "prepare",
    "question_date",
    "question_prompt",
    "run_conversation",
    "run_conversation_in_worker",
]
