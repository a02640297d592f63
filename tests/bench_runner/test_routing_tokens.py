"""Every routed model call stores the token count its tier was chosen on, and it fits the tier."""

from __future__ import annotations

import pytest

from omlab.bench.results import calls_df, runs_df
from omlab.cli.main import main

from .suites import write_suite


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("routing")
    suite = write_suite(folder, seeds="[11]")
    text = suite.read_text().replace(
        "[models]\n", '[models]\nobserver = { upTo = { 700 = "omlab/observer", 100000 = "omlab/observer" } }\n'
    )
    assert "upTo" in text
    suite.write_text(text)
    out = folder / "results"
    assert main(["run", str(suite), "--results", str(out), "--workers", "1", "--quiet"]) == 0
    return out


def test_routed_calls_store_a_routing_input_within_their_tier(results):
    (run_id,) = runs_df(results)["run_id"]
    calls = calls_df(results, run_id)
    routed = calls[calls["tier"].notna()]
    assert len(routed) >= 2 and set(routed["role"]) == {"observer"}
    assert routed["routing_tokens"].notna().all()
    lower = {700: 0, 100000: 700}
    for row in routed.itertuples():
        assert lower[row.tier] < row.routing_tokens <= row.tier, row
    # the prompt is larger than what the router saw: that is why the two are stored apart
    assert (routed["input_tokens"] > routed["routing_tokens"]).all()
    assert calls.loc[calls["tier"].isna(), "routing_tokens"].isna().all()


def test_calls_list_shows_the_routing_input(results, capsys):
    assert main(["calls", "list", "latest", "--results", str(results), "--role", "observer"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert "routing_tokens" in header
