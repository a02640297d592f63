"""The run browser as a static site over a results folder of 200 runs: the time ``omlab report
--format html`` takes to write it (pages, files, size), and in Chromium (Debian's, through
playwright) from file:// the first paint of the run list and of the list filtered and sorted by its
script (each a page load reading ``?query``).

The folder is generated as ``bench_view.py`` generates it (one offline run of a one-conversation
quickstart, copied 199 times with their own ids, suites, statuses, tags, headline numbers and
sweeps). Plots are not drawn (no ``--plots``): the figure is the pages.

    .venv/bin/python benchmarks/bench_static_site.py [--runs 200] [--loads 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_view import CHROMIUM, REPO, generate


def paint_seconds(page, url: str) -> float:
    page.goto(url)
    # the paint entry can land after the load event that goto waits for
    paint = page.wait_for_function(
        "performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint')?.startTime",
        timeout=30_000,
    ).json_value()
    return paint / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it (reused when it has the runs)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="omlab-bench-site-"))
    root.mkdir(parents=True, exist_ok=True)
    results, site = root / "results", root / "site"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "MPLBACKEND": "Agg",
    }
    try:
        existing = len(list((results / "runs").glob("*.duckdb"))) if results.is_dir() else 0
        if existing != args.runs:
            shutil.rmtree(results, ignore_errors=True)
            print(f"generated {args.runs} runs in {generate(results, args.runs, env):.1f} s under {results}")
        started = time.perf_counter()
        command = [sys.executable, "-m", "omlab.cli.main", "report", "--format", "html"]
        subprocess.run([*command, "--results", str(results), "--out", str(site)], env=env, check=True)
        wrote = time.perf_counter() - started
        files = [path for path in site.rglob("*") if path.is_file()]
        size = sum(path.stat().st_size for path in files) / 1e6
        index = (site / "index.html").as_uri()
        loads = {
            "list": index,
            "filtered": index + "?suite=suite-1&status=finished",
            "sorted": index + "?sort=m.accuracy&desc=0",
        }
        paints: dict[str, list[float]] = {name: [] for name in loads}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            for _ in range(args.loads):
                for name, url in loads.items():
                    paints[name].append(paint_seconds(page, url))
            rows = page.locator("table#runs tr[data-run]").count()
            assert rows == args.runs, f"the list holds {rows} runs, not {args.runs}"
            browser.close()
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(
        f"omlab report --format html over {args.runs} runs: {wrote:.1f} s, "
        f"{sum(1 for p in files if p.suffix == '.html')} pages, {len(files)} files, {size:.1f} MB"
    )
    for name, values in paints.items():
        print(
            f"first paint from file:// ({name}): first {values[0]:.2f} s, median {statistics.median(values):.2f} s, "
            f"slowest {max(values):.2f} s over {len(values)} loads"
        )


if __name__ == "__main__":
    main()
