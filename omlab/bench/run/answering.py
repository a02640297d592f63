"""Answering a conversation's questions from its prepared memory (the ``answer`` phase's work).

Per question: the engine's ``build_context(thread, current_date=question date)``, then one user
message in LongMemEval's question format ``Current Date: {date}\\nQuestion: {question}``; LoCoMo
with ``[scoring] protocol = "official"`` sends instead one user message holding the context as
text and the official QA prompt, as the official code builds its query
(``omlab.bench.scoring.locomo_protocol``). It goes to the actor at temperature 0 with at most
:data:`ANSWER_MAX_TOKENS` output tokens (the official reader's budget). A question without its own date is asked at the time of the conversation's last
turn. The context is also scored model-free (``omlab.bench.scoring.retention``):

* ``retention``: is the gold answer still in the context (not for abstention, preference or
  LoCoMo adversarial questions, whose "answer" is an explanation, a rubric or a distractor);
* ``evidence_retention``: the share of the evidence turns' content words still in it.

Nothing raises: a failure (no prepared memory, a model call that kept failing, a cache miss in
strict mode, an empty or degenerate answer asked twice) gives the question status ``failed`` with
the error; failed questions are counted and left out of accuracy.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from omlab.bench.datasets.schema import Conversation, Question
from omlab.bench.run.prepared import PreparedMemory
from omlab.bench.run.replay import conversation_messages
from omlab.bench.run.tool_loop import complete_with_tool
from omlab.bench.run.unusable_replies import reply_problem
from omlab.bench.scoring import answer_retained, evidence_retained
from omlab.bench.scoring.locomo_protocol import context_text, locomo_protocol
from omlab.bench.suite.run_settings import RunSettings
from omlab.engine.clock import VirtualClock
from omlab.engine.scheduler import VirtualScheduler
from omlab.llm.types import ModelCall, ModelRequest
from omlab.memory import ObservationalMemory

ANSWER_MAX_TOKENS = 500
_NO_RETENTION_TYPES = frozenset({"single-session-preference"})
_ADVERSARIAL_CATEGORY = 5


@dataclass(slots=True)
class AnsweredQuestion:
    """One question's ``answers`` row, its retention ``scores`` rows and the actor calls it made."""

    question: Question
    row: dict[str, Any]
    scores: list[dict[str, Any]] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.row["status"] == "ok"


def question_date(conversation: Conversation, question: Question) -> datetime:
    """When the question is asked: its own date, else the time of the conversation's last turn."""
    if question.question_date is not None:
        return question.question_date
    return max(turn.created_at for turn in conversation.iter_turns())


def question_prompt(question: Question, when: datetime) -> str:
    """LongMemEval's question block: ``Current Date: 2023/05/30 (Tue) 23:40\\nQuestion: …``."""
    return f"Current Date: {when:%Y/%m/%d (%a) %H:%M}\nQuestion: {question.question}"


class UnusableAnswerError(RuntimeError):
    """The actor's reply was empty or degenerate on every try: the question fails with this cause."""


class Answerer:
    """Answers the questions of one conversation from its prepared memory (None: every answer
    fails with a clear error)."""

    def __init__(
        self,
        conversation: Conversation,
        prepared: PreparedMemory | None,
        settings: RunSettings,
        *,
        limits: Any = None,
    ) -> None:
        self.conversation = conversation
        self.prepared = prepared
        self.settings = settings
        self._calls: list[ModelCall] = []
        self.client = settings.make_client(self._calls.append, limits=limits)
        self.memory: ObservationalMemory | None = None
        self.full_history_tokens: int | None = None
        if prepared is not None:
            self.memory = ObservationalMemory(
                settings.engine_options,
                storage=prepared.storage(),
                client=self.client,
                scheduler=VirtualScheduler(VirtualClock(prepared_time(conversation))),
                timezone=settings.replay.timezone,
            )
            self.full_history_tokens = prepared.summary.get("n_message_tokens")
            if self.full_history_tokens is None:
                messages = conversation_messages(conversation)
                self.full_history_tokens = self.memory.counter.count_messages(messages)
        self.model_label = model_label(settings.models["actor"])
        self.protocol = None
        if settings.uses_locomo_protocol():
            self.protocol = locomo_protocol(settings.official_files_path)

    async def answer(self, question: Question) -> AnsweredQuestion:
        """Answer one question (see the module docstring)."""
        before = len(self._calls)
        when = question_date(self.conversation, question)
        row = self._row(question, when)
        scores: list[dict[str, Any]] = []
        if self.memory is None or self.prepared is None:
            row["error"] = "no prepared memory for this conversation"
        else:
            try:
                context = await self.memory.build_context(
                    self.prepared.thread_id, current_date=when, resource_id=self.prepared.resource_id
                )
                prompt, options = self._prompt(context, question, when)
                row["context_tokens"] = sum(self.memory.counter.count_string(content_of(m)) for m in prompt)
                request = ModelRequest(
                    model=self.settings.models["actor"],
                    messages=prompt,
                    role="actor",
                    temperature=0.0,
                    max_output_tokens=ANSWER_MAX_TOKENS,
                )
                tool = None
                if self.memory.config.retrieval is not None:  # give the actor OM's recall tool
                    tool = self.memory.recall_tool(self.prepared.thread_id, resource_id=self.prepared.resource_id)
                response = await self._usable_reply(request, tool)
                hypothesis = self.protocol.answer_of(response.text, options) if self.protocol else response.text
                row.update(status="ok", hypothesis=hypothesis)
                context_text = "\n".join(content_of(m) for m in context)
                scores = retention_scores(self.conversation, question, context_text, self.settings.scoring.retention)
            except Exception as error:  # noqa: BLE001 - the question is recorded as failed, never dropped
                row["error"] = describe_error(error)
        return AnsweredQuestion(question, row, scores, self._calls[before:])

    def _prompt(
        self, context: list[dict[str, Any]], question: Question, when: datetime
    ) -> tuple[list[dict[str, Any]], dict[str, str] | None]:
        """The actor's messages and (LoCoMo category 5 under the official protocol) the options."""
        if self.protocol is None:
            return [*context, {"role": "user", "content": question_prompt(question, when)}], None
        names = self.conversation.metadata
        opening = self.protocol.start(str(names.get("speaker_a", "")), str(names.get("speaker_b", "")))
        text, options = self.protocol.query(opening + context_text(context), question)
        return [{"role": "user", "content": text}], options

    async def _usable_reply(self, request: ModelRequest, tool: Any) -> Any:
        """The actor's reply; an empty or degenerate one is asked again once, then an error."""
        for attempt in (1, 2):
            salted = request if attempt == 1 else dataclasses.replace(request, cache_salt=f"retry-{attempt}")
            response, _ = await complete_with_tool(self.client, salted, tool)
            problem = reply_problem(response.text, max_output_tokens=request.max_output_tokens)
            if problem is None:
                return response
        raise UnusableAnswerError(f"the actor's reply was unusable twice: {problem}")

    def _row(self, question: Question, when: datetime) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation.id,
            "question_id": question.id,
            "question_type": question.type,
            "is_abstention": question.is_abstention,
            "category": question.category,
            "question": question.question,
            "gold": question.answer,
            "question_date": when,
            "answer_model": self.model_label,
            "full_history_tokens": self.full_history_tokens,
            "status": "failed",
            "hypothesis": None,
            "error": None,
        }


def retention_scores(
    conversation: Conversation, question: Question, context_text: str, enabled: bool = True
) -> list[dict[str, Any]]:
    """The ``retention`` and ``evidence_retention`` score rows of one question's context."""
    if not enabled:
        return []
    scores = []
    kept_meaningful = question.type not in _NO_RETENTION_TYPES and question.category != _ADVERSARIAL_CATEGORY
    if not question.is_abstention and kept_meaningful:
        kept = answer_retained(question.answer, context_text)
        scores.append({"question_id": question.id, "scorer": "retention", "value": float(kept), "correct": kept})
    turns = conversation.turns_by_id()
    texts = [turns[t].content for t in question.evidence_ids if t in turns]
    if texts:
        coverage = evidence_retained(texts, context_text)
        if not math.isnan(coverage):  # NaN when no evidence turn has content words
            scores.append(
                {
                    "question_id": question.id,
                    "scorer": "evidence_retention",
                    "value": coverage,
                    "details": {"evidence_turns": len(texts)},
                }
            )
    return scores


def prepared_time(conversation: Conversation) -> datetime:
    """The virtual time a rebuilt memory starts at: the conversation's last turn."""
    return max(turn.created_at for turn in conversation.iter_turns())


def content_of(message: dict[str, Any]) -> str:
    """The text of a chat message (string content, or the text parts of a list)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def model_label(spec: Any) -> str:
    """A one-line description of a model spec (``omlab/reader``, ``ModelByInputTokens(...)``)."""
    from omlab.llm.spec import coerce_model_spec, describe_model

    return describe_model(coerce_model_spec(spec))


def describe_error(error: BaseException) -> str:
    """``Type: message``, cut to 2,000 characters (what the results tables record)."""
    return f"{type(error).__name__}: {error}"[:2000]


__all__ = [
    "ANSWER_MAX_TOKENS",
    "AnsweredQuestion",
    "Answerer",
    "UnusableAnswerError",
    "content_of",
    "describe_error",
    "question_date",
    "question_prompt",
    "retention_scores",
]
