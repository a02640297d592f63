"""Sweep ``bufferTokens`` x ``blockAfter`` in virtual time (issue 3).

Replays one synthetic ~200k-token conversation through ObservationalMemory with the offline models
on a virtual clock, for every cell of a 5x5 grid, with a provider-like latency model for the
Observer and Reflector. Prints per cell: blocked seconds, synchronous observations, activations,
average and peak context (raw message + observation) tokens, and the wall time of the whole sweep.
Cells run in a process pool (2 workers by default).

    .venv/bin/python benchmarks/bench_buffering_sweep.py [--tokens 200000] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from concurrent.futures import ProcessPoolExecutor

from omlab import ObservationalMemory
from omlab.bench.datasets import generate_synthetic
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message
from omlab.engine.scheduler import TokenRateLatency, VirtualScheduler

BUFFER_TOKENS = [0.05, 0.1, 0.2, 0.3, 0.5]
BLOCK_AFTER = [1.1, 1.2, 1.5, 2.0, 3.0]
MESSAGE_TOKENS = 10_000
OBSERVATION_TOKENS = 15_000
#: a slow provider: ~3 s to start, prefill 2k tok/s, decode 15 tok/s (an Observer call takes
#: 20-60 s) against a fast-talking conversation (a turn every 3 s, like a tool loop)
LATENCY = TokenRateLatency(base_s=3.0, input_tps=2_000.0, output_tps=15.0)
TURN_PACE_S = 3.0


def _messages(tokens: int) -> list[Message]:
    conversation = generate_synthetic(
        3, int(tokens * 1.2), n_questions=10, turn_pace=TURN_PACE_S, session_tokens=40_000
    )
    return [
        Message.of(t.role, t.content, t.created_at, id=f"m{i:06d}") for i, t in enumerate(conversation.iter_turns())
    ]


def run_cell(args: tuple[float, float, int]) -> dict:
    buffer_tokens, block_after, tokens = args
    messages = _messages(tokens)

    async def replay() -> dict:
        clock = VirtualClock(messages[0].created_at)
        om = ObservationalMemory(
            {
                "observation": {
                    "model": "omlab/observer",
                    "messageTokens": MESSAGE_TOKENS,
                    "bufferTokens": buffer_tokens,
                    "blockAfter": block_after,
                },
                "reflection": {"model": "omlab/reflector", "observationTokens": OBSERVATION_TOKENS},
            },
            scheduler=VirtualScheduler(clock, LATENCY),
        )
        blocked = sync_obs = activations = 0
        context = []
        for message in messages:
            clock.set(message.created_at)
            result = await om.add_messages("sweep", [message])
            blocked += result.blocked_s
            sync_obs += result.sync_observations
            activations += result.activations
            context.append(result.status.pending_tokens + result.status.observation_tokens)
        return {
            "buffer_tokens": buffer_tokens,
            "block_after": block_after,
            "blocked_s": blocked,
            "sync_observations": sync_obs,
            "activations": activations,
            "avg_context": sum(context) / len(context),
            "peak_context": max(context),
        }

    return asyncio.run(replay())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    cells = [(b, a, args.tokens) for b, a in itertools.product(BUFFER_TOKENS, BLOCK_AFTER)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(run_cell, cells))
    wall = time.perf_counter() - start
    print(f"messageTokens={MESSAGE_TOKENS:,} observationTokens={OBSERVATION_TOKENS:,} latency={LATENCY}")
    print(
        f"{'bufferTokens':>12} {'blockAfter':>10} {'blocked s':>10} {'sync obs':>8} {'activations':>11} "
        f"{'avg ctx':>9} {'peak ctx':>9}"
    )
    for r in rows:
        print(
            f"{r['buffer_tokens']:>12} {r['block_after']:>10} {r['blocked_s']:>10.1f} {r['sync_observations']:>8} "
            f"{r['activations']:>11} {r['avg_context']:>9,.0f} {r['peak_context']:>9,}"
        )
    print(f"{len(rows)} cells over ~{args.tokens:,} tokens in {wall:.1f} s wall time ({args.workers} workers)")


if __name__ == "__main__":
    main()
