"""Block expressions on compute kernels: their trees, and the stores that write them.

A block expression (``a * b + c``, ``ttl.math.relu(x)``, ``x @ w``, ...) is built as
a tree of nodes (``passes/tiles.py``) while the kernel is lowered -- reading a block
operand is the interpreter's ``STORE_SRC`` transition, applied when the interpreter
applies it -- and becomes code only when it is stored (``blk.store(expr)``, ``blk +=
expr``).  :class:`TileProgram` writes a store as ``tile.store`` ops, whose tile code the
``dst`` pass generates (chunked to the DST capacity, ``passes/dst.py``): broadcasts are
pushed below elementwise ops (exact: a broadcast only replicates values), and an operand
an op must read from a circular buffer (matmul, reduce, transpose, a broadcast of a
computed value) that is not a block is first materialised into a compiler-owned float32
scratch CB by a store of its own.

DST holds float32 (``fp32_dest_acc_en``): the interpreter, the reference, evaluates
whole expressions in float32 and rounds once, on store; keeping DST in float32 makes
every compiled elementwise result bit-identical.  ``UNARY`` maps the registry's unary
ops to their SFPU steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tilewright.compiler.backend.passes.tiles import (
    OPERANDS,
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
    leaves,
    regs,
)
from tilewright.device.ops import REGISTRY
from tilewright.errors import SourceLoc
from tilewright.kir.ir import Const, Op, Ty

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
    "UNARY",
    "TileProgram",
    "Unsupported",
    "leaves",
    "push_broadcasts",
]


class Unsupported(Exception):
    """A block expression the compiler does not lower (the reason)."""


# Unary registry ops -> SFPU steps (the registry's ``sfpu`` / ``lowering``: ``OpSpec.compiled_steps``).
# A step is (SFPU op, parameter names); a parameter name refers to the op's bound
# parameters, a float is a constant.
UNARY: dict[str, tuple[tuple[str, tuple[str | float, ...]], ...]] = {
    name: steps for name, spec in REGISTRY.items() if (steps := spec.compiled_steps) is not None
}


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
        if isinstance(child, Where):
            return Where(
                node.shape,
                *(
                    push_broadcasts(Bcast(node.shape, node.dims, s))
                    for s in (child.cond, child.a, child.b)
                ),
            )
        return Bcast(node.shape, node.dims, child)
    if isinstance(node, Unary):
        return Unary(node.shape, node.steps, push_broadcasts(node.child))
    if isinstance(node, Binary):
        return Binary(node.shape, node.op, push_broadcasts(node.a), push_broadcasts(node.b))
    if isinstance(node, Where):
        return Where(node.shape, *(push_broadcasts(s) for s in (node.cond, node.a, node.b)))
    if isinstance(node, Matmul):
        return Matmul(node.shape, push_broadcasts(node.a), push_broadcasts(node.b), node.transpose)
    if isinstance(node, Reduce):
        return replace(node, child=push_broadcasts(node.child))
    if isinstance(node, Transpose):
        return Transpose(node.shape, push_broadcasts(node.child))
    return node


@dataclass
class TileProgram:
    """Writes one store as ``tile.store`` ops (and the scratch stores its operands need).

    ``position`` maps a leaf's acquisition site to its tile offset from the CB's read
    pointer; ``scratch`` hands out a free scratch CB with room for n tiles; ``scaler``
    the reduce scaler's CB; ``capacity`` is the DST tiles of one acquire.
    """

    capacity: int
    position: Callable[[Leaf], int]
    scratch: Callable[[int], int]
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
        self._store(node, cb, 0, l1_acc=False)
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
        if isinstance(node, Where):
            return Where(node.shape, *(self._prepare(s) for s in (node.cond, node.a, node.b)))
        if isinstance(node, Matmul):
            a = self._cb_operand(self._prepare(node.a))
            b = self._cb_operand(self._prepare(node.b))
            return Matmul(node.shape, a, b, node.transpose)
        if isinstance(node, Reduce):
            child = self._cb_operand(self._prepare(node.child))
            init = None
            if node.pool == "max":  # the -inf tile the maximum starts from (Reduce's doc)
                init = self._cb_operand(Fill((1, 1), Const(-math.inf, Ty.F64)))
            return replace(node, child=child, init=init)
        if isinstance(node, Transpose):
            return Transpose(node.shape, self._cb_operand(self._prepare(node.child)))
        if isinstance(node, Bcast):
            return Bcast(node.shape, node.dims, self._cb_operand(self._prepare(node.child)))
        return node

    def _resolve(self, node: Node) -> Node:
        """The tree with every block operand at its tile offset (``Leaf.base``)."""
        if isinstance(node, Leaf):
            return node if node.site < 0 else replace(node, base=self.position(node))
        changes = {
            attr: self._resolve(sub)
            for attr in OPERANDS
            if isinstance(sub := getattr(node, attr, None), Node)
        }
        return replace(node, **changes) if changes else node  # type: ignore[arg-type]

    def _store(self, node: Node, out_cb: int, out_base: int, *, l1_acc: bool) -> None:
        need = regs(node)
        if need > self.capacity:
            raise Unsupported(
                f"the expression needs {need} DST tiles per output tile; one acquire holds "
                f"{self.capacity}"
            )
        scaler = self.scaler() if _reduces(node) else -1
        self.op("tile.store", self._resolve(node), out_cb, out_base, int(l1_acc), scaler)

    def store(self, node: Node, out_cb: int, out_base: int, *, l1_acc: bool) -> list[Op]:
        """The ops that store ``node`` into ``out_cb`` tiles from ``out_base`` on."""
        root = self._prepare(push_broadcasts(node))
        if isinstance(root, Lit):
            root = Fill(node.shape, root.value)
        self._store(root, out_cb, out_base, l1_acc=l1_acc)
        for cb, n in reversed(self.used_scratch):
            self.op("cb.pop_front", cb, n)
        return self.ops


def _reduces(node: Node) -> bool:
    """Whether the store's own tile code reduces (materialised operands are leaves)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Reduce):
            return True
        stack.extend(s for a in OPERANDS if isinstance(s := getattr(n, a, None), Node))
    return False
