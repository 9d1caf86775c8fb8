"""The layer order of the package, checked over its static import graph (docs/architecture.md).

``errors < target < device < native < ttnn < kir < lang < compiler < ttl < cli``: a module
may import its own layer and the layers below it, never one above.  Every import
counts -- at module level, inside functions (deferred imports), under
``if TYPE_CHECKING:``, the packages Python runs for it (``import a.b.c`` executes
``a/__init__.py`` and ``a/b/__init__.py`` first, so each is an edge of the importer too,
unless the importer lies inside that package, which is then already running), and the
modules named by :func:`tilewright.lazy.lazy_import`, the one mechanism for loading a
module on first use -- because each one is a dependency a reader must follow.  No
package may have an import cycle among its modules; the one allowed exception is named
in :data:`ALLOWED_CYCLE_EDGES`.

Deferred imports are few and explained: at most :data:`MAX_DEFERRED` in-function
imports and ``lazy_import`` calls together, each in-function import marked
``# deferred: <why>`` (on its line or the comment just above: a real cycle needs it) and
each ``lazy_import`` at module level with a literal module name and a comment saying why
the module loads late.

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

LAYERS = (
    "errors",
    "target",
    "device",
    "native",
    "ttnn",
    "kir",
    "lang",
    "compiler",
    "distributed",
    "ttl",
    "cli",
)
"""Bottom to top: a layer may import the layers before it in this tuple, never after."""

BOTTOM = {"lazy": "errors"}
"""Root-level modules that belong to a layer of another name: ``lazy.py`` (deferred imports,
stdlib and ``errors`` only) sits in the bottom layer with ``errors.py``."""

ROOT = "tilewright"
"""The package root: its version and lazy attributes, below every layer (it imports nothing)."""
TOP = ("tilewright.__main__",)
"""Entry points above every layer (``python -m tilewright``)."""

ALLOWED_CYCLE_EDGES = {
    # A Device owns its CommandQueue, which launches programs on the device's cores.
    ("tilewright.device.device", "tilewright.device.command_queue"),
}
"""Edges left out of the cycle check, each with the reason it is allowed."""

MAX_DEFERRED = 38
"""In-function imports plus ``lazy_import`` calls across the package (issue 20: 197 before;
issue 22 +4: the extern / raw front ends and the raw lowering load only for operations that
make such calls; +2: the native page timer loads with the first collective and the first interpreted
TT-Lang copy); issue 27 +2: Ray, the optional engine of worker processes, and `tilewright run`'s worker pool
load only when `--workers` asks)."""

LAZY = "lazy_import"
"""The one deferred-import helper (``tilewright/lazy.py``); its calls are edges."""

DYNAMIC_IMPORTS = {
    "tilewright": "the root's lazy ttl / ttnn / ... attributes (it imports nothing)",
    "tilewright.lazy": "the deferred-import helper itself",
    "tilewright.cli.runner": "the ttl / ttnn alias finder and loading what a run provides",
}
"""Modules allowed to call ``importlib.import_module`` / ``__import__`` (names unknown statically)."""


@dataclass(frozen=True, slots=True)
class Edge:
    src: str
    dst: str
    file: str
    line: int
    kind: str = "import"  # "import" | "package" (an __init__ Python runs) | "lazy"

    def __str__(self) -> str:
        how = {
            "import": "",
            "package": "  (package __init__ run by the import)",
            "lazy": "  (lazy)",
        }
        return f"{self.file}:{self.line}: {self.src} -> {self.dst}{how[self.kind]}"


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()
PACKAGES = {m for m, p in MODULES.items() if p.name == "__init__.py"}


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


def packages_run(importer: str, target: str) -> list[str]:
    """The package ``__init__`` modules Python executes to import ``target`` from ``importer``:
    every enclosing package of ``target`` except those enclosing ``importer`` (already running
    when ``importer`` runs)."""
    parts = target.split(".")
    out = []
    for i in range(1, len(parts)):
        package = ".".join(parts[:i])
        if package in PACKAGES and not (importer + ".").startswith(package + "."):
            out.append(package)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@dataclass(frozen=True, slots=True)
class Deferred:
    """An import that runs after its module is loaded: in a function, or a lazy_import call."""

    file: str
    line: int
    text: str
    kind: str  # "function" | "lazy"
    reason: str | None  # the comment that explains it (``# deferred: ...`` / any for lazy)
    at_module_level: bool
    literal: bool  # a lazy_import call naming its module with a string literal

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


def _comment(lines: list[str], line: int, tag: str, group: str | None = None) -> str | None:
    """The ``#`` comment on source line ``line`` (1-based) or in the comment block just above
    it that contains ``tag`` ("" for any comment), else None.  Lines containing ``group``
    between them and the block share it (one comment above a run of ``lazy_import`` lines)."""
    candidates = []
    code, _, trailing = lines[line - 1].partition("#")
    if trailing and code.strip():
        candidates.append(trailing)
    i = line - 2
    while (
        i >= 0 and group is not None and group in lines[i] and not lines[i].strip().startswith("#")
    ):
        i -= 1
    while i >= 0 and lines[i].strip().startswith("#"):
        candidates.append(lines[i].strip()[1:])
        i -= 1
    return next((c.strip() for c in candidates if tag in c), None)


@dataclass(slots=True)
class Scan:
    edges: list[Edge]
    deferred: list[Deferred]
    dynamic: list[str]  # import_module / __import__ calls outside DYNAMIC_IMPORTS


def scan_module(module: str, text: str, rel: str, out: Scan) -> None:
    """Add ``module``'s edges, deferred imports and dynamic imports (source ``text``) to ``out``."""
    lines = text.splitlines()

    def add(name: str, line: int, kind: str) -> None:
        dst = _target(name)
        if dst is None:
            return
        for package in packages_run(module, dst):
            if package != module:
                out.edges.append(Edge(module, package, rel, line, "package"))
        if dst != module:
            out.edges.append(Edge(module, dst, rel, line, kind))

    def walk(node: ast.AST, in_function: bool, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit(stmt, in_function, True)
                for stmt in child.orelse:
                    visit(stmt, in_function, type_only)
                continue
            visit(child, in_function, type_only)

    def visit(node: ast.AST, in_function: bool, type_only: bool) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for name in _imported(module, node):
                add(name, node.lineno, "import")
            if in_function and not type_only:
                reason = _comment(lines, node.lineno, "deferred:")
                text = ast.unparse(node)
                out.deferred.append(
                    Deferred(rel, node.lineno, text, "function", reason, False, True)
                )
            return
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name == LAZY:
                arg = node.args[0] if node.args else None
                literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    add(arg.value, node.lineno, "lazy")
                reason = _comment(lines, node.lineno, "", group=f"{LAZY}(")
                text = ast.unparse(node)
                out.deferred.append(
                    Deferred(rel, node.lineno, text, "lazy", reason, not in_function, literal)
                )
            elif name in ("import_module", "__import__") and module not in DYNAMIC_IMPORTS:
                out.dynamic.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        walk(node, inner, type_only)

    walk(ast.parse(text, filename=rel), False, False)


def _scan() -> Scan:
    out = Scan([], [], [])
    for module, path in MODULES.items():
        scan_module(module, path.read_text(), str(path.relative_to(PACKAGE.parent)), out)
    return out


SCAN = _scan()
EDGES = SCAN.edges


def layer_of(module: str) -> int | None:
    """The index of ``module``'s layer in :data:`LAYERS` (-1: the root; None: an entry point)."""
    if module == ROOT:
        return -1
    if module in TOP:
        return None
    name = module.split(".")[1]
    return LAYERS.index(BOTTOM.get(name, name))


def test_every_module_has_a_layer() -> None:
    unplaced = [
        m
        for m in MODULES
        if m != ROOT and m not in TOP and BOTTOM.get(m.split(".")[1], m.split(".")[1]) not in LAYERS
    ]
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


@pytest.mark.parametrize(
    ("importer", "target", "expected"),
    [
        # A module outside compiler/ runs every package __init__ on the way.
        (
            "tilewright.cli.explain",
            "tilewright.compiler.backend.lower.kernel",
            [
                "tilewright.compiler",
                "tilewright.compiler.backend",
                "tilewright.compiler.backend.lower",
            ],
        ),
        # Packages enclosing the importer are already running: not edges.
        (
            "tilewright.compiler.backend.lower.methods",
            "tilewright.compiler.raw.lower",
            ["tilewright.compiler.raw"],
        ),
        ("tilewright.compiler.split.codegen", "tilewright.compiler.split.registry", []),
        ("tilewright.lang.dfb", "tilewright.device.engine", ["tilewright.device"]),
    ],
)
def test_packages_run(importer: str, target: str, expected: list[str]) -> None:
    assert packages_run(importer, target) == expected


def _scanned(source: str, module: str = "tilewright.cli.explain") -> Scan:
    out = Scan([], [], [])
    scan_module(module, source, "x.py", out)
    return out


def test_package_inits_lazy_imports_and_deferred_imports_are_seen() -> None:
    source = (
        "from tilewright.compiler.backend.lower import kernel\n"
        "from tilewright.lazy import lazy_import\n"
        "# The compiler loads when the command runs.\n"
        "host = lazy_import('tilewright.compiler.backend.host')\n"
        "def f():\n"
        "    from tilewright.compiler import record  # deferred: a cycle\n"
        "    import tilewright.kir.ir\n"
        "    return lazy_import(name)\n"
    )
    scan = _scanned(source)
    edges = {(e.dst, e.kind, e.line) for e in scan.edges}
    assert ("tilewright.compiler", "package", 1) in edges
    assert ("tilewright.compiler.backend", "package", 1) in edges
    assert ("tilewright.compiler.backend.lower", "package", 1) in edges
    assert ("tilewright.compiler.backend.lower.kernel", "import", 1) in edges
    assert ("tilewright.compiler.backend.host", "lazy", 4) in edges
    assert ("tilewright.kir.ir", "import", 7) in edges
    found = {(d.line, d.kind, d.reason, d.at_module_level, d.literal) for d in scan.deferred}
    assert found == {
        (4, "lazy", "The compiler loads when the command runs.", True, True),
        (6, "function", "deferred: a cycle", False, True),
        (7, "function", None, False, True),
        (8, "lazy", None, False, False),
    }


def test_dynamic_imports_only_where_listed() -> None:
    assert _scanned("import importlib\nm = importlib.import_module('tilewright.ttl')\n").dynamic
    assert not SCAN.dynamic, (
        "importlib.import_module / __import__ outside DYNAMIC_IMPORTS (use "
        "tilewright.lazy.lazy_import with a literal name, so this test sees the edge):\n"
        + "\n".join(SCAN.dynamic)
    )


def test_deferred_imports_are_few_and_explained() -> None:
    problems = []
    for d in SCAN.deferred:
        if d.kind == "function" and d.reason is None:
            problems.append(f"{d}  (an in-function import needs '# deferred: <why>')")
        if d.kind == "lazy" and not (d.at_module_level and d.literal):
            problems.append(f"{d}  (lazy_import at module level, with a literal module name)")
        if d.kind == "lazy" and d.reason is None:
            problems.append(f"{d}  (say why the module loads late, in a comment above)")
    assert not problems, "deferred imports:\n" + "\n".join(problems)
    listing = "\n".join(str(d) for d in SCAN.deferred)
    assert len(SCAN.deferred) <= MAX_DEFERRED, (
        f"{len(SCAN.deferred)} deferred imports (at most {MAX_DEFERRED}): import at module "
        f"level, or cut the cycle that needs one:\n{listing}"
    )
