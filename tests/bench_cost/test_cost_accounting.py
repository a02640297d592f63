"""Cost accounting that cannot lie: a run served from the response cache pays nothing, and its
cost *as configured* is priced with its own price map, never copied from the cached entries."""

from __future__ import annotations

import json

import pytest
from bench_runner.suites import write_suite

from omlab.bench.report.metrics import metric_value
from omlab.bench.results import answers_df, calls_df, runs_df
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite
from omlab.cli.main import main

PRICES_X = """[models.prices]
"omlab/observer" = { input_per_mtok = 0.3, output_per_mtok = 2.5 }
"omlab/reflector" = { input_per_mtok = 0.3, output_per_mtok = 2.5 }
"omlab/reader" = { input_per_mtok = 0.15, output_per_mtok = 0.6 }
"omlab/judge" = { input_per_mtok = 2.5, output_per_mtok = 10.0 }
"""
PRICES_Y = """[models.prices]
"omlab/observer" = { input_per_mtok = 1.25, output_per_mtok = 10.0 }
"omlab/reflector" = "openai/gpt-4o-mini"
"omlab/reader" = { input_per_mtok = 3.0, output_per_mtok = 15.0 }
"omlab/judge" = { input_per_mtok = 0.1, output_per_mtok = 0.4 }
"""


def _suite(folder, prices: str):
    folder.mkdir(parents=True, exist_ok=True)
    return write_suite(folder, "cost", seeds="[11]", prices=False, extra=prices)


def _run(suite, results, cache_mode: str):
    options = RunOptions(results_dir=results, cache_mode=cache_mode, workers=1, progress=False, auto_resume=False)
    return run_suite(suite, options)[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("cost")
    shared = root / "shared-results"
    first = _run(_suite(root / "x", PRICES_X), shared, "write")
    from_cache = _run(_suite(root / "y", PRICES_Y), shared, "read")
    fresh = _run(_suite(root / "y-fresh", PRICES_Y), root / "fresh-results", "off")
    return shared, first, from_cache, root / "fresh-results", fresh


def test_a_run_served_from_the_cache_pays_nothing_and_is_priced_with_its_own_map(runs):
    shared, first, from_cache, _, fresh = runs
    calls = calls_df(shared, from_cache.run_id)
    assert len(calls) and calls["cached"].all()
    configured = metric_value(from_cache.metrics, "cost_usd")
    assert configured > 0
    assert configured == pytest.approx(metric_value(fresh.metrics, "cost_usd"), rel=1e-9)
    assert configured != pytest.approx(metric_value(first.metrics, "cost_usd"), rel=1e-3)
    assert metric_value(from_cache.metrics, "cost_usd_paid") == 0.0
    assert (calls["cost_usd_paid"] == 0.0).all()
    for group in ("role:observer", "role:reflector", "role:actor", "role:judge"):
        assert metric_value(from_cache.metrics, "cost_usd", group) == pytest.approx(
            metric_value(fresh.metrics, "cost_usd", group), rel=1e-9
        ), group
    # the fresh run sent every call: what it paid is its cost as configured
    assert metric_value(fresh.metrics, "cost_usd_paid") == pytest.approx(metric_value(fresh.metrics, "cost_usd"))


def test_answers_carry_both_costs_per_question(runs):
    shared, _, from_cache, fresh_dir, fresh = runs
    cached = answers_df(shared, from_cache.run_id).set_index("question_id")
    sent = answers_df(fresh_dir, fresh.run_id).set_index("question_id")
    assert (cached["actor_cost_usd_paid"] == 0.0).all()
    assert cached["judge_cost_usd"].tolist() == pytest.approx(sent.loc[cached.index, "judge_cost_usd"].tolist())
    assert sent["judge_cost_usd_paid"].tolist() == pytest.approx(sent["judge_cost_usd"].tolist())


def test_the_run_records_its_price_map(runs):
    shared, _, from_cache, _, _ = runs
    header = runs_df(shared).set_index("run_id").loc[from_cache.run_id]
    price_map = json.loads(header["price_map"])
    assert price_map["litellm_version"] == header["litellm_version"]
    assert price_map["overrides"]["omlab/reflector"] == "openai/gpt-4o-mini"
    assert price_map["models"]["omlab/observer"] == {"input_per_mtok": 1.25, "output_per_mtok": 10.0}
    assert price_map["models"]["omlab/reflector"]["input_per_mtok"] > 0


def test_calls_list_shows_both_costs_labelled(runs, capsys):
    shared, _, from_cache, _, _ = runs
    assert main(["calls", "list", from_cache.run_id, "--results", str(shared), "--limit", "0"]) == 0
    out = capsys.readouterr().out
    assert "cost_usd_paid" in out.splitlines()[0]
    assert "total cost as configured $" in out
    assert "paid in this run $0.0000" in out


def test_the_report_labels_both_costs(runs):
    from omlab.bench.report.run_report import write_report

    shared, _, from_cache, _, _ = runs
    text = write_report(shared, from_cache.run_id).read_text(encoding="utf-8")
    assert "| cost paid in this run (USD) | $0.0000 |" in text
    assert "| group | cost as configured | paid in this run | calls |" in text
