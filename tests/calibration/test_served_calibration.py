"""End to end: a run against a local server with a set compression, ``omlab calibrate``, and an
offline replay with the profile that writes as much observation text and reflects as often."""

from __future__ import annotations

import json

import pytest

from omlab.bench.calibration import load_profile
from omlab.bench.report.metrics import metric_value
from omlab.bench.results import events_df
from omlab.bench.run.runner import RunOptions, run_suite
from omlab.cli.main import main
from omlab.tokens.tokenx import estimate_token_count
from tests.servers.compressing_server import CompressingServer

SUITE = """
[suite]
name = "{name}"

[dataset]
kind = "synthetic"
seeds = [1]
target_tokens = 6000
n_questions = 1

[engine]
observation = {{ messageTokens = 500, bufferTokens = false }}
reflection = {{ observationTokens = 500 }}

[models]
{models}

[phases]
run = ["prepare"]

[cache]
mode = "off"
"""
SERVED = """observer = {{ model = "openai/served-observer", modelSettings = {{ api_base = "{url}", api_key = "local" }} }}
reflector = {{ model = "openai/served-reflector", modelSettings = {{ api_base = "{url}", api_key = "local" }} }}
"""
PROFILED = """observer = "omlab/observer"
reflector = "omlab/reflector"

[models.profiles]
observer = "{profile}"
reflector = "{profile}"
"""


def _observation_tokens(results, run_id: str) -> int:
    events = events_df(results, run_id, types="data-om-observation-end")
    texts = [
        json.loads(p)["observations"]
        for p, op in zip(events["payload"], events["operation_type"])
        if op == "observation"
    ]
    return sum(estimate_token_count(t) for t in texts)


@pytest.mark.slow
def test_served_run_calibrates_an_offline_replay(tmp_path, capsys):
    results = tmp_path / "results"
    with CompressingServer(observer_ratio=4.0, reflector_ratio=3.0, base_s=0.0, output_s=0.0, sigma=0.0) as server:
        served_file = tmp_path / "served.toml"
        served_file.write_text(SUITE.format(name="served", models=SERVED.format(url=server.url)))
        (served,) = run_suite(served_file, RunOptions(results_dir=results, progress=False))
    assert served.status == "finished"
    profile_path = tmp_path / "profile.json"
    assert main(["calibrate", served.run_id, "--results", str(results), "--out", str(profile_path)]) == 0
    assert "profile written to" in capsys.readouterr().out
    fit = load_profile(str(profile_path)).fit_for("observer")
    assert fit.model == "openai/served-observer" and fit.failure_rate == 0.0
    offline_file = tmp_path / "offline.toml"
    offline_file.write_text(SUITE.format(name="offline", models=PROFILED.format(profile=profile_path)))
    (replayed,) = run_suite(offline_file, RunOptions(results_dir=results, progress=False))
    served_tokens, replayed_tokens = (
        _observation_tokens(results, served.run_id),
        _observation_tokens(results, replayed.run_id),
    )
    assert replayed_tokens == pytest.approx(served_tokens, rel=0.1)
    reflections = [metric_value(s.metrics, "sync_reflections") for s in (served, replayed)]
    assert reflections[0] >= 2 and reflections[1] == reflections[0]


def test_calibrate_command_names_a_missing_role(tmp_path, capsys):
    results = tmp_path / "results"
    suite = tmp_path / "offline.toml"
    suite.write_text(
        SUITE.format(name="offline", models='observer = "omlab/observer"').replace(
            "observationTokens = 500", "observationTokens = 40000"
        )
    )
    (summary,) = run_suite(suite, RunOptions(results_dir=results, progress=False))
    assert main(["calibrate", summary.run_id, "--results", str(results)]) == 2
    assert f"run {summary.run_id}: no model calls for role 'reflector'" in capsys.readouterr().err
