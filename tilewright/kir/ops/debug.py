"""Debug output of compiled code: ``debug.print``, TT-Lang's ``print`` in a kernel.

``debug.print format, values`` prints one line as the interpreter's ``print`` does
(``lang/debug_print.py``): ``[<place> <kernel>] `` (``device.print_hook.line_prefix``),
then the ``snprintf`` of ``format`` (``%lld`` of ``long long`` values, ``%%``; the label
and the literal text folded in by the lowering), then a newline.  Its C++ is a tt-metal
``DPRINT << ... << ENDL();`` statement whose stream starts with ``TTLANG_PRINT()``: the
native DPRINT handler then prints the interpreter's prefix, once per statement (a plain
DPRINT in a compute kernel prints once per TRISC with the dprint server's prefix).
"""

from __future__ import annotations

import re
import sys
from typing import Any

from tilewright.device.engine import current_run
from tilewright.device.print_hook import line_prefix
from tilewright.kir.interp_scalar import unsupported
from tilewright.kir.ir import Op, seq
from tilewright.kir.opdef import OpDef, OpFn, Runner, Writer, operands
from tilewright.kir.ops.control import c_string, printf_text

__all__ = ["ROWS", "PRINT_LIMIT"]

PRINT_LIMIT = 511
"""Bytes of text one DPRINT statement holds (``DPrintStream``'s 512-byte buffer)."""

_PIECE = re.compile(r"%%|%lld")


def _format(op: Op) -> str:
    fmt = str(op.args[0])
    if "%" in _PIECE.sub("", fmt):
        raise unsupported(
            f"debug.print format {fmt!r}: only %lld (a long long value) and %% print",
            "raw-ir-print-format",
            op,
        )
    return fmt


def _run_print(op: Op, rt: Runner) -> OpFn:
    _format(op)
    text_of = printf_text(op, str(op.args[0]), op.args[1])

    def debug_print(env: Any) -> None:
        sys.stdout.write(f"{line_prefix(current_run())} {text_of(env)}\n")

    return debug_print


def _cpp_print(w: Writer, depth: int, op: Op) -> None:
    fmt, values = _format(op), list(seq(op.args[1]))
    parts = ["DPRINT", "TTLANG_PRINT()"]
    literal, at = "", 0
    for m in _PIECE.finditer(fmt):
        literal += fmt[at : m.start()]
        at = m.end()
        if m.group(0) == "%%":
            literal += "%"
            continue
        if literal:
            parts.append(c_string(literal))
            literal = ""
        parts.append(f"static_cast<long long>({w.expr(values.pop(0))})")
    literal += fmt[at:]
    if literal:
        parts.append(c_string(literal))
    parts.append("ENDL()")
    w.line(depth, " << ".join(parts) + ";")


ROWS = (
    OpDef(
        "debug.print",
        operands("format:str", "values:ex*"),
        _run_print,
        _cpp_print,
        header="api/debug/dprint.h",
        doc="TT-Lang print: one line '[place kernel] printf(format, values...)' (DPRINT)",
    ),
)
