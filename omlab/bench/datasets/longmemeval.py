"""LongMemEval (Wu et al., ICLR 2025) loader: oracle / s / m files -> canonical conversations.

Each LongMemEval question has its own haystack, so each question becomes one Conversation whose
id is the ``question_id``. What the loader guarantees (benchmarks.md §0 traps 3-5):

- abstention comes from the ``_abs`` suffix of ``question_id`` (not from ``question_type``);
- ``has_answer`` never reaches the system under test: it only sets the scorer-only
  ``Turn.evidence_id`` and ``Question.evidence_ids``;
- session ids are anonymised to ``s001``, ``s002``… in chronological order (ties keep file order),
  because the dataset's ``answer_<hex>`` ids label the evidence; the mapping back to the original
  ids is kept in ``Conversation.metadata["source_session_ids"]`` (scorer-only);
- ``question_date`` and ``haystack_dates`` (``YYYY/MM/DD (Ddd) HH:MM``) are parsed; turn ``k``
  (0-based) of a session is stamped ``session date + k × turn_pace`` (the dataset has no per-turn
  times; 5 s is the reference harness's pace);
- int answers become strings.

Files are read locally; only when no path is given is the file fetched from the Hugging Face hub
(``xiaowu0162/longmemeval-cleaned`` at a pinned revision).
"""

from __future__ import annotations

import json
import os
import re
import warnings
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from omlab.bench.datasets._fields import RecordContext, answer_text, pace_delta
from omlab.bench.datasets.errors import DatasetError, read_utf8
from omlab.bench.datasets.provenance import sha256_file, verify_sha256
from omlab.bench.datasets.schema import LONGMEMEVAL_TYPES, Conversation, DatasetInfo, Question, Session, Turn
from omlab.bench.datasets.unknown_fields import UNKNOWN_FIELDS_KEY, longmemeval_notes

HUB_REPO = "xiaowu0162/longmemeval-cleaned"
DEFAULT_REVISION = "98d7416c24c778c2fee6e6f3006e7a073259d48f"
HUB_FILES: dict[str, str] = {
    "oracle": "longmemeval_oracle.json",
    "s": "longmemeval_s_cleaned.json",
    "m": "longmemeval_m_cleaned.json",
}
SUBSETS: tuple[str, ...] = tuple(HUB_FILES)
KNOWN_SHA256: dict[tuple[str, str], str] = {
    # Reported by a third party (deer-flow PR #4810); a mismatch only warns.
    (DEFAULT_REVISION, "oracle"): "821a2034d219ab45846873dd14c14f12cfe7776e73527a483f9dac095d38620c",
}
ABSTENTION_SUFFIX = "_abs"
DEFAULT_TURN_PACE = timedelta(seconds=5)
_MASTRA_EXTRAS = ("improved_question", "improved_answer", "improvement_note", "requires_retry")

_DATE = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]{3}\))?\s*(\d{1,2}):(\d{2})\s*$")


def parse_longmemeval_date(text: str, tz: tzinfo = UTC) -> datetime:
    """Parse ``"2023/05/30 (Tue) 23:40"`` (weekday optional, not checked) or ISO 8601.

    Naive values get ``tz``. Raises ValueError for anything else.
    """
    match = _DATE.match(text)
    if match:
        year, month, day, hour, minute = (int(group) for group in match.groups())
        return datetime(year, month, day, hour, minute, tzinfo=tz)
    parsed = datetime.fromisoformat(text.strip())
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=tz)


def load_longmemeval(
    path: str | Path | None = None,
    subset: str | None = None,
    *,
    revision: str | None = None,
    cache_dir: str | Path | None = None,
    expected_sha256: str | None = None,
    turn_pace: timedelta | float = DEFAULT_TURN_PACE,
    tz: tzinfo = UTC,
) -> tuple[DatasetInfo, list[Conversation]]:
    """Load a LongMemEval file as one Conversation per question.

    Args:
        path: Local ``longmemeval_*.json`` (a JSON list, or JSON Lines). When None the file is
            fetched from the hub (``HUB_REPO``) with huggingface_hub; with ``HF_HUB_OFFLINE=1``
            this fails at once with a DatasetError asking for a local path.
        subset: ``oracle``, ``s`` or ``m``. None infers it from the file name (``s`` for the hub).
        revision: Hub revision to fetch (default ``DEFAULT_REVISION``); for a local file, the
            revision to record in the DatasetInfo (None = unknown).
        cache_dir: huggingface_hub cache folder for downloads.
        expected_sha256: Refuse the file unless its sha256 matches.
        turn_pace: Seconds (or timedelta) between consecutive turns of a session.
        tz: Time zone given to the dataset's naive timestamps.

    Returns:
        ``(DatasetInfo, conversations)`` in file order.

    Raises:
        DatasetError: Unreadable/malformed file (naming file, record and field), sha256 mismatch,
            or a download that cannot happen.
    """
    if subset is not None and subset not in SUBSETS:
        raise ValueError(f"subset must be one of {', '.join(SUBSETS)} or None, got {subset!r}")
    pace = pace_delta(turn_pace)
    if path is None:
        subset = subset or "s"
        revision = revision or DEFAULT_REVISION
        file_path, source = _download(subset, revision, cache_dir), _hub_url(subset, revision)
    else:
        file_path = Path(path)
        source = str(file_path.resolve())
        subset = subset or infer_subset(file_path.name)
        if not file_path.is_file():
            raise DatasetError(
                "no such file (see datasets/README.md for where to get LongMemEval)", file=str(file_path)
            )
    digest = sha256_file(file_path)
    verify_sha256(digest, expected_sha256, file=str(file_path))
    known = KNOWN_SHA256.get((revision or "", subset or ""))
    if known is not None and known != digest:
        warnings.warn(
            f"{file_path}: sha256 {digest} differs from the digest reported for "
            f"{subset} at revision {revision} ({known})",
            stacklevel=2,
        )
    records = _read_records(file_path)
    conversations = [
        _conversation(record, index, str(file_path), pace, tz, subset) for index, record in enumerate(records)
    ]
    _check_unique_ids(conversations, str(file_path))
    info = DatasetInfo(
        name="longmemeval",
        subset=subset,
        source=source,
        revision=revision,
        sha256=digest,
        n_conversations=len(conversations),
    )
    return info, conversations


def infer_subset(file_name: str) -> str | None:
    """``oracle``/``s``/``m`` from a file name like ``longmemeval_s_cleaned.json``, else None."""
    name = file_name.lower()
    if "oracle" in name:
        return "oracle"
    match = re.search(r"(?:^|[_\-.])(s|m)(?=[_\-.]|$)", name)
    return match.group(1) if match else None


def _hub_url(subset: str, revision: str) -> str:
    return f"https://huggingface.co/datasets/{HUB_REPO}/resolve/{revision}/{HUB_FILES[subset]}"


def _hub_offline() -> bool:
    flag = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}
    try:
        from huggingface_hub import constants
    except ImportError:
        return flag
    return flag or bool(getattr(constants, "HF_HUB_OFFLINE", False))


def _download(subset: str, revision: str, cache_dir: str | Path | None) -> Path:
    hint = (
        f"pass a local path instead, e.g. load_longmemeval('{HUB_FILES[subset]}'); "
        "datasets/README.md says where to download it"
    )
    address = _hub_url(subset, revision)
    if _hub_offline():
        raise DatasetError(f"HF_HUB_OFFLINE is set, so LongMemEval cannot be downloaded; {hint}", file=address)
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:  # pragma: no cover - huggingface_hub ships with `datasets`
        raise DatasetError(f"huggingface_hub is not installed; {hint}", file=address) from exc
    try:
        local = hf_hub_download(
            repo_id=HUB_REPO, filename=HUB_FILES[subset], repo_type="dataset", revision=revision, cache_dir=cache_dir
        )
    except Exception as exc:  # the hub raises many types (HTTP, offline, auth); all mean "no file"
        raise DatasetError(f"download failed ({type(exc).__name__}: {exc}); {hint}", file=address) from exc
    return Path(local)


def _read_records(file_path: Path) -> list[Any]:
    text = read_utf8(file_path)
    if text.lstrip().startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=str(file_path)
            ) from exc
        return records
    records = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"invalid JSON (column {exc.colno}): {exc.msg}", file=str(file_path), record=f"line {line_number}"
            ) from exc
    return records


def _conversation(record: Any, index: int, file: str, pace: timedelta, tz: tzinfo, subset: str | None) -> Conversation:
    ctx = RecordContext(file, f"index {index}")
    if not isinstance(record, dict):
        raise ctx.error(None, f"expected an object per question, got {type(record).__name__}")
    question_id = ctx.get(record, "question_id", str)
    ctx = RecordContext(file, f"index {index} (question_id {question_id!r})")
    question_type = ctx.get(record, "question_type", str)
    if question_type not in LONGMEMEVAL_TYPES:
        raise ctx.error(
            "question_type", f"unknown type {question_type!r}; expected one of {', '.join(LONGMEMEVAL_TYPES)}"
        )
    question_date = _date(ctx.get(record, "question_date", str), ctx, "question_date", tz)
    session_ids = ctx.get(record, "haystack_session_ids", list)
    dates = ctx.get(record, "haystack_dates", list)
    raw_sessions = ctx.get(record, "haystack_sessions", list)
    if not len(session_ids) == len(dates) == len(raw_sessions):
        raise ctx.error(
            "haystack_sessions",
            f"haystack_session_ids ({len(session_ids)}), "
            f"haystack_dates ({len(dates)}) and haystack_sessions ({len(raw_sessions)}) "
            "must have the same length",
        )
    parsed_dates = []
    for position, (session_id, date) in enumerate(zip(session_ids, dates, strict=True)):
        ctx.check(session_id, str, f"haystack_session_ids[{position}]")
        ctx.check(date, str, f"haystack_dates[{position}]")
        parsed_dates.append(_date(date, ctx, f"haystack_dates[{position}]", tz))

    order = sorted(range(len(raw_sessions)), key=lambda position: (parsed_dates[position], position))
    width = max(3, len(str(len(order))))
    sessions: list[Session] = []
    source_session_ids: dict[str, str] = {}
    anonymous_by_source: dict[str, list[str]] = {}
    evidence_ids: list[str] = []
    for rank, position in enumerate(order, start=1):
        anonymous = f"s{rank:0{width}d}"
        source_session_ids[anonymous] = session_ids[position]
        anonymous_by_source.setdefault(session_ids[position], []).append(anonymous)
        turns = _turns(raw_sessions[position], position, anonymous, parsed_dates[position], pace, ctx)
        evidence_ids.extend(turn.id for turn in turns if turn.evidence_id is not None)
        sessions.append(Session(id=anonymous, date=parsed_dates[position], turns=turns))

    answer_sessions = ctx.get(record, "answer_session_ids", list, default=[])
    evidence_sessions: list[str] = []
    for position, source_id in enumerate(answer_sessions):
        ctx.check(source_id, str, f"answer_session_ids[{position}]")
        evidence_sessions.extend(anonymous_by_source.get(source_id, []))
    extra: dict[str, Any] = {"evidence_session_ids": sorted(set(evidence_sessions))}
    extra.update({key: record[key] for key in _MASTRA_EXTRAS if key in record})

    question = Question(
        id=question_id,
        type=question_type,
        question=ctx.get(record, "question", str),
        answer=answer_text(ctx.get(record, "answer", (str, int, float)), ctx, "answer"),
        question_date=question_date,
        evidence_ids=evidence_ids,
        is_abstention=question_id.endswith(ABSTENTION_SUFFIX),
        extra=extra,
    )
    return Conversation(
        id=question_id,
        sessions=sessions,
        questions=[question],
        dataset="longmemeval",
        metadata={
            "subset": subset,
            "source_session_ids": source_session_ids,
            **({UNKNOWN_FIELDS_KEY: unknown} if (unknown := longmemeval_notes(record, ctx)) else {}),
        },
    )


def _turns(
    raw_turns: Any, position: int, session_id: str, date: datetime, pace: timedelta, ctx: RecordContext
) -> list[Turn]:
    path = f"haystack_sessions[{position}]"
    ctx.check(raw_turns, list, path)
    turns = []
    for k, raw in enumerate(raw_turns):
        turn_path = f"{path}[{k}]"
        role = ctx.get(raw, "role", str, path=turn_path)
        if role not in ("user", "assistant"):
            raise ctx.error(f"{turn_path}.role", f"expected 'user' or 'assistant', got {role!r}")
        content = ctx.get(raw, "content", str, path=turn_path)
        has_answer = ctx.get(raw, "has_answer", bool, path=turn_path, default=False)
        turn_id = f"{session_id}:{k + 1}"
        turns.append(
            Turn(
                id=turn_id,
                role=role,
                content=content,
                created_at=date + k * pace,
                evidence_id=turn_id if has_answer else None,
            )
        )
    return turns


def _date(text: str, ctx: RecordContext, field: str, tz: tzinfo) -> datetime:
    try:
        return parse_longmemeval_date(text, tz)
    except ValueError as exc:
        raise ctx.error(field, f"unparseable date {text!r}; expected 'YYYY/MM/DD (Ddd) HH:MM'") from exc


def _check_unique_ids(conversations: list[Conversation], file: str) -> None:
    seen: dict[str, int] = {}
    for index, conversation in enumerate(conversations):
        if conversation.id in seen:
            raise DatasetError(
                f"duplicate question_id (first at index {seen[conversation.id]})",
                file=file,
                record=f"index {index}",
                field="question_id",
            )
        seen[conversation.id] = index
