"""NoC addresses: encoding and decoding, as the tt-metal kernel API spells them.

A unicast NoC address is ``(y << 42) | (x << 36) | local_addr`` with 6-bit NoC
coordinates and a 36-bit local address (``noc_parameters.h`` ``NOC_XY_ADDR``).  A
multicast address encodes a rectangle:
``(x0 << 48) | (y0 << 54) | (x1 << 36) | (y1 << 42) | local_addr``.

Workers use *translated* coordinates: logical ``(x, y)`` plus the descriptor's
``coord_translation_offsets`` (18, 18 on Wormhole).  DRAM banks get coordinates
outside the worker rectangle (``Device.dram_noc_coord``).

Bits 60..63 (unused by unicast and multicast encodings) carry a *chip tag* (an
emulator addition; hardware addresses have no chip): 0 means "the issuing chip" (what
hand-built addresses give), ``chip % 15 + 1`` names one.  Addresses the kernel API
builds carry their chip's tag; a NoC transaction stays on its chip, so a NoC access
with another chip's tag is an error (cross-chip traffic goes over the fabric,
``device.fabric``).  Four bits name 15 chips exactly; in larger systems a tag stands
for every chip ``c`` with ``c % 15`` equal (chips 1, 16 and 31 of a Galaxy), so an
address built on one of them and used on another of them goes unnoticed.

Local addresses may also be given in *host form*: a process address inside the L1
arena, which is what native code sees for pointers (see ``memory.L1Arena``).
``NocTarget`` resolution turns both forms into (memory view, local offset).
"""

from __future__ import annotations

__all__ = [
    "LOCAL_MASK",
    "CHIP_SHIFT",
    "chip_tag",
    "noc_chip_tag",
    "chips_with_tag",
    "noc_xy_addr",
    "noc_multicast_addr",
    "decode_unicast",
    "decode_multicast",
]

LOCAL_MASK = (1 << 36) - 1
CHIP_SHIFT = 60
_COORD_MASK = 0x3F


def noc_xy_addr(x: int, y: int, addr: int, chip: int | None = None) -> int:
    """Unicast NoC address of ``addr`` on the node at NoC coordinate (x, y) (of ``chip``)."""
    base = ((y & _COORD_MASK) << 42) | ((x & _COORD_MASK) << 36) | (addr & LOCAL_MASK)
    return base if chip is None else base | (chip_tag(chip) << CHIP_SHIFT)


CHIP_TAGS = 15
"""Distinct chip tags (4 bits, 0 reserved for "the issuing chip")."""


def chip_tag(chip: int) -> int:
    """The tag a NoC address built on ``chip`` carries in bits 60..63 (never 0)."""
    return chip % CHIP_TAGS + 1


def noc_chip_tag(noc_addr: int) -> int:
    """The chip tag of a NoC address (0: the issuing chip)."""
    return (noc_addr >> CHIP_SHIFT) & 0xF


def chips_with_tag(tag: int, num_chips: int) -> str:
    """The chips of a ``num_chips``-chip system that ``tag`` names, for messages."""
    chips = [str(c) for c in range(tag - 1, max(num_chips, tag), CHIP_TAGS)]
    if len(chips) == 1:
        return f"chip {chips[0]}"
    return f"chip {', '.join(chips[:-1])} or {chips[-1]}"


def noc_multicast_addr(x0: int, y0: int, x1: int, y1: int, addr: int) -> int:
    """Multicast NoC address of the rectangle (x0, y0)..(x1, y1) (inclusive)."""
    return (
        ((x0 & _COORD_MASK) << 48)
        | ((y0 & _COORD_MASK) << 54)
        | ((x1 & _COORD_MASK) << 36)
        | ((y1 & _COORD_MASK) << 42)
        | (addr & LOCAL_MASK)
    )


def decode_unicast(noc_addr: int) -> tuple[int, int, int]:
    """(x, y, local address) of a unicast NoC address."""
    return (noc_addr >> 36) & _COORD_MASK, (noc_addr >> 42) & _COORD_MASK, noc_addr & LOCAL_MASK


def decode_multicast(noc_addr: int) -> tuple[int, int, int, int, int]:
    """(x_start, y_start, x_end, y_end, local address), normalised so start <= end.

    NOC1 callers pass the corners swapped; tt-metal hardware handles both, so we
    normalise with min/max.
    """
    xa = (noc_addr >> 48) & _COORD_MASK
    ya = (noc_addr >> 54) & _COORD_MASK
    xb = (noc_addr >> 36) & _COORD_MASK
    yb = (noc_addr >> 42) & _COORD_MASK
    return min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb), noc_addr & LOCAL_MASK
