"""omlab's JSONL format for users' own conversations (documented in datasets/README.md).

One JSON object per line, one conversation per object::

    {"id": "trip-planning",                     # required, unique in the file
     "dataset": "my-logs",                      # optional label (default "jsonl")
     "metadata": {...},                         # optional, any JSON object
     "sessions": [                              # required
       {"id": "s1",                             # optional (default s001, s002, ...)
        "date": "2024-03-01T09:00:00+01:00",    # required, ISO 8601 (naive -> tz)
        "turns": [
          {"role": "user", "content": "...",    # required; role is user or assistant
           "id": "s1:1",                        # optional (default "<session id>:<k+1>")
           "created_at": "2024-03-01T09:00:05", # optional (default: previous turn + turn_pace,
                                                #  the session date for the first turn)
           "speaker": "Ana"}]}],                # optional
     "questions": [                             # optional
       {"question": "...", "answer": "...",     # required (answer: string or number)
        "id": "q1",                             # optional (default "<conversation id>:q<k+1>")
        "type": "single-session-user",          # optional (default "custom")
        "question_date": "2024-03-09T10:00:00", # optional ISO 8601
        "evidence_ids": ["s1:1"],               # optional; must name turns of this conversation
        "is_abstention": false, "category": null, "adversarial_answer": null, "extra": {}}]}

Blank lines are ignored. Every error names the file, the line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from omlab.bench.datasets._fields import RecordContext, answer_text, pace_delta
from omlab.bench.datasets.checks import NAIVE_TIMESTAMPS_KEY
from omlab.bench.datasets.errors import DatasetError, decode_utf8
from omlab.bench.datasets.provenance import sha256_file, verify_sha256
from omlab.bench.datasets.schema import Conversation, DatasetInfo, Question, Session, Turn
from omlab.bench.datasets.unknown_fields import UNKNOWN_FIELDS_KEY, jsonl_notes

DEFAULT_TURN_PACE = timedelta(seconds=5)
DEFAULT_QUESTION_TYPE = "custom"


def load_jsonl(
    path: str | Path,
    *,
    expected_sha256: str | None = None,
    turn_pace: timedelta | float = DEFAULT_TURN_PACE,
    tz: tzinfo = UTC,
) -> tuple[DatasetInfo, list[Conversation]]:
    """Load conversations in omlab's JSONL format.

    Args:
        path: The ``.jsonl`` file.
        expected_sha256: Refuse the file unless its sha256 matches.
        turn_pace: Seconds (or timedelta) after the previous turn for turns without
            ``created_at`` (the first turn of a session defaults to the session date).
        tz: Time zone given to naive timestamps.

    Raises:
        DatasetError: Malformed input, naming file, line and field.
    """
    file_path = Path(path)
    if not file_path.is_file():
        raise DatasetError("no such file", file=str(file_path))
    pace = pace_delta(turn_pace)
    digest = sha256_file(file_path)
    verify_sha256(digest, expected_sha256, file=str(file_path))
    conversations: list[Conversation] = []
    first_line: dict[str, int] = {}
    with open(file_path, "rb") as handle:
        offset = 0
        for line_number, raw in enumerate(handle, start=1):
            line = decode_utf8(raw, str(file_path), first_line=line_number, offset=offset)
            offset += len(raw)
            if not line.strip():
                continue
            ctx = RecordContext(str(file_path), f"line {line_number}")
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ctx.error(None, f"invalid JSON (column {exc.colno}): {exc.msg}") from exc
            conversation = _conversation(record, ctx, pace, tz)
            if conversation.id in first_line:
                raise ctx.error(
                    "id", f"duplicate conversation id {conversation.id!r} (first on line {first_line[conversation.id]})"
                )
            first_line[conversation.id] = line_number
            conversations.append(conversation)
    info = DatasetInfo(
        name="jsonl",
        subset=None,
        source=str(file_path.resolve()),
        revision=None,
        sha256=digest,
        n_conversations=len(conversations),
    )
    return info, conversations


def dump_jsonl(conversations: Iterable[Conversation], path: str | Path) -> Path:
    """Write conversations in omlab's JSONL format (every field explicit); returns the path.

    ``load_jsonl(dump_jsonl(cs, p))`` gives back equal conversations as long as their metadata
    and ``Question.extra`` are JSON values.
    """
    file_path = Path(path)
    with open(file_path, "w", encoding="utf-8") as handle:
        handle.writelines(
            json.dumps(conversation_record(conversation), ensure_ascii=False) + "\n" for conversation in conversations
        )
    return file_path


def conversation_record(conversation: Conversation) -> dict[str, Any]:
    """The JSON object for one conversation (one JSONL line)."""
    return {
        "id": conversation.id,
        "dataset": conversation.dataset,
        "metadata": conversation.metadata,
        "sessions": [
            {
                "id": session.id,
                "date": session.date.isoformat(),
                "turns": [
                    {
                        "id": turn.id,
                        "role": turn.role,
                        "content": turn.content,
                        "created_at": turn.created_at.isoformat(),
                        "speaker": turn.speaker,
                    }
                    for turn in session.turns
                ],
            }
            for session in conversation.sessions
        ],
        "questions": [
            {
                "id": q.id,
                "type": q.type,
                "question": q.question,
                "answer": q.answer,
                "question_date": q.question_date.isoformat() if q.question_date else None,
                "evidence_ids": q.evidence_ids,
                "is_abstention": q.is_abstention,
                "category": q.category,
                "adversarial_answer": q.adversarial_answer,
                "extra": q.extra,
            }
            for q in conversation.questions
        ],
    }


def _conversation(record: Any, ctx: RecordContext, pace: timedelta, tz: tzinfo) -> Conversation:
    if not isinstance(record, dict):
        raise ctx.error(None, f"expected a JSON object per line, got {type(record).__name__}")
    conversation_id = ctx.get(record, "id", str)
    ctx = RecordContext(ctx.file, f"{ctx.record} (id {conversation_id!r})")
    stamps = _Stamps(tz)
    sessions = [
        _session(raw, position, ctx, pace, stamps) for position, raw in enumerate(ctx.get(record, "sessions", list))
    ]
    turn_ids: set[str] = set()
    for session in sessions:
        for turn in session.turns:
            if turn.id in turn_ids:
                raise ctx.error("sessions", f"duplicate turn id {turn.id!r}")
            turn_ids.add(turn.id)
    if len({session.id for session in sessions}) != len(sessions):
        raise ctx.error("sessions", "duplicate session ids")
    questions = [
        _question(raw, position, conversation_id, turn_ids, ctx, stamps)
        for position, raw in enumerate(ctx.get(record, "questions", list, default=[]))
    ]
    if len({question.id for question in questions}) != len(questions):
        raise ctx.error("questions", "duplicate question ids")
    cited = {turn_id for question in questions for turn_id in question.evidence_ids}
    sessions = [
        Session(
            id=s.id,
            date=s.date,
            turns=[
                Turn(
                    id=t.id,
                    role=t.role,
                    content=t.content,
                    created_at=t.created_at,
                    speaker=t.speaker,
                    evidence_id=t.id if t.id in cited else None,
                )
                for t in s.turns
            ],
        )
        for s in sessions
    ]
    metadata = ctx.get(record, "metadata", dict, default={})
    if stamps.naive and stamps.aware:
        metadata = {**metadata, NAIVE_TIMESTAMPS_KEY: stamps.naive}
    unknown = jsonl_notes(record, ctx)
    if unknown:
        metadata = {**metadata, UNKNOWN_FIELDS_KEY: unknown}
    return Conversation(
        id=conversation_id,
        sessions=sessions,
        questions=questions,
        dataset=ctx.get(record, "dataset", str, default="jsonl"),
        metadata=metadata,
    )


def _session(raw: Any, position: int, ctx: RecordContext, pace: timedelta, stamps: _Stamps) -> Session:
    path = f"sessions[{position}]"
    ctx.check(raw, dict, path)
    session_id = ctx.get(raw, "id", str, path=path, default=f"s{position + 1:03d}")
    date = stamps.read(ctx.get(raw, "date", str, path=path), ctx, f"{path}.date")
    turns = []
    for k, raw_turn in enumerate(ctx.get(raw, "turns", list, path=path)):
        turn_path = f"{path}.turns[{k}]"
        ctx.check(raw_turn, dict, turn_path)
        role = ctx.get(raw_turn, "role", str, path=turn_path)
        if role not in ("user", "assistant"):
            raise ctx.error(f"{turn_path}.role", f"expected 'user' or 'assistant', got {role!r}")
        created = ctx.get(raw_turn, "created_at", (str, type(None)), path=turn_path, default=None)
        if created is not None:
            created_at = stamps.read(created, ctx, f"{turn_path}.created_at")
        else:
            created_at = turns[-1].created_at + pace if turns else date
        turns.append(
            Turn(
                id=ctx.get(raw_turn, "id", str, path=turn_path, default=f"{session_id}:{k + 1}"),
                role=role,
                content=ctx.get(raw_turn, "content", str, path=turn_path),
                created_at=created_at,
                speaker=ctx.get(raw_turn, "speaker", (str, type(None)), path=turn_path, default=None),
            )
        )
    return Session(id=session_id, date=date, turns=turns)


def _question(
    raw: Any, position: int, conversation_id: str, turn_ids: set[str], ctx: RecordContext, stamps: _Stamps
) -> Question:
    path = f"questions[{position}]"
    ctx.check(raw, dict, path)
    evidence = ctx.get(raw, "evidence_ids", list, path=path, default=[])
    for index, turn_id in enumerate(evidence):
        ctx.check(turn_id, str, f"{path}.evidence_ids[{index}]")
        if turn_id not in turn_ids:
            raise ctx.error(f"{path}.evidence_ids[{index}]", f"no turn has id {turn_id!r}")
    question_date = ctx.get(raw, "question_date", (str, type(None)), path=path, default=None)
    adversarial = ctx.get(raw, "adversarial_answer", (str, int, float, type(None)), path=path, default=None)
    return Question(
        id=ctx.get(raw, "id", str, path=path, default=f"{conversation_id}:q{position + 1}"),
        type=ctx.get(raw, "type", str, path=path, default=DEFAULT_QUESTION_TYPE),
        question=ctx.get(raw, "question", str, path=path),
        answer=answer_text(ctx.get(raw, "answer", (str, int, float), path=path), ctx, f"{path}.answer"),
        question_date=(None if question_date is None else stamps.read(question_date, ctx, f"{path}.question_date")),
        evidence_ids=list(evidence),
        is_abstention=ctx.get(raw, "is_abstention", bool, path=path, default=False),
        category=ctx.get(raw, "category", (int, type(None)), path=path, default=None),
        adversarial_answer=None if adversarial is None else str(adversarial),
        extra=ctx.get(raw, "extra", dict, path=path, default={}),
    )


class _Stamps:
    """Reads one conversation's timestamps, naive ones in ``tz``, and remembers which were naive
    (a conversation that mixes both gets a warning, see ``omlab.bench.datasets.checks``)."""

    def __init__(self, tz: tzinfo) -> None:
        self.tz = tz
        self.naive: list[str] = []
        self.aware = 0

    def read(self, text: str, ctx: RecordContext, field: str) -> datetime:
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError as exc:
            raise ctx.error(field, f"not an ISO 8601 timestamp: {text!r}") from exc
        if parsed.tzinfo is not None:
            self.aware += 1
            return parsed
        self.naive.append(field)
        return parsed.replace(tzinfo=self.tz)
