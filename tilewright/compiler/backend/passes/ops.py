"""The language-level ops the lowering writes and the passes lower, and their text.

``dfb.reserve`` / ``wait`` / ``push`` / ``pop`` and ``tile.store`` exist only between
lowering and the ``cb`` / ``dst`` passes: none reaches the verifier, the emitter or the
interpreters, so they are not rows of ``kir.optable.OPS`` (whose every row the IR
interpreter runs).  :data:`LANGUAGE_OPS` documents their operands;
:func:`print_lowered` prints a kernel that still holds them (``tilewright explain --ir
--after lower``) -- the kernel-IR printer marks codes outside its table, and these are
the compiler's own.
"""

from __future__ import annotations

import re

from tilewright.kir.ir import Kernel
from tilewright.kir.printer import print_kernel

__all__ = ["LANGUAGE_OPS", "print_lowered"]

LANGUAGE_OPS: dict[str, str] = {
    "dfb.reserve": "cb, blocks, addr: acquire a free block; the kernel then holds `blocks` "
    "reserved blocks of the DFB (addr: the local taking its L1 address, data movement)",
    "dfb.wait": "cb, blocks, addr: acquire a filled block; the kernel then holds `blocks` "
    "waited blocks",
    "dfb.push": "cb: publish the oldest reserved block",
    "dfb.pop": "cb: free the oldest waited block",
    "tile.store": "tree, cb, base, l1_acc, scaler: store a block expression into tiles "
    "base.. of cb, one output tile at a time (l1_acc: pack with L1 accumulation; scaler: "
    "the reduce scaler's CB, or -1)",
}

_UNKNOWN = re.compile(
    r"^(?P<head>\s*(?:" + "|".join(re.escape(c) for c in LANGUAGE_OPS) + r") .*?)"
    r"  <unknown op>(?P<tail>(?: \{)?)\s*(?P<loc># .*)?$"
)


def print_lowered(kernel: Kernel) -> str:
    """``print_kernel(kernel)``, the language-level ops printed as ops of their own."""
    out = []
    for line in print_kernel(kernel).split("\n"):
        m = _UNKNOWN.match(line)
        if m is not None:
            head = m["head"] + m["tail"]
            line = f"{head:<64} {m['loc']}" if m["loc"] else head
        out.append(line)
    return "\n".join(out)
