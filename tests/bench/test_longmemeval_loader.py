import hashlib
import json
import socket
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from omlab.bench.datasets import DatasetError, load_longmemeval
from omlab.bench.datasets.jsonl import conversation_record
from omlab.bench.datasets.longmemeval import infer_subset, parse_longmemeval_date

FIXTURE = Path(__file__).parent / "fixtures" / "longmemeval_mini.json"
SAMPLE = Path(__file__).parents[2] / "datasets" / "samples" / "longmemeval_sample.json"


@pytest.fixture(scope="module")
def loaded():
    return load_longmemeval(FIXTURE)


def _by_id(loaded):
    return {conversation.id: conversation for conversation in loaded[1]}


def test_dataset_info_records_sha256_and_source(loaded):
    info, conversations = loaded
    assert info.name == "longmemeval"
    assert info.sha256 == hashlib.sha256(FIXTURE.read_bytes()).hexdigest()
    assert info.source == str(FIXTURE.resolve())
    assert info.n_conversations == len(conversations) == 3
    assert info.revision is None and info.subset is None


def test_each_question_is_its_own_conversation(loaded):
    for conversation in loaded[1]:
        assert len(conversation.questions) == 1
        assert conversation.questions[0].id == conversation.id
        assert conversation.dataset == "longmemeval"


def test_int_answer_becomes_string(loaded):
    assert _by_id(loaded)["7c1e5a90"].questions[0].answer == "3"


def test_abstention_comes_from_the_abs_suffix_only(loaded):
    by_id = _by_id(loaded)
    flags = {qid: c.questions[0].is_abstention for qid, c in by_id.items()}
    assert flags == {"7c1e5a90": False, "gpt4_2b9d0e41": False, "e03f6c12_abs": True}
    assert by_id["e03f6c12_abs"].questions[0].type == "single-session-user"


def test_sessions_are_sorted_by_date_and_anonymised(loaded):
    conversation = _by_id(loaded)["7c1e5a90"]
    assert [s.id for s in conversation.sessions] == ["s001", "s002", "s003"]
    assert [s.date for s in conversation.sessions] == [
        datetime(2023, 5, 20, 9, 5, tzinfo=UTC),
        datetime(2023, 5, 27, 11, 30, tzinfo=UTC),
        datetime(2023, 6, 2, 18, 40, tzinfo=UTC),
    ]
    assert conversation.metadata["source_session_ids"] == {
        "s001": "sharegpt_Zq81mT_0",
        "s002": "answer_7c1e5a90_1",
        "s003": "answer_7c1e5a90_2",
    }


def test_no_answer_id_reaches_turns_sessions_or_questions(loaded):
    for conversation in loaded[1]:
        record = conversation_record(conversation)
        del record["metadata"]  # the scorer-only mapping back to the dataset's ids
        assert "answer_" not in json.dumps(record)
        for turn in conversation.iter_turns():
            assert not hasattr(turn, "has_answer")


def test_has_answer_becomes_evidence_ids_only(loaded):
    by_id = _by_id(loaded)
    question = by_id["7c1e5a90"].questions[0]
    assert question.evidence_ids == ["s002:1", "s003:1"]
    assert question.extra["evidence_session_ids"] == ["s002", "s003"]
    marked = [t.id for t in by_id["7c1e5a90"].iter_turns() if t.evidence_id is not None]
    assert marked == ["s002:1", "s003:1"]
    assert by_id["gpt4_2b9d0e41"].questions[0].evidence_ids == ["s001:2"]  # an assistant turn
    assert by_id["7c1e5a90"].sessions[2].turns[0].content.startswith("Back from my second")


def test_dates_and_turn_pace(loaded):
    conversation = _by_id(loaded)["7c1e5a90"]
    assert conversation.questions[0].question_date == datetime(2023, 6, 12, 20, 15, tzinfo=UTC)
    first = conversation.sessions[0]
    assert [t.created_at - first.date for t in first.turns] == [
        timedelta(0),
        timedelta(seconds=5),
        timedelta(seconds=10),
    ]
    tz = timezone(timedelta(hours=-7))
    _, slow = load_longmemeval(FIXTURE, turn_pace=60, tz=tz)
    session = slow[0].sessions[0]
    assert session.date == datetime(2023, 5, 20, 9, 5, tzinfo=tz)
    assert session.turns[2].created_at == datetime(2023, 5, 20, 9, 7, tzinfo=tz)


def test_parse_longmemeval_date_variants():
    assert parse_longmemeval_date("2023/05/30 (Tue) 23:40") == datetime(2023, 5, 30, 23, 40, tzinfo=UTC)
    assert parse_longmemeval_date("2023/05/30 23:40") == datetime(2023, 5, 30, 23, 40, tzinfo=UTC)
    assert parse_longmemeval_date("2024-01-10") == datetime(2024, 1, 10, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_longmemeval_date("May 30th")


@pytest.mark.parametrize(
    "name, subset",
    [
        ("longmemeval_s_cleaned.json", "s"),
        ("longmemeval_m.json", "m"),
        ("longmemeval_oracle.json", "oracle"),
        ("longmemeval_s", "s"),
        ("my_file.json", None),
        ("longmemeval_sample.json", None),
    ],
)
def test_infer_subset(name, subset):
    assert infer_subset(name) == subset


def test_subset_argument_and_json_lines(tmp_path):
    records = json.loads(FIXTURE.read_text())
    jsonl = tmp_path / "longmemeval_s_cleaned.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    info, conversations = load_longmemeval(jsonl)
    assert info.subset == "s" and len(conversations) == 3
    info, _ = load_longmemeval(FIXTURE, subset="oracle", revision="abc123")
    assert (info.subset, info.revision) == ("oracle", "abc123")
    with pytest.raises(ValueError, match="subset"):
        load_longmemeval(FIXTURE, subset="xl")


def test_expected_sha256(loaded):
    load_longmemeval(FIXTURE, expected_sha256=loaded[0].sha256.upper())
    with pytest.raises(DatasetError, match="sha256 mismatch"):
        load_longmemeval(FIXTURE, expected_sha256="0" * 64)


def test_shipped_sample_loads():
    info, conversations = load_longmemeval(SAMPLE)
    assert info.n_conversations == 2
    update, abstention = conversations
    assert update.questions[0].answer == "7"
    assert [s.id for s in update.sessions] == ["s001", "s002", "s003"]
    assert update.questions[0].evidence_ids == ["s002:1", "s003:1"]
    assert abstention.questions[0].is_abstention


def test_hub_download_fails_fast_when_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    attempts = []

    def no_network(self, address):
        attempts.append(address)
        raise OSError("this test has no network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    with pytest.raises(DatasetError, match="pass a local path") as caught:
        load_longmemeval(subset="oracle")
    assert attempts == [], "failing fast means not even trying to connect"
    assert "HF_HUB_OFFLINE" in str(caught.value)
    assert "longmemeval-cleaned" in str(caught.value)


def test_missing_file():
    with pytest.raises(DatasetError, match="no such file"):
        load_longmemeval("/nonexistent/longmemeval_s.json")


def _write(tmp_path: Path, records) -> Path:
    path = tmp_path / "broken_lme.json"
    path.write_text(json.dumps(records))
    return path


def _records():
    return json.loads(FIXTURE.read_text())


@pytest.mark.parametrize(
    "mutate, field, problem",
    [
        (lambda r: r[1].pop("question"), "'question'", "missing required field"),
        (lambda r: r[1].__setitem__("question_date", "yesterday"), "'question_date'", "unparseable date"),
        (
            lambda r: r[1]["haystack_sessions"][0][1].__setitem__("role", "system"),
            "'haystack_sessions[0][1].role'",
            "expected 'user' or 'assistant'",
        ),
        (
            lambda r: r[1]["haystack_sessions"][0][0].__setitem__("content", None),
            "'haystack_sessions[0][0].content'",
            "expected string, got null",
        ),
        (
            lambda r: r[1]["haystack_sessions"][0][0].__setitem__("has_answer", "yes"),
            "'haystack_sessions[0][0].has_answer'",
            "expected boolean",
        ),
        (lambda r: r[1]["haystack_dates"].append("2023/07/01 (Sat) 09:00"), "'haystack_sessions'", "same length"),
        (lambda r: r[1].__setitem__("question_type", "abstention"), "'question_type'", "unknown type"),
        (lambda r: r[1].__setitem__("answer", ["a", "b"]), "'answer'", "expected string or integer"),
        (lambda r: r[1]["haystack_dates"].__setitem__(0, "2023-13-45"), "'haystack_dates[0]'", "unparseable date"),
    ],
)
def test_malformed_records_name_file_record_and_field(tmp_path, mutate, field, problem):
    records = _records()
    mutate(records)
    path = _write(tmp_path, records)
    with pytest.raises(DatasetError) as caught:
        load_longmemeval(path)
    message = str(caught.value)
    assert "broken_lme.json" in message
    assert "record index 1 (question_id 'gpt4_2b9d0e41')" in message
    assert f"field {field}" in message
    assert problem in message
    assert caught.value.field == field.strip("'")


def test_invalid_json_reports_position(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"question_id": "x",\n "question": }]')
    with pytest.raises(DatasetError, match=r"bad.json: invalid JSON at line 2 column"):
        load_longmemeval(path)


def test_non_object_record_and_duplicate_ids(tmp_path):
    with pytest.raises(DatasetError, match="record index 0.*expected an object"):
        load_longmemeval(_write(tmp_path, ["not a question"]))
    records = _records()
    records[2]["question_id"] = records[0]["question_id"]
    with pytest.raises(DatasetError, match="record index 2: field 'question_id': duplicate"):
        load_longmemeval(_write(tmp_path, records))
