"""Suite files: parsing, defaults, grid expansion, hashes, and errors that name file and key."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omlab.bench.datasets.schema import Conversation, Session, Turn
from omlab.bench.suite.run_settings import RunSettings, model_strings
from omlab.bench.suite.suite_file import DEFAULT_MODELS, SuiteError, cell_name, expand_grid, load_suite, parse_suite

MINIMAL = {"suite": {"name": "mini"}, "dataset": {"kind": "synthetic"}}


def _suite(**tables):
    return parse_suite({**MINIMAL, **tables}, source="mini.toml")


def _error(tables, match: str, *, key: str | None = None) -> SuiteError:
    with pytest.raises(SuiteError, match=match) as caught:
        parse_suite({**MINIMAL, **tables}, source="mini.toml")
    assert str(caught.value).startswith("mini.toml")
    if key is not None:
        assert caught.value.key == key
    return caught.value


def test_minimal_suite_gets_offline_defaults():
    suite = _suite()
    (cell,) = expand_grid(suite)
    assert cell.name == "default" and cell.point == {}
    assert cell.models == DEFAULT_MODELS
    assert cell.engine["observation"]["model"] == "omlab/observer"
    assert cell.engine["reflection"]["model"] == "omlab/reflector"
    assert suite.phases == ("prepare", "answer", "judge")
    assert suite.cache.mode == "write" and suite.cache.prepared is True
    assert suite.latency["default"] == {"kind": "token-rate"}


def test_models_table_wins_over_engine_models_and_engine_top_model_fills_in():
    suite = _suite(engine={"model": "openai/gpt-4o-mini"}, models={"reflector": "omlab/reflector"})
    (cell,) = expand_grid(suite)
    assert "model" not in cell.engine
    assert cell.engine["observation"]["model"] == "openai/gpt-4o-mini"  # from [engine] model
    assert cell.engine["reflection"]["model"] == "omlab/reflector"  # [models] wins


def test_grid_is_a_cartesian_product_last_key_fastest():
    suite = _suite(
        engine={"observation": {"buffer_tokens": 0.5, "messageTokens": 4000}},
        grid={"observation.bufferTokens": [0.1, 0.2], "observation.blockAfter": [1.2, 1.5, 2]},
    )
    cells = expand_grid(suite)
    assert [c.name for c in cells] == [
        "bufferTokens=0.1,blockAfter=1.2",
        "bufferTokens=0.1,blockAfter=1.5",
        "bufferTokens=0.1,blockAfter=2",
        "bufferTokens=0.2,blockAfter=1.2",
        "bufferTokens=0.2,blockAfter=1.5",
        "bufferTokens=0.2,blockAfter=2",
    ]
    first = cells[0].engine["observation"]
    # the grid's camelCase key replaces the snake_case spelling of the same option
    assert first["bufferTokens"] == 0.1 and "buffer_tokens" not in first and first["messageTokens"] == 4000
    assert suite.engine["observation"] == {"buffer_tokens": 0.5, "messageTokens": 4000}  # suite untouched


def test_grid_over_models():
    cells = expand_grid(_suite(grid={"models.actor": ["omlab/reader", "openai/gpt-4o-mini"]}))
    assert [c.models["actor"] for c in cells] == ["omlab/reader", "openai/gpt-4o-mini"]
    assert cells[1].name == "actor=openai/gpt-4o-mini"


def test_router_models_are_accepted_and_listed():
    router = {"upTo": {"10000": "omlab/observer", "40000": "google/gemini-2.5-flash"}}
    suite = _suite(models={"observer": router})
    (cell,) = expand_grid(suite)
    assert cell.engine["observation"]["model"] == router
    assert model_strings(router) == ["omlab/observer", "google/gemini-2.5-flash"]


def test_cell_names():
    assert cell_name({}) == "default"
    assert (
        cell_name({"observation.bufferTokens": False, "reflection.observationTokens": 40000.0})
        == "bufferTokens=false,observationTokens=40000"
    )


@pytest.mark.parametrize(
    ("tables", "match", "key"),
    [
        ({"suite": {}}, "suite.name", "suite.name"),
        ({"dataset": {"kind": "csv"}}, "dataset.kind.*synthetic", "dataset.kind"),
        ({"dataset": {"kind": "synthetic", "seed": 3}}, "unknown key", "dataset.seed"),
        ({"dataset": {"kind": "synthetic", "limit": 0}}, "integer >= 1", "dataset.limit"),
        ({"dataset": {"kind": "jsonl"}}, "needs a path", "dataset.path"),
        ({"dataset": {"kind": "synthetic", "seeds": []}}, "seeds", "dataset.seeds"),
        ({"results": {}}, "unknown table", "results"),
        ({"grid": {"observation.bufferTokens": 0.2}}, "non-empty list", "grid.observation.bufferTokens"),
        ({"grid": {"models.planner": ["a/b"]}}, "must name a role", "grid.models.planner"),
        ({"latency": {"default": {"kind": "gamma"}}}, "latency kind", "latency.default"),
        ({"latency": {"observer": {"kind": "fixed"}}}, "needs seconds", "latency.observer.seconds"),
        (
            {"latency": {"default": {"kind": "fixed", "seconds": 1, "sigma": 2}}},
            "unknown field",
            "latency.default.sigma",
        ),
        ({"replay": {"ingest": "session"}}, "message, pair", "replay.ingest"),
        ({"replay": {"scope": "resource"}}, "engine's scope is 'thread'", "replay.scope"),
        ({"replay": {"scope": "galaxy"}}, "must be 'thread' or 'resource'", "replay.scope"),
        ({"replay": {"timezone": "Mars/Olympus"}}, "time zone", "replay.timezone"),
        ({"phases": {"run": ["judge", "answer"]}}, "order", "phases.run"),
        ({"scoring": {"verdict": "maybe"}}, "parity", "scoring.verdict"),
        ({"cache": {"mode": "sometimes"}}, "strict", "cache.mode"),
        ({"run": {"executor": "dask"}}, "pool, ray", "run.executor"),
        ({"run": {"executor": "ray", "address": "headnode"}}, "ray://HOST:PORT", "run.address"),
        ({"models": {"actor": "gpt-4o"}}, "provider/model", "models.actor"),
        ({"models": {"critic": "omlab/judge"}}, "unknown key", "models.critic"),
        ({"engine": {"observation": {"bufferTokens": -1}}}, "must be > 0", "engine.observation.bufferTokens"),
        (
            {"engine": {"scope": "resource", "observation": {"bufferTokens": False}}},
            r"\[replay\] scope is 'thread'",
            "replay.scope",
        ),
    ],
)
def test_errors_name_the_file_and_key(tables, match, key):
    _error(tables, match, key=key)


def test_a_grid_cell_the_engine_refuses_names_the_grid_key():
    # blockAfter with bufferTokens: false is ignored with a warning, so the refused cell is a shared
    # budget with buffering on
    error = _error(
        {
            "engine": {"shareTokenBudget": True, "observation": {"bufferTokens": False}},
            "grid": {"observation.bufferTokens": [False, 0.2]},
        },
        "shareTokenBudget",
        key=None,
    )
    assert "bufferTokens=0.2" in str(error)  # which cell


def test_implied_phases():
    assert _suite(phases={"run": ["answer"]}).phases == ("prepare", "answer")
    assert _suite(phases={"run": ["prepare"]}).phases == ("prepare",)


def test_load_suite_reads_toml_and_reports_syntax_errors(tmp_path: Path):
    good = tmp_path / "good.toml"
    good.write_text('[suite]\nname = "g"\n[dataset]\nkind = "synthetic"\nseeds = [1, 2]\n', encoding="utf-8")
    suite = load_suite(good)
    assert suite.dataset.seeds == (1, 2) and suite.base_dir == str(tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text("[suite\nname = 1\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=r"bad\.toml: invalid TOML"):
        load_suite(bad)
    with pytest.raises(SuiteError, match="no such suite file"):
        load_suite(tmp_path / "missing.toml")


def test_bundled_suites_parse():
    root = Path(__file__).resolve().parents[2] / "benchmarks"
    quickstart = load_suite(root / "quickstart.toml")
    assert quickstart.name == "quickstart" and len(expand_grid(quickstart)) == 1
    sweep = load_suite(root / "sweep_buffering.toml")
    assert len(expand_grid(sweep)) == 9


def test_hashes_separate_memory_from_answering(tmp_path: Path):
    conversation = _conversation()
    base = RunSettings.from_cell(expand_grid(_suite())[0], results_dir=tmp_path)
    other_actor = RunSettings.from_cell(
        expand_grid(_suite(models={"actor": "openai/gpt-4o-mini"}))[0], results_dir=tmp_path
    )
    other_engine = RunSettings.from_cell(
        expand_grid(_suite(engine={"observation": {"messageTokens": 999}}))[0], results_dir=tmp_path
    )
    more_workers = RunSettings.from_cell(
        expand_grid(_suite(run={"workers": 7}))[0], results_dir=tmp_path, cache_mode="strict"
    )
    identity = {"kind": "synthetic"}
    assert base.prepare_key(conversation) == other_actor.prepare_key(conversation)
    assert base.run_hash(identity) != other_actor.run_hash(identity)
    assert base.prepare_key(conversation) != other_engine.prepare_key(conversation)
    assert base.run_hash(identity) == more_workers.run_hash(identity)  # parallelism and cache mode never count
    assert base.run_hash(identity) != base.run_hash({"kind": "synthetic", "limit": 2})
    assert len(base.run_hash(identity)) == 64


def test_latency_models_are_seeded_per_conversation(tmp_path: Path):
    suite = _suite(
        latency={
            "default": {"kind": "lognormal", "median_s": 3.0, "sigma": 0.5},
            "reflector": {"kind": "fixed", "seconds": 9},
        }
    )
    settings = RunSettings.from_cell(expand_grid(suite)[0], results_dir=tmp_path)
    from omlab.engine.scheduler import CallCost

    cost = CallCost(role="observer", model="omlab/observer", measured_s=0.0, input_tokens=10, output_tokens=5)
    draws = [settings.latency_for("c1").latency_s(cost) for _ in range(2)]
    assert draws[0] == draws[1]  # a fresh model per conversation replays the same draws
    assert settings.latency_for("c2").latency_s(cost) != draws[0]
    reflector = CallCost(role="reflector", model="omlab/reflector", measured_s=0.0, input_tokens=10, output_tokens=5)
    assert settings.latency_for("c1").latency_s(reflector) == 9


def _conversation() -> Conversation:
    from datetime import UTC, datetime

    at = datetime(2024, 1, 1, tzinfo=UTC)
    return Conversation(
        id="x",
        sessions=[Session(id="s1", date=at, turns=[Turn(id="t1", role="user", content="hi", created_at=at)])],
        questions=[],
        dataset="test",
    )


@given(st.lists(st.integers(min_value=1, max_value=3), min_size=0, max_size=3))
def test_grid_size_is_the_product_of_its_axes(sizes):
    grid = {f"observation.option{i}": list(range(n)) for i, n in enumerate(sizes)}
    suite = parse_suite({**MINIMAL, "grid": {}}, source="mini.toml")
    suite = dataclasses.replace(suite, grid=grid)
    cells = expand_grid(suite)
    assert len(cells) == math.prod(sizes)
    assert len({c.name for c in cells}) == len(cells)
    for cell in cells:
        for key, value in cell.point.items():
            assert cell.engine["observation"][key.split(".")[1]] == value
