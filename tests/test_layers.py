"""The layer order of the package, checked over its static import graph (docs/architecture.md).

``errors < target < device < native < ttnn < kir < lang < compiler < ttl < cli``: a module
may import its own layer and the layers below it, never one above.  Every import
statement counts -- at module level, inside functions (deferred imports) and under
``if TYPE_CHECKING:`` -- because each one is a dependency a reader must follow.  No
package may have an import cycle among its modules; the one allowed exception is
named in :data:`ALLOWED_CYCLE_EDGES`.

The graph is read with ``ast`` from the source files (nothing is imported), so the
test is fast and sees imports that never run.  A failure names each offending edge as
``file:line: from-module -> to-module`` so it can be fixed where it is written.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tilewright"

LAYERS = ("errors", "target", "device", "native", "ttnn", "kir", "lang", "compiler", "ttl", "cli")
"""Bottom to top: a layer may import the layers before it in this tuple, never after."""

ROOT = "tilewright"
"""The package root: its version and lazy attributes, below every layer (it imports nothing)."""
TOP = ("tilewright.__main__",)
"""Entry points above every layer (``python -m tilewright``)."""

ALLOWED_CYCLE_EDGES = {
    # A Device owns its CommandQueue, which launches programs on the device's cores.
    ("tilewright.device.device", "tilewright.device.command_queue"),
}
"""Edges left out of the cycle check, each with the reason it is allowed."""


@dataclass(frozen=True, slots=True)
class Edge:
    src: str
    dst: str
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.src} -> {self.dst}"


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _target(name: str) -> str | None:
    """The innermost Tilewright module ``name`` denotes (a module, or the package holding it)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imported(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".")
        if MODULES[module].name != "__init__.py":
            base.pop()
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join([*base, node.module] if node.module else base)
    else:
        prefix = node.module or ""
    # ``from pkg import sub`` imports the submodule when there is one.
    return [
        f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in MODULES else prefix
        for alias in node.names
    ]


def _edges() -> list[Edge]:
    edges: list[Edge] = []
    for module, path in MODULES.items():
        rel = str(path.relative_to(PACKAGE.parent))
        for node in ast.walk(ast.parse(path.read_text(), filename=rel)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in _imported(module, node):
                    dst = _target(name)
                    if dst is not None and dst != module:
                        edges.append(Edge(module, dst, rel, node.lineno))
    return edges


EDGES = _edges()


def layer_of(module: str) -> int | None:
    """The index of ``module``'s layer in :data:`LAYERS` (-1: the root; None: an entry point)."""
    if module == ROOT:
        return -1
    if module in TOP:
        return None
    return LAYERS.index(module.split(".")[1])


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in MODULES if m != ROOT and m not in TOP and m.split(".")[1] not in LAYERS]
    assert not unplaced, (
        "modules outside the layer order (add their package to LAYERS in tests/test_layers.py "
        f"and to docs/architecture.md): {unplaced}"
    )


def test_no_import_points_up_a_layer() -> None:
    upward = []
    for e in EDGES:
        src, dst = layer_of(e.src), layer_of(e.dst)
        if src is not None and (dst is None or dst > src):
            to = "an entry point" if dst is None else LAYERS[dst]
            upward.append(f"{e}  ({LAYERS[src]} may not import {to})")
    assert not upward, "imports that point up the layer order:\n" + "\n".join(sorted(upward))


def test_the_root_imports_nothing() -> None:
    found = [str(e) for e in EDGES if e.src == ROOT]
    assert not found, "the package root loads layers lazily (importlib), never by import:\n" + (
        "\n".join(found)
    )


def _cycles(edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for e in edges:
        graph[e.src].add(e.dst)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_package_has_an_import_cycle() -> None:
    kept = [e for e in EDGES if (e.src, e.dst) not in ALLOWED_CYCLE_EDGES]
    report = []
    for component in _cycles(kept):
        members = set(component)
        inside = sorted(
            {str(e) for e in kept if e.src in members and e.dst in members and e.src != e.dst}
        )
        report.append(f"cycle among {', '.join(component)}:\n  " + "\n  ".join(inside))
    assert not report, "import cycles (cut one edge of each):\n" + "\n".join(report)


def test_allowed_cycle_edges_exist() -> None:
    present = {(e.src, e.dst) for e in EDGES}
    stale = ALLOWED_CYCLE_EDGES - present
    assert not stale, f"ALLOWED_CYCLE_EDGES names edges that no longer exist: {stale}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from tilewright.device import engine", "tilewright.device.engine"),
        ("from tilewright.device.engine import ACTIVE", "tilewright.device.engine"),
        ("import tilewright.errors", "tilewright.errors"),
        ("from . import plan", "tilewright.lang.extern.plan"),
        ("from .plan import CallSite", "tilewright.lang.extern.plan"),
        ("from .. import dfb", "tilewright.lang.dfb"),
    ],
)
def test_import_resolution(source: str, expected: str) -> None:
    node = ast.parse(source).body[0]
    assert isinstance(node, (ast.Import, ast.ImportFrom))
    [name] = _imported("tilewright.lang.extern.runtime", node)
    assert _target(name) == expected
