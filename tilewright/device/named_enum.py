"""``NamedIntEnum``: an ``IntEnum`` that prints as ttnn's bound enums do.

ttnn's enums (nanobind) print as ``DataType.BFLOAT16`` / ``BufferType.DRAM`` and compare
equal to nothing but themselves; Python 3.11's ``IntEnum`` prints its number (``0``).
Code written against ttnn reads the printed form -- tt-lang's compiler tests
``"TILE" in str(tensor.layout)`` and ``"L1" in str(buffer_type)``, and keys its compile
cache on ``str(dtype)`` -- so every enum ttnn exposes derives from this one.  The value
stays an ``int`` (what descriptors, codecs and C++ take).
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["NamedIntEnum"]


class NamedIntEnum(IntEnum):
    """An ``IntEnum`` whose ``str`` (and ``format``) is ``Type.NAME``, as ttnn prints it."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"
