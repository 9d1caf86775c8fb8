"""The list of passes a lowered kernel goes through, in order (``PASSES``).

``run(kernel)`` applies them all -- the compiler calls it on every kernel it lowers,
before the verifier; ``run(kernel, upto=name)`` stops after the named pass (``lower``:
none), which is what ``tilewright explain --ir --after NAME`` prints.  Passes are pure
functions of the kernel, so a prefix of the list gives the same IR whenever it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tilewright.compiler.backend.passes.cbproto import expand_cb_protocol
from tilewright.compiler.backend.passes.dce import dce
from tilewright.compiler.backend.passes.dst import chunk_dst
from tilewright.compiler.backend.passes.fold import fold
from tilewright.kir.ir import Kernel

__all__ = ["Pass", "PASSES", "PASS_NAMES", "LOWERED", "run"]


@dataclass(frozen=True, slots=True)
class Pass:
    name: str
    run: Callable[[Kernel], Kernel]
    doc: str


PASSES: tuple[Pass, ...] = (
    Pass("dst", chunk_dst, "DST chunking: tile.store -> tile-register handshake per chunk"),
    Pass("cb", expand_cb_protocol, "CB protocol expansion: dfb.* in blocks -> cb_* in pages"),
    Pass("fold", fold, "constant folding (the IR interpreter's scalar semantics)"),
    Pass("dce", dce, "dead-code elimination: after fail / jumps, constant and empty branches"),
)
"""Every pass, in the order it runs."""

LOWERED = "lower"
"""The name of the IR before any pass (what lowering writes)."""

PASS_NAMES: tuple[str, ...] = (LOWERED, *(p.name for p in PASSES))


def run(kernel: Kernel, upto: str | None = None) -> Kernel:
    """``kernel`` through the passes, all of them or up to and including ``upto``."""
    if upto is not None and upto not in PASS_NAMES:
        raise ValueError(f"unknown pass {upto!r}; the passes are {', '.join(PASS_NAMES)}")
    if upto == LOWERED:
        return kernel
    for p in PASSES:
        kernel = p.run(kernel)
        if p.name == upto:
            break
    return kernel
