"""Engine throughput on long synthetic replays (issue 2).

Replays synthetic conversations of about 250k, 500k and 1M tokens (tokenx estimate) through
ObservationalMemory with the built-in offline models in virtual time, and prints engine throughput
(tokens/s) and the ratio of engine time to a plain tokenization pass over the same text. Cost must
grow linearly: the 1M run must take no more than 4.5x the 250k run. Each size runs ``--repeat``
times (default 3) and the median run is reported, so one hiccup on a shared 2-core machine does
not decide the ratio.

    .venv/bin/python benchmarks/bench_engine.py [--sizes 250000 500000 1000000] [--sync]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from omlab import ObservationalMemory
from omlab.bench.datasets import generate_synthetic
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message
from omlab.engine.scheduler import FixedLatency, VirtualScheduler
from omlab.tokens.tokenx import estimate_line_cached, estimate_token_count


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[250_000, 500_000, 1_000_000])
    parser.add_argument("--sync", action="store_true", help="bufferTokens: false (synchronous observation only)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size; the median time is reported")
    args = parser.parse_args()

    rows = []
    for size in args.sizes:
        messages = conversation_messages(size)
        text_tokens = sum(estimate_token_count(m.text) for m in messages)
        start = time.perf_counter()
        for m in messages:
            estimate_token_count(m.text)
        tokenize_s = time.perf_counter() - start
        runs = []
        for _ in range(max(1, args.repeat)):
            estimate_line_cached.cache_clear()  # every run starts cold, whatever ran before it
            start = time.perf_counter()
            stats = asyncio.run(replay(messages, buffering=not args.sync))
            runs.append((time.perf_counter() - start, stats))
        engine_s, stats = sorted(runs, key=lambda run: run[0])[len(runs) // 2]  # the median run
        rows.append((size, len(messages), text_tokens, engine_s, tokenize_s, stats))
        print(f"{size:>9,} target | {len(messages):>6,} msgs | {text_tokens:>9,} tokens | engine {engine_s:7.2f} s "
              f"({text_tokens / engine_s:>9,.0f} tok/s) | tokenize {tokenize_s:6.3f} s | ratio {engine_s / tokenize_s:6.1f}x"
              f" | cycles {stats['cycles']:>4} | generations {stats['generations']:>3}"
              f" | in offline models {stats['model_s']:5.2f} s, engine alone {engine_s - stats['model_s']:5.2f} s",
              flush=True)
    last_stats = rows[-1][5]
    print(f"marginal cost of the {rows[-1][0]:,} run, seconds per eighth of the conversation: "
          + " ".join(f"{b:.2f}" for b in last_stats["buckets"])
          + "  (the first eighths are cheaper: the log starts empty and reflection starts at "
          "observationTokens x bufferActivation)")
    if len(rows) >= 2:
        base, last = rows[0], rows[-1]
        size_growth = last[2] / base[2]
        limit = 4.5 * size_growth / 4  # the target: 4.5x time for 4x the tokens
        for label, t0, t1 in (("total", base[3], last[3]),
                              ("engine alone", base[3] - base[5]["model_s"], last[3] - last[5]["model_s"])):
            growth = t1 / t0
            verdict = f"OK (<= {limit:.2f}x)" if growth <= limit else f"TOO SLOW (> {limit:.2f}x)"
            print(f"{label}: time growth {base[0]:,} -> {last[0]:,}: {growth:.2f}x for {size_growth:.2f}x the tokens: {verdict}")


if __name__ == "__main__":
    main()
