import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from omlab.bench.datasets import CATEGORY_NAMES, DatasetError, load_locomo
from omlab.bench.datasets.locomo import ADVERSARIAL_GOLD, parse_locomo_date

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"
SAMPLE = Path(__file__).parents[2] / "datasets" / "samples" / "locomo_sample.json"


@pytest.fixture(scope="module")
def conversation():
    info, conversations = load_locomo(FIXTURE)
    assert info.n_conversations == 1
    return conversations[0]


def test_dataset_info():
    info, _ = load_locomo(FIXTURE)
    assert (info.name, info.subset, info.revision) == ("locomo", None, None)
    assert info.sha256 == hashlib.sha256(FIXTURE.read_bytes()).hexdigest()


def test_category_numbers_follow_the_file_not_the_paper():
    assert CATEGORY_NAMES == {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def test_questions_keep_category_and_name(conversation):
    assert [(q.category, q.type) for q in conversation.questions] == [
        (1, "multi-hop"),
        (2, "temporal"),
        (3, "open-domain"),
        (4, "single-hop"),
        (5, "adversarial"),
        (5, "adversarial"),
    ]
    assert [q.id for q in conversation.questions][:2] == ["conv-t1:q001", "conv-t1:q002"]
    assert [q.is_abstention for q in conversation.questions] == [False] * 4 + [True] * 2


def test_category_5_without_answer_uses_adversarial_answer(conversation):
    cat5 = conversation.questions[4]
    assert cat5.answer == ADVERSARIAL_GOLD == "Not mentioned in the conversation"
    assert cat5.adversarial_answer == "Pico"
    both = conversation.questions[5]
    assert (both.answer, both.adversarial_answer) == ("2022", "2021")


def test_int_answers_become_strings(conversation):
    assert conversation.questions[3].answer == "3"
    assert all(isinstance(q.answer, str) for q in conversation.questions)


def test_dangling_date_keys_and_dateless_or_empty_sessions_are_skipped(conversation):
    assert [s.id for s in conversation.sessions] == ["s001", "s002", "s010"]  # numeric, not lexical
    assert conversation.metadata["dangling_date_keys"] == ["session_3_date_time"]
    assert conversation.metadata["skipped_sessions"] == ["session_4", "session_5"]
    assert "D4:1" not in conversation.turns_by_id()


def test_dates_turn_pace_and_roles(conversation):
    first, second, tenth = conversation.sessions
    assert first.date == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert second.date == datetime(2023, 6, 19, 10, 4, tzinfo=UTC)
    assert tenth.date == datetime(2023, 8, 1, 19, 0, tzinfo=UTC)
    assert [t.created_at - first.date for t in first.turns] == [timedelta(seconds=s) for s in (0, 5, 10)]
    assert [(t.id, t.speaker, t.role) for t in first.turns] == [
        ("D1:1", "Lena", "user"),
        ("D1:2", "Omar", "assistant"),
        ("D1:3", "Lena", "user"),
    ]


def test_speaker_roles_are_configurable():
    _, (conversation,) = load_locomo(FIXTURE, speaker_roles={"speaker_a": "assistant", "speaker_b": "user"})
    assert conversation.sessions[0].turns[0].role == "assistant"
    with pytest.raises(ValueError, match="speaker_roles"):
        load_locomo(FIXTURE, speaker_roles={"speaker_a": "user", "speaker_b": "narrator"})


def test_image_captions(conversation):
    assert conversation.sessions[0].turns[2].content == (
        "Look at the mug I glazed last night. [shares a photo of a blue ceramic mug]"
    )
    _, (plain,) = load_locomo(FIXTURE, image_captions=False)
    assert plain.sessions[0].turns[2].content == "Look at the mug I glazed last night."


def test_evidence_ids_are_parsed_leniently(conversation):
    questions = conversation.questions
    assert questions[0].evidence_ids == ["D1:1", "D1:2"]
    assert questions[2].evidence_ids == ["D1:1", "D2:2"]  # "D1:1; D2:2"
    odd = questions[5]  # ["D:2:1", "D", "D9:9", "D10:1 D10:2"]
    assert odd.evidence_ids == ["D2:1", "D10:1", "D10:2"]
    assert odd.extra == {"unparsed_evidence": ["D"], "unknown_evidence": ["D9:9"]}
    marked = {t.id for t in conversation.iter_turns() if t.evidence_id is not None}
    assert marked == {"D1:1", "D1:2", "D2:1", "D2:2", "D10:1", "D10:2"}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        ("10:04 am on 19 June, 2023", datetime(2023, 6, 19, 10, 4)),
        ("12:00 am on 1 Jan, 2024", datetime(2024, 1, 1, 0, 0)),
        ("12:30 pm on 9 Sept 2022", datetime(2022, 9, 9, 12, 30)),
    ],
)
def test_parse_locomo_date(text, expected):
    assert parse_locomo_date(text) == expected.replace(tzinfo=UTC)


@pytest.mark.parametrize("text", ["8 May 2023", "1:56 pm on 8 Mayo, 2023", ""])
def test_parse_locomo_date_rejects(text):
    with pytest.raises(ValueError):
        parse_locomo_date(text)


def test_shipped_sample_loads():
    _, (conversation,) = load_locomo(SAMPLE)
    assert [q.category for q in conversation.questions] == [1, 2, 3, 4, 5]
    assert conversation.questions[3].answer == "2"
    assert conversation.questions[4].adversarial_answer == "Porto"
    assert conversation.metadata["dangling_date_keys"] == ["session_3_date_time"]


def test_url_source_uses_the_cache_without_network(tmp_path):
    (tmp_path / "locomo10.json").write_bytes(FIXTURE.read_bytes())
    info, conversations = load_locomo("https://example.invalid/data/locomo10.json", cache_dir=tmp_path)
    assert info.source == "https://example.invalid/data/locomo10.json"
    assert conversations[0].id == "conv-t1"


def _broken(tmp_path: Path, mutate) -> Path:
    records = json.loads(FIXTURE.read_text())
    mutate(records[0])
    path = tmp_path / "broken_locomo.json"
    path.write_text(json.dumps(records))
    return path


@pytest.mark.parametrize(
    "mutate, field, problem",
    [
        (lambda r: r["conversation"].pop("speaker_a"), "conversation.speaker_a", "missing required field"),
        (
            lambda r: r["conversation"]["session_1"][0].__setitem__("speaker", "Zed"),
            "conversation.session_1[0].speaker",
            "neither speaker_a nor speaker_b",
        ),
        (
            lambda r: r["conversation"]["session_2"][1].pop("dia_id"),
            "conversation.session_2[1].dia_id",
            "missing required field",
        ),
        (
            lambda r: r["conversation"]["session_2"][1].__setitem__("dia_id", "D2:1"),
            "conversation",
            "duplicate dia_id 'D2:1'",
        ),
        (
            lambda r: r["conversation"].__setitem__("session_2_date_time", "sometime in June"),
            "conversation.session_2_date_time",
            "unparseable LoCoMo date",
        ),
        (lambda r: r["qa"][1].__setitem__("category", 7), "qa[1].category", "category must be 1-5"),
        (lambda r: r["qa"][1].__setitem__("category", "2"), "qa[1].category", "expected integer"),
        (lambda r: r["qa"][3].pop("answer"), "qa[3].answer", "only category 5 may omit it"),
        (lambda r: r["qa"][0].__setitem__("evidence", "D1:1"), "qa[0].evidence", "expected array"),
        (lambda r: r["qa"][0].pop("question"), "qa[0].question", "missing required field"),
    ],
)
def test_malformed_input_names_file_record_and_field(tmp_path, mutate, field, problem):
    with pytest.raises(DatasetError) as caught:
        load_locomo(_broken(tmp_path, mutate))
    message = str(caught.value)
    assert "broken_locomo.json" in message
    assert "record index 0 (sample_id 'conv-t1')" in message
    assert f"field '{field}'" in message
    assert problem in message


def test_top_level_must_be_a_list_of_objects(tmp_path):
    path = tmp_path / "obj.json"
    path.write_text('{"sample_id": "x"}')
    with pytest.raises(DatasetError, match="obj.json: expected a JSON list"):
        load_locomo(path)
    path.write_text("[3]")
    with pytest.raises(DatasetError, match="record index 0: expected an object"):
        load_locomo(path)
    path.write_text('[{"sample_id": ')
    with pytest.raises(DatasetError, match="invalid JSON at line 1"):
        load_locomo(path)
    with pytest.raises(DatasetError, match="no such file"):
        load_locomo(tmp_path / "missing.json")
