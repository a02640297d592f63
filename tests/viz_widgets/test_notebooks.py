"""The notebooks: committed clean (fast checks), and each executes headless without an error (slow).

Execution uses nbclient with a ``python3`` kernel spec written to a temporary ``JUPYTER_PATH`` that
points at this interpreter (the venv's, with ipykernel), so no user or system kernel is picked up.
Results go to a temporary ``OMLAB_RESULTS``; ``HOME``, the Jupyter/IPython folders and the
matplotlib config live in temporary folders too (the test conftest sets most of them).
"""

from __future__ import annotations

import ast
import json
import sys
import time
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = ("01_quickstart", "02_tune_buffering", "03_model_tiers", "04_explore_events", "05_your_conversations")
CELL_TIMEOUT_S = 300


def load(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS_DIR / f"{name}.ipynb", as_version=4)


def test_the_notebooks_are_there():
    assert sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.ipynb")) == sorted(NOTEBOOKS)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_committed_clean(name):
    notebook = load(name)
    nbformat.validate(notebook)
    raw = json.loads((NOTEBOOKS_DIR / f"{name}.ipynb").read_text())
    missing = [index for index, cell in enumerate(raw["cells"]) if not cell.get("id")]
    assert not missing, f"{name}: cells {missing} have no id (nbformat 4.5 needs one on every cell)"
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    assert notebook.cells[0].cell_type == "markdown" and notebook.cells[0].source.startswith(f"# {name[:2]}")
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        assert cell.outputs == [], f"{name} cell {index} has outputs"
        assert cell.execution_count is None, f"{name} cell {index} has an execution count"
        python = "\n".join(line for line in cell.source.splitlines() if not line.startswith("%matplotlib"))
        ast.parse(python, filename=f"{name}[{index}]")  # Python, no magics but %matplotlib
        assert "expanduser" not in cell.source and "Path.home" not in cell.source


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_writes_only_under_omlab_results(name):
    sources = "\n".join(cell.source for cell in load(name).cells if cell.cell_type == "code")
    assert 'os.environ.get("OMLAB_RESULTS"' in sources
    assert "results_dir=RESULTS" in sources


@pytest.fixture()
def kernel_env(tmp_path, monkeypatch):
    """A python3 kernel spec for this interpreter, and a sandbox for everything a kernel writes."""
    kernels = tmp_path / "jupyter-path" / "kernels" / "python3"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (omlab tests)",
                "language": "python",
            }
        )
    )
    home = tmp_path / "home"
    home.mkdir()
    for key, value in {
        "JUPYTER_PATH": str(tmp_path / "jupyter-path"),
        "JUPYTER_DATA_DIR": str(tmp_path / "jupyter-data"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "jupyter-runtime"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "MPLCONFIGDIR": str(tmp_path / "mpl"),
        "MPLBACKEND": "Agg",
        "HOME": str(home),
        "OMLAB_RESULTS": str(tmp_path / "results"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }.items():
        monkeypatch.setenv(key, value)
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_headless(name, kernel_env):
    from nbclient import NotebookClient

    notebook = load(name)
    client = NotebookClient(
        notebook, kernel_name="python3", timeout=CELL_TIMEOUT_S, resources={"metadata": {"path": str(NOTEBOOKS_DIR)}}
    )
    started = time.perf_counter()
    client.execute()  # raises CellExecutionError naming the cell on any error
    elapsed = time.perf_counter() - started
    errors = [
        o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs if o.output_type == "error"
    ]
    assert errors == []
    assert any((kernel_env / "results" / "runs").glob("*.duckdb")), "the notebook wrote no run under OMLAB_RESULTS"
    assert not any(p for p in (kernel_env / "home").rglob("*") if p.is_file() and "ipython" not in str(p))
    assert not (NOTEBOOKS_DIR / "results").exists()
    print(f"{name}: {elapsed:.1f} s")


def _tier_costs(results: Path) -> dict[str, tuple[float, float]]:
    from omlab.bench.report.metrics import metric_value
    from omlab.bench.results import metrics_df, runs_df

    runs = runs_df(results)
    costs = {}
    for suite in ("tiers-single", "tiers-routed"):
        (run_id,) = runs.loc[runs["suite"] == suite, "run_id"]
        metrics = metrics_df(results, run_id)
        costs[suite] = (metric_value(metrics, "cost_usd"), metric_value(metrics, "cost_usd_paid"))
    return costs


@pytest.mark.slow
def test_notebook_03_compares_costs_the_same_fresh_and_after_the_quickstart(kernel_env, monkeypatch):
    """Issue 10: after the quickstart, the single-tier run came from the cache and looked cheaper
    than routing because it kept the quickstart's cost; as configured, both orders now agree."""
    from nbclient import NotebookClient

    from omlab.bench.run.options import RunOptions
    from omlab.bench.run.runner import run_suite

    def execute(results: Path) -> dict[str, tuple[float, float]]:
        monkeypatch.setenv("OMLAB_RESULTS", str(results))
        notebook = load("03_model_tiers")
        client = NotebookClient(
            notebook,
            kernel_name="python3",
            timeout=CELL_TIMEOUT_S,
            resources={"metadata": {"path": str(NOTEBOOKS_DIR)}},
        )
        client.execute()
        return _tier_costs(results)

    fresh = execute(kernel_env / "fresh")
    after = kernel_env / "after-quickstart"
    run_suite(
        NOTEBOOKS_DIR.parent / "benchmarks" / "quickstart.toml",
        RunOptions(results_dir=after, progress=False, workers=1),
    )
    warmed = execute(after)
    for suite in fresh:
        assert warmed[suite][0] == pytest.approx(fresh[suite][0], rel=1e-9), suite  # as configured: identical
    single, routed = fresh["tiers-single"][0], fresh["tiers-routed"][0]
    assert (warmed["tiers-single"][0] < warmed["tiers-routed"][0]) == (single < routed)
    # the quickstart's cache served the single-tier run: it paid less than it costs as configured
    assert warmed["tiers-single"][1] < warmed["tiers-single"][0]
    assert fresh["tiers-single"][1] == pytest.approx(fresh["tiers-single"][0])
