"""Fail fast at suite load: a suite is checked against its dataset before any model call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omlab.bench.results import runs_df
from omlab.bench.scoring.longmemeval_judge import OMLAB_TEMPLATES, PROMPT_KEYS
from omlab.bench.suite.suite_file import load_suite
from omlab.bench.suite.tables import SuiteError
from omlab.cli.main import main

from .corpus import conversation, write_jsonl, write_suite

ROOT = Path(__file__).resolve().parents[2]
LOCOMO_SAMPLE = ROOT / "datasets" / "samples" / "locomo_sample.json"


def _run(suite: Path, results: Path, *extra: str, command: str = "run") -> int:
    return main([command, str(suite), "--results", str(results), "--quiet", *extra])


def _no_run(results: Path) -> bool:
    return not (results / "runs").exists() or runs_df(results).empty


def _locomo_suite(folder: Path, *, kind: str = "locomo", extra: str = "") -> Path:
    data = folder / "locomo_sample.json"
    data.write_bytes(LOCOMO_SAMPLE.read_bytes())
    return write_suite(folder, kind, data, extra=extra)


def test_judge_prompts_without_the_datasets_types_are_refused_before_any_call(tmp_path, capsys):
    # the LongMemEval prompt keys only (as in the official file): no template for LoCoMo's types
    prompts = tmp_path / "lme_prompts.json"
    prompts.write_text(json.dumps({key: OMLAB_TEMPLATES[key] for key in PROMPT_KEYS}), encoding="utf-8")
    suite = _locomo_suite(tmp_path, extra='[scoring]\njudge_prompts = "lme_prompts.json"\n')
    results = tmp_path / "results"
    assert _run(suite, results) == 2
    error = capsys.readouterr().err
    assert "scoring.judge_prompts" in error and "single-hop" in error and '"default"' in error
    assert _no_run(results)


def test_a_locomo_file_declared_as_jsonl_gets_the_right_kind_named(tmp_path, capsys):
    suite = _locomo_suite(tmp_path, kind="jsonl")
    assert _run(suite, tmp_path / "results") == 2
    error = capsys.readouterr().err
    assert "looks like a LoCoMo file" in error and 'use kind = "locomo"' in error
    assert "invalid JSON" not in error


def test_a_jsonl_file_declared_as_locomo_gets_the_right_kind_named(tmp_path, capsys):
    suite = write_suite(tmp_path, "locomo", write_jsonl(tmp_path, "mine.jsonl", conversation()))
    assert _run(suite, tmp_path / "results") == 2
    assert 'use kind = "jsonl"' in capsys.readouterr().err


def test_sweep_on_a_suite_without_a_grid_is_refused(tmp_path, capsys):
    suite = write_suite(tmp_path, "jsonl", write_jsonl(tmp_path, "mine.jsonl", conversation()))
    results = tmp_path / "results"
    assert _run(suite, results, command="sweep") == 2
    error = capsys.readouterr().err
    assert "[grid]" in error and "omlab run" in error
    assert _no_run(results)


@pytest.mark.parametrize(
    ("role", "model", "expected"),
    [
        ("actor", "omlab/nope", ("models.actor", "'omlab/nope'", "omlab/reader")),
        ("observer", "omlab/nope", ("models.observer", "'omlab/nope'", "omlab/observer")),
        ("judge", "foo/bar", ("models.judge", "'foo'", "'foo/bar'", "provider")),
    ],
)
def test_models_that_cannot_resolve_are_refused_with_their_name(tmp_path, capsys, role, model, expected):
    extra = f'[models]\n{role} = "{model}"\n'
    suite = write_suite(tmp_path, "jsonl", write_jsonl(tmp_path, "mine.jsonl", conversation()), extra=extra)
    results = tmp_path / "results"
    assert _run(suite, results) == 2
    error = capsys.readouterr().err
    for phrase in expected:
        assert phrase in error, error
    assert _no_run(results)


def test_a_model_in_a_grid_cell_is_checked_too(tmp_path):
    extra = '[grid]\n"models.actor" = ["omlab/reader", "omlab/nope"]\n'
    with pytest.raises(SuiteError, match="grid.models.actor.*'omlab/nope'"):
        load_suite(write_suite(tmp_path, "jsonl", write_jsonl(tmp_path, "m.jsonl", conversation()), extra=extra))


def test_models_without_a_price_are_named(tmp_path):
    from omlab.bench.suite.preflight import check_models

    extra = '[models.prices]\n"omlab/reader" = "openai/no-such-model-anywhere"\n"omlab/judge" = "openai/gpt-4o"\n'
    suite = load_suite(write_suite(tmp_path, "jsonl", write_jsonl(tmp_path, "m.jsonl", conversation()), extra=extra))
    warnings = check_models(suite)
    assert [(w.kind, w.record) for w in warnings] == [("unpriced_model", "models.actor 'omlab/reader'")]
    assert "[models.prices]" in warnings[0].detail


def test_suites_are_found_by_name_and_a_typo_lists_them():
    from omlab.bench.suite.suite_file import find_suite

    assert find_suite("quickstart", [ROOT / "benchmarks"]) == ROOT / "benchmarks" / "quickstart.toml"
    by_suite_name = find_suite("longmemeval-published", [ROOT / "benchmarks"])
    assert by_suite_name == ROOT / "benchmarks" / "longmemeval_published.toml"
    with pytest.raises(SuiteError) as raised:
        find_suite("quikstart", [ROOT / "benchmarks"])
    message = str(raised.value)
    assert "did you mean 'quickstart'" in message
    assert "quickstart" in message and "sweep-buffering" in message and "longmemeval-published" in message


def test_omlab_run_finds_a_suite_by_name_from_the_checkout(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    assert main(["run", "quikstart", "--results", str(tmp_path), "--quiet"]) == 2
    assert "did you mean 'quickstart'" in capsys.readouterr().err
    assert load_suite("quickstart").name == "quickstart"
