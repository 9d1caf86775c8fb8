"""The repo's TT-Lang program corpus (issue 21): one list, read by every consumer.

``benchmarks/bench_coverage.py`` measures the share of these programs' operations that
compile; ``tests/compiler/backend/test_emit_all.py`` emits every compiled operation of
them as C++, builds it with strict warnings and reruns it through ``ttnn.generic_op``.
The corpus:

* ``examples/`` (every ``*.py``, ``errors/`` and ``07_extern_reader/program.py``);
* ``/work/shared/examples/`` when present (the acceptance originals; absent on users'
  machines, then the note says so and they are skipped);
* ``tests/compiler/programs/`` and ``tests/ttlang_compiler/programs/``;
* the end-to-end test programs: the files ``tests/e2e`` runs (the examples above) and the
  programs with a TT-Lang operation its tests write inline (``prog.write_text("...")``),
  extracted with ``ast`` into a scratch directory.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path("/work/shared/examples")
INLINE_GROUP = "tests/e2e"

__all__ = ["ROOT", "SHARED", "INLINE_GROUP", "Program", "listing", "inline_e2e_sources"]


@dataclass(frozen=True, slots=True)
class Program:
    """One program of the corpus: a file (``path``) or an inline e2e program (``text``)."""

    group: str
    name: str  # stable: the repo path, the shared-examples path, or "tests/e2e inline: <file>"
    path: Path | None = None
    text: str | None = None

    def materialise(self, scratch: Path) -> Path:
        """The program's file (an inline program is written under ``scratch`` first)."""
        if self.path is not None:
            return self.path
        assert self.text is not None
        path = scratch / self.name.removeprefix(f"{INLINE_GROUP} inline: ")
        path.write_text(self.text)
        return path


def listing() -> tuple[list[Program], str]:
    """Every program of the corpus, and the note on the shared examples."""
    out: list[Program] = []

    def example_tree(group: str, root: Path) -> None:
        for path in sorted(root.rglob("*.py")):
            if path.parent.name == "07_extern_reader" and path.name != "program.py":
                continue
            name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
            out.append(Program(group, name, path=path))

    example_tree("examples", ROOT / "examples")
    if SHARED.is_dir():
        example_tree("shared_examples", SHARED)
        note = f"run from {SHARED}"
    else:
        note = f"skipped: {SHARED} is absent (it is not on users' machines)"
    for sub in ("tests/compiler/programs", "tests/ttlang_compiler/programs"):
        out += [
            Program(sub, str(p.relative_to(ROOT)), path=p)
            for p in sorted((ROOT / sub).glob("*.py"))
        ]
    out += [
        Program(INLINE_GROUP, f"{INLINE_GROUP} inline: {file}", text=text)
        for file, text in inline_e2e_sources()
    ]
    return out, note


def inline_e2e_sources() -> list[tuple[str, str]]:
    """(file name, source) of the programs tests/e2e writes with
    ``<path>.write_text("<constant>")``."""
    found: list[tuple[str, str]] = []
    for test in sorted((ROOT / "tests" / "e2e").glob("test_*.py")):
        for node in ast.walk(ast.parse(test.read_text(), str(test))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "write_text"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and "@ttl.operation" in node.args[0].value
            ):
                found.append((f"{test.stem}_line{node.lineno}.py", node.args[0].value))
    return found
