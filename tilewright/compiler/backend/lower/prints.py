"""``print`` in kernel code: TT-Lang's debug print as one ``debug.print`` op (a DPRINT).

The interpreter's print (``lang/debug_print.py``) writes ``[<place> <kernel>] `` then
``label: `` when there is a label, then ``str`` of each argument joined by ``sep``, then
``end``.  What compiled code can say exactly: literal text, compile-time values (their
``str`` now, in Python), run-time integers (``%lld`` is Python's ``str`` of an int),
bools (``True`` / ``False``) and floats (Python's repr: ``ttlang::PyFloat``), tuples
of these, and f-strings of these (``{x}`` / ``{x!s}`` / ``{x!r}`` / ``{x:d}`` of a run-time
integer; any spec of a compile-time value).  The rest stays interpreted, with the reason:
a block's, DFB's or tensor's contents, a run-time float or bool with a format spec, a
float from ``min`` / ``max`` of an int and a float, ``end`` other than a newline,
``file=``, ``num_pages=``, ``_dump_dst_registers=``, a line longer than a DPRINT
statement holds.
"""

from __future__ import annotations

import ast

from tilewright.compiler.backend.lower.analysis import kind_text
from tilewright.compiler.backend.lower.values import Scalar, Static, TupleV, Value
from tilewright.kir.ir import BinOp, Cast, Const, Expr, Intrinsic, Ty, UnOp
from tilewright.kir.ops.debug import PRINT_LIMIT

__all__ = ["debug_print"]

_THREADS = ("math", "pack", "unpack")
_KEYWORDS = frozenset(
    {"sep", "end", "file", "flush", "thread", "num_pages", "label", "_dump_dst_registers"}
)
_INT_WIDTH = 20  # the widest %lld: -9223372036854775808
_SLOTS = {Ty.BOOL: ("%B", len("False")), Ty.F64: ("%F", len("-2.2250738585072014e-308"))}

Piece = str | Expr  # literal text, or a run-time integer printed with %lld


def _static(lw, node: ast.expr, what: str) -> object:
    value = lw.expr(node)
    if isinstance(value, Static):
        return value.obj
    if isinstance(value, Scalar) and isinstance(value.expr, Const):
        return _const(value.expr)
    raise lw.fail(f"print({what}=...) that is not a compile-time value", node)


def _const(c: Const) -> object:
    if c.ty is Ty.BOOL:
        return bool(c.value)
    return float(c.value) if c.ty.is_float else int(c.value)


def _int_as_float(e: Expr) -> bool:
    return (isinstance(e, Cast) and e.a.ty.is_int) or (
        isinstance(e, Const) and e.ty is Ty.F64 and float(e.value).is_integer()
    )


def _mixed_min_max(e: Expr) -> bool:
    """Whether ``e`` holds a min / max that may have met an int and a float: Python's
    answer keeps the type of the operand it picks (``max(1, 0.5)`` is ``1``), the
    lowering's is a float (``1.0``) -- the same number, not the same text."""
    if isinstance(e, BinOp):
        if e.op in ("min", "max") and (_int_as_float(e.a) or _int_as_float(e.b)):
            return True
        return _mixed_min_max(e.a) or _mixed_min_max(e.b)
    if isinstance(e, (UnOp, Cast)):
        return _mixed_min_max(e.a)
    if isinstance(e, Intrinsic):
        return any(_mixed_min_max(a) for a in e.args)
    return False


def _value(lw, value: Value, node: ast.AST, spec: str = "") -> list[Piece]:
    if isinstance(value, Static) and (value.obj is None or isinstance(value.obj, str)):
        return [format(value.obj, spec)]
    if isinstance(value, Scalar):
        e = value.expr
        if isinstance(e, Const):
            return [format(_const(e), spec)]
        if e.ty is Ty.U64:  # %lld of a long long: above 2**63 it would print negative
            raise lw.fail("print of a run-time u64 integer", node)
        if e.ty is Ty.F64 and _mixed_min_max(e):
            raise lw.fail(
                "print of a float computed with min() / max() of an int and a float "
                "(Python's answer keeps the int's type when it picks the int)",
                node,
            )
        if (e.ty.is_int and spec in ("", "d")) or (e.ty in (Ty.BOOL, Ty.F64) and not spec):
            return [e]
        what = "integer" if e.ty.is_int else "bool" if e.ty is Ty.BOOL else "float"
        if e.ty is Ty.F64 or e.ty.is_int or e.ty is Ty.BOOL:
            raise lw.fail(f"print of a run-time {what} with format spec {spec!r}", node)
        raise lw.fail(f"print of a run-time {e.ty.name.lower()} value", node)
    if isinstance(value, TupleV) and not spec:
        out: list[Piece] = ["("]
        for i, item in enumerate(value.items):
            if i:
                out.append(", ")
            out += _value(lw, item, node)
        out.append(",)" if len(value.items) == 1 else ")")
        return out
    raise lw.fail(f"print of {kind_text(value)} (its contents print only interpreted)", node)


def _fstring(lw, node: ast.JoinedStr) -> list[Piece]:
    out: list[Piece] = []
    for part in node.values:
        if isinstance(part, ast.Constant):
            out.append(str(part.value))
            continue
        assert isinstance(part, ast.FormattedValue)
        spec = ""
        if part.format_spec is not None:
            pieces = _fstring(lw, part.format_spec)  # type: ignore[arg-type]
            if not all(isinstance(p, str) for p in pieces):
                raise lw.fail("an f-string format spec computed at run time", part)
            spec = "".join(pieces)  # type: ignore[arg-type]
        value = lw.expr(part.value)
        # a number's repr is its str; a string's differs (quotes)
        if part.conversion in (ord("r"), ord("a")) and not isinstance(value, Scalar):
            if not isinstance(value, Static) or not isinstance(value.obj, (str, type(None))):
                raise lw.fail("an f-string {x!r} of something other than a number", part)
            text = repr(value.obj) if part.conversion == ord("r") else ascii(value.obj)
            out.append(format(text, spec))
            continue
        out += _value(lw, value, part, spec)
    return out


def debug_print(lw, node: ast.Call) -> Value:
    kw = {k.arg: k.value for k in node.keywords if k.arg is not None}  # ** is refused earlier
    kind = lw.kin.kind
    sep = _static(lw, kw["sep"], "sep") if "sep" in kw else None
    end = _static(lw, kw["end"], "end") if "end" in kw else None
    sep, end = " " if sep is None else sep, "\n" if end is None else end  # print's defaults
    if not isinstance(sep, str) or not isinstance(end, str):
        raise lw.fail("print(sep=, end=) that are not strings", node)
    if end != "\n":
        raise lw.fail("print(end=...) other than a newline (DPRINT ends lines with ENDL)", node)
    if "file" in kw and _static(lw, kw["file"], "file") is not None:
        raise lw.fail("print(file=...) in kernel code", node)
    for name in ("num_pages", "_dump_dst_registers"):
        if name in kw and _static(lw, kw[name], name) not in (None, False):
            raise lw.fail(f"print({name}=...)", node)
    thread = _static(lw, kw["thread"], "thread") if "thread" in kw else None
    if thread is not None and (kind != "compute" or thread not in _THREADS):
        raise lw.fail(f"print(thread={thread!r}) in a {kind} kernel", node)
    unknown = set(kw) - _KEYWORDS
    if unknown:
        raise lw.fail(f"print({sorted(unknown)[0]}=...)", node)
    label = _static(lw, kw["label"], "label") if "label" in kw else None

    pieces: list[Piece] = [f"{label}: "] if label else []
    for i, arg in enumerate(node.args):
        if i:
            pieces.append(sep)
        if isinstance(arg, ast.JoinedStr):
            pieces += _fstring(lw, arg)
        else:
            pieces += _value(lw, lw.expr(arg), arg)

    fmt, values, widest = "", [], 0
    for p in pieces:
        if isinstance(p, str):
            fmt += p.replace("%", "%%")
            widest += len(p.encode())
        else:
            slot, width = _SLOTS.get(p.ty, ("%lld", _INT_WIDTH))
            fmt += slot
            widest += width
            values.append(p)
    if "\x00" in fmt:
        raise lw.fail("print of text with a NUL character", node)
    if widest > PRINT_LIMIT:
        raise lw.fail(
            f"a print line of up to {widest} bytes (one DPRINT statement holds {PRINT_LIMIT})",
            node,
        )
    lw.emit("debug.print", fmt, tuple(values))
    return Static(None)
