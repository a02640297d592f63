"""A user's dataset file: fields omlab does not read are warned about by name, with the file,
the record and a "did you mean" (issue 24 item 9); a file that is not UTF-8 is refused naming the
file and the byte, for every loader, the suite file and ``omlab datasets build``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omlab.bench.datasets.checks import input_warnings
from omlab.bench.datasets.errors import DatasetError
from omlab.bench.datasets.jsonl import load_jsonl
from omlab.bench.datasets.locomo import load_locomo
from omlab.bench.datasets.longmemeval import load_longmemeval
from omlab.cli.main import main

from .corpus import conversation, write_jsonl, write_suite

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "datasets" / "samples"


def _unknown(conversations) -> list[str]:
    return [str(w) for w in input_warnings(conversations) if w.kind == "unknown_field"]


def test_a_typo_in_a_jsonl_question_is_warned_with_file_record_and_did_you_mean(tmp_path):
    record = conversation()
    record["questions"][0]["qestion"] = record["questions"][0].pop("question") + " "
    record["questions"][0]["question"] = "What is my cat called?"
    record["sessions"][1]["turns"][0]["contnet"] = "typo"
    record["colour"] = "blue"
    path = write_jsonl(tmp_path, "mine.jsonl", record)
    _, conversations = load_jsonl(path)
    notes = _unknown(conversations)
    assert len(notes) == 3
    joined = "\n".join(notes)
    assert "mine.jsonl line 1" in joined and "conversation 'c1'" in joined
    assert "'questions[0].qestion'" in joined and "did you mean 'question'" in joined
    assert "'sessions[1].turns[0].contnet'" in joined and "did you mean 'content'" in joined
    assert "'colour'" in joined


def test_the_published_sample_files_have_no_unknown_fields():
    _, locomo = load_locomo(SAMPLES / "locomo_sample.json")
    _, lme = load_longmemeval(SAMPLES / "longmemeval_sample.json")
    _, ours = load_jsonl(SAMPLES / "conversations.jsonl")
    assert _unknown(locomo) == _unknown(lme) == _unknown(ours) == []


def test_unknown_fields_in_locomo_and_longmemeval_files_are_warned(tmp_path):
    locomo = json.loads((SAMPLES / "locomo_sample.json").read_text(encoding="utf-8"))
    locomo[0]["qa"][0]["evidance"] = ["D1:1"]
    (tmp_path / "locomo.json").write_text(json.dumps(locomo), encoding="utf-8")
    lme = json.loads((SAMPLES / "longmemeval_sample.json").read_text(encoding="utf-8"))
    lme[0]["haystack_sessions"][0][0]["has_anwser"] = True
    (tmp_path / "lme.json").write_text(json.dumps(lme), encoding="utf-8")
    (locomo_note,) = _unknown(load_locomo(tmp_path / "locomo.json")[1])
    assert "locomo.json index 0" in locomo_note and "'qa[0].evidance'" in locomo_note
    assert "did you mean 'evidence'" in locomo_note
    (lme_note,) = _unknown(load_longmemeval(tmp_path / "lme.json")[1])
    assert "lme.json index 0" in lme_note and "'haystack_sessions[0][0].has_anwser'" in lme_note
    assert "did you mean 'has_answer'" in lme_note


def _not_utf8(tmp_path: Path, name: str, source: Path | None = None) -> Path:
    """A copy of a sample (or a JSONL conversation) with a Latin-1 byte on its second line."""
    text = source.read_text(encoding="utf-8") if source else "\n" + json.dumps(conversation())
    data = text.encode("utf-8")
    at = data.index(b"\n") + 1
    path = tmp_path / name
    path.write_bytes(data[:at] + b"\xe9" + data[at:])
    return path


@pytest.mark.parametrize(
    ("loader", "source"),
    [
        (load_jsonl, None),
        (load_locomo, SAMPLES / "locomo_sample.json"),
        (load_longmemeval, SAMPLES / "longmemeval_sample.json"),
    ],
    ids=["jsonl", "locomo", "longmemeval"],
)
def test_a_file_that_is_not_utf8_is_refused_naming_the_file_and_the_byte(tmp_path, loader, source):
    path = _not_utf8(tmp_path, "latin1.json", source)
    with pytest.raises(DatasetError) as info:
        loader(path)
    message = str(info.value)
    assert str(path) in message and "not UTF-8" in message and "0xe9" in message and "(line 2, column 1)" in message


@pytest.mark.parametrize("kind", ["jsonl", "locomo", "longmemeval"])
def test_omlab_run_on_a_non_utf8_dataset_names_the_file_without_a_traceback(tmp_path, capsys, kind):
    source = {
        "jsonl": None,
        "locomo": SAMPLES / "locomo_sample.json",
        "longmemeval": SAMPLES / "longmemeval_sample.json",
    }
    path = _not_utf8(tmp_path, "latin1.data", source[kind])
    suite = write_suite(tmp_path, kind, path)
    assert main(["run", str(suite), "--results", str(tmp_path / "results"), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert "latin1.data" in error and "not UTF-8" in error and "Traceback" not in error


def test_a_suite_file_that_is_not_utf8_is_refused_naming_it(tmp_path, capsys):
    suite = tmp_path / "latin1.toml"
    suite.write_bytes(b'[suite]\nname = "caf\xe9"\n')
    assert main(["run", str(suite), "--results", str(tmp_path / "results"), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert "latin1.toml" in error and "not UTF-8" in error and "line 2" in error


def test_datasets_build_from_a_non_utf8_local_file_names_it(tmp_path, capsys):
    path = _not_utf8(tmp_path, "locomo10.json", SAMPLES / "locomo_sample.json")
    assert main(["datasets", "build", "locomo", "--source", str(path)]) != 0
    error = capsys.readouterr().err
    assert "locomo10.json" in error and "not UTF-8" in error and "Traceback" not in error
