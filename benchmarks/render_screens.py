"""The plots a reader of the quickstart looks at first, saved as screenshots to look at:
``loss-causes.png`` (the quickstart sweep's loss-causes plot: one row per setting, one column per
cause) and ``cost-title.png`` (the quickstart run's cost by role, whose title prints its ``$``
amounts as written, not as math text).

Without ``--results`` it first runs the quickstart's commands (those of ``scripts/quickstart.sh``:
the suite, its report with plots, the 3x3 sweep with plots; offline, about two minutes) into a
temporary folder; with ``--results`` it takes the plots a quickstart already wrote there. The
files go to ``--out`` (default ``$OMLAB_SCREENS``, else ``/tmp/omlab-screens``).

    .venv/bin/python benchmarks/render_screens.py [--results DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from omlab.bench.report.latest import latest_run

REPO = Path(__file__).resolve().parents[1]


def run_quickstart(results: Path) -> None:
    """The commands of ``scripts/quickstart.sh``, with this interpreter."""
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(results.parent / "mpl"),
    }
    cli = [sys.executable, "-m", "omlab.cli.main"]
    for command in (
        ["run", "benchmarks/quickstart.toml", "--quiet"],
        ["report", "latest", "--plots"],
        ["sweep", "benchmarks/sweep_buffering.toml", "--plots", "--quiet"],
    ):
        subprocess.run([*cli, *command, "--results", str(results)], cwd=REPO, env=env, check=True)


def newest(paths: list[Path], what: str) -> Path:
    if not paths:
        raise SystemExit(f"no {what}: run the quickstart first (bash scripts/quickstart.sh), or leave out --results")
    return max(paths, key=lambda path: path.stat().st_mtime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, help="a results folder the quickstart wrote (default: run it)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OMLAB_SCREENS", "/tmp/omlab-screens")))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="omlab-screens-") as scratch:
        results = args.results
        if results is None:
            results = Path(scratch) / "results"
            run_quickstart(results)
        sweeps = results / "reports" / "sweeps"
        loss = newest(sorted(sweeps.glob("*-loss-causes.png")), f"sweep loss-causes plot under {sweeps}")
        run = latest_run(results).run_id  # the suite run, not a sweep cell
        cost = newest(sorted((results / "reports" / run).glob("*-cost-by-role.png")), f"cost plot of run {run}")
        args.out.mkdir(parents=True, exist_ok=True)
        for source, name in ((loss, "loss-causes.png"), (cost, "cost-title.png")):
            shutil.copy(source, args.out / name)
            print(f"{args.out / name}  (from {source.relative_to(results)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
