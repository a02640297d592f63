"""LoCoMo (Maharana et al., ACL 2024) loader: ``locomo10.json`` -> canonical conversations.

What the loader guarantees (benchmarks.md §0 traps 1, 2, 5 and §2.2):

- ``category`` keeps the file's own numbering: 1 multi-hop, 2 temporal, 3 open-domain,
  4 single-hop, 5 adversarial (NOT the paper's order); ``Question.type`` is that name;
- category-5 items have no ``answer`` key: ``adversarial_answer`` is kept as the distractor and
  the gold answer becomes ``"Not mentioned in the conversation"`` (the official multiple-choice
  option); ``is_abstention`` is True for category 5;
- int answers become strings;
- sessions come from ``session_<N>`` keys, each dated by ``session_<N>_date_time``
  (``"1:56 pm on 8 May, 2023"``); dangling date keys without a session, and sessions without a
  date (or without turns), are skipped and listed in ``Conversation.metadata``;
- ``dia_id`` is the turn id; ``speaker_a`` -> ``user`` and ``speaker_b`` -> ``assistant`` by
  default (``speaker_roles``); turn ``k`` of a session is stamped ``date + k × turn_pace``;
- evidence ids are parsed leniently (the file has ``"D8:6; D9:17"``, ``"D:11:26"``, space-joined
  lists); unparseable pieces and ids of turns that do not exist are left out of
  ``evidence_ids`` and recorded in ``Question.extra``.

Sources are a local file or an http(s) URL (downloaded with urllib into a cache folder).
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from omlab.bench.datasets._fields import RecordContext, answer_text, pace_delta
from omlab.bench.datasets.errors import DatasetError, read_utf8
from omlab.bench.datasets.provenance import sha256_file, verify_sha256
from omlab.bench.datasets.schema import Conversation, DatasetInfo, Question, Session, Turn
from omlab.bench.datasets.unknown_fields import UNKNOWN_FIELDS_KEY, locomo_notes

LOCOMO_URL = "https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json"
CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
"""``locomo10.json`` category numbers -> names (the official ``evaluation.py`` mapping)."""
ADVERSARIAL_GOLD = "Not mentioned in the conversation"
DEFAULT_SPEAKER_ROLES: dict[str, str] = {"speaker_a": "user", "speaker_b": "assistant"}
DEFAULT_TURN_PACE = timedelta(seconds=5)
CAPTION_STYLES: dict[str, str] = {
    "omlab": "{text} [shares {caption}]",
    "official": "{text} and shared {caption}.",
}
"""How an image turn's caption joins its text (``official``: as LoCoMo's QA transcript renders it)."""

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DATE_KEY = re.compile(r"^session_(\d+)_date_time$")
_DATE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*$",
    re.IGNORECASE,
)
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")


def parse_locomo_date(text: str, tz: tzinfo = UTC) -> datetime:
    """Parse ``"1:56 pm on 8 May, 2023"`` into an aware datetime (naive -> ``tz``)."""
    match = _DATE.match(text)
    if not match:
        raise ValueError(f"unparseable LoCoMo date {text!r}")
    hour, minute, half, day, month_name, year = match.groups()
    month = _MONTHS.get(month_name.lower())
    if month is None:
        raise ValueError(f"unknown month {month_name!r} in {text!r}")
    hour_24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    return datetime(int(year), month, int(day), hour_24, int(minute), tzinfo=tz)


def load_locomo(
    source: str | Path = LOCOMO_URL,
    *,
    cache_dir: str | Path | None = None,
    expected_sha256: str | None = None,
    speaker_roles: Mapping[str, str] | None = None,
    turn_pace: timedelta | float = DEFAULT_TURN_PACE,
    tz: tzinfo = UTC,
    image_captions: bool = True,
    caption_style: str = "omlab",
) -> tuple[DatasetInfo, list[Conversation]]:
    """Load LoCoMo as one Conversation per ``sample_id``.

    Args:
        source: Local path or http(s) URL of a ``locomo10.json``-shaped file.
        cache_dir: Where a URL is downloaded to (default ``$OMLAB_HOME/datasets`` or
            ``~/.cache/omlab/datasets``); an already downloaded file is reused.
        expected_sha256: Refuse the file unless its sha256 matches.
        speaker_roles: ``{"speaker_a": role, "speaker_b": role}`` with roles ``user``/``assistant``.
        turn_pace: Seconds (or timedelta) between consecutive turns of a session.
        tz: Time zone given to the dataset's naive session times.
        image_captions: Append the ``blip_caption`` of image turns to their text (the images
            themselves are not released).
        caption_style: ``omlab``: ``<text> [shares <caption>]``; ``official``: ``<text> and shared
            <caption>.``, word for word as the official QA transcript renders it.

    Raises:
        DatasetError: Unreadable or malformed input, naming file, record and field.
    """
    roles = dict(DEFAULT_SPEAKER_ROLES if speaker_roles is None else speaker_roles)
    if set(roles) != {"speaker_a", "speaker_b"} or not set(roles.values()) <= {"user", "assistant"}:
        raise ValueError(
            f"speaker_roles must map exactly 'speaker_a' and 'speaker_b' to 'user' or 'assistant', got {roles!r}"
        )
    if caption_style not in CAPTION_STYLES:
        raise ValueError(f"caption_style must be one of {', '.join(CAPTION_STYLES)}, got {caption_style!r}")
    pace = pace_delta(turn_pace)
    file_path, source_text = _resolve(source, cache_dir)
    digest = sha256_file(file_path)
    verify_sha256(digest, expected_sha256, file=str(file_path))
    try:
        records = json.loads(read_utf8(file_path))
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=str(file_path)
        ) from exc
    if not isinstance(records, list):
        raise DatasetError("expected a JSON list of conversations at the top level", file=str(file_path))
    options = _Options(roles=roles, pace=pace, tz=tz, image_captions=image_captions, caption_style=caption_style)
    conversations = [_conversation(record, index, str(file_path), options) for index, record in enumerate(records)]
    info = DatasetInfo(
        name="locomo", subset=None, source=source_text, revision=None, sha256=digest, n_conversations=len(conversations)
    )
    return info, conversations


@dataclass(frozen=True, slots=True)
class _Options:
    roles: dict[str, str]
    pace: timedelta
    tz: tzinfo
    image_captions: bool
    caption_style: str = "omlab"


def _resolve(source: str | Path, cache_dir: str | Path | None) -> tuple[Path, str]:
    text = str(source)
    if not re.match(r"^https?://", text):
        path = Path(source)
        if not path.is_file():
            raise DatasetError("no such file (see datasets/README.md for where to get LoCoMo)", file=text)
        return path, str(path.resolve())
    folder = Path(cache_dir) if cache_dir is not None else _default_cache()
    target = folder / (text.rstrip("/").rsplit("/", 1)[-1] or "locomo.json")
    if not target.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(target.suffix + ".part")
        try:
            with urllib.request.urlopen(text, timeout=60) as response, open(partial, "wb") as out:
                while chunk := response.read(1 << 20):
                    out.write(chunk)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise DatasetError(
                f"download failed ({exc}); download the file yourself and pass its local path", file=text
            ) from exc
        partial.replace(target)
    return target, text


def _default_cache() -> Path:
    home = os.environ.get("OMLAB_HOME")
    return (Path(home) if home else Path.home() / ".cache" / "omlab") / "datasets"


def _conversation(record: Any, index: int, file: str, options: _Options) -> Conversation:
    ctx = RecordContext(file, f"index {index}")
    if not isinstance(record, dict):
        raise ctx.error(None, f"expected an object per conversation, got {type(record).__name__}")
    sample_id = ctx.get(record, "sample_id", (str, int))
    sample_id = str(sample_id)
    ctx = RecordContext(file, f"index {index} (sample_id {sample_id!r})")
    conversation = ctx.get(record, "conversation", dict)
    names = {key: ctx.get(conversation, key, str, path="conversation") for key in ("speaker_a", "speaker_b")}
    role_by_name = {names[key]: options.roles[key] for key in names}

    session_numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION_KEY.match(key)))
    date_numbers = {int(m.group(1)) for key in conversation if (m := _DATE_KEY.match(key))}
    sessions: list[Session] = []
    skipped_sessions: list[str] = []
    for number in session_numbers:
        raw_turns = ctx.get(conversation, f"session_{number}", list, path="conversation")
        if number not in date_numbers or not raw_turns:
            skipped_sessions.append(f"session_{number}")
            continue
        date_field = f"session_{number}_date_time"
        date_text = ctx.get(conversation, date_field, str, path="conversation")
        try:
            date = parse_locomo_date(date_text, options.tz)
        except ValueError as exc:
            raise ctx.error(f"conversation.{date_field}", f"{exc}; expected like '1:56 pm on 8 May, 2023'") from exc
        turns = _turns(raw_turns, number, date, role_by_name, options, ctx)
        sessions.append(Session(id=f"s{number:03d}", date=date, turns=turns))
    dangling_dates = sorted(f"session_{n}_date_time" for n in date_numbers - set(session_numbers))

    turn_ids: set[str] = set()
    for session in sessions:
        for turn in session.turns:
            if turn.id in turn_ids:
                raise ctx.error("conversation", f"duplicate dia_id {turn.id!r}")
            turn_ids.add(turn.id)
    questions = [
        _question(raw, position, sample_id, turn_ids, ctx) for position, raw in enumerate(ctx.get(record, "qa", list))
    ]
    cited = {turn_id for question in questions for turn_id in question.evidence_ids}
    sessions = [_mark_evidence(session, cited) for session in sessions]
    return Conversation(
        id=sample_id,
        sessions=sessions,
        questions=questions,
        dataset="locomo",
        metadata={
            "speaker_a": names["speaker_a"],
            "speaker_b": names["speaker_b"],
            "skipped_sessions": skipped_sessions,
            "dangling_date_keys": dangling_dates,
            **({UNKNOWN_FIELDS_KEY: unknown} if (unknown := locomo_notes(record, ctx)) else {}),
        },
    )


def _turns(
    raw_turns: list[Any],
    number: int,
    date: datetime,
    role_by_name: dict[str, str],
    options: _Options,
    ctx: RecordContext,
) -> list[Turn]:
    turns = []
    for k, raw in enumerate(raw_turns):
        path = f"conversation.session_{number}[{k}]"
        speaker = ctx.get(raw, "speaker", str, path=path)
        if speaker not in role_by_name:
            raise ctx.error(
                f"{path}.speaker",
                f"speaker {speaker!r} is neither speaker_a nor speaker_b ({', '.join(map(repr, role_by_name))})",
            )
        text = ctx.get(raw, "text", str, path=path)
        caption = ctx.get(raw, "blip_caption", (str, type(None)), path=path, default=None)
        if options.image_captions and caption:
            text = CAPTION_STYLES[options.caption_style].format(text=text, caption=caption)
        turns.append(
            Turn(
                id=ctx.get(raw, "dia_id", str, path=path),
                role=role_by_name[speaker],
                content=text,
                created_at=date + k * options.pace,
                speaker=speaker,
            )
        )
    return turns


def _question(raw: Any, position: int, sample_id: str, turn_ids: set[str], ctx: RecordContext) -> Question:
    path = f"qa[{position}]"
    category = ctx.get(raw, "category", int, path=path)
    if category not in CATEGORY_NAMES:
        raise ctx.error(f"{path}.category", f"category must be 1-5, got {category}")
    adversarial = raw.get("adversarial_answer")
    if adversarial is not None:
        adversarial = answer_text(adversarial, ctx, f"{path}.adversarial_answer")
    if "answer" in raw and raw["answer"] is not None:
        answer = answer_text(raw["answer"], ctx, f"{path}.answer")
    elif category == 5:
        answer = ADVERSARIAL_GOLD
    else:
        raise ctx.error(
            f"{path}.answer",
            f"missing required field (category {category} items need an answer; only category 5 may omit it)",
        )
    evidence, unparsed, unknown = _evidence(
        ctx.get(raw, "evidence", list, path=path, default=[]), turn_ids, ctx, f"{path}.evidence"
    )
    extra: dict[str, Any] = {}
    if unparsed:
        extra["unparsed_evidence"] = unparsed
    if unknown:
        extra["unknown_evidence"] = unknown
    return Question(
        id=f"{sample_id}:q{position + 1:03d}",
        type=CATEGORY_NAMES[category],
        question=ctx.get(raw, "question", str, path=path),
        answer=answer,
        evidence_ids=evidence,
        is_abstention=category == 5,
        category=category,
        adversarial_answer=adversarial,
        extra=extra,
    )


def _evidence(
    raw: list[Any], turn_ids: set[str], ctx: RecordContext, path: str
) -> tuple[list[str], list[str], list[str]]:
    evidence: list[str] = []
    unparsed: list[str] = []
    unknown: list[str] = []
    for position, item in enumerate(raw):
        ctx.check(item, str, f"{path}[{position}]")
        pieces = [piece for piece in re.split(r"[;,\s]+", item.replace("(", " ").replace(")", " ")) if piece]
        for piece in pieces:
            match = _EVIDENCE_ID.fullmatch(piece)
            if not match:
                unparsed.append(piece)
                continue
            turn_id = f"D{int(match.group(1))}:{int(match.group(2))}"
            if turn_id not in turn_ids:
                unknown.append(turn_id)
            elif turn_id not in evidence:
                evidence.append(turn_id)
        if not pieces:
            unparsed.append(item)
    return evidence, unparsed, unknown


def _mark_evidence(session: Session, cited: set[str]) -> Session:
    turns = [
        Turn(
            id=t.id,
            role=t.role,
            content=t.content,
            created_at=t.created_at,
            speaker=t.speaker,
            evidence_id=t.id if t.id in cited else None,
        )
        for t in session.turns
    ]
    return Session(id=session.id, date=session.date, turns=turns)
