"""The lineage frames are pinned: the same recorded run gives the same rows, column for column.

``data/golden_runs.json.gz`` holds, for three recorded runs, what :func:`lineage_frames` reads
(the conversation, the run's ``steps`` and lineage ``events`` columns, the verdicts, the message
tokens) and the ``lineage`` / ``lineage_questions`` frames it returned when they were recorded.
The runs are offline replays of synthetic seed 1 (12,000 tokens, 20 questions, reflection at 600
observation tokens): ``sync`` observes synchronously, ``buffered`` buffers chunks and activates
them (and reflects asynchronously), ``content`` is ``buffered`` with the ``messageIds`` taken out
of its events, as an older run records them (evidence matched by content). The expected frames
were computed before the lineage's reads and line matching were made faster; any change to what
the lineage says about a recorded run shows here.
"""

from __future__ import annotations

import gzip
import json
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from omlab.bench.datasets.schema import Conversation, Question, Session, Turn
from omlab.bench.lineage import lineage_frames
from omlab.bench.results.schema import columns_of, pandas_dtype
from omlab.bench.run.replay import conversation_messages

GOLDEN = Path(__file__).parent / "data" / "golden_runs.json.gz"
CASES = ("sync", "buffered", "content")


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(gzip.decompress(GOLDEN.read_bytes()))


def _conversation(data: dict) -> Conversation:
    return Conversation(
        id=data["id"],
        dataset=data["dataset"],
        sessions=[
            Session(
                id=s["id"],
                date=datetime.fromisoformat(s["date"]),
                turns=[
                    Turn(t["id"], t["role"], t["content"], datetime.fromisoformat(t["created_at"])) for t in s["turns"]
                ],
            )
            for s in data["sessions"]
        ],
        questions=[
            Question(
                id=q["id"],
                type=q["type"],
                question=q["question"],
                answer=q["answer"],
                evidence_ids=q["evidence_ids"],
                is_abstention=q["is_abstention"],
            )
            for q in data["questions"]
        ],
    )


def _table_frame(data: dict, table: str) -> pd.DataFrame:
    """A frame typed as the results getters type ``table``'s columns."""
    kinds = {c.name: c for c in columns_of(table)}
    frame = pd.DataFrame(data)
    for name in frame.columns:
        column = kinds[name]
        if column.kind == "time":
            frame[name] = pd.to_datetime(frame[name], utc=True, format="ISO8601").astype(pandas_dtype(column))
        else:
            frame[name] = frame[name].astype(pandas_dtype(column))
    return frame


def _answers(data: dict) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "question_id": pd.Series(data["question_id"], dtype="str"),
            "judge_correct": pd.Series(data["judge_correct"], dtype="boolean"),
            "f1": pd.Series(data["f1"], dtype="float64"),
        }
    )


def _plain(frame: pd.DataFrame) -> dict[str, list]:
    """Columns as JSON values, the way the expected frames were stored."""
    out = {}
    for name in frame.columns:
        series = frame[name]
        if str(series.dtype).startswith("datetime"):
            out[name] = [None if pd.isna(v) else v.isoformat() for v in series]
        else:
            out[name] = [None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in series]
    return json.loads(json.dumps(out, ensure_ascii=False))


@pytest.mark.parametrize("case", CASES)
def test_lineage_of_a_recorded_run_is_unchanged(golden, case):
    run = golden[case]
    evidence, questions = lineage_frames(
        [_conversation(c) for c in run["conversations"]],
        _table_frame(run["steps"], "steps"),
        _table_frame(run["events"], "events"),
        _answers(run["answers"]),
        n_message_tokens=run["n_message_tokens"],
    )
    assert {c: str(t) for c, t in evidence.dtypes.items()} == run["dtypes"]["lineage"]
    assert {c: str(t) for c, t in questions.dtypes.items()} == run["dtypes"]["lineage_questions"]
    assert _plain(evidence) == run["lineage"]
    assert _plain(questions) == run["lineage_questions"]


def test_the_recorded_runs_cover_every_path(golden):
    fates = {case: set(golden[case]["lineage"]["fate"]) for case in CASES}
    assert all({"dropped", "merged", "kept", "unobserved"} <= found for found in fates.values())
    assert set(golden["sync"]["events"]["type"]) == {"data-om-status", "data-om-observation-end"}
    assert {"data-om-buffering-end", "data-om-activation"} <= set(golden["buffered"]["events"]["type"])
    assert set(golden["content"]["lineage"]["match"]) - {None} == {"content"}


def test_the_recorded_conversation_is_the_replayed_one(golden):
    """The stored events name messages as the replay does today (else every turn looks unobserved)."""
    conversation = _conversation(golden["sync"]["conversations"][0])
    ids = {m.id for m in conversation_messages(conversation)}
    recorded = {m for m in golden["sync"]["steps"]["message_id"] if m is not None}
    assert recorded <= ids
