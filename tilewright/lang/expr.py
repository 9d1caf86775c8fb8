"""Block expressions: evaluated eagerly in float32 on whole blocks (spec §Block expressions).

Every operator on blocks and every ``ttl.math`` / ``ttl.block`` function goes through
``evaluate(name, *operands, **params)``: operands are read (a ``TensorBlock`` read is
a block-state transition), the result shape is checked by the op registry's shape
rules, and the registry's vectorised numpy ``impl`` computes the value.  Nothing is
rounded until ``store`` writes the value into a block in the DFB's format.
"""

from __future__ import annotations

import abc
from collections.abc import Callable

import numpy as np

from tilewright.device.engine import ACTIVE, KernelRun
from tilewright.device.formats import TILE_32x32, TileShape
from tilewright.device.ops import OpError, get_op
from tilewright.device.perf import pipeline
from tilewright.errors import KernelError, user_location
from tilewright.lang.rules.dfb import (
    check_block_layouts,
    check_compute_only,
    check_op,
    expression,
    op_violation,
    operand_violation,
)
from tilewright.lang.rules.registry import shape_text

__all__ = [
    "BlockOperators",
    "BlockExpr",
    "ShapedByContext",
    "evaluate",
    "as_value",
    "bind_op",
    "shape_text",
    "fill_value",
]


class BlockOperators(abc.ABC):
    """Python operators on block operands (blocks and expressions): each is a registry op."""

    __slots__ = ()

    @abc.abstractmethod
    def as_block_value(self) -> BlockExpr:
        """The operand's value (reading a block is a state transition)."""

    def __add__(self, o):
        return evaluate("add", self, o)

    def __radd__(self, o):
        return evaluate("add", o, self)

    def __sub__(self, o):
        return evaluate("sub", self, o)

    def __rsub__(self, o):
        return evaluate("sub", o, self)

    def __mul__(self, o):
        return evaluate("mul", self, o)

    def __rmul__(self, o):
        return evaluate("mul", o, self)

    def __truediv__(self, o):
        return evaluate("div", self, o)

    def __rtruediv__(self, o):
        return evaluate("div", o, self)

    def __matmul__(self, o):
        return evaluate("matmul", self, o)

    def __neg__(self):
        return evaluate("neg", self)

    def __abs__(self):
        return evaluate("abs", self)

    def __pow__(self, n):
        return evaluate("pow", self, n)

    def __gt__(self, o):
        return evaluate("gt", self, o)

    def __lt__(self, o):
        return evaluate("lt", self, o)

    def __ge__(self, o):
        return evaluate("ge", self, o)

    def __le__(self, o):
        return evaluate("le", self, o)

    def __eq__(self, o):
        return evaluate("eq", self, o)

    def __ne__(self, o):
        return evaluate("ne", self, o)

    def __mod__(self, o):
        return evaluate("mod", self, o)

    def __floordiv__(self, o):
        return evaluate("floordiv", self, o)

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise KernelError("a block has no truth value; compare elementwise and use ttl.block.where")


class BlockExpr(BlockOperators):
    """The value of a block expression: float32 data, its block shape and tile, and whether it
    is tiled (shape in tiles) or row-major (shape in elements, spec §Dataflow buffer).

    ``work`` is the modelled (unpack, math) cycles of computing it so far, charged when
    it is stored (device/perf/pipeline.py); ``leaf_bytes`` the bytes per tile of a value
    read straight from a block (0 for computed values, which are in DST)."""

    __slots__ = ("data", "shape", "tile", "work", "leaf_bytes", "tiled")

    def __init__(
        self,
        data: np.ndarray,
        shape: tuple[int, ...],
        tile: TileShape,
        work: tuple[int, int] = (0, 0),
        leaf_bytes: int = 0,
        tiled: bool = True,
    ) -> None:
        self.data = data
        self.shape = tuple(shape)
        self.tile = tile
        self.work = work
        self.leaf_bytes = leaf_bytes
        self.tiled = tiled

    @property
    def tiles(self) -> int:
        """The value's size in 32x32 tiles (what the compute engine works on)."""
        return max(1, -(-int(self.data.size) // 1024))

    def as_block_value(self) -> BlockExpr:
        return self

    def __repr__(self) -> str:
        return f"<BlockExpr shape={shape_text(self.shape)}>"

    def __str__(self) -> str:
        with np.printoptions(precision=4, threshold=64, edgeitems=4, linewidth=120):
            return f"block expression {shape_text(self.shape)}:\n{self.data}"


class ShapedByContext(BlockOperators):
    """An operand whose shape the enclosing expression decides (spec 0.4's two-argument
    ``ttl.math.broadcast(x, dims=)``): the other operand of a binary operation, or the
    block it is stored into; alone it keeps its own shape."""

    __slots__ = ()

    @abc.abstractmethod
    def resolve(self, shape: tuple[int, ...]) -> BlockExpr:
        """The value at ``shape``."""


def as_value(x, shape: tuple[int, ...] | None = None) -> BlockExpr:
    """A block operand as a BlockExpr (reading a TensorBlock is a state transition);
    ``shape`` is the context's shape for an operand shaped by its context."""
    if isinstance(x, ShapedByContext) and shape is not None:
        return x.resolve(tuple(shape))
    if isinstance(x, BlockOperators):
        return x.as_block_value()
    raise operand_violation(type(x).__name__, stored=True)


def _context_shape(operands) -> tuple[int, ...] | None:
    """The shape operands shaped by their context take: the first other block operand's."""
    for o in operands:
        if isinstance(o, BlockOperators) and not isinstance(o, ShapedByContext):
            return tuple(o.shape)  # type: ignore[attr-defined]
    return None


def _operand(x):
    if isinstance(x, BlockOperators):
        return x.as_block_value()
    if isinstance(x, (int, float, np.floating, np.integer)) and not isinstance(x, bool):
        return float(x)
    raise operand_violation(type(x).__name__)


def _check_compute(name: str) -> KernelRun:
    run = ACTIVE.run
    if run is None:  # no engine to locate it: the user's line now
        raise KernelError(
            f"ttl.math / block operator '{name}' can only be evaluated inside a compute kernel",
            loc=user_location(),
        )
    check_compute_only(expression(name), run.name, run.kernel_context().kernel.kind == "compute")
    return run


def evaluate(name: str, *operands, **params) -> BlockExpr:
    """Apply registry op ``name`` to block operands (blocks, expressions or numbers)."""
    run = _check_compute(name)
    spec = get_op(name)
    n_ops = spec.arity
    if any(isinstance(o, ShapedByContext) for o in operands[:n_ops]):
        shape_of = _context_shape(operands[:n_ops])
        if shape_of is not None:
            operands = tuple(
                o.resolve(shape_of) if isinstance(o, ShapedByContext) else o for o in operands
            )
    vals = [_operand(o) for o in operands[:n_ops]]
    extra = operands[n_ops:]
    shapes = [v.shape if isinstance(v, BlockExpr) else () for v in vals]
    tiled = _one_layout(spec, vals)
    bound, shape = check_op(spec, shapes, extra, params)
    tile = next((v.tile for v in vals if isinstance(v, BlockExpr)), TILE_32x32)
    arrays = [v.data if isinstance(v, BlockExpr) else np.float32(v) for v in vals]
    if "tile" not in params and _takes_tile(spec):
        bound["tile"] = (tile.height, tile.width)  # the engine supplies the operand's tile
    try:
        data = spec.impl(*arrays, **bound)
    except OpError as exc:
        raise op_violation(exc) from None
    value = np.asarray(data, dtype=np.float32)
    blocks = [(v.tiles, v.leaf_bytes, v.work) for v in vals if isinstance(v, BlockExpr)]
    inner = shapes[0][-1] if spec.kind.value == "matmul" and shapes[0] else 1
    out_tiles = max(1, -(-int(value.size) // 1024))
    work = pipeline.block_op(run, spec.kind.value, name, blocks, out_tiles, inner)
    return BlockExpr(value, shape, tile, work, tiled=tiled)


def _one_layout(spec, vals) -> bool:
    """The operands' layout (tiled or row-major; rule ``block-layouts``)."""
    blocks = [(i, v.tiled, v.shape) for i, v in enumerate(vals) if isinstance(v, BlockExpr)]
    check_block_layouts(spec.qualified_name, blocks)
    return blocks[0][1] if blocks else True


_TAKES_TILE: dict[str, bool] = {}


def _takes_tile(spec) -> bool:
    known = _TAKES_TILE.get(spec.name)
    if known is None:
        known = _TAKES_TILE[spec.name] = any(p.name == "tile" for p in spec.params)
    return known


def bind_op(namespace: str, name: str) -> Callable[..., BlockExpr]:
    """``ttl.<namespace>.<name>``: a function evaluating registry op ``name`` on block operands."""
    spec = get_op(name)

    def fn(*args: object, **kwargs: object) -> BlockExpr:
        return evaluate(name, *args, **kwargs)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"ttl.{namespace}.{spec.signature()}: {spec.doc}"
    return fn


def fill_value(value: float, shape, tile=TILE_32x32) -> BlockExpr:
    th, tw = tile.height, tile.width
    *batch, r, c = shape
    data = np.full((*batch, r * th, c * tw), value, dtype=np.float32)
    return BlockExpr(data, tuple(shape), tile)
