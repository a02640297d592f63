"""Bad calibration input gets an error naming the role, the profile or the file and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omlab.bench.calibration import CalibrationError, ProfileError, calibrate_run, load_profile
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite
from omlab.bench.suite.suite_file import SuiteError, load_suite

SUITE = """
[suite]
name = "calib-errors"

[dataset]
kind = "synthetic"
seeds = [1]
target_tokens = 3000
n_questions = 1

[engine]
observation = {{ messageTokens = 1200, bufferTokens = false }}
reflection = {{ observationTokens = 40000 }}

[phases]
run = ["prepare"]

[cache]
mode = "off"
{extra}
"""

GOOD_FIT = {
    "role": "observer",
    "model": "openai/x",
    "compression": {"content_tokens": [100, 1000], "ratios": [3.0, 5.0]},
}


def _suite(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.format(extra=extra))
    return path


def _profile(tmp_path: Path, data: object, name: str = "profile.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_a_role_without_model_calls_is_named(tmp_path):
    (summary,) = run_suite(_suite(tmp_path), RunOptions(results_dir=tmp_path / "results", progress=False))
    with pytest.raises(CalibrationError, match=r"no model calls for role 'reflector' \(roles with calls: observer\)"):
        calibrate_run(tmp_path / "results", summary.run_id)
    profile = calibrate_run(tmp_path / "results", summary.run_id, roles=("observer",))
    assert [f.role for f in profile.fits] == ["observer"]


def test_unknown_profile_name_is_named_with_its_suite_key(tmp_path):
    suite = _suite(tmp_path, '[models.profiles]\nobserver = "no-such-profile"\n')
    with pytest.raises(SuiteError, match=r"models\.profiles\.observer: no-such-profile: unknown profile"):
        load_suite(suite)


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ("{not json", r"not JSON \(line 1"),
        ({"format": "something-else", "version": 1, "fits": [GOOD_FIT]}, "format: must be 'omlab-model-profile'"),
        ({"format": "omlab-model-profile", "version": 9, "fits": [GOOD_FIT]}, "version: this omlab reads version 1"),
        ({"format": "omlab-model-profile", "version": 1, "fits": []}, "fits: must be a non-empty list"),
        (
            {"format": "omlab-model-profile", "version": 1, "fits": [{**GOOD_FIT, "role": 3}]},
            r"fits\[0\]\.role: must be a non-empty string",
        ),
        (
            {
                "format": "omlab-model-profile",
                "version": 1,
                "fits": [{**GOOD_FIT, "compression": {"content_tokens": [100, 1000], "ratios": [3.0, -1]}}],
            },
            r"fits\[0\]\.compression: compression\.ratios must be numbers > 0",
        ),
        (
            {"format": "omlab-model-profile", "version": 1, "fits": [{**GOOD_FIT, "latency": {"base_s": "fast"}}]},
            r"fits\[0\]\.latency\.base_s: must be a number >= 0",
        ),
        (
            {"format": "omlab-model-profile", "version": 1, "fits": [{**GOOD_FIT, "failure_rate": 2}]},
            r"fits\[0\]\.failure_rate: must be a number in \[0, 1\]",
        ),
    ],
)
def test_malformed_profile_file_names_the_file_and_field(tmp_path, content, named):
    path = _profile(tmp_path, content)
    with pytest.raises(ProfileError, match=named) as caught:
        load_profile(str(path))
    assert str(path) in str(caught.value)
    # the same error reaches a suite that uses the file, under the suite key
    with pytest.raises(SuiteError, match=r"models\.profiles\.observer: .*profile\.json"):
        load_suite(_suite(tmp_path, '[models.profiles]\nobserver = "profile.json"\n'))


def test_profile_without_the_role_or_on_a_provider_model_is_refused(tmp_path):
    _profile(tmp_path, {"format": "omlab-model-profile", "version": 1, "fits": [GOOD_FIT]})
    with pytest.raises(SuiteError, match=r"models\.profiles\.reflector: .*no fit for role 'reflector'"):
        load_suite(_suite(tmp_path, '[models.profiles]\nreflector = "profile.json"\n'))
    with pytest.raises(SuiteError, match=r"models\.profiles\.observer: a profile sizes the offline omlab/observer"):
        load_suite(
            _suite(
                tmp_path, '[models]\nobserver = "openai/gpt-4o-mini"\n[models.profiles]\nobserver = "profile.json"\n'
            )
        )


def test_profile_latency_and_latency_table_for_one_role_conflict(tmp_path):
    fit = {**GOOD_FIT, "latency": {"base_s": 1.0, "output_s": 0.01, "sigma": 0.2}}
    _profile(tmp_path, {"format": "omlab-model-profile", "version": 1, "fits": [fit]})
    extra = '[models.profiles]\nobserver = "profile.json"\n[latency]\nobserver = { kind = "fixed", seconds = 2 }\n'
    with pytest.raises(SuiteError, match=r"latency\.observer: \[models\.profiles\] observer already sets"):
        load_suite(_suite(tmp_path, extra))


def test_a_profile_sizes_the_engine_model_and_times_the_role(tmp_path):
    fit = {**GOOD_FIT, "latency": {"base_s": 1.0, "output_s": 0.01, "sigma": 0.2}}
    _profile(tmp_path, {"format": "omlab-model-profile", "version": 1, "fits": [fit]})
    suite = load_suite(_suite(tmp_path, '[models.profiles]\nobserver = "profile.json#openai/x"\n'))
    from omlab.bench.suite.suite_file import expand_grid

    (cell,) = expand_grid(suite)
    model = cell.engine["observation"]["model"]
    assert model["model"] == "omlab/observer"
    assert model["modelSettings"]["profile"]["ratios"] == [3.0, 5.0]
    assert suite.latency["by_name"]["observer"] == {
        "kind": "calibrated",
        "base_s": 1.0,
        "input_s": 0.0,
        "output_s": 0.01,
        "sigma": 0.2,
    }


def test_a_profiled_model_is_priced_as_the_real_one_when_that_has_a_price(tmp_path):
    fits = [
        {**GOOD_FIT, "model": "openai/gpt-4o-mini"},
        {**GOOD_FIT, "role": "reflector", "model": "mastra:prod.db"},
    ]
    _profile(tmp_path, {"format": "omlab-model-profile", "version": 1, "fits": fits})
    extra = '[models.profiles]\nobserver = "profile.json"\nreflector = "profile.json"\n'
    suite = load_suite(_suite(tmp_path, extra))
    assert suite.prices == {"omlab/observer": "openai/gpt-4o-mini"}  # the label has no price: left as is
    priced = load_suite(_suite(tmp_path, '[models.prices]\n"omlab/observer" = "openai/gpt-4o"\n' + extra))
    assert priced.prices == {"omlab/observer": "openai/gpt-4o"}
