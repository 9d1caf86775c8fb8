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
from tilewright.kir.ir import Const, Kernel, Op
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


def _walk(ops: tuple[Op, ...], out: list[Effect], fns: dict[str, tuple[Op, ...]]) -> None:
    for op in ops:
        info = OPS.get(op.code)
        if info is not None and info.effect is not None:
            out.append(Effect(info.effect, int(op.args[0]), int(op.args[1]), op.loc))  # type: ignore[call-overload]
        elif op.code == "raw.call":  # a raw IR function's actions, in place
            _walk(fns.get(str(op.args[0]), ()), out, fns)
        elif op.code == "for":
            _var, start, stop, step = op.args
            if not (isinstance(start, Const) and isinstance(stop, Const) and isinstance(step, int)):
                if _has_effects(op.regions[0]):
                    raise _Unknown
                continue
            for _ in range(len(range(int(start.value), int(stop.value), step))):
                _walk(op.regions[0], out, fns)
                if len(out) > MAX_EFFECTS:
                    raise _Unknown
        elif op.code in ("if", "while") or op.code in ("break", "continue"):
            if any(_has_effects(r) for r in op.regions) or op.code in ("break", "continue"):
                raise _Unknown
        if len(out) > MAX_EFFECTS:
            raise _Unknown


def _has_effects(ops: tuple[Op, ...]) -> bool:
    for op in ops:
        info = OPS.get(op.code)
        if (info is not None and info.effect is not None) or op.code == "raw.call":
            return True
        if any(_has_effects(r) for r in op.regions):
            return True
    return False


def dfb_effects(kernel: Kernel) -> tuple[Effect, ...] | None:
    """The kernel's CB actions in order, or None when they depend on run-time values."""
    out: list[Effect] = []
    try:
        _walk(kernel.body, out, {f.name: f.body for f in kernel.functions})
    except _Unknown:
        return None
    return tuple(out)
