"""Prepare-phase throughput on LongMemEval_s-sized conversations (issue 14).

LongMemEval_s is 500 conversations of about 115k tokens; its prepare phase (every conversation
replayed through the engine with the offline models, rows written to the run's DuckDB file) must
take under 10 minutes on 2 cores, about 96k tokens/s in total. This runs the prepare phase of a
few synthetic conversations of that size (the suite ``bench_scale.py`` uses, on the process pool)
and prints tokens/s, conversations/min and the projected time of the whole 500 x 115k on this
machine, twice: from the CPU time of an in-process run (what 2 idle cores would do: the work is
CPU-bound and conversations are independent) and from the wall time of a run on the process pool
with ``--workers`` workers (what this machine does now, under its current load, printed beside it).

Before that it splits one conversation's prepare, replayed in this process, into its parts: the
synthetic generator, the engine, the offline models (timed inside the model client), building
the prepared memory, and what is left of the run (rows, results database, pool), so a change can
be judged on the part it targets. The machine is shared: compare runs made back to back, or the
parts' ratios within one run.

    .venv/bin/python benchmarks/bench_prepare.py [--conversations 4] [--tokens 115000] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

SUITE = """
[suite]
name = "bench-prepare"

[dataset]
kind = "synthetic"
seeds = {seeds}
target_tokens = {tokens}
n_questions = 1
session_tokens = 10000

[engine]
observation = {{ messageTokens = 30000, bufferTokens = 0.2, blockAfter = 1.2 }}
reflection = {{ observationTokens = 40000 }}

[phases]
run = ["prepare"]

[cache]
mode = "off"
prepared = false
"""
"""The prepare suite of ``bench_scale.py``: synthetic conversations, offline models, no caches."""

LONGMEMEVAL_S_CONVERSATIONS = 500
LONGMEMEVAL_S_TOKENS = 115_000
TARGET_S = 600.0


def write_suite(folder: Path, conversations: int, tokens: int) -> Path:
    suite = folder / "bench-prepare.toml"
    suite.write_text(SUITE.format(seeds=list(range(1, conversations + 1)), tokens=tokens), encoding="utf-8")
    return suite


def parts_of_one(suite_path: Path, tokens: int) -> dict[str, float]:
    """Seconds of one conversation's prepare, split into its parts (replayed in this process)."""
    from omlab.bench.datasets import generate_synthetic
    from omlab.bench.run.prepared import PreparedMemory
    from omlab.bench.run.replay import replay_conversation
    from omlab.bench.suite.run_settings import RunSettings
    from omlab.bench.suite.suite_file import expand_grid, load_suite

    (cell,) = expand_grid(load_suite(suite_path))
    settings = RunSettings.from_cell(cell, results_dir=suite_path.parent / "parts")
    started = time.perf_counter()
    conversation = generate_synthetic(1, tokens, n_questions=1, session_tokens=10_000)
    generated = time.perf_counter()
    clients = []

    def make_client(on_call):
        clients.append(settings.make_client(on_call))
        return clients[-1]

    replay = settings.replay
    moments: dict[str, float] = {}

    async def prepare_one() -> None:
        result = await replay_conversation(
            conversation,
            settings.engine_options,
            make_client=make_client,
            latency=settings.latency_for(conversation.id),
            ingest=replay.ingest,
            timezone=replay.timezone,
            scope=replay.scope,
            debug_payloads=replay.debug_payloads,
        )
        moments["replayed"] = time.perf_counter()
        await PreparedMemory.from_replay(result)
        moments["built"] = time.perf_counter()

    asyncio.run(prepare_one())
    replayed, built = moments["replayed"], moments["built"]
    models = sum(sum(client.offline_seconds.values()) for client in clients)
    return {
        "generator": generated - started,
        "engine": replayed - generated - models,
        "offline models": models,
        "prepared memory": built - replayed,
    }


def run_prepare(suite_path: Path, results_dir: Path, workers: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of the suite's prepare phase, results database
    included; with one worker everything runs in this process, so the CPU time is all of it."""
    from omlab.bench.run.options import RunOptions
    from omlab.bench.run.runner import run_suite

    started, cpu_started = time.perf_counter(), time.process_time()
    (summary,) = run_suite(suite_path, RunOptions(results_dir=results_dir, workers=workers, progress=False))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    if summary.n_conversations == 0:
        raise SystemExit("the run prepared no conversation")
    return wall, cpu


def projection(rate: float) -> str:
    """The time of the whole LongMemEval_s prepare phase at ``rate`` tokens/s, and the verdict."""
    projected = LONGMEMEVAL_S_CONVERSATIONS * LONGMEMEVAL_S_TOKENS / rate
    verdict = "OK" if projected <= TARGET_S else "TOO SLOW"
    return f"{projected / 60:.1f} min: {verdict}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=4, help="conversations to prepare")
    parser.add_argument("--tokens", type=int, default=LONGMEMEVAL_S_TOKENS, help="tokens per conversation")
    parser.add_argument("--workers", type=int, default=2, help="pool workers (and the idle cores projected)")
    args = parser.parse_args()

    import omlab.bench.run.runner  # noqa: F401 - imported before any timing

    tokens = args.conversations * args.tokens
    with tempfile.TemporaryDirectory(prefix="omlab-bench-prepare-") as folder:
        suite = write_suite(Path(folder), args.conversations, args.tokens)
        parts = parts_of_one(suite, args.tokens)
        one = sum(parts.values())
        print(
            f"one conversation of ~{args.tokens:,} tokens, in this process: {one:.2f} s = "
            + ", ".join(f"{name} {seconds:.2f} s ({100 * seconds / one:.0f}%)" for name, seconds in parts.items())
        )
        wall, cpu = run_prepare(suite, Path(folder) / "in-process", 1)
        per_core = tokens / cpu
        print(
            f"prepare phase in this process, {args.conversations} x ~{args.tokens:,} tokens: {wall:.1f} s wall, "
            f"{cpu:.1f} s CPU = {per_core:,.0f} tokens per CPU second, {args.conversations / cpu * 60:.1f} "
            f"conversations per CPU minute"
        )
        pool_wall, _ = run_prepare(suite, Path(folder) / "pool", args.workers)
    pool_rate = tokens / pool_wall
    print(
        f"prepare phase on the pool, {args.workers} workers: {pool_wall:.1f} s wall, {pool_rate:,.0f} tokens/s, "
        f"{args.conversations / pool_wall * 60:.1f} conversations/min (load average now "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )
    whole = f"{LONGMEMEVAL_S_CONVERSATIONS} x {LONGMEMEVAL_S_TOKENS:,} tokens"
    target = f"target < {TARGET_S / 60:.0f} min, {LONGMEMEVAL_S_CONVERSATIONS * LONGMEMEVAL_S_TOKENS / TARGET_S:,.0f} tokens/s"
    print(
        f"projected {whole} ({target}): on {args.workers} idle cores {projection(args.workers * per_core)}"
        f" | at the pool's measured rate {projection(pool_rate)}"
    )


if __name__ == "__main__":
    main()
