"""Rewriting kernel IR: the one walk over ops, their regions and their expressions that
the passes share."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from tilewright.kir.ir import Arg, BinOp, Cast, Const, Function, Intrinsic, Kernel, Op, UnOp, Var

__all__ = ["rewrite_ops", "map_exprs", "map_op_exprs", "on_bodies"]

OpRewrite = Callable[[Op], Iterable[Op]]


def rewrite_ops(ops: tuple[Op, ...], fn: OpRewrite) -> tuple[Op, ...]:
    """Every op of ``ops`` (regions first, bottom-up) replaced by ``fn(op)`` -- zero, one
    or several ops.  Ops ``fn`` returns unchanged keep their identity."""
    out: list[Op] = []
    for op in ops:
        if op.regions:
            regions = tuple(rewrite_ops(r, fn) for r in op.regions)
            if any(a is not b for a, b in zip(regions, op.regions)):
                op = replace(op, regions=regions)
        out.extend(fn(op))
    if len(out) == len(ops) and all(a is b for a, b in zip(out, ops)):
        return ops
    return tuple(out)


ExprRewrite = Callable[[object], object]


def map_exprs(e: Any, fn: ExprRewrite) -> Any:
    """Expression ``e`` rebuilt bottom-up with ``fn`` applied to every node (tuples of
    expressions element by element); other operands (ints, strings, vars) as they are."""
    if isinstance(e, BinOp):
        a, b = map_exprs(e.a, fn), map_exprs(e.b, fn)
        return fn(e if a is e.a and b is e.b else BinOp(e.op, a, b, e.ty))
    if isinstance(e, (UnOp, Cast)):
        a = map_exprs(e.a, fn)
        return fn(e if a is e.a else replace(e, a=a))
    if isinstance(e, Intrinsic):
        args = tuple(map_exprs(x, fn) for x in e.args)
        same = all(x is y for x, y in zip(args, e.args))
        return fn(e if same else replace(e, args=args))
    if isinstance(e, (Const, Var, Arg)):
        return fn(e)
    if isinstance(e, tuple):
        items = tuple(map_exprs(x, fn) for x in e)
        return e if all(x is y for x, y in zip(items, e)) else items
    return e


def map_op_exprs(op: Op, fn: ExprRewrite) -> Op:
    """``op`` with ``fn`` applied through every expression operand (see :func:`map_exprs`).
    The variable a ``set`` or ``for`` assigns is not an expression it reads: kept."""
    first = 1 if op.code in ("set", "for") else 0
    args = op.args[:first] + tuple(map_exprs(a, fn) for a in op.args[first:])
    if all(x is y for x, y in zip(args, op.args)):
        return op
    return replace(op, args=args)


def on_bodies(kernel: Kernel, fn: Callable[[tuple[Op, ...]], tuple[Op, ...]]) -> Kernel:
    """``kernel`` with ``fn`` applied to its body and to every function's body."""
    body = fn(kernel.body)
    functions = tuple(_function(f, fn) for f in kernel.functions)
    if body is kernel.body and all(a is b for a, b in zip(functions, kernel.functions)):
        return kernel
    return replace(kernel, body=body, functions=functions)


def _function(f: Function, fn: Callable[[tuple[Op, ...]], tuple[Op, ...]]) -> Function:
    body = fn(f.body)
    return f if body is f.body else replace(f, body=body)
