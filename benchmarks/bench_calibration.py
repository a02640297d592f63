"""Calibrate the offline models to a served one, then check that an offline replay predicts it.

Run: ``.venv/bin/python benchmarks/bench_calibration.py [--seeds 1 2 3] [--tokens 12000]``.

1. A local OpenAI-compatible Observer/Reflector (``tests/servers/compressing_server.py``,
   127.0.0.1) compresses with a set ratio (observer 4×, reflector 3× of its content) and answers
   after a lognormal latency around ``0.5 s + 20 ms per output token`` (sigma 0.25). A suite runs through it
   with ``[latency] default = "measured"`` (virtual time advances by the real latencies), two
   cells: buffering off (every observation blocks) and on (``bufferTokens = 0.25``).
2. ``omlab calibrate`` fits one profile from both cells' model calls.
3. The same suite runs offline (``omlab/observer`` / ``omlab/reflector``) with
   ``[models.profiles]`` pointing at the profile.

It prints, per cell, the served and the replayed blocked seconds, reflection count, observation
tokens and observer/reflector cost, and the relative differences; the target is blocked seconds and
reflections within 10 % (exit status 1 if not; not met yet, see README).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from servers.compressing_server import CompressingServer

from omlab.bench.calibration import calibrate_run
from omlab.bench.report.metrics import metric_value
from omlab.bench.results import calls_df
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite

PRICE = "{ input_per_mtok = 0.3, output_per_mtok = 2.5 }"
SERVED_MODELS = """
observer = {{ model = "openai/served-observer", modelSettings = {{ api_base = "{url}", api_key = "local" }} }}
reflector = {{ model = "openai/served-reflector", modelSettings = {{ api_base = "{url}", api_key = "local" }} }}

[models.prices]
"openai/served-observer" = {price}
"openai/served-reflector" = {price}

[latency]
default = "measured"
"""
PROFILED_MODELS = """
observer = "omlab/observer"
reflector = "omlab/reflector"

[models.prices]
"omlab/observer" = {price}
"omlab/reflector" = {price}

[models.profiles]
observer = "{profile}"
reflector = "{profile}"
"""


def suite_text(name: str, seeds: list[int], tokens: int, models: str) -> str:
    return f"""
[suite]
name = "{name}"

[dataset]
kind = "synthetic"
seeds = {seeds}
target_tokens = {tokens}
n_questions = 1
turn_pace_s = 0.1

[engine]
observation = {{ messageTokens = 1200, blockAfter = 1.2 }}
reflection = {{ observationTokens = 1500 }}

[grid]
"observation.bufferTokens" = [false, 0.25]

[models]
{models}
[phases]
run = ["prepare"]

[cache]
mode = "off"

[run]
concurrency = {len(seeds)}

[retry]
timeout = 60
deadline = 300
"""


def figures(results: Path, summary) -> dict[str, float]:
    calls = calls_df(results, summary.run_id)
    om = calls[calls["role"].isin(("observer", "reflector"))]
    return {
        "blocked_s": float(metric_value(summary.metrics, "blocked_s") or 0.0),
        "reflections": float(
            (metric_value(summary.metrics, "sync_reflections") or 0)
            + (metric_value(summary.metrics, "reflection_activations") or 0)
        ),
        "observer_calls": float((om["role"] == "observer").sum()),
        "output_tokens": float(om["output_tokens"].sum()),
        "cost_usd": float(om["cost_usd"].fillna(0).sum()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--tokens", type=int, default=12_000, help="tokens per synthetic conversation")
    parser.add_argument("--keep", metavar="DIR", help="keep the suites, profile and results in DIR")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message=r"observation\.blockAfter: ignored")  # the unbuffered cell
    with tempfile.TemporaryDirectory(prefix="omlab-bench-calibration-") as folder:
        base = Path(args.keep or folder)
        base.mkdir(parents=True, exist_ok=True)
        results = base / "results"
        started = time.perf_counter()
        with CompressingServer(base_s=0.5, output_s=0.02, sigma=0.25, seed=7) as server:
            served_suite = base / "served.toml"
            models = SERVED_MODELS.format(url=server.url, price=PRICE)
            served_suite.write_text(suite_text("served", args.seeds, args.tokens, models))
            served = run_suite(served_suite, RunOptions(results_dir=results, progress=False))
        served_wall = time.perf_counter() - started
        print(f"served run: {len(server.calls)} requests in {served_wall:.0f} s wall")
        # calibrate on both cells (the content sizes a sweep sees), replay both settings with that profile
        profile = calibrate_run(results, [summary.run_id for summary in served])
        profile_path = profile.write(base / "profile.json")
        for fit in profile.fits:
            assert fit.compression is not None and fit.latency is not None
            print(
                f"  {fit.role}: ratios {list(fit.compression.ratios)} at content "
                f"{list(fit.compression.content_tokens)}; latency {fit.latency['base_s']:.3f} s + "
                f"{1000 * fit.latency['output_s']:.2f} ms/output token + {1e6 * fit.latency['input_s']:.2f} us/input "
                f"token, sigma {fit.latency['sigma']:.2f} ({fit.calls} calls)"
            )
        offline_suite = base / "offline.toml"
        models = PROFILED_MODELS.format(price=PRICE, profile=profile_path)
        offline_suite.write_text(suite_text("offline", args.seeds, args.tokens, models))
        started = time.perf_counter()
        replayed = run_suite(offline_suite, RunOptions(results_dir=results, progress=False))
        print(f"offline replay with the profile: {time.perf_counter() - started:.1f} s wall")
        ok = True
        header = f"{'cell':<22}{'figure':<16}{'served':>10}{'replayed':>10}{'diff':>8}"
        print(header)
        by_name = {s.config_name: s for s in replayed}
        for summary in served:
            real, predicted = figures(results, summary), figures(results, by_name[summary.config_name])
            for key in real:
                diff = (predicted[key] - real[key]) / real[key] if real[key] else 0.0
                mark = ""
                if key in ("blocked_s", "reflections"):
                    good = abs(diff) <= 0.10
                    ok &= good
                    mark = "" if good else "  > 10%"
                print(f"{summary.config_name:<22}{key:<16}{real[key]:>10.2f}{predicted[key]:>10.2f}{diff:>+8.1%}{mark}")
        print("blocked seconds and reflections within 10 %:", "yes" if ok else "NO")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
