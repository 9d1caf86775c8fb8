"""DST chunking: each ``tile.store`` becomes tile code in chunks that fit in DST.

A store computes its expression one output tile at a time.  One acquire of the tile
registers holds ``kernel.dst_tiles`` tiles (the capacity table's, 4 for float32 DST) and
one output tile of an expression needs ``regs(tree)`` of them, so a chunk is the largest
divisor of the block's tile count that fits: ``tile_regs_acquire``; the math of each
output tile of the chunk, in its own window of DST registers; ``tile_regs_commit`` /
``tile_regs_wait``; one ``pack_tile`` per tile into the destination (with packer L1
accumulation for ``+=``); ``tile_regs_release`` -- inside a loop over the chunks when
there is more than one.  A matmul whose chunk is a row segment uses ``matmul_block``
(each A tile unpacked once per K step).

Lowering per node (tt-metal compute API):

======================== ================================================================
node                     tiles
======================== ================================================================
block operand            ``copy_tile``; with ``ttl.block.broadcast``: ``unary_bcast``
``a + b`` (two blocks)   ``add_tiles`` (``*_tiles_bcast_*`` for a broadcast operand)
``e + b`` / ``b + e``    ``binary_dest_reuse_tiles`` (DEST_TO_SRCA / SRCB)
``e1 / e2`` (computed)   ``div_binary_tile`` (and ``add/sub/mul_binary_tile``, ``binary_max/min_tile``)
``e * 2.0``              ``mul_unary_tile`` (``add/sub/rsub_unary_tile``); ``/ s``: ``fill_tile`` + div
unary math               its SFPU ``*_tile``
``a @ b``                ``matmul_tiles`` over K into one DST tile
``reduce_sum``           ``reduce_tile`` over the reduced tiles, scaler tile 1.0
``reduce_max``           the sum of a -inf tile, then ``reduce_tile<MAX>`` over the tiles
``transpose``            ``transpose_wh_tile``
``fill``                 ``fill_tile``
``where`` / ``mask``     ``where_tile`` (after ``eq_binary_tile`` with 1.0 unless a comparison)
======================== ================================================================
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tilewright.compiler.backend.passes.tiles import (
    FPU,
    Bcast,
    Binary,
    Fill,
    Leaf,
    Lit,
    Matmul,
    Node,
    Reduce,
    Transpose,
    Unary,
    Where,
    is_truth,
    leaflike,
    regs,
    uop,
)
from tilewright.compiler.backend.passes.walk import rewrite_ops
from tilewright.device.ops.tile_ops import SFPU_OPS
from tilewright.errors import SourceLoc
from tilewright.kir.ir import Const, Expr, Kernel, Op, Ty, Var, u32

__all__ = ["chunk_dst"]

# ``e op number`` -> its SFPU scalar op (``number - e``: ``rsub``), from the op registry.
_SCALAR_SFPU = {op.scalar: op.ir for op in SFPU_OPS.values() if op.scalar and op.ir}


@dataclass
class _Tiles:
    """The tile code of one ``tile.store`` (``capacity``: DST tiles per acquire)."""

    capacity: int
    scaler: int
    loc: SourceLoc | None
    ops: list[Op] = field(default_factory=list)
    locals: dict[str, Var] = field(default_factory=dict)

    def op(self, code: str, *args: object, regions: tuple = ()) -> None:
        self.ops.append(Op(code, tuple(args), regions, self.loc))

    def local(self, name: str) -> Var:
        var = self.locals.get(name)
        if var is None:
            var = self.locals[name] = Var(name, Ty.U32)
        return var

    # -- tiles --------------------------------------------------------------------------------

    def _leaf_tile(self, leaf: Leaf, i: Expr, j: Expr) -> Expr:
        cols = leaf.shape[-1]
        base = leaf.base
        return uop("add", u32(base), uop("add", uop("mul", i, u32(cols)), j))

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
        elif isinstance(node, Where):
            self._gen(node.cond, i, j, slot, dirty)
            if not is_truth(node.cond):  # the block op's condition == 1
                self.op("fill_tile", slot + 1, Const(1.0, Ty.F64))
                self.op("sfpu_binary", "eq", slot, slot + 1, slot)
            self._gen(node.a, i, j, slot + 1, dirty)
            self._gen(node.b, i, j, slot + 2, dirty)
            self.op("where_tile", slot, slot + 1, slot + 2, slot)
        elif isinstance(node, Matmul):
            self._gen_matmul(node, i, j, slot, dirty)
        elif isinstance(node, Reduce):
            self._gen_reduce(node, i, j, slot, dirty)
        elif isinstance(node, Transpose):
            leaf = node.child
            assert isinstance(leaf, Leaf)
            self.op("transpose_tile", leaf.cb, self._leaf_tile(leaf, j, i), slot)
        else:  # pragma: no cover - every node kind is handled above
            raise TypeError(f"block expression node {type(node).__name__}")

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
        if op in FPU and leaflike(a) and leaflike(b):
            if isinstance(a, Bcast) and isinstance(b, Leaf) and op in ("add", "mul"):
                a, b = b, a
            if isinstance(a, Leaf):
                _, cb0, t0 = self._bcast_operand(a, i, j)
                kind, cb1, t1 = self._bcast_operand(b, i, j)
                self.op("binary_tiles", op, kind, cb0, cb1, t0, t1, slot)
                return
        if op in FPU and isinstance(b, Leaf):
            self._gen(a, i, j, slot, dirty)
            self.op("binary_dest_reuse", op, "srca", b.cb, self._leaf_tile(b, i, j), slot)
            return
        if op in FPU and isinstance(a, Leaf):
            self._gen(b, i, j, slot, dirty)
            self.op("binary_dest_reuse", op, "srcb", a.cb, self._leaf_tile(a, i, j), slot)
            return
        if op in FPU and isinstance(b, Lit):
            self._gen(a, i, j, slot, dirty)
            self.op("sfpu", _SCALAR_SFPU[op], slot, (b.value,))
            return
        if op in FPU and isinstance(a, Lit):
            self._gen(b, i, j, slot, dirty)
            name = _SCALAR_SFPU["rsub" if op == "sub" else op]
            self.op("sfpu", name, slot, (a.value,))
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
        i = uop("floordiv", t0, u32(cols))
        j0 = uop("mod", t0, u32(cols))
        kt = a.shape[-1]

        def step(k: Expr) -> list[Op]:
            ta = self._leaf_tile(a, i, k)
            tb = self._leaf_tile(b, j0, k) if node.transpose else self._leaf_tile(b, k, j0)
            args = (a.cb, b.cb, ta, tb, 0, int(node.transpose), chunk, 1, kt)
            return [Op("matmul_block", args, (), self.loc)]

        if node.transpose:  # B^T rows are not consecutive tiles of B: tile by tile
            dirty: set[int] = set()
            for c in range(chunk):
                self._gen(node, i, uop("add", j0, u32(c)), c, dirty)
            return
        self._loop(kt, "tw_k", step)

    def _gen_reduce(self, node: Reduce, i: Expr, j: Expr, slot: int, dirty: set[int]) -> None:
        leaf = node.child
        assert isinstance(leaf, Leaf)
        self._zero(slot, dirty)
        dirty.add(slot)
        rows, cols = leaf.shape[-2], leaf.shape[-1]
        scaler = self.scaler
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
                return uop("add", u32(leaf.base), k)

        if node.pool == "max":
            init = node.init
            assert isinstance(init, Leaf)
            self.op("reduce_tile", "sum", dim, init.cb, scaler, u32(init.base), slot)

        def step(k: Expr) -> list[Op]:
            args = (node.pool, dim, leaf.cb, scaler, tile(k), slot)
            return [Op("reduce_tile", args, (), self.loc)]

        self._loop(count, "tw_r", step)

    def _loop(self, count: int, name: str, step: Callable[[Expr], list[Op]]) -> None:
        if count <= 4:
            for k in range(count):
                self.ops.extend(step(u32(k)))
            return
        var = self.local(name)
        self.op("for", var, u32(0), u32(count), 1, regions=(tuple(step(var)),))

    # -- the whole store ---------------------------------------------------------------------

    def emit(self, node: Node, out_cb: int, out_base: int, *, l1_acc: bool) -> None:
        """The tile code storing ``node`` into tiles ``out_base``.. of ``out_cb``."""
        shape = node.shape
        n = math.prod(shape)
        need = regs(node)  # the lowering checked that it fits (compute.TileProgram)
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
                t = uop("add", t0, u32(k))
                i = t if cols == 1 else uop("floordiv", t, u32(cols))
                j = u32(0) if cols == 1 else uop("mod", t, u32(cols))
                if len(shape) >= 2 and shape[-2] == 1:
                    i = u32(0)
                self._gen(node, i, j, k * need, dirty)
        self.op("tile_regs.commit")
        self.op("tile_regs.wait")
        if l1_acc:
            self.op("pack_l1_acc", 1)
        for k in range(chunk):
            t = uop("add", t0, u32(k))
            self.op("pack_tile", k * need, out_cb, uop("add", u32(out_base), t))
        if l1_acc:
            self.op("pack_l1_acc", 0)
        self.op("tile_regs.release")
        self.ops = saved
        if chunk == n:
            self.ops.extend(body)
        else:
            assert isinstance(t0, Var)
            self.op("for", t0, u32(0), u32(n), chunk, regions=(tuple(body),))


def chunk_dst(kernel: Kernel) -> Kernel:
    """Every ``tile.store`` of the kernel's body as chunked tile code."""
    needed: dict[str, Var] = {}

    def expand(op: Op) -> tuple[Op, ...]:
        if op.code != "tile.store":
            return (op,)
        tree, cb, base, l1_acc, scaler = op.args
        tiles = _Tiles(kernel.dst_tiles, int(scaler), op.loc)  # type: ignore[call-overload]
        tiles.emit(tree, cb, base, l1_acc=bool(l1_acc))  # type: ignore[arg-type]
        needed.update(tiles.locals)
        return tuple(tiles.ops)

    body = rewrite_ops(kernel.body, expand)
    if body is kernel.body:
        return kernel
    have = {v.name for v in kernel.locals}
    extra = tuple(v for name, v in needed.items() if name not in have)
    return replace(kernel, body=body, locals=kernel.locals + extra)


def _bcast_dim(dims: frozenset[int]) -> str:
    if dims == frozenset({1}):
        return "cols"
    if dims == frozenset({0}):
        return "rows"
    return "scalar"
