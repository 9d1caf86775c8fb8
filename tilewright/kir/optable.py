"""The op table of the kernel IR: one row per op code, read by every pass.

A row (:class:`~.opdef.OpDef`) holds everything about its op -- operands and their kinds,
the kernel kinds that may run it, regions, DST handshake, CB effect, and its rules: the
interpreter's, the C++ form, the verifier's, the DFB-effect and printer forms where they
are special -- and is defined with its op, by family, in :mod:`tilewright.kir.ops`.  This
module gathers them: the verifier checks operands against ``operands``, the printer
prints them in that order, the emitter fills ``cpp``, the interpreter compiles ``run``,
:mod:`.effects` reads ``effect``.  The scalar operators and intrinsics of expressions are
the other table, :mod:`.scalar`.
"""

from __future__ import annotations

from tilewright.kir.opdef import OpDef
from tilewright.kir.ops import calls, cb, compute, control, debug, noc, trace
from tilewright.kir.ops.compute import BINARY, SFPU, SFPU_BINARY
from tilewright.kir.scalar import INTRINSICS, IntrinsicInfo

__all__ = ["OpDef", "OPS", "INTRINSICS", "IntrinsicInfo", "SFPU", "BINARY", "SFPU_BINARY"]

FAMILIES = (control, cb, noc, compute, calls, trace, debug)
"""The modules that define op rows (each a ``ROWS`` tuple)."""


def _table() -> dict[str, OpDef]:
    out: dict[str, OpDef] = {}
    for family in FAMILIES:
        for row in family.ROWS:
            if row.code in out:
                raise ValueError(f"op code {row.code!r} is defined twice ({family.__name__})")
            out[row.code] = row
    return out


OPS: dict[str, OpDef] = _table()
"""Every op code of the kernel IR and its row."""
