"""Run-time check for logical DFBs that share one physical index (reference C.7).

The allocator lets two logical DFBs of a node share a circular-buffer index only
when it proved (or an allocation group declared) that their lifetimes do not
overlap.  The check here holds them to it: a DFB is *live* from its first
acquisition until every block it reserved was pushed and popped again; acquiring a
block of one DFB while another DFB of the same index is live is a
``DFBContractError`` naming both.

The program builder installs the check by making the sharing DFBs instances of
``SharedIndexDFB`` (the same object, with acquisition and release hooks); DFBs with
an index of their own are untouched and pay nothing.  External calls report the
protocol actions their ``dfb_effects`` declare (``extern.contract``) through
:meth:`SharedIndexGuard.extern_action`, and inspections through
:meth:`SharedIndexGuard.check_access`, so a DFB that an external function fills or
drains is tracked like a native one.
"""

from __future__ import annotations

from tilewright.errors import DFBContractError
from tilewright.lang.blockstate import Op
from tilewright.lang.dfb import DataflowBuffer

__all__ = ["SharedIndexDFB", "SharedIndexGuard", "install"]


class SharedIndexGuard:
    """The logical DFBs of one node that share one physical index."""

    __slots__ = ("index", "members", "pushed", "reserved", "why")

    def __init__(self, index: int, members: list[DataflowBuffer], why: str) -> None:
        self.index = index
        self.members = members
        self.why = why  # "reuse" (proved disjoint) or "allocation group"
        self.pushed = {id(m): 0 for m in members}  # pages pushed and not yet popped
        self.reserved = {id(m): 0 for m in members}  # pages an external call reserved, not pushed

    def _state(self, dfb: DataflowBuffer) -> str | None:
        held = len(dfb.held_blocks())
        parts = []
        if held:
            parts.append(f"{held} acquired block(s)")
        if self.reserved[id(dfb)] > 0:
            parts.append(f"{self.reserved[id(dfb)]} page(s) reserved by an external call")
        pushed = self.pushed[id(dfb)]
        if pushed > 0:
            blocks, rest = divmod(pushed, dfb.block_pages)
            shown = f"{blocks} pushed block(s)" if not rest else f"{pushed} pushed page(s)"
            parts.append(f"{shown} not yet popped")
        return " and ".join(parts) or None

    def check_access(self, dfb: DataflowBuffer, what: str) -> None:
        """``what`` (e.g. ``x.reserve()``) touches the index: no other sharer may be live."""
        for other in self.members:
            if other is dfb:
                continue
            live = self._state(other)
            if live:
                raise DFBContractError(
                    f"{what}: DFBs '{dfb.name}' and '{other.name}' share physical index "
                    f"{self.index} ({self.why}) on node {dfb.core.logical}, but '{other.name}' is still "
                    f"live ({live}); two logical DFBs sharing an index must never be live at once"
                )

    def before_acquire(self, dfb: DataflowBuffer, method: str) -> None:
        self.check_access(dfb, f"{dfb.name}.{method}()")

    def after_release(self, dfb: DataflowBuffer, op: Op) -> None:
        pages = dfb.block_pages
        self.pushed[id(dfb)] += pages if op == Op.PUSH else -pages

    def extern_action(self, dfb: DataflowBuffer, kind: str, pages: int) -> None:
        """A declared external protocol action on ``dfb`` (reported before it runs)."""
        key = id(dfb)
        if kind in ("reserve", "wait"):
            self.check_access(dfb, f"external {kind}({dfb.name}, {pages})")
            if kind == "reserve":
                self.reserved[key] += pages
        elif kind == "push":
            self.reserved[key] -= pages
            self.pushed[key] += pages
        else:
            self.pushed[key] -= pages

    def reset(self, _dfb: DataflowBuffer) -> None:
        for key in self.pushed:
            self.pushed[key] = 0
            self.reserved[key] = 0


class SharedIndexDFB(DataflowBuffer):
    """A DataflowBuffer whose index is shared: acquisitions check the other sharers."""

    share_guard: SharedIndexGuard

    def reserve(self, **kwargs):
        self.share_guard.before_acquire(self, "reserve")
        return super().reserve(**kwargs)

    def wait(self, **kwargs):
        self.share_guard.before_acquire(self, "wait")
        return super().wait(**kwargs)

    def _release(self, block, op: Op) -> None:
        super()._release(block, op)
        self.share_guard.after_release(self, op)


def install(index: int, members: list[DataflowBuffer], why: str) -> None:
    """Make ``members`` (one node's DFBs of one index) check each other at run time."""
    guard = SharedIndexGuard(index, members, why)
    for dfb in members:
        dfb.__class__ = SharedIndexDFB
        dfb.share_guard = guard
