"""Dead-code elimination: ops that never run.

* what follows a ``fail`` / ``failf`` (they raise), a ``break`` or a ``continue`` in the
  same region;
* an ``if`` whose condition is a constant: the branch taken, in its place;
* an ``if`` whose branches are both empty (conditions have no side effects).

Loops stay: a ``for`` assigns its variable even when it runs no iteration, and the
lowering emits no loop it knows to be empty.
"""

from __future__ import annotations

from tilewright.compiler.backend.passes.walk import on_bodies
from tilewright.kir.ir import Const, Kernel, Op

__all__ = ["dce", "TERMINATORS"]

TERMINATORS = frozenset({"fail", "failf", "break", "continue"})
"""Ops after which nothing in their region runs."""


def _region(ops: tuple[Op, ...]) -> tuple[Op, ...]:
    out: list[Op] = []
    for op in ops:
        for kept in _op(op):
            out.append(kept)
            if kept.code in TERMINATORS:
                return _same(ops, out)
    return _same(ops, out)


def _same(ops: tuple[Op, ...], out: list[Op]) -> tuple[Op, ...]:
    if len(out) == len(ops) and all(a is b for a, b in zip(out, ops)):
        return ops
    return tuple(out)


def _op(op: Op) -> tuple[Op, ...]:
    if not op.regions:
        return (op,)
    regions = tuple(_region(r) for r in op.regions)
    if op.code == "if":
        cond = op.args[0]
        if isinstance(cond, Const):
            return regions[0] if cond.value else regions[1]
        if not regions[0] and not regions[1]:
            return ()
    if all(a is b for a, b in zip(regions, op.regions)):
        return (op,)
    return (Op(op.code, op.args, regions, op.loc),)


def dce(kernel: Kernel) -> Kernel:
    """``kernel`` without the ops that never run (its body and its functions)."""
    return on_bodies(kernel, _region)
