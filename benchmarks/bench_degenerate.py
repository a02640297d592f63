"""False positives of the loop check on real, non-looping text.

Run: ``.venv/bin/python benchmarks/bench_degenerate.py [--seeds 1 2 3]``.

Every reply the offline models write during a quickstart-like run (``benchmarks/quickstart.toml``
with the given seeds, in this process) is recorded, by role, along with every string of at least
2,000 characters in the recorded reference traces (``tests/fixtures/mastra/*.json``: observation
logs, reflections, prompts). Each text goes through the periodicity check
(:func:`omlab.engine.periodicity.find_loop`) and the whole degenerate check
(:func:`omlab.engine.degenerate.is_degenerate`, on the sanitised text as every caller passes it).
None of them is a loop, so every flag is a false positive (goal 0). A control row checks that
looping replies (the same texts with their last line repeated to 8,000 characters) are all flagged.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from omlab.bench.run.runner import RunOptions, run_suite
from omlab.engine.degenerate import MIN_DEGENERATE_CHECK_CHARS, is_degenerate
from omlab.engine.observation_text import sanitize_observation_lines
from omlab.engine.periodicity import find_loop
from omlab.llm.offline import get_offline_model, offline_model_names, register_offline_model


def record_offline_replies(seeds: list[int]) -> dict[str, list[str]]:
    """Every reply each offline model wrote during a quickstart run with ``seeds``."""
    replies: dict[str, list[str]] = {}

    class Recording:
        def __init__(self, name: str) -> None:
            self.name, self.inner = name, get_offline_model(name)

        def generate(self, messages, **kwargs):
            result = self.inner.generate(messages, **kwargs)
            replies.setdefault(self.name, []).append(result.text)
            return result

    for name in offline_model_names():
        recording = Recording(name)
        register_offline_model(name, lambda recording=recording: recording)
    suite_text = (ROOT / "benchmarks" / "quickstart.toml").read_text()
    suite_text = suite_text.replace("seeds = [1, 2, 3]", f"seeds = {seeds}").replace('mode = "write"', 'mode = "off"')
    with tempfile.TemporaryDirectory(prefix="omlab-bench-degenerate-") as folder:
        suite = Path(folder) / "quickstart.toml"
        suite.write_text(suite_text)
        run_suite(suite, RunOptions(results_dir=Path(folder) / "results", progress=False, workers=1))
    return replies


def fixture_strings() -> Iterator[str]:
    """Every string value of at least 2,000 characters in the recorded reference traces."""
    for path in sorted((ROOT / "tests" / "fixtures" / "mastra").glob("*.json")):
        stack = [json.loads(path.read_text())]
        while stack:
            value = stack.pop()
            if isinstance(value, dict):
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)
            elif isinstance(value, str) and len(value) >= MIN_DEGENERATE_CHECK_CHARS:
                yield value


def _looped(text: str) -> str:
    last = [line for line in text.split("\n") if line.strip()][-1]
    return text + ("\n" + last) * (8_000 // (len(last) + 1) + 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args()
    groups: dict[str, list[str]] = {f"offline {k}": v for k, v in record_offline_replies(args.seeds).items()}
    groups["fixture strings"] = list(dict.fromkeys(fixture_strings()))
    print(f"{'texts':>24} {'count':>7} {'≥2,000 chars':>13} {'longest':>9} {'periodic':>9} {'degenerate':>11}")
    flagged_total = 0
    for label, texts in sorted(groups.items()):
        long = [t for t in texts if len(t) >= MIN_DEGENERATE_CHECK_CHARS]
        periodic = sum(find_loop(t) is not None for t in long)
        degenerate = sum(is_degenerate(sanitize_observation_lines(t)) for t in long)
        flagged_total += periodic + degenerate
        longest = max((len(t) for t in texts), default=0)
        print(f"{label:>24} {len(texts):>7} {len(long):>13} {longest:>9} {periodic:>9} {degenerate:>11}")
    controls = [_looped(t) for texts in groups.values() for t in texts if t.strip()]
    caught = Counter(is_degenerate(sanitize_observation_lines(t)) for t in controls)
    print(f"control: {caught[True]} of {len(controls)} texts with a looping tail flagged (goal: all)")
    verdict = "OK" if flagged_total == 0 and not caught[False] else "FAIL"
    print(f"verdict: {verdict}: {flagged_total} false positives (goal 0), {caught[False]} loops missed (goal 0)")


if __name__ == "__main__":
    sys.exit(main())
