"""Time to first paint of ``omlab view``'s run list over a results folder of 200 runs (target: < 2 s).

Generates the folder: one real offline run of a small synthetic suite (the quickstart with one
conversation), then 199 copies of its file, each with its own run id, suite, configuration, status,
tags and headline numbers, a third of them in sweeps of 9 cells, each summarised as its writer
summarises a run it closes. Then starts the real command
(``omlab view --port N``) and opens the list in Chromium (Debian's, through playwright), reading the
browser's first-contentful-paint time of each load (from navigation start: the request, the server
reading all 200 run files, rendering, and the browser painting). Prints the first load's figure (the
server's first request), the median and the slowest of ``--loads`` loads, and the time from starting
the command to the first paint.

    .venv/bin/python benchmarks/bench_view.py [--runs 200] [--loads 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import duckdb

from omlab.bench.results.summary import write_summary

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("OMLAB_CHROMIUM", "/usr/bin/chromium"))
SUITE = (
    (REPO / "benchmarks" / "quickstart.toml")
    .read_text()
    .replace("seeds = [1, 2, 3]", "seeds = [1]")
    .replace('name = "quickstart"', 'name = "bench-view"')
)
TABLES_WITH_RUN_ID = (
    "runs",
    "conversations",
    "steps",
    "events",
    "model_calls",
    "answers",
    "scores",
    "metrics",
    "lineage",
    "lineage_questions",
)


def generate(results: Path, runs: int, env: dict[str, str]) -> float:
    """``runs`` run files under ``results``; returns the seconds it took."""
    started = time.perf_counter()
    suite = results.parent / "bench-view.toml"
    suite.write_text(SUITE)
    command = [sys.executable, "-m", "omlab.cli.main", "run", str(suite), "--results", str(results)]
    subprocess.run(command, env=env, check=True, capture_output=True)
    [template] = sorted((results / "runs").glob("*.duckdb"))
    rng = random.Random(7)
    tags: dict[str, list[str]] = {}
    for index in range(1, runs):
        run_id = f"2025{index // 28 + 1:02d}{index % 28 + 1:02d}T{index % 24:02d}0000-{index:06x}"
        path = results / "runs" / f"{run_id}.duckdb"
        shutil.copy(template, path)
        sweep = f"sweep{index // 9:03d}" if index < runs // 3 else None
        config = {"sweep_id": sweep, "engine": {"observation": {"bufferTokens": round(0.1 * (index % 9 + 1), 1)}}}
        with duckdb.connect(str(path)) as connection:
            for table in TABLES_WITH_RUN_ID:
                connection.execute(f"UPDATE {table} SET run_id = ?", [run_id])
            connection.execute(
                "UPDATE runs SET suite = ?, config_name = ?, status = ?, config_json = ?",
                [
                    f"suite-{index % 4}",
                    f"bufferTokens={config['engine']['observation']['bufferTokens']}",
                    rng.choice(["finished"] * 8 + ["incomplete", "failed"]),
                    json.dumps(config),
                ],
            )
            connection.execute(
                "UPDATE metrics SET value = value * ? WHERE name IN ('accuracy', 'cost_usd', 'retention')",
                [rng.uniform(0.5, 1.5)],
            )
        write_summary(results, run_id)  # as the run's writer does when it closes the run
        if index % 5 == 0:
            tags[run_id] = ["baseline"] if index % 10 else ["baseline", "paper"]
    (results / "tags.json").write_text(json.dumps(tags))
    return time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> None:
    """Generate the folder, serve it, and print the paint times."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it (reused when it has the runs)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="omlab-bench-view-"))
    root.mkdir(parents=True, exist_ok=True)
    results = root / "results"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "MPLBACKEND": "Agg",
    }
    existing = len(list((results / "runs").glob("*.duckdb"))) if results.is_dir() else 0
    if existing != args.runs:
        shutil.rmtree(results, ignore_errors=True)
        print(f"generated {args.runs} runs in {generate(results, args.runs, env):.1f} s under {results}")
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    launched = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "omlab.cli.main", "view", "--results", str(results), "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.02)
        listening = time.perf_counter() - launched
        paints = []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            for load in range(args.loads):
                page.goto(url)
                rows = page.locator("table#runs tr[data-run]").count()
                paint = page.evaluate(
                    "performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint').startTime"
                )
                paints.append(paint / 1000)
                if load == 0:
                    cold = time.perf_counter() - launched
                    assert rows == args.runs, f"the list shows {rows} runs, not {args.runs}"
            browser.close()
        with urllib.request.urlopen(url + "?sort=m.accuracy&desc=1", timeout=60) as response:
            assert response.status == 200
    finally:
        server.terminate()
        server.wait(timeout=20)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"omlab view over {args.runs} runs: listening {listening:.2f} s after start")
    print(
        f"time to first paint of the run list: first load {paints[0]:.2f} s, median {statistics.median(paints):.2f} s, "
        f"slowest {max(paints):.2f} s over {len(paints)} loads (target < 2 s)"
    )
    print(f"from starting 'omlab view' to the first paint: {cold:.2f} s")


if __name__ == "__main__":
    main()
