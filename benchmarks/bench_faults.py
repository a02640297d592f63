"""A suite through a flaky provider: completion, retries, lost messages and wall time per fault rate.

Run: ``.venv/bin/python benchmarks/bench_faults.py [--rates 0 0.2 0.3] [--seeds 11 12 13]``.

All four roles (observer, reflector, actor, judge) call a local OpenAI-compatible server through
litellm (``tests/faults/fault_server.py``: 127.0.0.1, offline models behind it) that injects 429,
500, 503, hangs (0.5 s request timeout), malformed JSON, empty content and degenerate loops (one
bulleted line 120 times, a one-line 59-character loop, one line 400 times, in turn) at the given
rate. For each rate it prints the run's status, questions answered / failed, judge verdicts
missing, the server's requests and injected faults, the client's retries (attempts beyond the
first of each call), model calls that failed for good, messages lost (a message neither raw,
pending nor behind the observation cursor, or a commit without observation text; must be 0),
messages committed as garbage (an observation or buffered chunk holding loop text; must be 0),
keys leaked (the run's provider key comes from ``OPENAI_API_KEY``, a 64-hex value, and an
``echo_key`` fault quotes it bare in a 401; every results table of the run is searched for it;
must be 0) and the wall time.

Then the driver is killed: ``omlab run`` (``--executor pool``; ``--ray`` adds ``ray``) runs in a
subprocess against a healthy server, gets ``kill -9`` once the server saw 20 requests, and the
requests that start after the kill are counted (goal 0) until every process the run started (the
pool's workers; a local Ray instance's raylet, agents and workers) is gone, and the seconds until
then are printed.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from faults.fault_server import BULLET_LOOP, FAULTS, LOOP_TEXT, PHRASE_LOOP, FaultServer, fault_suite
from faults.message_accounting import account_messages
from faults.process_tree import RunProcesses

from omlab.bench.report.metrics import metric_value
from omlab.bench.results import TABLES, ResultsCatalog, answers_df, calls_df
from omlab.bench.results.redact import forget_environment
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite

PLANTED_KEY = "5f0c3a9e" * 8
"""The provider key of the run, from the environment: 64 hex characters, no known key shape."""


def one_rate(rate: float, seeds: list[int], seed: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="omlab-bench-faults-") as folder:
        results = Path(folder) / "results"
        suite = Path(folder) / "faulty.toml"
        started = time.perf_counter()
        loops = (BULLET_LOOP, PHRASE_LOOP, LOOP_TEXT)
        faults = (*FAULTS, "echo_key")
        saved = os.environ.get("OPENAI_API_KEY")
        os.environ["OPENAI_API_KEY"] = PLANTED_KEY
        forget_environment()
        try:
            with FaultServer(
                rate=rate, seed=seed, hang_s=1.0, lifetime_s=1_800, loop_text=loops, faults=faults
            ) as server:
                text = fault_suite(server.url, seeds=str(seeds), timeout_s=0.5).replace(', api_key = "fault-key"', "")
                suite.write_text(text)
                (summary,) = run_suite(suite, RunOptions(results_dir=results, progress=False, concurrency=4))
        finally:
            os.environ.pop("OPENAI_API_KEY") if saved is None else os.environ.__setitem__("OPENAI_API_KEY", saved)
            forget_environment()
        wall = time.perf_counter() - started
        catalog = ResultsCatalog(results)
        leaked = sum(catalog.read_table(table, summary.run_id).to_csv().count(PLANTED_KEY) for table in TABLES)
        calls = calls_df(results, summary.run_id)
        answers = answers_df(results, summary.run_id)
        accounting = account_messages(suite, results, summary.run_id)
        return {
            "rate": rate,
            "status": summary.status,
            "questions": len(answers),
            "failed": int((answers["status"] == "failed").sum()),
            "verdicts_missing": int(metric_value(summary.metrics, "judge_missing") or 0),
            "requests": server.requests,
            "faults": sum(server.faults.values()),
            "retries": int((calls["attempts"] - 1).clip(lower=0).sum()),
            "calls_failed": int(calls["error"].notna().sum()),
            "messages": accounting.messages,
            "lost": accounting.lost + accounting.empty_commits,
            "garbage": accounting.garbage,
            "keys_leaked": leaked,
            "wall_s": round(wall, 1),
            "by_kind": dict(sorted(server.faults.items())),
        }


def driver_kill(executor: str, seeds: list[int]) -> dict[str, object]:
    """``kill -9`` of an ``omlab run`` driver once the provider saw 20 requests: the requests that
    started after the kill (until every process the run started is gone, or 90 s) and the seconds
    until the last of them was gone (None: some still ran after 90 s)."""
    with tempfile.TemporaryDirectory(prefix="omlab-bench-kill-") as folder:
        suite = Path(folder) / "kill.toml"
        with FaultServer(rate=0.0, lifetime_s=600) as server:
            suite.write_text(fault_suite(server.url, seeds=str(seeds)))
            command = [sys.executable, "-m", "omlab.cli.main", "run", str(suite), "--quiet"]
            command += ["--results", str(Path(folder) / "results"), "--executor", executor]
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            driver = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            processes = RunProcesses(driver.pid)
            deadline = time.monotonic() + 300
            while server.requests < 20 and driver.poll() is None and time.monotonic() < deadline:
                processes.collect()
                time.sleep(0.05)
            processes.collect()
            os.kill(driver.pid, signal.SIGKILL)
            killed_at = time.monotonic()
            driver.wait()
            gone_s = processes.wait_gone(90, since=killed_at)
            after = server.requests_since(killed_at)
            processes.kill_all()
            return {"requests": after, "gone_s": None if gone_s is None else round(gone_s, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[0.0, 0.2, 0.3])
    parser.add_argument("--seeds", type=int, nargs="+", default=[11, 12, 13])
    parser.add_argument("--seed", type=int, default=7, help="the fault server's seed")
    parser.add_argument("--ray", action="store_true", help="also kill a driver that runs on Ray")
    parser.add_argument("--kill-only", action="store_true", help="only the driver kills, no fault rates")
    args = parser.parse_args()
    if args.kill_only:
        args.rates = []
    columns = ("rate", "status", "questions", "failed", "verdicts_missing", "requests", "faults", "retries")
    columns += ("calls_failed", "messages", "lost", "garbage", "keys_leaked", "wall_s")
    print(" ".join(f"{c:>16}" for c in columns))
    rows = []
    for rate in args.rates:
        row = one_rate(rate, args.seeds, args.seed)
        rows.append(row)
        print(" ".join(f"{row[c]!s:>16}" for c in columns), " faults by kind:", row["by_kind"], flush=True)
    lost = sum(int(row["lost"]) for row in rows)
    garbage = sum(int(row["garbage"]) for row in rows)
    leaked = sum(int(row["keys_leaked"]) for row in rows)
    after_kill = {}
    for executor in ("pool", "ray") if args.ray else ("pool",):
        killed = driver_kill(executor, args.seeds)
        after_kill[executor] = int(killed["requests"])  # type: ignore[call-overload]
        gone = "still running after 90 s" if killed["gone_s"] is None else f"all gone {killed['gone_s']} s after"
        print(
            f"requests after kill -9 of the driver ({executor}): {after_kill[executor]} (goal 0); "
            f"the run's processes: {gone} the kill",
            flush=True,
        )
    verdict = "OK" if lost == 0 and garbage == 0 and leaked == 0 and not any(after_kill.values()) else "FAIL"
    print(
        f"verdict: {verdict}: {lost} messages lost, {garbage} messages committed as garbage, {leaked} keys leaked "
        f"over {len(rows)} rates; {sum(after_kill.values())} requests after a driver kill (goal 0 each)"
    )


if __name__ == "__main__":
    main()
