import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from omlab.bench.datasets import (
    DatasetError,
    dump_jsonl,
    generate_synthetic,
    load_jsonl,
    load_locomo,
    load_longmemeval,
)

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = Path(__file__).parents[2] / "datasets" / "samples" / "conversations.jsonl"
PLUS_ONE = timezone(timedelta(hours=1))


@pytest.fixture(scope="module")
def loaded():
    return load_jsonl(FIXTURES / "conversations.jsonl")


def test_loads_fixture_with_defaults(loaded):
    info, (remodel, tiny) = loaded
    assert (info.name, info.n_conversations) == ("jsonl", 2)
    assert remodel.dataset == "my-logs" and tiny.dataset == "jsonl"
    # the fixture mixes timestamps with and without an offset: the loader notes the naive ones
    assert remodel.metadata == {
        "source": "hand-written test fixture",
        "naive_timestamps": ["sessions[1].date", "sessions[1].turns[0].created_at"],
    }
    first, second = remodel.sessions
    assert (first.id, second.id) == ("a", "s002")
    assert [t.id for t in first.turns] == ["a:1", "a:2"]
    assert first.turns[1].created_at == datetime(2024, 3, 1, 9, 0, 5, tzinfo=PLUS_ONE)
    assert second.date == datetime(2024, 3, 9, 18, 30, tzinfo=UTC)  # naive -> UTC
    explicit, following = second.turns
    assert (explicit.id, explicit.speaker) == ("b-1", "Sam")
    assert explicit.created_at == datetime(2024, 3, 9, 18, 31, tzinfo=UTC)
    assert following.created_at == explicit.created_at + timedelta(seconds=5)
    assert tiny.sessions[0].turns[0].created_at == datetime(2024, 5, 5, tzinfo=UTC)


def test_questions_defaults_and_evidence_marks(loaded):
    remodel = loaded[1][0]
    update, abstention = remodel.questions
    assert update.evidence_ids == ["a:1", "b-1"] and update.type == "knowledge-update"
    assert update.question_date == datetime(2024, 3, 10, 10, tzinfo=UTC)
    assert (abstention.id, abstention.type, abstention.is_abstention) == ("kitchen-remodel:q2", "custom", True)
    marked = [t.id for t in remodel.iter_turns() if t.evidence_id]
    assert marked == ["a:1", "b-1"]


def test_tz_and_pace_options():
    tz = timezone(timedelta(hours=-5))
    _, (_, tiny) = load_jsonl(FIXTURES / "conversations.jsonl", tz=tz, turn_pace=30)
    assert tiny.sessions[0].date == datetime(2024, 5, 5, tzinfo=tz)


def test_shipped_sample_loads():
    _, (conversation,) = load_jsonl(SAMPLE)
    assert conversation.questions[0].answer == "mint"
    assert conversation.questions[1].is_abstention


def test_round_trip_of_every_loader(tmp_path):
    sources = [
        load_longmemeval(FIXTURES / "longmemeval_mini.json")[1],
        load_locomo(FIXTURES / "locomo_mini.json")[1],
        [generate_synthetic(4, 6_000, n_questions=8)],
        load_jsonl(FIXTURES / "conversations.jsonl")[1],
    ]
    for index, conversations in enumerate(sources):
        path = dump_jsonl(conversations, tmp_path / f"round_{index}.jsonl")
        assert load_jsonl(path)[1] == conversations


def _write(tmp_path: Path, lines: list) -> Path:
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines))
    return path


def _good(conversation_id: str = "c1") -> dict:
    return {
        "id": conversation_id,
        "sessions": [
            {
                "date": "2024-01-01T10:00:00",
                "turns": [{"role": "user", "content": "I like tea."}, {"role": "assistant", "content": "Noted."}],
            }
        ],
        "questions": [{"question": "What do I like?", "answer": "tea", "evidence_ids": ["s001:1"]}],
    }


@pytest.mark.parametrize(
    "mutate, field, problem",
    [
        (
            lambda r: r["sessions"][0]["turns"][1].__setitem__("role", "bot"),
            "sessions[0].turns[1].role",
            "expected 'user' or 'assistant'",
        ),
        (lambda r: r["sessions"][0].pop("date"), "sessions[0].date", "missing required field"),
        (lambda r: r["sessions"][0].__setitem__("date", "soon"), "sessions[0].date", "not an ISO 8601"),
        (
            lambda r: r["sessions"][0]["turns"][0].pop("content"),
            "sessions[0].turns[0].content",
            "missing required field",
        ),
        (
            lambda r: r["questions"][0].__setitem__("evidence_ids", ["s001:9"]),
            "questions[0].evidence_ids[0]",
            "no turn has id 's001:9'",
        ),
        (lambda r: r["questions"][0].__setitem__("answer", {"text": "tea"}), "questions[0].answer", "expected string"),
        (
            lambda r: r["questions"][0].__setitem__("is_abstention", "no"),
            "questions[0].is_abstention",
            "expected boolean",
        ),
        (lambda r: r["sessions"][0]["turns"][1].__setitem__("id", "s001:1"), "sessions", "duplicate turn id 's001:1'"),
        (lambda r: r.__setitem__("sessions", {}), "sessions", "expected array"),
    ],
)
def test_errors_name_file_line_and_field(tmp_path, mutate, field, problem):
    record = _good("c2")
    mutate(record)
    path = _write(tmp_path, [_good("c1"), "", record])
    with pytest.raises(DatasetError) as caught:
        load_jsonl(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: record line 3 (id 'c2'): field '{field}': ")
    assert problem in message


def test_invalid_json_and_duplicate_ids(tmp_path):
    with pytest.raises(DatasetError, match=r"mine.jsonl: record line 2: invalid JSON"):
        load_jsonl(_write(tmp_path, [_good("c1"), '{"id": "c2", ']))
    with pytest.raises(
        DatasetError,
        match=r"record line 2: field 'id': duplicate conversation id"
        r" 'c1' \(first on line 1\)",
    ):
        load_jsonl(_write(tmp_path, [_good("c1"), _good("c1")]))
    with pytest.raises(DatasetError, match="record line 1: expected a JSON object"):
        load_jsonl(_write(tmp_path, ["[1, 2]"]))
    with pytest.raises(DatasetError, match="record line 1: field 'id': missing"):
        load_jsonl(_write(tmp_path, [{"sessions": []}]))
    with pytest.raises(DatasetError, match="no such file"):
        load_jsonl(tmp_path / "nope.jsonl")
