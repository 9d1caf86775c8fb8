"""The expression tree of a block store: what ``tile.store`` computes per output tile.

A block expression (``a * b + c``, ``ttl.math.relu(x)``, ``x @ w``, ...) is built while
the kernel is lowered as a tree of :class:`Node` values whose leaves are blocks at known
tile offsets in their circular buffers (``Leaf.base``, resolved when the store is
written); the ``dst`` pass generates its tile code.  ``repr`` is the tree's text in the
IR (``tilewright explain --ir --after lower``).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilewright.compiler.backend.passes.fold import fold_expr
from tilewright.device.ops.tile_ops import FPU_BINARY
from tilewright.kir.ir import BinOp, Cast, Const, Expr, Ty, u32
from tilewright.kir.printer import print_expr

__all__ = [
    "Node",
    "Leaf",
    "Lit",
    "Fill",
    "Unary",
    "Binary",
    "Matmul",
    "Reduce",
    "Bcast",
    "Transpose",
    "Where",
    "COMPARISONS",
    "OPERANDS",
    "is_truth",
    "FPU",
    "leaves",
    "leaflike",
    "regs",
    "uop",
]

FPU = frozenset(FPU_BINARY)
"""Binary ops the FPU computes from two CB operands (``*_tiles``; the op registry's)."""


@dataclass(eq=False)
class Node:
    """A value of a block expression, of ``shape`` (in tiles)."""

    shape: tuple[int, ...]


@dataclass(eq=False)
class Leaf(Node):
    """A block read as an operand (or a scratch CB holding a materialised value)."""

    site: int  # the acquisition (-1: scratch)
    cb: int
    version: int = 0
    base: int = 0  # tile offset from the CB's read pointer (a block's: set when stored)

    def __repr__(self) -> str:
        return f"cb{self.cb}+{self.base}"


@dataclass(eq=False)
class Lit(Node):
    """A scalar operand (a Python number, static or computed)."""

    value: Expr

    def __repr__(self) -> str:
        return print_expr(self.value)


@dataclass(eq=False)
class Fill(Node):
    value: Expr

    def __repr__(self) -> str:
        return f"fill({print_expr(self.value)})"


@dataclass(eq=False)
class Unary(Node):
    steps: tuple[tuple[str, tuple[Expr, ...]], ...]  # SFPU ops applied in order
    child: Node

    def __repr__(self) -> str:
        text = repr(self.child)
        for name, params in self.steps:
            text = f"{name}({', '.join([text, *(print_expr(p) for p in params)])})"
        return text


@dataclass(eq=False)
class Binary(Node):
    op: str  # add sub mul div max min
    a: Node
    b: Node

    def __repr__(self) -> str:
        return f"{self.op}({self.a!r}, {self.b!r})"


@dataclass(eq=False)
class Where(Node):
    """``where(cond == 1, a, b)`` (``ttl.block.where``, ``mask``, ``threshold``):
    ``where_tile`` after an ``eq`` with 1.0, which a comparison (already 1.0 / 0.0) skips."""

    cond: Node
    a: Node
    b: Node

    def __repr__(self) -> str:
        return f"where({self.cond!r}, {self.a!r}, {self.b!r})"


COMPARISONS = frozenset(("gt", "lt", "ge", "le", "eq", "ne"))
"""Binary ops whose value is already 1.0 / 0.0 (a ``Where`` condition without an ``eq``)."""


def is_truth(n: Node) -> bool:
    return isinstance(n, Binary) and n.op in COMPARISONS


@dataclass(eq=False)
class Matmul(Node):
    a: Node
    b: Node
    transpose: bool

    def __repr__(self) -> str:
        return f"matmul({self.a!r}, {self.b!r}{', transpose' if self.transpose else ''})"


@dataclass(eq=False)
class Reduce(Node):
    """``reduce_sum`` / ``reduce_max`` (``pool``).  A maximum accumulates into DST, which
    starts at zero: ``init`` is a tile of -inf (a scratch CB) whose sum, reduced first, puts
    -inf where the maximum goes and leaves the rest of the tile zero, as the interpreter's."""

    dims: frozenset[int]  # normalised: 0 rows, 1 columns (rank-2 blocks)
    child: Node
    pool: str = "sum"  # sum max
    init: Node | None = None  # max: the -inf tile, once materialised

    def __repr__(self) -> str:
        init = f", init={self.init!r}" if self.init is not None else ""
        return f"reduce_{self.pool}({self.child!r}, dims={sorted(self.dims)}{init})"


@dataclass(eq=False)
class Bcast(Node):
    dims: frozenset[int]
    child: Node

    def __repr__(self) -> str:
        return f"broadcast({self.child!r}, dims={sorted(self.dims)})"


@dataclass(eq=False)
class Transpose(Node):
    child: Node

    def __repr__(self) -> str:
        return f"transpose({self.child!r})"


OPERANDS = ("child", "cond", "a", "b")
"""The attributes that hold a node's operands."""


def leaves(node: Node) -> list[Leaf]:
    """The tree's block operands."""
    out: list[Leaf] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Leaf):
            out.append(n)
        for attr in OPERANDS:
            sub = getattr(n, attr, None)
            if isinstance(sub, Node):
                stack.append(sub)
    return out


def leaflike(n: Node) -> bool:
    """A block operand, possibly broadcast: what an FPU op reads from a CB."""
    return isinstance(n, Leaf) or (isinstance(n, Bcast) and isinstance(n.child, Leaf))


def regs(node: Node) -> int:
    """DST tiles one output tile of ``node`` needs (left operand evaluated first)."""
    if isinstance(node, (Leaf, Fill, Matmul, Reduce, Transpose, Lit)) or leaflike(node):
        return 1
    if isinstance(node, Unary):
        return regs(node.child)
    if isinstance(node, Where):
        cond = regs(node.cond) if is_truth(node.cond) else max(regs(node.cond), 2)
        return max(cond, 1 + regs(node.a), 2 + regs(node.b))
    if isinstance(node, Binary):
        a, b = node.a, node.b
        if node.op in FPU:
            if leaflike(a) and leaflike(b):
                return 1
            if isinstance(b, Leaf) or isinstance(b, Lit):
                return regs(a)
            if isinstance(a, Leaf) or (isinstance(a, Lit) and node.op in FPU):
                return regs(b)
        return max(regs(a), regs(b) + 1)
    return 1


def _u32(e: Expr) -> Expr:
    return e if e.ty is Ty.U32 else fold_expr(Cast(e, Ty.U32))


def uop(op: str, a: Expr, b: Expr) -> Expr:
    """Unsigned tile-index arithmetic (u32): folded where static, ``x + 0`` and ``x * 1``
    kept as ``x``."""
    a, b = _u32(a), _u32(b)
    if isinstance(a, Const) and isinstance(b, Const):
        return fold_expr(BinOp(op, a, b, Ty.U32))
    if op == "add" and isinstance(b, Const) and b.value == 0:
        return a
    if op == "add" and isinstance(a, Const) and a.value == 0:
        return b
    if op == "mul" and isinstance(b, Const) and b.value == 1:
        return a
    if op == "mul" and isinstance(a, Const) and a.value == 1:
        return b
    if op == "mul" and (
        (isinstance(a, Const) and a.value == 0) or (isinstance(b, Const) and b.value == 0)
    ):
        return u32(0)
    return BinOp(op, a, b, Ty.U32)
