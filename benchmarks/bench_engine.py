"""Engine throughput on long synthetic replays (issue 2).

Replays synthetic conversations of about 250k, 500k and 1M tokens (tokenx estimate) through
ObservationalMemory with the built-in offline models in virtual time, and prints engine throughput
(tokens/s) and the ratio of engine time to a plain tokenization pass over the same text. Cost must
grow linearly: the 1M run must take no more than 4.5x the 250k run.

This machine is a shared VM whose speed drifts by 15-30 % within seconds, so sizes are compared
in interleaved rounds of equal-duration units (4 x 250k, 2 x 500k, 1 x 1M replays), every replay
in a fresh interpreter (cold caches, a heap holding only its own conversation), and the verdict is the median over rounds of the per-round growth. (A
best-of-N figure would flatter the short runs, which more often fit inside one fast spell.)

    .venv/bin/python benchmarks/bench_engine.py [--sizes 250000 500000 1000000] [--rounds 4] [--sync]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import subprocess
import sys
import time
from statistics import median

from omlab import ObservationalMemory
from omlab.bench.datasets import generate_synthetic
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message
from omlab.engine.scheduler import FixedLatency, VirtualScheduler
from omlab.tokens.tokenx import estimate_token_count


def conversation_messages(target_tokens: int, seed: int = 1) -> list[Message]:
    # the generator sizes by chars/4; tokenx counts English ~15% lower, so ask for a bit more
    conversation = generate_synthetic(seed, int(target_tokens * 1.2), n_questions=10)
    return [Message.of(t.role, t.content, t.created_at, id=f"m{i:07d}") for i, t in enumerate(conversation.iter_turns())]


async def replay(messages: list[Message], *, buffering: bool) -> dict:
    from omlab.llm.client import ModelClient

    client = ModelClient()
    clock = VirtualClock(messages[0].created_at)
    observation = {"model": "omlab/observer", "messageTokens": 30_000}
    if not buffering:
        observation["bufferTokens"] = False
    om = ObservationalMemory(
        {"observation": observation, "reflection": {"model": "omlab/reflector", "observationTokens": 40_000}},
        scheduler=VirtualScheduler(clock, FixedLatency(20.0)),
        client=client,
    )
    steps = observed = 0
    # marginal cost: wall time per eighth of the conversation (flat = linear once warmed up)
    eighth = max(1, len(messages) // 8)
    buckets: list[float] = []
    started = time.perf_counter()
    for message in messages:
        clock.set(message.created_at)
        result = await om.add_messages("bench", [message])
        steps += 1
        observed += result.observed or result.activated
        if steps % eighth == 0 and len(buckets) < 8:
            now = time.perf_counter()
            buckets.append(now - started)
            started = now
    await om.finalize("bench")
    history = await om.get_history("bench")
    # wall time spent inside the offline models (they stand in for provider calls)
    model_s = sum(call.latency_s for call in client.calls)
    return {"steps": steps, "cycles": observed, "generations": len(history) - 1, "model_s": model_s,
            "buckets": buckets}


def timed_replay(size: int, *, buffering: bool) -> dict:
    """One replay of a ``size``-token conversation, timed; the stats plus ``seconds`` and ``gc_s``
    (time in garbage collections during the replay)."""
    messages = conversation_messages(size)
    collections = {"s": 0.0}
    started: dict[str, float] = {}

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            started["t"] = time.perf_counter()
        else:
            collections["s"] += time.perf_counter() - started.pop("t", time.perf_counter())

    gc.collect()
    gc.callbacks.append(on_gc)
    start = time.perf_counter()
    stats = asyncio.run(replay(messages, buffering=buffering))
    stats["seconds"] = time.perf_counter() - start
    gc.callbacks.remove(on_gc)
    stats["gc_s"] = collections["s"]
    return stats


def replay_in_fresh_process(size: int, *, buffering: bool) -> dict:
    """:func:`timed_replay` in a new interpreter: every run starts cold (empty memo caches, a heap
    holding only its own conversation), as a user's job would."""
    command = [sys.executable, __file__, "--child", str(size)] + ([] if buffering else ["--sync"])
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[250_000, 500_000, 1_000_000])
    parser.add_argument("--sync", action="store_true", help="bufferTokens: false (synchronous observation only)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (each runs every size)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)  # one timed replay, as JSON
    args = parser.parse_args()
    if args.child:
        print(json.dumps(timed_replay(args.child, buffering=not args.sync)))
        return

    sizes = sorted(args.sizes)
    conversations = {size: conversation_messages(size) for size in sizes}
    # Equal-duration units: a round replays each size often enough to cover the largest size's
    # tokens (4 x 250k, 2 x 500k, 1 x 1M), so every unit lasts about as long and meets the same
    # drift of this shared machine; a size's time in a round is the mean over its unit.
    copies = {size: max(1, round(sizes[-1] / size)) for size in sizes}
    per_round: dict[int, list[float]] = {size: [] for size in sizes}
    stats: dict[int, dict] = {}
    for round_index in range(max(1, args.rounds)):
        for size in sizes:
            times = []
            for _ in range(copies[size]):
                stats[size] = replay_in_fresh_process(size, buffering=not args.sync)
                times.append(stats[size]["seconds"])
            per_round[size].append(sum(times) / len(times))
        print(f"round {round_index + 1}: " + " | ".join(
            f"{size:,}: {per_round[size][-1]:.2f} s (mean of {copies[size]})" for size in sizes), flush=True)

    rows = []
    for size in sizes:
        messages = conversations[size]
        text_tokens = sum(estimate_token_count(m.text) for m in messages)
        tokenize_s = median(_timed(lambda: [estimate_token_count(m.text) for m in messages]) for _ in range(3))
        engine_s = median(per_round[size])
        rows.append((size, text_tokens, engine_s))
        print(f"{size:>9,} target | {len(messages):>6,} msgs | {text_tokens:>9,} tokens | engine {engine_s:6.2f} s "
              f"({text_tokens / engine_s:>9,.0f} tok/s) | tokenize {tokenize_s:6.3f} s | ratio {engine_s / tokenize_s:5.1f}x"
              f" | cycles {stats[size]['cycles']:>4} | generations {stats[size]['generations']:>3}"
              f" | last run: in offline models {stats[size]['model_s']:5.2f} s, in garbage collection"
              f" {stats[size]['gc_s']:4.2f} s", flush=True)
    print(f"marginal cost of the last {sizes[-1]:,} run, seconds per eighth of the conversation: "
          + " ".join(f"{b:.2f}" for b in stats[sizes[-1]]["buckets"])
          + "  (the first eighth is cheaper: the log starts empty and reflection starts at "
          "observationTokens x bufferActivation)")
    if len(rows) >= 2:
        base, last = rows[0], rows[-1]
        size_growth = last[1] / base[1]
        limit = 4.5 * size_growth / 4  # the target: 4.5x time for 4x the tokens
        growths = sorted(big / small for small, big in zip(per_round[base[0]], per_round[last[0]], strict=True))
        growth = median(growths)
        verdict = f"OK (<= {limit:.2f}x)" if growth <= limit else f"TOO SLOW (> {limit:.2f}x)"
        print(f"time growth {base[0]:,} -> {last[0]:,} for {size_growth:.2f}x the tokens, per round: "
              + " ".join(f"{g:.2f}x" for g in growths) + f"; median {growth:.2f}x: {verdict}")


def _timed(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
