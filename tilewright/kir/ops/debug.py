"""Debug output of compiled code: ``debug.print``, TT-Lang's ``print`` in a kernel.

``debug.print format, values`` prints one line as the interpreter's ``print`` does
(``lang/debug_print.py``): ``[<place> <kernel>] `` (``device.print_hook.line_prefix``),
then ``format`` with its slots filled (``%lld`` a ``long long``, ``%B`` a bool as
``True`` / ``False``, ``%F`` a double as Python's ``repr``, ``%%`` a percent sign; the label and the literal text folded in by
the lowering), then a newline.  Its C++ is a tt-metal
``DPRINT << ... << ENDL();`` statement whose stream starts with ``TTLANG_PRINT()``: the
native DPRINT handler then prints the interpreter's prefix, once per statement (a plain
DPRINT in a compute kernel prints once per TRISC with the dprint server's prefix).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

from tilewright.device.engine import current_run
from tilewright.device.print_hook import line_prefix
from tilewright.kir.interp_scalar import coerce, compile_expr, unsupported
from tilewright.kir.ir import Expr, Op, seq
from tilewright.kir.opdef import OpDef, OpFn, Runner, Writer, operands
from tilewright.kir.ops.control import c_string

__all__ = ["ROWS", "PRINT_LIMIT"]

PRINT_LIMIT = 510
"""Bytes of text one print line holds: ``DPrintStream``'s 512-byte buffer keeps 511, the
last of them ``ENDL()``'s newline."""

_PIECE = re.compile(r"%%|%lld|%B|%F")


def _pieces(op: Op) -> list[str | tuple[str, Expr]]:
    """The format's literal text and its values: ``%lld`` a ``long long``, ``%B`` a bool
    printed ``True`` / ``False``, ``%F`` a double printed as Python's ``repr`` (shortest
    round-trip digits, ``ttlang::PyFloat`` in C++), ``%%`` a percent sign."""
    fmt, values = str(op.args[0]), list(seq(op.args[1]))
    if "%" in _PIECE.sub("", fmt):
        raise unsupported(
            f"debug.print format {fmt!r}: only %lld (a long long), %B (a bool), %F (a double) "
            "and %% print",
            "raw-ir-print-format",
            op,
        )
    slots = [m for m in _PIECE.finditer(fmt) if m.group(0) != "%%"]
    if len(slots) != len(values):
        raise unsupported(
            f"debug.print format {fmt!r} with {len(values)} value(s): it has {len(slots)} slots",
            "raw-ir-print-format",
            op,
        )
    out: list[str | tuple[str, Expr]] = []
    literal, at = "", 0
    for m in _PIECE.finditer(fmt):
        literal += fmt[at : m.start()]
        at = m.end()
        if m.group(0) == "%%":
            literal += "%"
            continue
        if literal:
            out.append(literal)
            literal = ""
        out.append((m.group(0), values.pop(0)))
    literal += fmt[at:]
    if literal:
        out.append(literal)
    return out


_SLOT_TYPE = {"%lld": "i64", "%B": "bool", "%F": "f64"}


def _text(fn: Callable[[Any], Any], slot: str) -> Callable[[Any], str]:
    if slot == "%B":
        return lambda env: "True" if fn(env) else "False"
    if slot == "%F":
        return lambda env: repr(float(fn(env)))
    return lambda env: str(int(fn(env)))


def _literal(text: str) -> Callable[[Any], str]:
    return lambda env: text


def _run_print(op: Op, rt: Runner) -> OpFn:
    parts: list[Callable[[Any], str]] = []
    for piece in _pieces(op):
        if isinstance(piece, str):
            parts.append(_literal(piece))
        else:
            fn = coerce(*compile_expr(piece[1], op), _SLOT_TYPE[piece[0]])
            parts.append(_text(fn, piece[0]))

    def debug_print(env: Any) -> None:
        text = "".join(p(env) for p in parts)
        text = text.encode()[:PRINT_LIMIT].decode("utf-8", "replace")  # the C++ buffer's
        sys.stdout.write(f"{line_prefix(current_run())} {text}\n")

    return debug_print


def _cpp_print(w: Writer, depth: int, op: Op) -> None:
    parts = ["DPRINT", "TTLANG_PRINT()"]
    for piece in _pieces(op):
        if isinstance(piece, str):
            parts.append(c_string(piece))
        elif piece[0] == "%B":
            parts.append(f'(({w.expr(piece[1])}) ? "True" : "False")')
        elif piece[0] == "%F":
            parts.append(f"ttlang::PyFloat(static_cast<double>({w.expr(piece[1])})).s")
        else:
            parts.append(f"static_cast<long long>({w.expr(piece[1])})")
    parts.append("ENDL()")
    w.line(depth, " << ".join(parts) + ";")


ROWS = (
    OpDef(
        "debug.print",
        operands("format:str", "values:ex*"),
        _run_print,
        _cpp_print,
        header="api/debug/dprint.h",
        doc="TT-Lang print: one line '[place kernel] format' with its %lld / %B / %F slots (DPRINT)",
    ),
)
