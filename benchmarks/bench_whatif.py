"""How long one what-if slider change takes: re-simulate the sample and redraw (target: ~2 s).

Builds the what-if panel on the default ~40k-token sample (no debounce), then moves one slider at
a time through ``--changes`` different values (every slider in turn) and times each change from
the new value to the redrawn sawtooth and summary table. Prints the median and the slowest
change, and the median of the simulation alone (``wall_s`` of each simulation).

    .venv/bin/python benchmarks/bench_whatif.py [--changes 10]
"""

from __future__ import annotations

import argparse
import statistics
import time

from omlab.viz.simulate import sample_conversation
from omlab.viz.widgets.whatif import what_if

# Distinct values per slider, all accepted by the engine, visited round-robin.
CHANGES: dict[str, list[float]] = {
    "block_after": [1.5, 2.0, 1.1],
    "buffer_tokens": [0.3, 0.1, 0.4],
    "observer_latency_s": [30.0, 90.0, 45.0],
    "message_tokens": [5000, 3000, 6000],
    "buffer_activation": [0.6, 0.9, 0.7],
    "observation_tokens": [8000, 5000, 10000],
}


def main() -> None:
    """Time the slider changes and print them."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=int, default=10)
    args = parser.parse_args()

    started = time.perf_counter()
    view = what_if(debounce_s=0)
    sample = sample_conversation()
    print(
        f"sample: {len(sample.messages)} messages, {sample.n_tokens:,} tokens; panel built in "
        f"{time.perf_counter() - started:.2f} s"
    )

    names = list(CHANGES)
    changes, simulations = [], []
    for index in range(args.changes):
        name = names[index % len(names)]
        values = CHANGES[name]
        value = values[(index // len(names)) % len(values)]
        start = time.perf_counter()
        view.sliders[name].value = value
        changes.append(time.perf_counter() - start)
        simulations.append(view.state.summary["wall_s"])
        status = view.state.error or f"blocked {view.state.summary['blocked_s']:.0f} s"
        print(f"  {name:>19} = {value:<7} {changes[-1]:.2f} s (simulation {simulations[-1]:.2f} s)  {status}")

    print(
        f"{args.changes} slider changes: median {statistics.median(changes):.2f} s, "
        f"max {max(changes):.2f} s; simulation alone median {statistics.median(simulations):.2f} s"
    )


if __name__ == "__main__":
    main()
