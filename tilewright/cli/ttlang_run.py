"""Running a program with the real TT-Lang compiler, inside its Python 3.12 environment.

``import ttl`` is Tenstorrent's compiler (``tt-lang``), ``import ttnn`` is Tilewright's: the
compiler compiles each operation at its first call against Tilewright's tensors and
devices, writes tt-metal C++ and launches it with ``ttnn.generic_op``, which builds and
runs it on Tilewright's native engine.  The compiler's own files count as internal
(``errors.treat_as_internal``), so diagnostics name the user's lines.

A failure is sorted by where it was raised:

* inside the compiler -- the compiler *rejects* the program (:class:`Rejected`): reported
  at the line the compiler names (``--> file:line:col`` in its message) or else at the
  operation's call, with the compiler's own message, as ``tilewright check`` shows it;
* inside Tilewright -- a Tilewright diagnostic (e.g. its build of the compiler's C++);
* in the program -- the program's own failure.
"""

from __future__ import annotations

import os
import re
import sys

from tilewright.cli.runner import run_program
from tilewright.errors import (
    SourceLoc,
    TTLangCompileError,
    format_error,
    internal_file,
    treat_as_internal,
)

__all__ = ["Rejected", "compiler_version", "run_with_real_compiler", "rejection_of"]

_ARROW = re.compile(r"-->\s*(?P<file>[^\s:]+):(?P<line>\d+)(?::(?P<col>\d+))?")


class Rejected(TTLangCompileError):
    """The real TT-Lang compiler rejected an operation (its message, the user's line)."""

    default_rule = "ttlang-compiler"


def compiler_version() -> str:
    from ttl.version import __version__  # deferred: the real compiler, only in its environment

    return f"tt-lang {__version__}"


def _package_dir() -> str:
    import ttl  # deferred: the real TT-Lang compiler, importable only in its environment

    return os.path.dirname(os.path.abspath(ttl.__file__)) + os.sep


def rejection_of(exc: BaseException) -> Rejected | None:
    """The compiler's rejection ``exc`` is, or None when the compiler did not raise it."""
    ttl_dir = _package_dir()
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    if not frames or not frames[-1][0].startswith(ttl_dir):
        return None
    text = str(exc).strip()
    loc = None
    match = _ARROW.search(text)
    if match and os.path.isfile(match["file"]):
        col = int(match["col"]) - 1 if match["col"] else None
        loc = SourceLoc(os.path.abspath(match["file"]), int(match["line"]), col)
    if loc is None:
        calls = [(f, n) for f, n in frames if not internal_file(f)]
        if calls:
            loc = SourceLoc(*calls[-1])
    kind = type(exc).__name__
    message = f"{compiler_version()} rejects this operation ({kind}):\n{text}"
    return Rejected(message, loc=loc, hint="Tilewright's own compiler: tilewright run PROGRAM")


def run_with_real_compiler(program: str, argv: list[str]) -> tuple[int, Rejected | None]:
    """Run ``program`` with the real compiler (this interpreter has it): the exit status and
    the compiler's rejection, if it rejected an operation (printed already)."""
    treat_as_internal(_package_dir())
    rejections: list[Rejected] = []

    def classify(exc: BaseException) -> int | None:
        rejected = rejection_of(exc)
        if rejected is None:
            return None
        rejections.append(rejected)
        print(format_error(rejected), file=sys.stderr)
        return 1

    status = run_program(program, argv, aliases=("ttnn",), classify=classify)
    return status, (rejections[0] if rejections else None)
