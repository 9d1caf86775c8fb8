"""Block math in kernel code: registry ops become expression nodes, stores become tiles.

:func:`build_node` is the compile-time twin of ``lang.expr.evaluate``: it binds the
op's parameters and checks the result shape with the registry's own functions
(``lang.rules.dfb.check_op``: ``bind_params``, ``result_shape``), so a bad expression
raises the interpreter's ``KernelError`` -- emitted as a ``fail`` op at the same line --
and builds a
:class:`~.compute.Node`.  :func:`emit_store` hands a stored tree to
:class:`~.compute.TileProgram` with the kernel's DST capacity, the positions of the
blocks it reads, and the kernel's scratch circular buffers.
"""

from __future__ import annotations

import ast
import math

from tilewright.compiler.backend.lower import compute as C
from tilewright.compiler.backend.lower.blocks import Held
from tilewright.compiler.backend.lower.resources import scaler_cb, scratch_cb
from tilewright.compiler.backend.lower.scalars import to_type
from tilewright.compiler.backend.lower.values import ExprRef, Scalar, Static, TupleV, Value
from tilewright.compiler.backend.lower.violations import violated
from tilewright.device.formats.dataformat import DataFormat
from tilewright.device.ops import get_op
from tilewright.device.ops.spec import OpKind, ParamKind
from tilewright.device.ops.tile_ops import SFPU_BINARY
from tilewright.errors import TilewrightError
from tilewright.kir.ir import Const, Expr, Ty
from tilewright.lang.rules.dfb import check_op

__all__ = ["build_node", "emit_store", "scalar_float"]


def scalar_float(e: Expr) -> Expr:
    return to_type(e, Ty.F64)


def _param_value(lw, v: object, node: ast.AST) -> object:
    if isinstance(v, Value):
        if isinstance(v, Scalar):
            return v.expr.value if isinstance(v.expr, Const) else v.expr
        if isinstance(v, TupleV):
            return tuple(_param_value(lw, x, node) for x in v.items)
        if isinstance(v, Static):
            return v.obj
        raise lw.fail("a block-op parameter that is not a compile-time value", node)
    return v


def build_node(
    lw, name: str, nodes: list[C.Node], extra: list[Value], params: dict, node: ast.AST
) -> Value:
    spec = get_op(name)
    extra_py = [_param_value(lw, v, node) for v in extra]
    params_py = {k: _param_value(lw, v, node) for k, v in params.items()}
    runtime: dict[str, Expr] = {}
    # Run-time numbers (a float computed in the kernel) are bound with a stand-in value.
    for i, v in enumerate(extra_py):
        if isinstance(v, Expr.__args__):
            runtime[f"#{i}"] = v
            extra_py[i] = 0.0
    for k, v in list(params_py.items()):
        if isinstance(v, Expr.__args__):
            runtime[k] = v
            params_py[k] = 0.0
    try:
        bound, shape = check_op(spec, [n.shape for n in nodes], extra_py, params_py)
    except TilewrightError as exc:
        violated(lw, exc)
        return ExprRef(None)
    positional = [p for p in spec.params if not p.keyword_only]
    for key, expr in runtime.items():
        pname = positional[int(key[1:])].name if key.startswith("#") else key
        for p in spec.params:
            if pname == p.name or pname in p.aliases:
                bound[p.name] = expr
    kind = spec.kind
    if any(len(n.shape) not in (0, 2) for n in nodes) or len(shape) not in (0, 2):
        raise lw.fail(
            f"'{name}' on blocks of rank other than 2 (the compiled engine handles 2-D blocks)",
            node,
        )
    if kind is OpKind.TERNARY:  # where(condition, true_value, false_value)
        cond, a, b = (_float_lit(n) for n in nodes)
        if isinstance(cond, C.Lit):
            raise lw.fail("ttl.block.where with a number as its condition", node)
        return ExprRef(C.Where(shape, cond, a, b))
    if name in _MASKS:  # mask(x, mask): where(mask == 1, fill, x)
        x, m = nodes
        if isinstance(x, C.Lit) or isinstance(m, C.Lit):
            raise lw.fail(f"ttl.block.{name} of a number (block ops take blocks)", node)
        return ExprRef(C.Where(shape, m, C.Lit(shape, Const(_MASKS[name], Ty.F64)), x))
    if name == "threshold":  # the spec's: x > threshold -> value, else x
        x = nodes[0]
        if isinstance(x, C.Lit):
            raise lw.fail("'threshold' of a number (block ops take blocks)", node)
        t, v = (_scalar_param(bound[p]) for p in ("threshold", "value"))
        return ExprRef(
            C.Where(shape, C.Binary(shape, "gt", x, C.Lit(shape, t)), C.Lit(shape, v), x)
        )
    if kind is OpKind.UNARY:
        return ExprRef(_unary(lw, name, nodes[0], bound, shape, node))
    if kind is OpKind.TYPECAST and bound["dtype"] == "bfloat16":
        # typecast_tile<Float32, Float16_b>: DST holds float32 (fp32_dest_acc_en)
        if isinstance(nodes[0], C.Lit):
            raise lw.fail("'typecast' of a number (block ops take blocks)", node)
        formats = (Const(int(DataFormat.Float32), Ty.I64), Const(int(DataFormat.Float16_b), Ty.I64))
        return ExprRef(C.Unary(shape, (("typecast", formats),), nodes[0]))
    if kind is OpKind.BINARY:
        if name not in _BINARY:
            raise lw.fail(f"the block op 'ttl.{spec.qualified_name}' is not compiled yet", node)
        a, b = nodes
        if isinstance(a, C.Lit) and isinstance(b, C.Lit):
            raise lw.fail("a block op on two numbers", node)
        return ExprRef(C.Binary(shape, name, _float_lit(a), _float_lit(b)))
    if kind is OpKind.MATMUL:
        return ExprRef(C.Matmul(shape, nodes[0], nodes[1], bool(bound.get("transpose_rhs", False))))
    if kind is OpKind.REDUCE:
        dims = frozenset(int(d) % 2 for d in bound["dims"])
        return ExprRef(C.Reduce(shape, dims, nodes[0], _POOLS[name]))
    if kind is OpKind.BROADCAST:
        dims = frozenset(int(d) % 2 for d in bound["dims"])
        return ExprRef(C.Bcast(shape, dims, nodes[0]))
    if kind is OpKind.TRANSPOSE:
        return ExprRef(C.Transpose(shape, nodes[0]))
    if kind is OpKind.FILL:
        if bound.get("layout", "tile") != "tile" or tuple(bound.get("tile", (32, 32))) != (32, 32):
            raise lw.fail("ttl.block.fill with a row-major layout or a non-32x32 tile", node)
        value = bound["value"]
        expr = value if isinstance(value, Expr.__args__) else Const(float(value), Ty.F64)
        return ExprRef(C.Fill(shape, scalar_float(expr)))
    raise lw.fail(f"the block op 'ttl.{spec.qualified_name}' is not compiled yet", node)


_BINARY = frozenset(("add", "sub", "mul", "div", "max", "min")) | frozenset(SFPU_BINARY)
"""Binary block ops the tile code computes (the FPU's, and the SFPU binary ops')."""


_MASKS = {"mask": 0.0, "mask_posinf": math.inf}
"""``ttl.block.mask`` / ``mask_posinf``: the value where the mask is 1."""


def _scalar_param(v: object) -> Expr:
    return scalar_float(v) if isinstance(v, Expr.__args__) else Const(float(v), Ty.F64)  # type: ignore[arg-type]


_POOLS = {"reduce_sum": "sum", "reduce_max": "max"}
"""Reductions -> their ``reduce_tile`` pool (every REDUCE op of the registry)."""


def _float_lit(n: C.Node) -> C.Node:
    if isinstance(n, C.Lit):
        return C.Lit(n.shape, scalar_float(n.value))
    return n


def _unary(lw, name: str, child: C.Node, bound: dict, shape, node: ast.AST) -> C.Node:
    if isinstance(child, C.Lit):
        raise lw.fail(f"'{name}' of a number (block ops take blocks)", node)

    def f(v: object) -> Expr:
        if isinstance(v, Expr.__args__):
            return scalar_float(v)
        return Const(float(v), Ty.F64)  # type: ignore[arg-type]

    if name == "exp":
        steps: tuple = (("exp", ()),)
        if bound.get("scale") is not None:
            steps = (("mul_scalar", (f(bound["scale"]),)), *steps)
        return C.Unary(shape, steps, child)
    if name == "pow":
        n = bound["exponent"]
        if not isinstance(n, int):
            raise lw.fail("'**' with an exponent that is not a compile-time natural number", node)
        if n == 0:
            return C.Fill(shape, Const(1.0, Ty.F64))
        if n == 1:
            return child
        if n == 2:
            return C.Unary(shape, (("square", ()),), child)
        return C.Unary(shape, (("power", (Const(n, Ty.I64),)),), child)
    table = C.UNARY.get(name)
    if table is None:
        raise lw.fail(f"the block op 'ttl.math.{name}' is not compiled yet", node)
    spec = get_op(name)

    def param(p: str | float) -> Expr:
        if not isinstance(p, str):
            return f(p)
        v = bound[p]
        if spec.param(p).kind is ParamKind.NATURAL and not isinstance(v, Expr.__args__):
            return Const(int(v), Ty.I64)  # an integer parameter (round's decimals)
        return f(v)

    steps = tuple(
        (op, tuple(p if isinstance(p, Expr.__args__) else param(p) for p in ps)) for op, ps in table
    )
    return C.Unary(shape, steps, child)


def emit_store(lw, tree: C.Node, held: Held, l1_acc: bool, node: ast.AST) -> None:
    """The tile program storing ``tree`` into the reserved block ``held``."""
    tracker = lw.tracker
    for leaf in C.leaves(tree):
        if leaf.site < 0:
            continue
        now = tracker.held.get(leaf.site)
        if now is None or now.version != leaf.version:
            raise lw.fail(
                "a block expression whose block was released or rewritten before the store; "
                "store it while its blocks are held"
            )
        if now.reserve:
            raise lw.fail(
                f"reading {now.describe()} (a reserved block) in a block expression; the compiled "
                "engine reads waited blocks (use `blk += expr` to accumulate into a reserved block)"
            )

    def position(leaf: C.Leaf) -> int:
        h = tracker.held[leaf.site]
        return tracker.position(leaf.site) * h.dfb.block_pages

    scratch_k = [0]

    def scratch(tiles: int) -> int:
        index = scratch_cb(lw, scratch_k[0], tiles)
        scratch_k[0] += 1
        return index

    program = C.TileProgram(
        capacity=lw.dst_tiles,
        position=position,
        scratch=scratch,
        scaler=lambda: scaler_cb(lw),
        loc=lw.loc,
    )
    try:
        ops = program.store(
            tree, held.dfb.index, tracker.position(held.site) * held.dfb.block_pages, l1_acc=l1_acc
        )
    except C.Unsupported as exc:
        raise lw.fail(str(exc), node) from None
    lw.emit_ops(ops)
