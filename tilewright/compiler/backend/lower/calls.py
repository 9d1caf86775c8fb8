"""Calls, operators, attributes and subscripts in kernel code: the lowering's tables.

``FUNCTIONS`` maps the Python objects kernel code may call (``ttl.copy``,
``ttl.node``, ``ttl.math.*``, ``range``, ``min`` ...) to the function that lowers the
call, keyed by identity, so aliases (``from ttl import copy``) resolve the same way;
``METHODS`` maps (value kind, method name) for kernel-time objects (``blk.store``,
``dfb.reserve``, ``handle.wait``, ``sem.wait_eq``, ``net.if_src`` ...).  Block math
goes through the op registry (``tilewright.device.ops``): the op's own shape rule and
parameter binding run at compile time, and their errors become the interpreter's
``KernelError`` at the same line.  A call the tables do not know is not compilable.
"""

from __future__ import annotations

import ast
import builtins
import enum
import types
from collections.abc import Callable

from tilewright.compiler.backend.lower import helpers
from tilewright.compiler.backend.lower import scalars as S
from tilewright.compiler.backend.lower.dataflow import tensor_slice
from tilewright.compiler.backend.lower.protocol import block_of, block_op
from tilewright.compiler.backend.lower.values import (
    BlockRef,
    DFBRef,
    ExprRef,
    HandleRef,
    MethodRef,
    NetRef,
    PipeRef,
    RemoteSemRef,
    Scalar,
    SemRef,
    Static,
    TensorRef,
    TupleV,
    Value,
    is_scalar_py,
    py_const,
)
from tilewright.errors import TilewrightError
from tilewright.kir.ir import BinOp, Const, Expr, Intrinsic, Ty
from tilewright.lang import misc
from tilewright.lang.declare import grid_extent
from tilewright.lang.dfb import DataflowBuffer
from tilewright.lang.misc import static_range
from tilewright.lang.pipes import PipeNet
from tilewright.lang.semaphore import MulticastRemoteSemaphore, Semaphore, UnicastRemoteSemaphore
from tilewright.ttnn.tensor import Tensor

__all__ = [
    "attribute",
    "binop_values",
    "classify_object",
    "compare_values",
    "range_bounds",
    "static_value",
    "subscript",
    "unary_value",
]

_BINOPS = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.FloorDiv: "floordiv",
    ast.Mod: "mod",
    ast.Div: "truediv",
    ast.LShift: "shl",
    ast.RShift: "shr",
    ast.BitAnd: "bitand",
    ast.BitOr: "bitor",
    ast.BitXor: "bitxor",
}
_BLOCK_BINOPS = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "div",
    ast.MatMult: "matmul",
    ast.Mod: "mod",
    ast.FloorDiv: "floordiv",
}
_REFLECTED = {"eq": "eq", "ne": "ne", "lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}


_TTL_MODULES = ("tilewright.lang", "tilewright.ttl")
_PY_BUILTINS = (
    builtins.range,
    builtins.min,
    builtins.max,
    builtins.abs,
    builtins.int,
    builtins.float,
    builtins.bool,
    builtins.len,
    builtins.print,
    builtins.slice,
)


class _Signpost:
    """What ``ttl.signpost(name)`` gives in compiled code: a ``with`` item whose only effect
    is its trace span (``signpost <name>``, as ``lang.misc.signpost``)."""

    ttl_signpost = True

    def __init__(self, name: str) -> None:
        self.name = name


# -- classification of captured objects ----------------------------------------------------------


def classify_object(lw, first: object, values: list[object], node: ast.AST) -> Value | None:
    """The Value of a captured non-scalar object, or None if kernel code may not use it."""
    world = lw.world
    if isinstance(first, DataflowBuffer):
        info = world.dfb_ids.get(id(first))
        return DFBRef(info) if info is not None else None
    if isinstance(first, Tensor):
        t = world.tensors.get(id(first))
        if t is None:
            raise lw.fail("a tensor that is not an argument of the operation", node)
        return TensorRef(t)
    if isinstance(first, Semaphore):
        return world.sems.get(id(first))
    if isinstance(first, (UnicastRemoteSemaphore, MulticastRemoteSemaphore)):
        sem = world.sems.get(id(first.sem))
        if sem is None:
            return None
        if isinstance(first, UnicastRemoteSemaphore):
            if any(getattr(v, "node", None) != first.node for v in values):
                raise lw.fail("a remote semaphore whose node differs between nodes", node)
            return RemoteSemRef(sem, first.node, first.node, False)
        return RemoteSemRef(sem, first.lo, first.hi, True)
    if isinstance(first, PipeNet):
        return world.nets.get(id(first))
    if first is None or isinstance(first, (str, enum.Enum, types.ModuleType)):
        return Static(first)
    if (
        getattr(first, "__module__", "").startswith(_TTL_MODULES)
        or isinstance(first, type)
        or first in _PY_BUILTINS
    ):
        if any(v is not first for v in values):
            return None
        return Static(first)
    if helpers.is_helper(lw, first, values):  # defined in the operation's file: inlined
        return helpers.helper_ref(lw, values, node)
    if callable(first):
        raise lw.fail(
            f"a call into the Python function '{getattr(first, '__qualname__', first)}': kernel "
            "code may call TT-Lang functions and functions defined in the operation's file",
            node,
        )
    return None


def static_value(lw, node: ast.expr) -> object:
    """A compile-time parameter (dims, shapes, flags): a Python value, or an Expr for a
    run-time number."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [static_value(lw, e) for e in node.elts]
    value = lw.expr(node)
    return _py(lw, value, node)


def _py(lw, value: Value, node: ast.AST) -> object:
    if isinstance(value, Scalar):
        return value.expr.value if isinstance(value.expr, Const) else value.expr
    if isinstance(value, TupleV):
        return tuple(_py(lw, v, node) for v in value.items)
    if isinstance(value, Static):
        return value.obj
    raise lw.fail("a parameter that is not a compile-time value", node)


# -- attributes ---------------------------------------------------------------------------------

_METHOD_NAMES: dict[type, frozenset[str]] = {
    BlockRef: frozenset({"store", "push", "pop"}),
    DFBRef: frozenset({"reserve", "wait", "push", "pop"}),
    HandleRef: frozenset({"wait"}),
    SemRef: frozenset({"set", "wait_eq", "wait_ge", "get_remote", "get_remote_multicast", "value"}),
    RemoteSemRef: frozenset({"set", "inc"}),
    NetRef: frozenset({"if_src", "if_dst", "is_src", "is_dst", "is_active", "destination_count"}),
}


def attribute(lw, base: Value, attr: str, node: ast.AST) -> Value:
    names = _METHOD_NAMES.get(type(base))
    if names is not None and attr in names:
        return MethodRef(base, attr)
    if isinstance(base, Static):
        obj = base.obj
        if isinstance(obj, (types.ModuleType, type)) or isinstance(obj, enum.Enum):
            if not hasattr(obj, attr):
                raise lw.fail(f"{getattr(obj, '__name__', obj)!s} has no attribute '{attr}'", node)
            got = getattr(obj, attr)
            if is_scalar_py(got):
                return Scalar(py_const(got))
            value = classify_object(lw, got, [got], node)
            if value is None:
                raise lw.fail(f"'{attr}' is a Python {type(got).__name__} object", node)
            return value
    if isinstance(base, BlockRef):
        held = block_of(lw, base)
        if attr == "shape":
            return TupleV(tuple(Scalar(Const(int(s), Ty.I64)) for s in held.dfb.shape))
        if attr == "dtype":
            return Static(held.dfb.dtype)
    if isinstance(base, DFBRef):
        if attr == "shape":
            return TupleV(tuple(Scalar(Const(int(s), Ty.I64)) for s in base.dfb.shape))
        if attr == "block_count":
            return Scalar(Const(base.dfb.block_count, Ty.I64))
        if attr == "dtype":
            return Static(base.dfb.dtype)
    if isinstance(base, PipeRef):
        if attr == "src":
            return TupleV(tuple(Scalar(Const(c, Ty.I64)) for c in base.src))
        if attr == "dst" and not base.multicast:
            return TupleV(tuple(Scalar(Const(c, Ty.I64)) for c in base.dst_lo))
    if isinstance(base, TensorRef) and attr == "shape":
        return TupleV(tuple(Scalar(Const(int(s), Ty.I64)) for s in base.tensor.tensor.shape))
    raise lw.fail(f"attribute '{attr}' of {type(base).__name__.removesuffix('Ref').lower()}", node)


# -- operators ----------------------------------------------------------------------------------


def _is_block_value(v: Value) -> bool:
    return isinstance(v, (BlockRef, ExprRef))


def binop_values(lw, op: ast.operator, a: Value, b: Value, node: ast.AST) -> Value:
    if _is_block_value(a) or _is_block_value(b):
        if isinstance(op, ast.Pow):
            return block_op(lw, "pow", [a], [b], {}, node)
        name = _BLOCK_BINOPS.get(type(op))
        if name is None:
            raise lw.fail(f"the operator {type(op).__name__} on blocks", node)
        if name in ("mod", "floordiv") and not _is_block_value(a):
            # blocks define no __rmod__ / __rfloordiv__: the interpreter raises TypeError
            raise lw.fail(f"a number {'%' if name == 'mod' else '//'} a block", node)
        return block_op(lw, name, [a, b], [], {}, node)
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        if isinstance(op, ast.Pow):
            return Scalar(_pow(lw, a.expr, b.expr, node))
        name = _BINOPS.get(type(op))
        if name is None:
            raise lw.fail(f"the operator {type(op).__name__}", node)
        try:
            return Scalar(S.binary(name, a.expr, b.expr))
        except ZeroDivisionError as exc:  # the run-time error's text (lower/scalars.py)
            raise lw.fail(str(exc) or "a division by zero", node) from None
        except TypeError:
            raise lw.fail(f"the operator {type(op).__name__} on floats", node) from None
        except ValueError:
            raise lw.fail("a shift by a negative count", node) from None
    if isinstance(a, TupleV) and isinstance(b, TupleV) and isinstance(op, ast.Add):
        return TupleV(a.items + b.items)
    raise lw.fail(f"the operator {type(op).__name__} on these operands", node)


def _pow(lw, a: Expr, b: Expr, node: ast.AST) -> Expr:
    if (
        isinstance(b, Const)
        and isinstance(b.value, int)
        and not isinstance(b.value, bool)
        and b.value >= 0
    ):
        out: Expr = Const(1, Ty.I64) if not a.ty.is_float else Const(1.0, Ty.F64)
        if isinstance(a, Const) and not a.ty.is_float:  # the product the kernel computes
            base = int(a.value)
            if abs(base) > 1 and b.value >= 64:  # beyond int64 (not computed: 2 ** 10**9)
                return S.int_const(1 << 64)
            return S.int_const(pow(base, b.value))  # exact, as Python: or an error
        for _ in range(b.value):
            out = S.binary("mul", out, a)
        return out
    raise lw.fail("'**' with an exponent that is not a static natural number", node)


def unary_value(lw, op: ast.unaryop, v: Value, node: ast.AST) -> Value:
    if _is_block_value(v):
        if isinstance(op, ast.USub):
            return block_op(lw, "neg", [v], [], {}, node)
        raise lw.fail(f"the operator {type(op).__name__} on a block", node)
    if isinstance(v, Scalar):
        name = {ast.USub: "neg", ast.UAdd: "pos", ast.Not: "not"}.get(type(op))
        if name is None:
            raise lw.fail("the operator ~", node)
        return Scalar(S.unary(name, v.expr))
    if isinstance(op, ast.Not):
        return Scalar(S.unary("not", lw.truth(v, node)))
    raise lw.fail(f"the operator {type(op).__name__} on this operand", node)


def compare_values(lw, node: ast.Compare) -> Value:
    left = lw.expr(node.left)
    out: Expr | None = None
    for op, right_node in zip(node.ops, node.comparators):
        right = lw.expr(right_node)
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, Static) and right.obj is None:
            same = isinstance(left, Static) and left.obj is None
            term: Expr = Const(same == isinstance(op, ast.Is), Ty.BOOL)
        elif isinstance(left, Scalar) and isinstance(right, Scalar) and type(op) in _CMPOPS:
            term = S.compare(_CMPOPS[type(op)], left.expr, right.expr)
        elif (
            isinstance(left, TupleV)
            and isinstance(right, TupleV)
            and type(op) in (ast.Eq, ast.NotEq)
        ):
            if len(left.items) != len(right.items):
                term = Const(isinstance(op, ast.NotEq), Ty.BOOL)
            else:
                parts = [
                    S.compare("eq", x.expr, y.expr)
                    for x, y in zip(left.items, right.items)
                    if isinstance(x, Scalar) and isinstance(y, Scalar)
                ]
                if len(parts) != len(left.items):
                    raise lw.fail("comparing tuples of non-numbers", node)
                term = Const(True, Ty.BOOL)
                for p in parts:
                    term = S.logical("and", term, p)
                if isinstance(op, ast.NotEq):
                    term = S.unary("not", term)
        elif (_is_block_value(left) or _is_block_value(right)) and type(op) in _CMPOPS:
            if len(node.ops) > 1:  # Python's `a < x < b` takes the truth of a block
                raise lw.fail(
                    "a chained comparison of blocks (a block has no truth value; compare "
                    "elementwise and combine with ttl.block.where)",
                    node,
                )
            name = _CMPOPS[type(op)]
            if _is_block_value(left):
                return block_op(lw, name, [left, right], [], {}, node)
            # `2.0 < x`: Python calls the block's reflected operator, x.__gt__(2.0)
            return block_op(lw, _REFLECTED[name], [right, left], [], {}, node)
        else:
            raise lw.fail(f"the comparison {type(op).__name__} of these operands", node)
        out = term if out is None else S.logical("and", out, term)
        left = right
    assert out is not None
    return Scalar(out)


def subscript(lw, node: ast.Subscript) -> Value:
    base = lw.expr(node.value)
    if isinstance(base, TensorRef):
        return tensor_slice(lw, base, node)
    if isinstance(base, TupleV):
        index = lw.expr(node.slice)
        if isinstance(index, Scalar) and isinstance(index.expr, Const):
            i = int(index.expr.value)
            try:
                return base.items[i]
            except IndexError:
                raise lw.fail(f"tuple index {i} out of range", node) from None
        raise lw.fail("indexing a tuple with a run-time index", node)
    raise lw.fail("subscripting this value", node)


# -- calls ------------------------------------------------------------------------------------------


def range_bounds(lw, node: ast.expr) -> tuple[Expr, Expr, int]:
    """``range(...)`` / ``ttl.static_range(...)`` of a ``for``: (start, stop, static step)."""
    if not isinstance(node, ast.Call) or node.keywords:
        raise lw.fail(
            "a for loop over something other than range(...) / ttl.static_range(...)", node
        )
    fn = lw.expr(node.func)
    if not (isinstance(fn, Static) and fn.obj in (builtins.range, static_range)):
        raise lw.fail(
            "a for loop over something other than range(...) / ttl.static_range(...)", node
        )
    args = [lw.scalar(a) for a in node.args]
    if not 1 <= len(args) <= 3 or any(not (a.ty.is_int or a.ty is Ty.BOOL) for a in args):
        raise lw.fail("range() takes one to three integer arguments", node)
    if fn.obj is static_range and any(not isinstance(a, Const) for a in args):
        raise lw.fail("ttl.static_range arguments must be compile-time ints", node)
    args = [S.to_type(a, Ty.I64) for a in args]
    if len(args) == 1:
        return Const(0, Ty.I64), args[0], 1
    step = 1
    if len(args) == 3:
        if not isinstance(args[2], Const):
            raise lw.fail("a range step that is not a compile-time int", node)
        step = int(args[2].value)
        if step == 0:
            raise lw.fail("range() arg 3 must not be zero", node)
    return args[0], args[1], step


def scalar_builtin(name: str) -> Callable:
    """min / max / abs / int / float / bool / len on numbers and tuples."""

    def lower(lw, node: ast.Call) -> Value:
        if node.keywords:
            raise lw.fail(f"keyword arguments to {name}()", node)
        values = [lw.expr(a) for a in node.args]
        if name == "len":
            if len(values) == 1 and isinstance(values[0], TupleV):
                return Scalar(Const(len(values[0].items), Ty.I64))
            raise lw.fail("len() of something other than a tuple", node)
        if name in ("min", "max"):
            if len(values) == 1 and isinstance(values[0], TupleV):
                values = list(values[0].items)
            if len(values) < 2 or not all(isinstance(v, Scalar) for v in values):
                raise lw.fail(f"{name}() of something other than numbers", node)
            out = values[0].expr
            for v in values[1:]:
                b = v.expr
                ty = Ty.F64 if out.ty.is_float or b.ty.is_float else Ty.I64
                x, y = S.to_type(out, ty), S.to_type(b, ty)
                if isinstance(x, Const) and isinstance(y, Const):
                    out = Const((min if name == "min" else max)(x.value, y.value), ty)
                else:
                    out = BinOp(name, x, y, ty)
            return Scalar(out)
        if len(values) != 1 or not isinstance(values[0], Scalar):
            raise lw.fail(f"{name}() of something other than one number", node)
        e = values[0].expr
        if name == "abs":
            if isinstance(e, Const):
                return Scalar(Const(abs(e.value), e.ty if e.ty is not Ty.BOOL else Ty.I64))
            e = S.to_type(e, Ty.F64 if e.ty.is_float else Ty.I64)
            return Scalar(BinOp("max", e, S.unary("neg", e), e.ty))
        if name == "int":
            return Scalar(S.to_type(e, Ty.I64))
        if name == "float":
            return Scalar(S.to_type(e, Ty.F64))
        return Scalar(S.truth(e))

    return lower


def node_coords(lw, node: ast.Call) -> Value:
    """``ttl.node(dims)``: the node's coordinates (runtime; static on a 1-wide grid axis)."""
    dims = _dims_arg(lw, node)
    cols, rows = lw.world.grid
    x: Expr = (
        Const(0, Ty.I64) if cols == 1 else S.to_type(Intrinsic("logical_x", (), Ty.U32), Ty.I64)
    )
    y: Expr = (
        Const(0, Ty.I64) if rows == 1 else S.to_type(Intrinsic("logical_y", (), Ty.U32), Ty.I64)
    )
    if dims == 1:
        return Scalar(S.binary("add", S.binary("mul", x, Const(rows, Ty.I64)), y))
    return TupleV((Scalar(x), Scalar(y)) + tuple(Scalar(Const(0, Ty.I64)) for _ in range(dims - 2)))


def grid_size(lw, node: ast.Call) -> Value:
    dims = _dims_arg(lw, node)
    ext = grid_extent(lw.world.grid, dims)
    if isinstance(ext, int):
        return Scalar(Const(ext, Ty.I64))
    return TupleV(tuple(Scalar(Const(int(v), Ty.I64)) for v in ext))


def _dims_arg(lw, node: ast.Call) -> int:
    if len(node.args) > 1 or any(k.arg != "dims" for k in node.keywords):
        raise lw.fail("ttl.node / ttl.grid_size take one argument, dims", node)
    arg = node.args[0] if node.args else (node.keywords[0].value if node.keywords else None)
    if arg is None:
        return 2
    v = lw.scalar(arg)
    if (
        not isinstance(v, Const)
        or not isinstance(v.value, int)
        or isinstance(v.value, bool)
        or v.value < 1
    ):
        raise lw.fail("dims must be a compile-time positive int", node)
    return int(v.value)


def signpost(lw, node: ast.Call) -> Value:
    args = [static_value(lw, a) for a in node.args]
    if node.keywords or len(args) != 1 or not isinstance(args[0], str):
        raise lw.fail("ttl.signpost takes one literal name", node)
    try:
        misc.signpost(args[0])  # the interpreter's check of the name
    except TilewrightError as exc:
        raise lw.fail(exc.message, node) from None
    return Static(_Signpost(args[0]))


def not_compilable(what: str) -> Callable:
    def lower(lw, node: ast.Call) -> Value:
        raise lw.fail(what, node)

    return lower
