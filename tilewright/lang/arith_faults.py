"""Arithmetic faults of TT-Lang kernels on the Python engine, as the compiled kernels say them.

A compiled kernel's ``//``, ``%`` and ``/`` by zero is the kernel IR's
``kir-division-by-zero`` :class:`~tilewright.errors.KernelError` at the user's line
(``kir/scalar.py``: ``division_by_zero``; ``ttlang/support.h`` raises the same text).
On the Python engine the same kernel raises Python's ``ZeroDivisionError``; the kernel
entry turns it into that error, with the same text, at the same line, so a program gets
one diagnostic on every engine.  Which operator divided is read off the failing
instruction's source range (``co_positions``), only when the error is raised.
"""

from __future__ import annotations

import ast
import linecache

from tilewright.errors import KernelError, SourceLoc, internal_file
from tilewright.kir.scalar import division_by_zero

__all__ = ["division_error"]

_WHAT = {ast.FloorDiv: "floor division", ast.Mod: "modulo", ast.Div: "division"}


def division_error(exc: ZeroDivisionError) -> KernelError:
    """The compiled kernels' error for ``exc``, located at the user's innermost frame."""
    tb, user = exc.__traceback__, None
    while tb is not None:
        if not internal_file(tb.tb_frame.f_code.co_filename):
            user = tb
        tb = tb.tb_next
    what, loc = "division", None
    if user is not None:
        code = user.tb_frame.f_code
        loc = SourceLoc(code.co_filename, user.tb_lineno)
        what = _operator_at(code, user.tb_lasti) or what
    err = division_by_zero(what)
    err.loc = loc
    return err


def _operator_at(code, lasti: int) -> str | None:
    """The division operator of the expression instruction ``lasti`` of ``code`` runs."""
    positions = list(code.co_positions())
    if not 0 <= lasti // 2 < len(positions):
        return None
    line, end_line, col, end_col = positions[lasti // 2]
    if line is None or line != end_line or col is None or end_col is None:
        return None
    text = linecache.getline(code.co_filename, line)
    segment = text.encode()[col:end_col].decode(errors="replace")
    try:
        tree = ast.parse(segment.strip(), mode="exec")
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _WHAT:
            return _WHAT[type(node.op)]
    return None
