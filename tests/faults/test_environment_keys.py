"""A key that comes from the environment never reaches any output, whatever its shape, even when
the provider's 401 quotes it bare (issue 24 item 3)."""

from __future__ import annotations

import os

import pytest

from .fault_server import FaultServer, fault_suite
from .test_secret_markers import ROOT, _dump_results, _every_file, _omlab

KEYS = {
    "32-hex": "0123456789abcdef" * 2,
    "64-hex": "fedcba9876543210" * 4,
    "gsk": "gsk_" + "Qw3rTy7uIo9pAs1dFg5hJk2lZx8cVb4n" + "M6",
}


@pytest.mark.parametrize("shape", sorted(KEYS))
def test_an_environment_key_echoed_by_a_401_never_reaches_any_output(tmp_path, shape):
    key = KEYS[shape]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": key,
        "OMLAB_CACHE_DIR": str(tmp_path / "home-cache"),
    }
    results = tmp_path / "results"
    suite = tmp_path / "keys.toml"
    with FaultServer(rate=0.3, seed=5, faults=("echo_key",), lifetime_s=240) as server:
        # the suite names no key: litellm sends the environment's
        suite.write_text(fault_suite(server.url, seeds="[11]").replace(', api_key = "fault-key"', ""))
        outputs = {"run": _omlab("run", str(suite), "--results", str(results), env=env)}
    for command in (
        ["report", "latest", "--format", "html"],
        ["report", "latest"],
        ["calls", "list", "latest", "--limit", "1000"],
        ["runs"],
    ):
        outputs[" ".join(command[:2])] = _omlab(*command, "--results", str(results), env=env)
    # the test can fail: the provider did quote the key, and its errors were recorded
    assert server.echoed and all(key in message for message in server.echoed)
    tables = _dump_results(results)
    assert "Incorrect API key provided" in tables
    sources = {**outputs, "results tables": tables, **_every_file(tmp_path, but=suite)}
    leaked = sorted(source for source, text in sources.items() if key in text)
    assert leaked == []
