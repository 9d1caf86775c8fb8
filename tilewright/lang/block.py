"""``ttl.block``: block-shaping functions (spec §Block functions), bound from the op registry.

``broadcast``, ``transpose``, ``fill``, ``mask``, ``mask_posinf``, ``where``, ``squeeze``
and ``unsqueeze`` with the spec's tiled semantics; a test checks every registry op of
the ``block`` namespace is bound here.
"""

from __future__ import annotations

from tilewright.lang.expr import bind_op

__all__ = [
    "broadcast",
    "fill",
    "mask",
    "mask_posinf",
    "squeeze",
    "transpose",
    "unsqueeze",
    "where",
]


def _bind(name: str):
    return bind_op("block", name)


broadcast = _bind("broadcast")
fill = _bind("fill")
mask = _bind("mask")
mask_posinf = _bind("mask_posinf")
squeeze = _bind("squeeze")
transpose = _bind("transpose")
unsqueeze = _bind("unsqueeze")
where = _bind("where")
