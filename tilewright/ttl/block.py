"""``ttl.block``: block-shaping functions (spec §Block functions), from ``tilewright.lang.block``."""

from __future__ import annotations

from tilewright.lang.block import (
    broadcast,
    fill,
    mask,
    mask_posinf,
    squeeze,
    transpose,
    unsqueeze,
    where,
)

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
