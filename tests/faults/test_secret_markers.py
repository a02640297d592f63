"""No secret from any place a key can be given reaches any output, even when a provider echoes
the request (headers and body) in its error messages."""

from __future__ import annotations

import gzip
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from .fault_server import FaultServer

ROOT = Path(__file__).resolve().parents[2]

SENT = {
    "engine observation providerOptions.openai.apiKey": "mkr-engine-obs-po-1111",
    "models.reflector modelSettings.api_key": "mkr-settings-ref-2222",
    "models.actor headers": "mkr-header-actor-3333",
    "models.actor modelSettings.api_key": "mkr-settings-actor-4444",
    "models.judge providerOptions.openai.apiKey": "mkr-entry-po-judge-5555",
}
NOT_SENT = {
    "engine reflection providerOptions.anthropic.apiKey": "mkr-engine-ref-anthropic-6666",
    "environment OPENAI_API_KEY": "mkr-env-7777",
}


def _suite(url: str) -> str:
    base = f'api_base = "{url}"'
    return f"""
[suite]
name = "secrets"

[dataset]
kind = "synthetic"
seeds = [11]
target_tokens = 4000
n_questions = 4

[engine.observation]
messageTokens = 1200
bufferTokens = 0.25
blockAfter = 1.2
failurePolicy = "continue"
providerOptions = {{ openai = {{ apiKey = "{SENT["engine observation providerOptions.openai.apiKey"]}" }} }}

[engine.reflection]
observationTokens = 1500
providerOptions = {{ anthropic = {{ apiKey = "{NOT_SENT["engine reflection providerOptions.anthropic.apiKey"]}" }} }}

[models]
observer = {{ model = "openai/observer", modelSettings = {{ {base} }} }}
reflector = {{ model = "openai/reflector", modelSettings = {{ {base}, api_key = "{SENT["models.reflector modelSettings.api_key"]}" }} }}
actor = {{ model = "openai/reader", headers = {{ "X-Custom-Auth" = "{SENT["models.actor headers"]}" }}, modelSettings = {{ {base}, api_key = "{SENT["models.actor modelSettings.api_key"]}" }} }}
judge = {{ model = "openai/judge", providerOptions = {{ openai = {{ apiKey = "{SENT["models.judge providerOptions.openai.apiKey"]}" }} }}, modelSettings = {{ {base} }} }}

[models.prices]
"openai/observer" = {{ input_per_mtok = 0.3, output_per_mtok = 2.5 }}
"openai/reflector" = {{ input_per_mtok = 0.3, output_per_mtok = 2.5 }}
"openai/reader" = {{ input_per_mtok = 0.15, output_per_mtok = 0.6 }}
"openai/judge" = {{ input_per_mtok = 2.5, output_per_mtok = 10.0 }}

[latency]
default = {{ kind = "fixed", seconds = 4 }}

[retry]
timeout = 5
max_retries = 1
backoff = 0.01
"""


def _omlab(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "omlab.cli.main", *args],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.stdout + done.stderr


def _dump_results(results: Path) -> str:
    from omlab.bench.results import TABLES, ResultsCatalog

    catalog = ResultsCatalog(results)
    return "\n".join(catalog.read_table(table).to_csv() for table in TABLES)


def _every_file(folder: Path, *, but: Path) -> dict[str, str]:
    texts = {}
    for path in folder.rglob("*"):
        if not path.is_file() or path == but:
            continue
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            data = gzip.decompress(data)
        texts[str(path.relative_to(folder))] = data.decode("utf-8", errors="replace")
        if path.suffix == ".sqlite":
            with sqlite3.connect(path) as db:
                for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
                    texts[f"{path.name}:{table}"] = repr(db.execute(f'SELECT * FROM "{table}"').fetchall())
    return texts


def test_no_planted_secret_reaches_any_output(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": NOT_SENT["environment OPENAI_API_KEY"],
        "OMLAB_CACHE_DIR": str(tmp_path / "home-cache"),
    }
    results = tmp_path / "results"
    suite = tmp_path / "secrets.toml"
    with FaultServer(rate=0.5, seed=3, faults=("echo",), lifetime_s=240) as server:
        suite.write_text(_suite(server.url))
        outputs = {"run": _omlab("run", str(suite), "--results", str(results), "--quiet", env=env)}
    for command in (
        ["report", "latest", "--plots", "--format", "html"],
        ["report", "latest"],
        ["calls", "list", "latest", "--limit", "1000"],
        ["events", "list", "latest", "--limit", "100000"],
        ["export", "latest", "--format", "csv", "--out", str(tmp_path / "export")],
    ):
        outputs[" ".join(command[:2])] = _omlab(*command, "--results", str(results), env=env)
    echoed = "\n".join(server.echoed)
    # the test can fail: the provider did echo every key that was sent
    assert all(marker in echoed for marker in SENT.values()), "a planted key never reached the server"
    errors = _dump_results(results)
    assert "cannot serve" in errors, "the echoed errors were recorded"
    sources = {**outputs, "results tables": errors, **_every_file(tmp_path, but=suite)}
    leaked = {
        (where, source)
        for where, marker in {**SENT, **NOT_SENT}.items()
        for source, text in sources.items()
        if marker in text
    }
    assert leaked == set()
