"""Helpers for compiler tests: programs written to files (so locations point into them)."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest

from tilewright.cli.runner import install_aliases

_COUNTER = itertools.count()

HEADER = "import torch\nimport ttl\nimport ttnn\n"


def write(tmp_path: Path, source: str, name: str | None = None) -> Path:
    """Write a program (dedented, with the usual imports prepended) to a fresh file."""
    path = tmp_path / (name or f"prog{next(_COUNTER)}.py")
    path.write_text(HEADER + textwrap.dedent(source).lstrip("\n"))
    return path


def load(path: Path) -> dict:
    """Execute a program file as a module (``import ttl`` resolves to Tilewright)."""
    install_aliases()
    ns: dict = {"__name__": path.stem, "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), ns)  # noqa: S102 - runs the test program
    return ns


def load_compiling(path: Path) -> tuple[dict, list[str]]:
    """:func:`load`, and the names of the operations the back end compiled while it ran."""
    from tilewright.compiler.backend import engine as backend

    compiled: list[str] = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: compiled.append(r.name))
    try:
        return load(path), compiled
    finally:
        backend.COMPILE_OBSERVERS.pop()


def line_of(path: Path, marker: str = "# <-") -> int:
    for i, text in enumerate(path.read_text().splitlines(), 1):
        if marker in text:
            return i
    raise AssertionError(f"marker {marker!r} not in {path}")


def expect_error(tmp_path: Path, source: str, cls: type, message: str, *, marker: str = "# <-"):
    """Run a program; assert it raises ``cls`` containing ``message`` at the marked line."""
    path = write(tmp_path, source)
    with pytest.raises(cls) as info:
        load(path)
    err = info.value
    assert message in err.message, err.message
    assert err.loc is not None, "error has no location"
    assert err.loc.file == str(path), err.loc
    assert err.loc.line == line_of(path, marker), (err.loc, err.message)
    return err


RUN = """
device = ttnn.open_device(device_id=0)
try:
    def dev(t):
        return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    {body}
finally:
    ttnn.close_device(device)
"""


def with_device(body: str) -> str:
    """Wrap statements in an open/close of device 0 (``dev(t)`` puts a torch tensor on it)."""
    return RUN.format(body=textwrap.indent(textwrap.dedent(body).strip(), "    ").lstrip())


def program(definitions: str, calls: str) -> str:
    """Definitions followed by calls that run on device 0 (a complete program text)."""
    return textwrap.dedent(definitions).strip("\n") + "\n" + with_device(calls)
