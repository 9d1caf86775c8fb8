"""``ttl.math``: math functions on blocks (spec Appendix B), bound from the op registry.

Each name is bound explicitly (type checkers and readers see it); the registry
(``tilewright.device.ops``) holds the numerics, parameters and shape rules, and a
test checks that every registry op of the ``math`` namespace is bound here.
Legacy spellings (reference A.12) are accepted: ``ttl.math.broadcast(x, out_blk,
dims=)``, ``ttl.math.fill(out_blk, value)``, ``ttl.math.reduce_sum(x, scaler, dims=)``
and the functions that moved to ``ttl.block`` in spec 0.17.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from tilewright.device.formats import data_type_name, decode_block, encode_block, is_block_float
from tilewright.device.ops import LEGACY_ALIASES
from tilewright.errors import KernelError
from tilewright.lang import block as _block
from tilewright.lang.declare import parse_dtype
from tilewright.lang.dfb import TensorBlock
from tilewright.lang.expr import BlockExpr, ShapedByContext, as_value, bind_op, evaluate
from tilewright.ttnn.types import data_format_of

__all__ = [
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "ceil",
    "celu",
    "clamp",
    "cos",
    "elu",
    "exp",
    "exp2",
    "expm1",
    "floor",
    "frac",
    "gt",
    "lt",
    "ge",
    "le",
    "eq",
    "ne",
    "gelu",
    "hardsigmoid",
    "hardtanh",
    "leaky_relu",
    "log",
    "logp1",
    "max",
    "min",
    "neg",
    "pow",
    "prelu",
    "recip",
    "reduce_max",
    "reduce_sum",
    "relu",
    "relu_max",
    "relu_min",
    "round",
    "rsqrt",
    "rsub",
    "selu",
    "sigmoid",
    "sign",
    "signbit",
    "silu",
    "sin",
    "softplus",
    "softsign",
    "sqrt",
    "square",
    "tan",
    "tanh",
    "threshold",
    "trunc",
    "typecast",
    "broadcast",
    "fill",
    "transpose",
    "where",
    "mask",
    "mask_posinf",
    "squeeze",
    "unsqueeze",
]


def _bind(name: str):
    return bind_op("math", name)


# Comparisons as functions (tt-lang-sim 1.1.6): ``ttl.math.gt(a, b)`` is ``a > b``, 1.0 where
# true and 0.0 elsewhere -- the registry's operator ops under their function names.
gt = _bind("gt")
lt = _bind("lt")
ge = _bind("ge")
le = _bind("le")
eq = _bind("eq")
ne = _bind("ne")


abs = _bind("abs")
acos = _bind("acos")
acosh = _bind("acosh")
asin = _bind("asin")
asinh = _bind("asinh")
atan = _bind("atan")
atanh = _bind("atanh")
ceil = _bind("ceil")
celu = _bind("celu")
clamp = _bind("clamp")
cos = _bind("cos")
elu = _bind("elu")
exp = _bind("exp")
exp2 = _bind("exp2")
expm1 = _bind("expm1")
floor = _bind("floor")
frac = _bind("frac")
gelu = _bind("gelu")
hardsigmoid = _bind("hardsigmoid")
hardtanh = _bind("hardtanh")
leaky_relu = _bind("leaky_relu")
log = _bind("log")
logp1 = _bind("logp1")
max = _bind("max")
min = _bind("min")
neg = _bind("neg")
pow = _bind("pow")
prelu = _bind("prelu")
recip = _bind("recip")
relu = _bind("relu")
relu_max = _bind("relu_max")
relu_min = _bind("relu_min")
round = _bind("round")
rsqrt = _bind("rsqrt")
rsub = _bind("rsub")
selu = _bind("selu")
sigmoid = _bind("sigmoid")
sign = _bind("sign")
signbit = _bind("signbit")
silu = _bind("silu")
sin = _bind("sin")
softplus = _bind("softplus")
softsign = _bind("softsign")
sqrt = _bind("sqrt")
square = _bind("square")
tan = _bind("tan")
tanh = _bind("tanh")
threshold = _bind("threshold")
trunc = _bind("trunc")


def _is_scaler(x) -> bool:
    return isinstance(x, (BlockExpr, TensorBlock, int, float)) and not isinstance(x, builtins.bool)


def _legacy_reduce(name: str, x, scaler, dims, shape):
    warnings.warn(
        f"ttl.math.{name}(x, scaler, dims=) is the 1.1.1 form; write "
        f"ttl.math.{name}(x, dims=..., shape=...) and multiply by the scale",
        DeprecationWarning,
        stacklevel=3,
    )
    value = as_value(x)
    s: float | np.ndarray
    if isinstance(scaler, (int, float)):
        s = float(scaler)
    else:
        s = as_value(scaler).data
    tile = value.tile
    adapter = LEGACY_ALIASES[f"math.{name}"].adapter
    if adapter is None:  # every reduction's legacy alias adapts the old signature
        raise KernelError(f"ttl.math.{name} has no 1.1.1 form (x, scaler, dims=)")
    data = adapter(value.data, s, list(dims), None, tile=(tile.height, tile.width))
    reduced = evaluate(name, value, dims=list(dims), shape=shape)
    return BlockExpr(np.asarray(data, dtype=np.float32), reduced.shape, tile)


def _reduce(name: str, x, args, kwargs):
    if (args and _is_scaler(args[0])) or "scaler" in kwargs:  # the 1.1.1 form (x, scaler, dims=)
        scaler = kwargs.pop("scaler") if "scaler" in kwargs else args[0]
        rest = args[1:] if "scaler" not in kwargs and args and _is_scaler(args[0]) else args
        dims = kwargs.pop("dims", rest[0] if rest else None)
        return _legacy_reduce(name, x, scaler, dims, None)
    return evaluate(name, x, *args, **kwargs)


def reduce_sum(x: object, *args: object, **kwargs: object) -> BlockExpr:
    """``reduce_sum(x, dims, shape)``: sum with the spec's tiled semantics (result in column 0 /
    row 0 of each tile); the 1.1.1 form ``reduce_sum(x, scaler, dims=)`` is accepted."""
    return _reduce("reduce_sum", x, args, kwargs)


def reduce_max(x: object, *args: object, **kwargs: object) -> BlockExpr:
    """``reduce_max(x, dims, shape)``: max with the spec's tiled semantics (1.1.1 form accepted)."""
    return _reduce("reduce_max", x, args, kwargs)


def typecast(x: object, dtype: object) -> BlockExpr:
    """The value converted to ``dtype`` (f32, bf16, bfp8_b, bfp4_b), still a block expression.

    Block-float targets are quantised exactly as storing into a DFB of that format
    would (shared exponent per 16 values of a face row)."""
    dt = parse_dtype(dtype, "ttl.math.typecast: dtype")
    fmt = data_format_of(dt)
    if not is_block_float(fmt):
        return evaluate("typecast", x, data_type_name(dt))
    value = as_value(x)
    mat = value.data.reshape(-1, value.data.shape[-1])
    tile = value.tile
    rows, cols = mat.shape[0] // tile.height, mat.shape[1] // tile.width
    data = decode_block(encode_block(mat, fmt, tile), fmt, tile, rows, cols).reshape(
        value.data.shape
    )
    return BlockExpr(data, value.shape, tile)


# -- the top-level spellings: ttl.add, ttl.matmul, ... ------------------------------------


def matmul(lhs: object, rhs: object, *, transpose_rhs: bool = False) -> BlockExpr:
    """``ttl.matmul(lhs, rhs, transpose_rhs=False)``: block matmul (``[..,M,K] @ [..,K,N]``)."""
    return evaluate("matmul", lhs, rhs, transpose_rhs=transpose_rhs)


def add(a: object, b: object) -> BlockExpr:
    """``ttl.add(a, b)``: ``a + b`` on blocks."""
    return evaluate("add", a, b)


def sub(a: object, b: object) -> BlockExpr:
    """``ttl.sub(a, b)``: ``a - b`` on blocks."""
    return evaluate("sub", a, b)


def mul(a: object, b: object) -> BlockExpr:
    """``ttl.mul(a, b)``: ``a * b`` on blocks."""
    return evaluate("mul", a, b)


def div(a: object, b: object) -> BlockExpr:
    """``ttl.div(a, b)``: ``a / b`` on blocks."""
    return evaluate("div", a, b)


# -- legacy spellings (reference A.12) ---------------------------------------------------


def _moved(name: str) -> Callable[..., BlockExpr]:
    target = getattr(_block, name)

    def fn(*args: object, **kwargs: object) -> BlockExpr:
        warnings.warn(
            f"ttl.math.{name} moved to ttl.block.{name} (spec 0.17)",
            DeprecationWarning,
            stacklevel=2,
        )
        return target(*args, **kwargs)

    fn.__name__ = name
    fn.__doc__ = f"Legacy spelling of ttl.block.{name}."
    return fn


transpose = _moved("transpose")
where = _moved("where")
mask = _moved("mask")
mask_posinf = _moved("mask_posinf")
squeeze = _moved("squeeze")
unsqueeze = _moved("unsqueeze")


class _ContextBroadcast(ShapedByContext):
    """``ttl.math.broadcast(x, dims=)`` (spec 0.4): ``x`` broadcast to the shape of the
    expression around it (the other operand, or the block it is stored into)."""

    __slots__ = ("value", "dims")

    def __init__(self, value: BlockExpr, dims: object) -> None:
        self.value = value
        self.dims = dims

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape

    def resolve(self, shape: tuple[int, ...]) -> BlockExpr:
        return _legacy_broadcast(self.value, self.dims, shape)

    def as_block_value(self) -> BlockExpr:
        return self.resolve(self.value.shape)


def _legacy_broadcast(value: BlockExpr, dims: object, shape) -> BlockExpr:
    """The 1.1.1 broadcast: inside each tile first, then across tiles.

    A broadcast dimension whose extent already equals the result's (a same-shape
    multi-tile block) is broadcast inside every tile only -- the hardware's per-tile
    row/column broadcast -- and the tiles are not replicated; a dimension of extent 1
    is broadcast inside its tile and then replicated to ``shape``
    (``ttl.block.broadcast``).
    """
    if not isinstance(dims, (list, tuple)) or not all(
        isinstance(d, int) and not isinstance(d, builtins.bool) for d in dims
    ):
        raise KernelError(f"ttl.math.broadcast: dims must be a list of ints, got {dims!r}")
    shape = tuple(shape)
    rank = len(value.shape)
    if len(shape) != rank:
        return _block.broadcast(value, dims=list(dims), shape=shape)  # the op's own message
    bdims = sorted({d % rank for d in dims if -rank <= d < rank})
    inner = [d for d in bdims if d >= rank - 2 and value.shape[d] == shape[d] != 1]
    if inner:  # per tile: the tile grid as batch dims of a block of 1x1 tiles
        th, tw = value.tile.height, value.tile.width
        *batch, rows, cols = value.shape
        tiles = value.data.reshape(*batch, rows, th, cols, tw)
        tiles = np.moveaxis(tiles, -3, -2)  # (..., rows, cols, th, tw)
        grid = (*batch, rows, cols, 1, 1)
        per_tile = _block.broadcast(
            BlockExpr(np.ascontiguousarray(tiles), grid, value.tile),
            dims=[d + 2 for d in inner],
            shape=grid,
        )
        data = np.moveaxis(per_tile.data.reshape(*batch, rows, cols, th, tw), -2, -3)
        value = BlockExpr(data.reshape(value.data.shape), value.shape, value.tile)
    rest = [d for d in bdims if d not in inner]
    if not rest:
        return value
    return _block.broadcast(value, dims=rest, shape=shape)


def broadcast(
    x: object, out_blk: Any = None, dims: object = None, *, shape: object = None
) -> BlockExpr | ShapedByContext:
    """Legacy spellings of ``ttl.block.broadcast``.

    * ``ttl.math.broadcast(x, out_blk, dims=[..])`` (1.1.1): ``out_blk`` gives the shape;
      a dimension whose extent already equals ``out_blk``'s is broadcast inside each tile;
    * ``ttl.math.broadcast(x, dims=[..])`` (spec 0.4): the result takes the shape of the
      expression around it (the other operand of a binary operation, or the block it is
      stored into);
    * ``shape=`` given: ``ttl.block.broadcast(x, dims=dims, shape=shape)``.
    """
    warnings.warn(
        "ttl.math.broadcast is the 1.1.1 / spec 0.4 form; use ttl.block.broadcast",
        DeprecationWarning,
        stacklevel=2,
    )
    if dims is None and isinstance(out_blk, (list, tuple)):  # broadcast(x, [1]): dims positional
        out_blk, dims = None, out_blk
    if dims is None:
        raise KernelError("ttl.math.broadcast(x, dims=[...]): dims is required")
    value = as_value(x)
    if shape is not None:
        return _legacy_broadcast(value, dims, shape)
    if out_blk is not None:
        return _legacy_broadcast(value, dims, out_blk.shape)
    return _ContextBroadcast(value, dims)


def fill(out_blk: Any, value: float) -> BlockExpr:
    """Legacy ``ttl.math.fill(out_blk, value)``: ``ttl.block.fill(value, shape=out_blk.shape)``."""
    warnings.warn(
        "ttl.math.fill(out_blk, value) is the 1.1.1 form; use ttl.block.fill",
        DeprecationWarning,
        stacklevel=2,
    )
    return _block.fill(value, shape=out_blk.shape, tile=(out_blk.tile.height, out_blk.tile.width))
