"""The import rules of docs/architecture.md, checked on the source so the next feature cannot break them."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from tests.architecture.import_graph import ImportGraph, build_graph

PACKAGE = Path(__file__).resolve().parents[2] / "omlab"
MAX_MODULE_LINES = 600
MAX_MEDIAN_MODULE_LINES = 200

# Each layer and the layers it may import (besides itself). Anything not listed is forbidden.
ALLOWED = {
    "omlab.tokens": set(),
    "omlab.llm": {"omlab.tokens"},
    "omlab.engine": {"omlab.tokens", "omlab.llm"},
    "omlab.storage": {"omlab.tokens", "omlab.llm", "omlab.engine"},
    # omlab.ObservationalMemory: the engine composed with the store its `storage` option names
    "omlab.memory": {"omlab.tokens", "omlab.llm", "omlab.engine", "omlab.storage"},
    "omlab.bench": {"omlab.tokens", "omlab.llm", "omlab.engine", "omlab.storage", "omlab.memory"},
    "omlab.viz": {"omlab.tokens", "omlab.llm", "omlab.engine", "omlab.storage", "omlab.memory", "omlab.bench"},
    "omlab.cli": {
        "omlab.tokens",
        "omlab.llm",
        "omlab.engine",
        "omlab.storage",
        "omlab.memory",
        "omlab.bench",
        "omlab.viz",
    },
}
# Inside bench: the suite layer is everything before the first model call, the run layer uses it, and the
# packages below both (datasets, results, scoring, lineage) know neither.
BENCH_BELOW_RUN = (
    "omlab.bench.report",
    "omlab.bench.calibration",
    "omlab.bench.lineage",
    "omlab.bench.scoring",
    "omlab.bench.datasets",
    "omlab.bench.results",
)


@pytest.fixture(scope="module")
def graph() -> ImportGraph:
    return build_graph(PACKAGE)


def _layer(module: str) -> str | None:
    return next((layer for layer in ALLOWED if module == layer or module.startswith(layer + ".")), None)


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_graph_sees_lazy_and_type_checking_imports(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from pkg import b\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import f\n")
    (package / "c.py").write_text("from . import a\n")
    assert build_graph(package).cycles() == [["pkg.a", "pkg.b"]]


def test_no_import_circle_anywhere(graph):
    cycles = graph.cycles()
    detail = []
    for cycle in cycles:
        members = set(cycle)
        arrows = [
            f"    {a.source}:{a.line} -> {a.target}"
            for a in graph.arrows
            if a.source in members and a.target in members
        ]
        detail.append(" ⇄ ".join(cycle) + "\n" + "\n".join(arrows))
    assert not cycles, "import circles (break them; see docs/architecture.md):\n" + "\n".join(detail)


def test_layers_import_only_downward(graph):
    upward = []
    for arrow in graph.arrows:
        source, target = _layer(arrow.source), _layer(arrow.target)
        if source and target and source != target and target not in ALLOWED[source]:
            upward.append(
                f"{arrow.source}:{arrow.line} imports {arrow.target} ({source} may import {sorted(ALLOWED[source])})"
            )
    assert not upward, "imports against the layering:\n" + "\n".join(upward)


def test_bench_suite_layer_precedes_the_run_layer(graph):
    wrong = []
    for arrow in graph.arrows:
        if _inside(arrow.source, "omlab.bench.suite") and _inside(arrow.target, "omlab.bench.run"):
            wrong.append(f"{arrow.source}:{arrow.line} (suite layer) imports {arrow.target} (run layer)")
        below = any(_inside(arrow.source, package) for package in BENCH_BELOW_RUN)
        if below and (_inside(arrow.target, "omlab.bench.suite") or _inside(arrow.target, "omlab.bench.run")):
            wrong.append(f"{arrow.source}:{arrow.line} imports {arrow.target}, a layer above it")
        floor = _inside(arrow.source, "omlab.bench.results")
        if floor and _inside(arrow.target, "omlab.bench") and not _inside(arrow.target, "omlab.bench.results"):
            wrong.append(f"{arrow.source}:{arrow.line} imports {arrow.target}: results/ is bench's floor")
    assert not wrong, "\n".join(wrong)


def test_bench_has_its_layer_packages():
    for package in ("suite", "run", "report", "calibration", "datasets", "results", "scoring", "lineage"):
        assert (PACKAGE / "bench" / package / "__init__.py").is_file(), f"omlab/bench/{package}/ is missing"


def test_module_sizes(graph):
    lines = {module: len(path.read_text(encoding="utf-8").splitlines()) for module, path in graph.files.items()}
    too_long = sorted((n, m) for m, n in lines.items() if n > MAX_MODULE_LINES)
    assert not too_long, f"modules over {MAX_MODULE_LINES} lines (split them by concept): {too_long[::-1]}"
    median = statistics.median(lines.values())
    assert median <= MAX_MEDIAN_MODULE_LINES, f"median module size {median} lines > {MAX_MEDIAN_MODULE_LINES}"
