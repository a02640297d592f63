"""LongMemEval_s-sized work on the process pool and on Ray (issue 14).

Prepare mode (default): ``--conversations`` synthetic conversations of ``--tokens`` tokens each
(LongMemEval_s: 500 x ~115k) go through the prepare phase (replay through the engine with the
offline models) once on the process pool and once on a local Ray instance, both with
``--workers`` CPUs. Prints the wall time of each, the Ray/pool ratio (target: Ray overhead
<= 15%), Ray's start-up time (paid once per run, included in its wall time), tokens/s and
conversations/min (target: the whole prepare phase under 10 minutes on 2 cores).

Sweep mode (``--sweep``): a 5x5 ``bufferTokens`` x ``blockAfter`` grid over one ``--tokens``
(default 200k) conversation, every phase, on the pool and on a two-node Ray cluster started on this
machine; prints both wall times (target < 1 min each) and whether the sweep tables are identical.

Cache mode (``--cache``): the latency of one response-cache lookup from a Ray worker, through the
read-only snapshot workers use and through a Ray actor serving the driver's cache.

    .venv/bin/python benchmarks/bench_scale.py [--conversations 500] [--tokens 115000] [--workers 2]
    .venv/bin/python benchmarks/bench_scale.py --sweep [--tokens 200000]
    .venv/bin/python benchmarks/bench_scale.py --cache
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

PREPARE_SUITE = """
[suite]
name = "scale-prepare"

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

SWEEP_SUITE = """
[suite]
name = "scale-sweep"

[dataset]
kind = "synthetic"
seeds = [7]
target_tokens = {tokens}
n_questions = 6
session_tokens = 20000
turn_pace_s = 0.5

[engine]
observation = {{ messageTokens = 10000, bufferActivation = 0.8 }}
reflection = {{ observationTokens = 40000 }}

[grid]
"observation.bufferTokens" = [0.05, 0.1, 0.2, 0.3, 0.5]
"observation.blockAfter" = [1.1, 1.2, 1.5, 2.0, 3.0]

[latency]
default = {{ kind = "token-rate", base_s = 2.0, input_tps = 8000, output_tps = 20 }}

[replay]
ingest = "pair"

[cache]
mode = "off"
prepared = false
"""


def prepare_mode(conversations: int, tokens: int, workers: int) -> None:
    from omlab.bench.run.options import RunOptions
    from omlab.bench.run.runner import run_suite

    with tempfile.TemporaryDirectory(prefix="omlab-scale-") as folder:
        suite = Path(folder) / "scale.toml"
        seeds = list(range(1, conversations + 1))
        suite.write_text(PREPARE_SUITE.format(seeds=seeds, tokens=tokens), encoding="utf-8")
        walls = {}
        for executor in ("pool", "ray"):
            options = RunOptions(results_dir=Path(folder) / executor, workers=workers, executor=executor)
            started = time.perf_counter()
            (summary,) = run_suite(suite, options)
            walls[executor] = time.perf_counter() - started
            print(f"{executor:>4}: {walls[executor]:8.1f} s  ({summary.n_conversations} conversations)")
        startup = ray_startup_s(workers)
    total_tokens = conversations * tokens
    print(f"conversations: {conversations} x ~{tokens:,} tokens = {total_tokens:,} tokens, {workers} workers")
    for executor, wall in walls.items():
        print(
            f"{executor:>4}: {total_tokens / wall:,.0f} tokens/s, {conversations / wall * 60:.1f} conversations/min, "
            f"whole prepare {wall / 60:.1f} min (target < 10 min)"
        )
    ratio = walls["ray"] / walls["pool"]
    print(f"ray / pool wall time: {ratio:.3f} (Ray overhead {100 * (ratio - 1):+.1f}%, target <= +15%)")
    print(
        f"of which Ray start-up (a local instance, measured alone): {startup:.1f} s; "
        f"ray / pool without it: {(walls['ray'] - startup) / walls['pool']:.3f}"
    )


def ray_startup_s(workers: int) -> float:
    from omlab.bench.run.executors import RayExecutor

    started = time.perf_counter()
    executor = RayExecutor(workers=workers)
    list(executor.run(abs, [1]))
    wall = time.perf_counter() - started
    executor.close()
    return wall


def sweep_mode(tokens: int, workers: int) -> None:
    import pandas as pd
    import ray
    from ray.cluster_utils import Cluster

    from omlab.bench.report.metrics import sweep_table
    from omlab.bench.results import metrics_df, runs_df
    from omlab.bench.run.options import RunOptions
    from omlab.bench.run.sweep import run_sweep

    with tempfile.TemporaryDirectory(prefix="omlab-scale-") as folder:
        suite = Path(folder) / "sweep.toml"
        suite.write_text(SWEEP_SUITE.format(tokens=tokens), encoding="utf-8")
        tables: dict[str, pd.DataFrame] = {}
        walls: dict[str, float] = {}
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        try:
            cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes(timeout=120)
            for executor in ("pool", "ray"):
                if executor == "ray":
                    ray.init(address=cluster.address, log_to_driver=False)
                results = Path(folder) / executor
                options = RunOptions(results_dir=results, workers=workers, executor=executor, progress=False)
                started = time.perf_counter()
                result = run_sweep(suite, options)
                walls[executor] = time.perf_counter() - started
                ids = [s.run_id for s in result.summaries]
                ordered = runs_df(results).set_index("run_id").loc[ids].reset_index()
                tables[executor] = sweep_table(ordered, metrics_df(results, ids)).drop(columns=["run_id"])
        finally:
            ray.shutdown()
            cluster.shutdown()
    print(f"5x5 grid over one ~{tokens:,}-token conversation, every phase")
    for executor, wall in walls.items():
        where = "process pool" if executor == "pool" else "two-node local Ray cluster"
        print(f"{executor:>4}: {wall:6.1f} s on the {where} (target < 60 s)")
    identical = tables["pool"].equals(tables["ray"])
    print(f"sweep tables identical: {identical}")
    if not identical:
        print(tables["pool"].compare(tables["ray"]))


def cache_mode(lookups: int) -> None:
    import ray

    from omlab.llm.cache import CachedResponse, ResponseCache
    from omlab.llm.cache_snapshot import LayeredCache, materialize, snapshot_bytes
    from omlab.llm.types import Usage

    with tempfile.TemporaryDirectory(prefix="omlab-scale-") as folder:
        path = Path(folder) / "responses.sqlite"
        cache = ResponseCache(path)
        keys = [f"{index:064x}" for index in range(2000)]
        for key in keys:
            cache.store(CachedResponse(key, "openai/x", "word " * 200, Usage(1000, 200), "stop"))
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            snapshot = ray.put(snapshot_bytes(path))

            @ray.remote
            def via_snapshot(data_ref: list, n: int) -> float:
                layered = LayeredCache(materialize(ray.get(data_ref[0])), "read")
                started = time.perf_counter()
                for index in range(n):
                    layered.get(keys[index % len(keys)])
                return (time.perf_counter() - started) / n

            @ray.remote
            class CacheServer:
                def __init__(self, cache_path: str) -> None:
                    self.cache = ResponseCache(cache_path, mode="read")

                def get(self, key: str):
                    return self.cache.get(key)

            server = CacheServer.remote(str(path))

            @ray.remote
            def via_actor(n: int) -> float:
                ray.get(server.get.remote(keys[0]))
                started = time.perf_counter()
                for index in range(n):
                    ray.get(server.get.remote(keys[index % len(keys)]))
                return (time.perf_counter() - started) / n

            snap = ray.get(via_snapshot.remote([snapshot], lookups))
            actor = ray.get(via_actor.remote(lookups))
        finally:
            ray.shutdown()
    print(f"one cache lookup from a Ray worker ({lookups} lookups, 2000 entries of ~1 kB):")
    print(f"  read-only snapshot: {snap * 1e6:8.1f} us")
    print(f"  Ray actor:          {actor * 1e6:8.1f} us  ({actor / snap:.0f}x the snapshot)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=500, help="conversations (prepare mode)")
    parser.add_argument("--tokens", type=int, help="tokens per conversation (default 115000; sweep 200000)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sweep", action="store_true", help="the 5x5 sweep on the pool and a two-node cluster")
    parser.add_argument("--cache", action="store_true", help="cache lookup latency: snapshot vs actor")
    parser.add_argument("--lookups", type=int, default=2000)
    args = parser.parse_args()
    if args.cache:
        cache_mode(args.lookups)
    elif args.sweep:
        sweep_mode(args.tokens or 200_000, args.workers)
    else:
        prepare_mode(args.conversations, args.tokens or 115_000, args.workers)


if __name__ == "__main__":
    main()
