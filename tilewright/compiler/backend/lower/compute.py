"""Block expressions on compute kernels: expression trees and their tile programs.

A block expression (``a * b + c``, ``ttl.math.relu(x)``, ``x @ w``, ...) is built as
a tree of :class:`Node` values while the kernel is lowered -- reading a block operand
is the interpreter's ``STORE_SRC`` transition, applied when the interpreter applies
it -- and becomes code only when it is stored (``blk.store(expr)``, ``blk += expr``).
Then :class:`TileProgram` turns the tree into the tt-metal compute sequence, one
output tile at a time, chunked to the DST capacity the way the hardware compiler
does: ``tile_regs_acquire``; unpack/math/SFPU for ``chunk`` output tiles, each in its
own window of DST registers; ``tile_regs_commit`` / ``tile_regs_wait``; one
``pack_tile`` per tile into the destination block (with packer L1 accumulation for
``+=``); ``tile_regs_release``.

DST holds float32 (``fp32_dest_acc_en``): the interpreter, the reference, evaluates
whole expressions in float32 and rounds once, on store; keeping DST in float32 makes
every compiled elementwise result bit-identical.  Operands that an op must read from
a circular buffer (matmul, reduce, transpose, a broadcast of a computed value) and
are not a block are first materialised into a compiler-owned float32 scratch CB.

Lowering per node (tt-metal compute API):

======================== ================================================================
node                     tiles
======================== ================================================================
block operand            ``copy_tile``; with ``ttl.block.broadcast``: ``unary_bcast``
``a + b`` (two blocks)   ``add_tiles`` (``*_tiles_bcast_*`` for a broadcast operand)
``e + b`` / ``b + e``    ``binary_dest_reuse_tiles`` (DEST_TO_SRCA / SRCB)
``e1 / e2`` (computed)   ``div_binary_tile`` (and ``add/sub/mul_binary_tile``, ``binary_max/min_tile``)
``e * 2.0``              ``mul_unary_tile`` (``add/sub/rsub_unary_tile``); ``/ s``: ``fill_tile`` + div
unary math               its SFPU ``*_tile`` (table ``UNARY``)
``a @ b``                ``matmul_tiles`` over K into one DST tile
``reduce_sum``           ``reduce_tile`` over the reduced tiles, scaler tile 1.0
``transpose``            ``transpose_wh_tile``
``fill``                 ``fill_tile``
======================== ================================================================
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from tilewright.compiler.backend.lower import scalars as S
from tilewright.device.ops import REGISTRY
from tilewright.device.ops.tile_ops import FPU_BINARY, SFPU_OPS
from tilewright.errors import SourceLoc
from tilewright.kir.ir import BinOp, Const, Expr, Op, Ty, Var, u32

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
    "UNARY",
    "TileProgram",
    "Unsupported",
    "leaves",
]


class Unsupported(Exception):
    """A block expression the compiler does not lower (the reason)."""


@dataclass(eq=False)
class Node:
    shape: tuple[int, ...]


@dataclass(eq=False)
class Leaf(Node):
    """A block read as an operand (or a scratch CB holding a materialised value)."""

    site: int  # the acquisition (-1: scratch)
    cb: int
    version: int = 0
    base: int = 0  # tile offset from the CB's read pointer (scratch); blocks: at codegen


@dataclass(eq=False)
class Lit(Node):
    """A scalar operand (a Python number, static or computed)."""

    value: Expr


@dataclass(eq=False)
class Fill(Node):
    value: Expr


@dataclass(eq=False)
class Unary(Node):
    steps: tuple[tuple[str, tuple[Expr, ...]], ...]  # SFPU ops applied in order
    child: Node


@dataclass(eq=False)
class Binary(Node):
    op: str  # add sub mul div max min
    a: Node
    b: Node


@dataclass(eq=False)
class Matmul(Node):
    a: Node
    b: Node
    transpose: bool


@dataclass(eq=False)
class Reduce(Node):
    dims: frozenset[int]  # normalised: 0 rows, 1 columns (rank-2 blocks)
    child: Node


@dataclass(eq=False)
class Bcast(Node):
    dims: frozenset[int]
    child: Node


@dataclass(eq=False)
class Transpose(Node):
    child: Node


def leaves(node: Node) -> list[Leaf]:
    out: list[Leaf] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Leaf):
            out.append(n)
        for attr in ("child", "a", "b"):
            sub = getattr(n, attr, None)
            if isinstance(sub, Node):
                stack.append(sub)
    return out


# Unary registry ops -> SFPU steps (the registry's ``sfpu`` / ``lowering``: ``OpSpec.compiled_steps``).
# A step is (SFPU op, parameter names); a parameter name refers to the op's bound
# parameters, a float is a constant.
UNARY: dict[str, tuple[tuple[str, tuple[str | float, ...]], ...]] = {
    name: steps for name, spec in REGISTRY.items() if (steps := spec.compiled_steps) is not None
}

_FPU = frozenset(FPU_BINARY)
# ``e op number`` -> its SFPU scalar op (``number - e``: ``rsub``).
_SCALAR_SFPU = {op.scalar: op.ir for op in SFPU_OPS.values() if op.scalar and op.ir}


def _leaflike(n: Node) -> bool:
    return isinstance(n, Leaf) or (isinstance(n, Bcast) and isinstance(n.child, Leaf))


def push_broadcasts(node: Node) -> Node:
    """Move broadcasts below elementwise ops (exact: a broadcast only replicates values)."""
    if isinstance(node, Bcast):
        child = push_broadcasts(node.child)
        if isinstance(child, Lit):
            return child
        if isinstance(child, Fill):
            return Fill(node.shape, child.value)
        if isinstance(child, Unary):
            return Unary(
                node.shape, child.steps, push_broadcasts(Bcast(node.shape, node.dims, child.child))
            )
        if isinstance(child, Binary):
            return Binary(
                node.shape,
                child.op,
                push_broadcasts(Bcast(node.shape, node.dims, child.a)),
                push_broadcasts(Bcast(node.shape, node.dims, child.b)),
            )
        if isinstance(child, Bcast):
            return Bcast(node.shape, node.dims | child.dims, child.child)
        return Bcast(node.shape, node.dims, child)
    if isinstance(node, Unary):
        return Unary(node.shape, node.steps, push_broadcasts(node.child))
    if isinstance(node, Binary):
        return Binary(node.shape, node.op, push_broadcasts(node.a), push_broadcasts(node.b))
    if isinstance(node, Matmul):
        return Matmul(node.shape, push_broadcasts(node.a), push_broadcasts(node.b), node.transpose)
    if isinstance(node, Reduce):
        return Reduce(node.shape, node.dims, push_broadcasts(node.child))
    if isinstance(node, Transpose):
        return Transpose(node.shape, push_broadcasts(node.child))
    return node


def regs(node: Node) -> int:
    """DST tiles one output tile of ``node`` needs (left operand evaluated first)."""
    if isinstance(node, (Leaf, Fill, Matmul, Reduce, Transpose, Lit)) or _leaflike(node):
        return 1
    if isinstance(node, Unary):
        return regs(node.child)
    if isinstance(node, Binary):
        a, b = node.a, node.b
        if node.op in _FPU:
            if _leaflike(a) and _leaflike(b):
                return 1
            if isinstance(b, Leaf) or isinstance(b, Lit):
                return regs(a)
            if isinstance(a, Leaf) or (isinstance(a, Lit) and node.op in _FPU):
                return regs(b)
        return max(regs(a), regs(b) + 1)
    return 1


@dataclass
class Scratch:
    """A compiler-owned float32 CB holding a materialised value for one statement."""

    cb: int
    tiles: int


@dataclass
class TileProgram:
    """Emits the compute sequence of one store.

    ``position`` maps a leaf's acquisition site to its tile offset from the CB's read
    pointer; ``scratch`` hands out a free scratch CB with room for n tiles; ``local``
    declares (once) a u32 local of the kernel; ``capacity`` is the DST tiles of one
    acquire.
    """

    capacity: int
    position: Callable[[Leaf], int]
    scratch: Callable[[int], int]
    local: Callable[[str], Var]
    scaler: Callable[[], int]
    loc: SourceLoc | None
    ops: list[Op] = field(default_factory=list)
    used_scratch: list[tuple[int, int]] = field(default_factory=list)

    def op(self, code: str, *args: object, regions: tuple = ()) -> None:
        self.ops.append(Op(code, tuple(args), regions, self.loc))

    # -- materialisation --------------------------------------------------------------------

    def _cb_operand(self, node: Node) -> Node:
        """``node`` as something a CB-reading op can read: a leaf, else a scratch CB."""
        if isinstance(node, Leaf):
            return node
        n = math.prod(node.shape)
        cb = self.scratch(n)
        self.op("cb.reserve_back", cb, n)
        self._emit(node, cb, 0, l1_acc=False)
        self.op("cb.push_back", cb, n)
        self.op("cb.wait_front", cb, n)
        self.used_scratch.append((cb, n))
        return Leaf(node.shape, -1, cb, 0, 0)

    def _prepare(self, node: Node) -> Node:
        """Materialise every operand an op must read from a CB (bottom-up)."""
        if isinstance(node, Unary):
            return Unary(node.shape, node.steps, self._prepare(node.child))
        if isinstance(node, Binary):
            return Binary(node.shape, node.op, self._prepare(node.a), self._prepare(node.b))
        if isinstance(node, Matmul):
            a = self._cb_operand(self._prepare(node.a))
            b = self._cb_operand(self._prepare(node.b))
            return Matmul(node.shape, a, b, node.transpose)
        if isinstance(node, Reduce):
            return Reduce(node.shape, node.dims, self._cb_operand(self._prepare(node.child)))
        if isinstance(node, Transpose):
            return Transpose(node.shape, self._cb_operand(self._prepare(node.child)))
        if isinstance(node, Bcast):
            return Bcast(node.shape, node.dims, self._cb_operand(self._prepare(node.child)))
        return node

    # -- tiles --------------------------------------------------------------------------------

    def _leaf_tile(self, leaf: Leaf, i: Expr, j: Expr) -> Expr:
        cols = leaf.shape[-1]
        base = leaf.base if leaf.site < 0 else self.position(leaf)
        return _uop("add", u32(base), _uop("add", _uop("mul", i, u32(cols)), j))

    def _gen(self, node: Node, i: Expr, j: Expr, slot: int, dirty: set[int]) -> None:
        """Emit ``node``'s output tile (i, j) into DST ``slot`` (using slots above it)."""
        self._gen_node(node, i, j, slot, dirty)
        dirty.add(slot)

    def _gen_node(self, node: Node, i: Expr, j: Expr, slot: int, dirty: set[int]) -> None:
        if isinstance(node, Leaf):
            self.op("copy_tile", node.cb, self._leaf_tile(node, i, j), slot, 0)
        elif isinstance(node, Bcast):
            leaf = node.child
            assert isinstance(leaf, Leaf)
            ii = u32(0) if leaf.shape[-2] == 1 else i
            jj = u32(0) if leaf.shape[-1] == 1 else j
            self.op(
                "unary_bcast", _bcast_dim(node.dims), leaf.cb, self._leaf_tile(leaf, ii, jj), slot
            )
        elif isinstance(node, Fill):
            self.op("fill_tile", slot, node.value)
        elif isinstance(node, Lit):
            self.op("fill_tile", slot, node.value)
        elif isinstance(node, Unary):
            self._gen(node.child, i, j, slot, dirty)
            for name, params in node.steps:
                self.op("sfpu", name, slot, params)
        elif isinstance(node, Binary):
            self._gen_binary(node, i, j, slot, dirty)
        elif isinstance(node, Matmul):
            self._gen_matmul(node, i, j, slot, dirty)
        elif isinstance(node, Reduce):
            self._gen_reduce(node, i, j, slot, dirty)
        elif isinstance(node, Transpose):
            leaf = node.child
            assert isinstance(leaf, Leaf)
            self.op("transpose_tile", leaf.cb, self._leaf_tile(leaf, j, i), slot)
        else:  # pragma: no cover - every node kind is handled above
            raise Unsupported(f"block expression node {type(node).__name__}")

    def _bcast_operand(self, n: Node, i: Expr, j: Expr) -> tuple[str, int, Expr]:
        if isinstance(n, Leaf):
            return "none", n.cb, self._leaf_tile(n, i, j)
        assert isinstance(n, Bcast) and isinstance(n.child, Leaf)
        leaf = n.child
        ii = u32(0) if leaf.shape[-2] == 1 else i
        jj = u32(0) if leaf.shape[-1] == 1 else j
        return _bcast_dim(n.dims), leaf.cb, self._leaf_tile(leaf, ii, jj)

    def _gen_binary(self, node: Binary, i: Expr, j: Expr, slot: int, dirty: set[int]) -> None:
        op, a, b = node.op, node.a, node.b
        if op in _FPU and _leaflike(a) and _leaflike(b):
            if isinstance(a, Bcast) and isinstance(b, Leaf) and op in ("add", "mul"):
                a, b = b, a
            if isinstance(a, Leaf):
                _, cb0, t0 = self._bcast_operand(a, i, j)
                kind, cb1, t1 = self._bcast_operand(b, i, j)
                self.op("binary_tiles", op, kind, cb0, cb1, t0, t1, slot)
                return
        if op in _FPU and isinstance(b, Leaf):
            self._gen(a, i, j, slot, dirty)
            self.op("binary_dest_reuse", op, "srca", b.cb, self._leaf_tile(b, i, j), slot)
            return
        if op in _FPU and isinstance(a, Leaf):
            self._gen(b, i, j, slot, dirty)
            self.op("binary_dest_reuse", op, "srcb", a.cb, self._leaf_tile(a, i, j), slot)
            return
        if op in _FPU and isinstance(b, Lit):
            self._gen(a, i, j, slot, dirty)
            self.op("sfpu", _SCALAR_SFPU[op], slot, (b.value,))
            return
        if op in _FPU and isinstance(a, Lit):
            self._gen(b, i, j, slot, dirty)
            self.op("sfpu", _SCALAR_SFPU["rsub" if op == "sub" else op], slot, (a.value,))
            return
        self._gen(a, i, j, slot, dirty)
        self._gen(b, i, j, slot + 1, dirty)
        self.op("sfpu_binary", op, slot, slot + 1, slot)

    def _zero(self, slot: int, dirty: set[int]) -> None:
        """Matmul and reduce accumulate into DST: a used slot is zeroed first."""
        if slot in dirty:
            self.op("fill_tile", slot, Const(0.0, Ty.F64))

    def _gen_matmul(self, node: Matmul, i: Expr, j: Expr, slot: int, dirty: set[int]) -> None:
        a, b = node.a, node.b
        assert isinstance(a, Leaf) and isinstance(b, Leaf)
        self._zero(slot, dirty)
        dirty.add(slot)
        kt = a.shape[-1]

        def step(k: Expr) -> list[Op]:
            ta = self._leaf_tile(a, i, k)
            tb = self._leaf_tile(b, j, k) if node.transpose else self._leaf_tile(b, k, j)
            return [
                Op("matmul_tiles", (a.cb, b.cb, ta, tb, slot, int(node.transpose)), (), self.loc)
            ]

        self._loop(kt, "tw_k", step)

    def _gen_matmul_row(self, node: Matmul, t0: Expr, cols: int, chunk: int) -> None:
        """Output tiles t0 .. t0 + chunk - 1 (one row) in DST 0 .. chunk - 1, per K step one
        ``matmul_block(rt=1, ct=chunk)``."""
        a, b = node.a, node.b
        assert isinstance(a, Leaf) and isinstance(b, Leaf)
        i = _uop("floordiv", t0, u32(cols))
        j0 = _uop("mod", t0, u32(cols))
        kt = a.shape[-1]

        def step(k: Expr) -> list[Op]:
            ta = self._leaf_tile(a, i, k)
            tb = self._leaf_tile(b, j0, k) if node.transpose else self._leaf_tile(b, k, j0)
            args = (a.cb, b.cb, ta, tb, 0, int(node.transpose), chunk, 1, kt)
            return [Op("matmul_block", args, (), self.loc)]

        if node.transpose:  # B^T rows are not consecutive tiles of B: tile by tile
            dirty: set[int] = set()
            for c in range(chunk):
                self._gen(node, i, _uop("add", j0, u32(c)), c, dirty)
            return
        self._loop(kt, "tw_k", step)

    def _gen_reduce(self, node: Reduce, i: Expr, j: Expr, slot: int, dirty: set[int]) -> None:
        leaf = node.child
        assert isinstance(leaf, Leaf)
        self._zero(slot, dirty)
        dirty.add(slot)
        rows, cols = leaf.shape[-2], leaf.shape[-1]
        scaler = self.scaler()
        if node.dims == frozenset({1}):
            dim, count = "row", cols

            def tile(k: Expr) -> Expr:
                return self._leaf_tile(leaf, i, k)
        elif node.dims == frozenset({0}):
            dim, count = "col", rows

            def tile(k: Expr) -> Expr:
                return self._leaf_tile(leaf, k, j)
        else:
            dim, count = "scalar", rows * cols

            def tile(k: Expr) -> Expr:
                return _uop("add", u32(self.position(leaf) if leaf.site >= 0 else leaf.base), k)

        def step(k: Expr) -> list[Op]:
            return [Op("reduce_tile", ("sum", dim, leaf.cb, scaler, tile(k), slot), (), self.loc)]

        self._loop(count, "tw_r", step)

    def _loop(self, count: int, name: str, step: Callable[[Expr], list[Op]]) -> None:
        if count <= 4:
            for k in range(count):
                self.ops.extend(step(u32(k)))
            return
        var = self.local(name)
        self.op("for", var, u32(0), u32(count), 1, regions=(tuple(step(var)),))

    # -- the whole store ---------------------------------------------------------------------

    def _emit(self, node: Node, out_cb: int, out_base: int, *, l1_acc: bool) -> None:
        shape = node.shape
        n = math.prod(shape)
        need = regs(node)
        if need > self.capacity:
            raise Unsupported(
                f"the expression needs {need} DST tiles per output tile; one acquire holds "
                f"{self.capacity}"
            )
        per = max(1, self.capacity // need)
        chunk = max(d for d in range(1, min(per, n) + 1) if n % d == 0)
        cols = shape[-1]
        body: list[Op] = []
        saved, self.ops = self.ops, body
        t0: Expr = u32(0) if chunk == n else self.local("tw_t")
        self.op("tile_regs.acquire")
        dirty: set[int] = set()
        if isinstance(node, Matmul) and chunk > 1 and cols % chunk == 0:
            # a row of `chunk` output tiles at once: matmul_block unpacks each A tile once
            # per K step and each B tile once (the same tile products as matmul_tiles)
            self._gen_matmul_row(node, t0, cols, chunk)
        else:
            for k in range(chunk):
                t = _uop("add", t0, u32(k))
                i = t if cols == 1 else _uop("floordiv", t, u32(cols))
                j = u32(0) if cols == 1 else _uop("mod", t, u32(cols))
                if len(shape) >= 2 and shape[-2] == 1:
                    i = u32(0)
                self._gen(node, i, j, k * need, dirty)
        self.op("tile_regs.commit")
        self.op("tile_regs.wait")
        if l1_acc:
            self.op("pack_l1_acc", 1)
        for k in range(chunk):
            t = _uop("add", t0, u32(k))
            self.op("pack_tile", k * need, out_cb, _uop("add", u32(out_base), t))
        if l1_acc:
            self.op("pack_l1_acc", 0)
        self.op("tile_regs.release")
        self.ops = saved
        if chunk == n:
            self.ops.extend(body)
        else:
            assert isinstance(t0, Var)
            self.op("for", t0, u32(0), u32(n), chunk, regions=(tuple(body),))

    def store(self, node: Node, out_cb: int, out_base: int, *, l1_acc: bool) -> list[Op]:
        """The ops that store ``node`` into ``out_cb`` tiles from ``out_base`` on."""
        root = self._prepare(push_broadcasts(node))
        if isinstance(root, Lit):
            root = Fill(node.shape, root.value)
        self._emit(root, out_cb, out_base, l1_acc=l1_acc)
        for cb, n in reversed(self.used_scratch):
            self.op("cb.pop_front", cb, n)
        return self.ops


def _uop(op: str, a: Expr, b: Expr) -> Expr:
    """Unsigned tile-index arithmetic (u32), folded where static (as the kernel computes it)."""
    a, b = S.to_type(a, Ty.U32), S.to_type(b, Ty.U32)
    if isinstance(a, Const) and isinstance(b, Const):
        return S.fold(BinOp(op, a, b, Ty.U32))
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


def _bcast_dim(dims: frozenset[int]) -> str:
    if dims == frozenset({1}):
        return "cols"
    if dims == frozenset({0}):
        return "rows"
    return "scalar"
