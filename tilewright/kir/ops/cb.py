"""The circular-buffer (DFB) protocol: cumulative page counts, as the tt-metal calls take them.

``cb.reserve_back`` / ``cb.push_back`` (producer) and ``cb.wait_front`` / ``cb.pop_front``
(consumer): their ``effect`` is what :mod:`tilewright.kir.effects` lists, and the verifier
keeps their page counts within the CB (``verify``'s rule 5).
"""

from __future__ import annotations

from collections.abc import Callable

from tilewright.device import kernel_api as ka
from tilewright.kir.ir import Op
from tilewright.kir.opdef import OpDef, OpFn, Runner, operands

__all__ = ["ROWS"]


def _cb_call(fn: Callable[[int, int], None]) -> Callable[[Op, Runner], OpFn]:
    def make(op: Op, rt: Runner) -> OpFn:
        cb, pages = op.args[0], op.args[1]
        return lambda env: fn(cb, pages)  # type: ignore[arg-type]

    return make


def _row(code: str, effect: str, fn: Callable[[int, int], None]) -> OpDef:
    name = fn.__name__
    return OpDef(
        code,
        operands("cb:cb", "pages:int"),
        _cb_call(fn),
        f"{name}({{cb}}, {{pages}});",
        effect=effect,
        doc=f"{name}(cb, pages)",
    )


ROWS = (
    _row("cb.reserve_back", "reserve", ka.cb_reserve_back),
    _row("cb.push_back", "push", ka.cb_push_back),
    _row("cb.wait_front", "wait", ka.cb_wait_front),
    _row("cb.pop_front", "pop", ka.cb_pop_front),
)
