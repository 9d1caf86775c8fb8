"""The DFB protocol actions of a kernel, computed from its IR.

:func:`dfb_effects` lists what a kernel does to circular buffers in program order --
``reserve`` / ``push`` / ``wait`` / ``pop`` with the CB and page count of each
``cb_*`` op -- expanding loops whose trip counts are static (as ``DFBEffect.repeat``
does).  Control flow that depends on run-time values makes the sequence unknown
(``None``): the kernel's effects are then opaque, as an undeclared external call's are
(reference C.6).  Raw IR functions (``ttl.raw``) get their ``dfb_effects`` from here
instead of trusting a declaration.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilewright.errors import SourceLoc
from tilewright.kir.ir import Kernel, Op
from tilewright.kir.optable import OPS

__all__ = ["Effect", "dfb_effects", "MAX_EFFECTS"]

MAX_EFFECTS = 4096
"""Most actions expanded before the sequence counts as unknown (the repeat limit of C.6)."""


@dataclass(frozen=True, slots=True)
class Effect:
    kind: str  # reserve | push | wait | pop
    cb: int
    pages: int  # as the op takes it (cumulative for reserve / wait)
    loc: SourceLoc | None


class _Unknown(Exception):
    pass


class _Walker:
    """The analysis over one kernel; what a row's effects rule may ask (``opdef.EffectWalker``)."""

    def __init__(self, functions: dict[str, tuple[Op, ...]]) -> None:
        self.out: list[Effect] = []
        self.functions = functions

    def walk(self, ops: tuple[Op, ...]) -> None:
        for op in ops:
            row = OPS.get(op.code)
            if row is None:
                continue
            if row.effect is not None:
                self.out.append(Effect(row.effect, int(op.args[0]), int(op.args[1]), op.loc))  # type: ignore[call-overload]
            elif row.effects is not None:
                row.effects(op, self)
            elif row.jump:
                raise _Unknown  # what follows depends on whether it is reached
            elif any(self.has_effects(r) for r in op.regions):
                raise _Unknown  # a branch or loop on run-time values around actions
            if len(self.out) > MAX_EFFECTS:
                raise _Unknown

    def has_effects(self, ops: tuple[Op, ...]) -> bool:
        """Whether ``ops`` may act on a CB: an op with an effect, or with an effects rule and
        no regions (a call), here or in a region."""
        for op in ops:
            row = OPS.get(op.code)
            if row is not None and (
                row.effect is not None or (row.effects is not None and not row.regions)
            ):
                return True
            if any(self.has_effects(r) for r in op.regions):
                return True
        return False

    def function(self, name: str) -> tuple[Op, ...]:
        return self.functions.get(name, ())

    def unknown(self) -> Exception:
        return _Unknown()


def dfb_effects(kernel: Kernel) -> tuple[Effect, ...] | None:
    """The kernel's CB actions in order, or None when they depend on run-time values."""
    walker = _Walker({f.name: f.body for f in kernel.functions})
    try:
        walker.walk(kernel.body)
    except _Unknown:
        return None
    return tuple(walker.out)
