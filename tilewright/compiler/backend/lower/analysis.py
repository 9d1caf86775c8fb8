"""Static facts the kernel lowering asks about code and values.

* :func:`assigned` -- the names a function body assigns (Python's locals), with counts;
* :func:`node_values` -- an expression's value on each node of the grid, when it depends
  only on the node (its coordinates, per-node runtime args, locals set from them);
* :func:`merge` -- the environment after two paths join;
* :func:`construct` / :func:`kind_text` -- the words of not-compilable diagnostics.
"""

from __future__ import annotations

import ast
from typing import Any

from tilewright.compiler.backend.lower import scalars as S
from tilewright.compiler.backend.lower.values import (
    BlockRef,
    DFBRef,
    ExprRef,
    FuncRef,
    MethodRef,
    NetRef,
    RemoteSemRef,
    SemRef,
    Static,
    TensorRef,
    TupleV,
    Value,
)
from tilewright.errors import KernelError
from tilewright.kir.ir import Arg, BinOp, Cast, Const, Expr, Intrinsic, Ty, UnOp, Var

Lowering = Any  # the kernel lowering (lower/kernel.py), which imports this module

__all__ = ["assigned", "node_values", "merge", "construct", "kind_text", "CONFLICT"]


class _Conflict(Value):
    """A name bound to different values on the paths that meet here."""

    __slots__ = ()


CONFLICT = _Conflict()


def assigned(body: list[ast.stmt], in_loop: bool = False) -> dict[str, int]:
    """Names assigned in a function body (not in nested functions), with counts: a site
    inside a loop counts twice (``in_loop``: the statements themselves are in one)."""
    counts: dict[str, int] = {}

    def target(t: ast.expr) -> None:
        if isinstance(t, ast.Name):
            counts[t.id] = counts.get(t.id, 0) + 1
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                target(e)
        elif isinstance(t, ast.Starred):
            target(t.value)

    def walk(stmts: list[ast.stmt], in_loop: bool) -> None:
        for s in stmts:
            if isinstance(s, ast.Assign):
                for t in s.targets:
                    target(t)
                    if in_loop:
                        target(t)
            elif isinstance(s, (ast.AugAssign, ast.AnnAssign)):
                target(s.target)
                target(s.target)
            elif isinstance(s, (ast.For, ast.AsyncFor)):
                target(s.target)
                target(s.target)
                walk(s.body, True)
                walk(s.orelse, in_loop)
            elif isinstance(s, ast.While):
                walk(s.body, True)
                walk(s.orelse, in_loop)
            elif isinstance(s, ast.If):
                walk(s.body, in_loop)
                walk(s.orelse, in_loop)
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                for item in s.items:
                    if item.optional_vars is not None:
                        target(item.optional_vars)
                walk(s.body, in_loop)
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                counts[s.name] = counts.get(s.name, 0) + 1
            elif isinstance(s, ast.Try):
                walk(s.body, in_loop)
            for node in ast.walk(s) if not isinstance(s, ast.FunctionDef) else ():
                if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                    counts[node.target.id] = counts.get(node.target.id, 0) + 2

    walk(body, in_loop)
    return counts


def node_values(lw: Lowering, e: Expr) -> tuple:
    """The value of ``e`` on each node (None where it depends on more than the node)."""
    nodes = lw.world.nodes
    return tuple(_eval_on(lw, e, n, xy) for n, xy in enumerate(nodes))


def _eval_on(lw: Lowering, e: Expr, n: int, xy: tuple[int, int]):
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Intrinsic):
        if e.name == "logical_x":
            return xy[0]
        if e.name == "logical_y":
            return xy[1]
        return None
    if isinstance(e, Arg):
        raw = lw.args[e.index][1][n]
        return raw - (1 << 32) if e.ty is Ty.I64 and raw >= 1 << 31 else raw
    if isinstance(e, Var):
        known = lw.known.get(e.name)
        return None if known is None else known[n]
    if isinstance(e, Cast):
        v = _eval_on(lw, e.a, n, xy)
        return None if v is None else S.fold(Cast(Const(v, e.a.ty), e.ty)).value
    if isinstance(e, UnOp):
        v = _eval_on(lw, e.a, n, xy)
        if v is None:
            return None
        return S.fold(UnOp(e.op, Const(v, e.a.ty), e.ty)).value
    if isinstance(e, BinOp):
        a, b = _eval_on(lw, e.a, n, xy), _eval_on(lw, e.b, n, xy)
        if e.op == "and":
            return (
                False
                if a is False or b is False
                else (None if a is None or b is None else bool(a and b))
            )
        if e.op == "or":
            return (
                True
                if a is True or b is True
                else (None if a is None or b is None else bool(a or b))
            )
        if a is None or b is None:
            return None
        try:  # the value the kernel computes (the interpreter's evaluator)
            return S.fold(BinOp(e.op, Const(a, e.a.ty), Const(b, e.b.ty), e.ty)).value
        except KernelError:  # a division by zero: no value
            return None
    return None


def merge(a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]:
    out: dict[str, Value] = {}
    for name in a.keys() | b.keys():
        va, vb = a.get(name), b.get(name)
        out[name] = va if va == vb and va is not None else CONFLICT
    return out


def construct(node: ast.AST) -> str:
    names = {
        "ListComp": "a list comprehension",
        "DictComp": "a dict comprehension",
        "SetComp": "a set comprehension",
        "GeneratorExp": "a generator expression",
        "Lambda": "a lambda",
        "List": "a list",
        "Dict": "a dict",
        "Set": "a set",
        "JoinedStr": "an f-string",
        "Try": "try",
        "TryStar": "try",
        "Raise": "raise",
        "Global": "global",
        "Nonlocal": "nonlocal",
        "Import": "import",
        "ImportFrom": "import",
        "ClassDef": "class",
        "Delete": "del",
        "Assert": "assert",
        "Await": "await",
        "Yield": "yield",
        "YieldFrom": "yield",
        "NamedExpr": "an assignment expression (:=)",
        "Starred": "a starred expression",
        "Match": "match",
        "AsyncFunctionDef": "async def",
        "AsyncFor": "async for",
        "AsyncWith": "async with",
    }
    return names.get(type(node).__name__, type(node).__name__)


def kind_text(value: Value) -> str:
    table = {
        BlockRef: "a block",
        DFBRef: "a DFB",
        TensorRef: "a tensor",
        ExprRef: "a block expression",
        FuncRef: "a function",
        SemRef: "a semaphore",
        RemoteSemRef: "a remote semaphore",
        NetRef: "a pipe net",
        TupleV: "a tuple",
        MethodRef: "a method",
    }
    if isinstance(value, Static):
        return f"a {type(value.obj).__name__}"
    return table.get(type(value), type(value).__name__)
