"""omlab's import graph, read from the source with `ast` (nothing is imported).

Every import statement counts as an arrow: module level, inside a function (a lazy import hides a
dependency, it does not remove it) and under `if TYPE_CHECKING:` (a type-level dependency still ties
the two modules' designs together).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Arrow:
    """One import: `source` imports `target` at `line`."""

    source: str
    target: str
    line: int


@dataclass
class ImportGraph:
    """Modules of a package (dotted name -> file) and the arrows between them."""

    files: dict[str, Path]
    arrows: list[Arrow] = field(default_factory=list)

    def targets(self, module: str) -> set[str]:
        return {arrow.target for arrow in self.arrows if arrow.source == module}

    def cycles(self) -> list[list[str]]:
        """The strongly connected components with more than one module (Tarjan, iterative)."""
        successors = {module: sorted(self.targets(module)) for module in self.files}
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        components: list[list[str]] = []
        counter = 0
        for root in sorted(self.files):
            if root in index:
                continue
            work = [(root, iter(successors[root]))]
            index[root] = low[root] = counter
            counter += 1
            stack.append(root)
            on_stack.add(root)
            while work:
                node, children = work[-1]
                child = next(children, None)
                if child is not None:
                    if child not in index:
                        index[child] = low[child] = counter
                        counter += 1
                        stack.append(child)
                        on_stack.add(child)
                        work.append((child, iter(successors[child])))
                    elif child in on_stack:
                        low[node] = min(low[node], index[child])
                    continue
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
        return sorted(components)


def module_files(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under `package_dir` (a package's name is its __init__)."""
    files = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        files[".".join(parts)] = path
    return files


def _imported_modules(module: str, node: ast.Import | ast.ImportFrom, is_package: bool, files) -> Iterator[str]:
    """The known modules an import statement reaches (`from pkg import sub` reaches pkg.sub, not pkg)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            target = _known_prefix(alias.name, files)
            if target:
                yield target
        return
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([base] if base else []))
    for alias in node.names:
        target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else _known_prefix(base, files)
        if target:
            yield target


def build_graph(package_dir: Path) -> ImportGraph:
    """The import graph of one package directory (e.g. the `omlab/` folder)."""
    graph = ImportGraph(module_files(package_dir))
    for module, path in graph.files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in set(_imported_modules(module, node, path.name == "__init__.py", graph.files)):
                # a module's own package (its __init__) re-exports it: importing it is not a dependency
                if target != module and not module.startswith(target + "."):
                    graph.arrows.append(Arrow(module, target, node.lineno))
    return graph


def _known_prefix(name: str, files: dict[str, Path]) -> str | None:
    while name and name not in files:
        name = name.rpartition(".")[0]
    return name or None
