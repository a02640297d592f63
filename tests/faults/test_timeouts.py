"""Per-role request timeouts and call deadlines: suite ``[retry]`` and ``--timeout``/``--deadline``."""

from __future__ import annotations

import pytest
from bench_runner.suites import write_suite

from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import _settings
from omlab.bench.suite.retry import DEFAULT_TIMEOUT_S, RetrySpec, parse_seconds_flag
from omlab.bench.suite.run_settings import RunSettings
from omlab.bench.suite.suite_file import expand_grid, load_suite
from omlab.bench.suite.tables import SuiteError
from omlab.cli.main import main

RETRY = """
[retry]
timeout = 45
deadline = 200
judge = { timeout = 5, max_retries = 2 }
"""


def test_defaults_are_per_role_and_bounded_by_the_deadline():
    spec = RetrySpec()
    assert {role: spec.policy_for(role).attempt_timeout_s for role in DEFAULT_TIMEOUT_S} == DEFAULT_TIMEOUT_S
    assert spec.policy_for("judge").deadline_s == 300.0
    short = RetrySpec(common={"deadline": 10.0})
    assert short.policy_for("observer").attempt_timeout_s == 10.0  # a request never outlives its call


def test_the_suite_sets_every_role_and_one_role(tmp_path):
    suite = load_suite(write_suite(tmp_path, extra=RETRY))
    settings = RunSettings.from_cell(expand_grid(suite)[0], results_dir=tmp_path / "results")
    judge, actor = settings.retry.policy_for("judge"), settings.retry.policy_for("actor")
    assert (judge.attempt_timeout_s, judge.deadline_s, judge.max_retries) == (5.0, 200.0, 2)
    assert (actor.attempt_timeout_s, actor.deadline_s) == (45.0, 200.0)
    client = settings.make_client(lambda call: None)
    assert client.retry_by_role["judge"] == judge


def test_cli_flags_win_over_the_suite(tmp_path):
    suite = load_suite(write_suite(tmp_path, extra=RETRY))
    options = RunOptions(results_dir=tmp_path, timeout={"": 3.0, "observer": 9.0}, deadline={"judge": 4.0})
    retry = _settings(expand_grid(suite)[0], options).retry
    assert retry.policy_for("judge").attempt_timeout_s == 3.0 and retry.policy_for("judge").deadline_s == 4.0
    assert retry.policy_for("observer").attempt_timeout_s == 9.0
    assert retry.policy_for("actor").attempt_timeout_s == 3.0 and retry.policy_for("actor").deadline_s == 200.0


@pytest.mark.parametrize(
    ("table", "option"),
    [
        ("timeout = 0", "retry.timeout"),
        ('deadline = "soon"', "retry.deadline"),
        ("judge = { timeout = -1 }", "retry.judge.timeout"),
        ("actor = { max_retries = 1.5 }", "retry.actor.max_retries"),
        ("writer = { timeout = 3 }", "retry.writer"),
        ("judge = 5", "retry.judge"),
    ],
)
def test_bad_values_are_rejected_at_load_with_the_option_name(tmp_path, table, option):
    with pytest.raises(SuiteError, match=option.replace(".", r"\.")):
        load_suite(write_suite(tmp_path, extra=f"[retry]\n{table}\n"))


def test_bad_flags_name_the_flag(tmp_path, capsys):
    assert parse_seconds_flag("judge=2.5", "--timeout") == ("judge", 2.5)
    assert parse_seconds_flag("30", "--deadline") == ("", 30.0)
    for bad in ("0", "writer=3", "judge=soon"):
        with pytest.raises(ValueError, match="--timeout"):
            parse_seconds_flag(bad, "--timeout")
    suite = write_suite(tmp_path)
    assert main(["run", str(suite), "--results", str(tmp_path / "r"), "--quiet", "--timeout", "judge=-3"]) == 2
    assert "--timeout 'judge=-3'" in capsys.readouterr().err
