"""Tensor accessors handed to native code by Python (tensor arguments of external calls).

``ttl.call_extern_func`` passes a tensor to a data-movement function as a
``TensorAccessor``: Python registers its accessor for the running call in the
engine's :class:`CallTables` (an integer handle), and the C++ side asks for its
description (``accessor_describe`` request), which :func:`describe` writes in the
runtime's ``tw_accessor`` layout (tilewright/runtime.h).  The tables belong to one
engine's running launch (its native driver), so threads running launches on their
own devices never see each other's handles.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

__all__ = ["CAccessor", "CallTables", "describe"]


class CAccessor(ctypes.Structure):
    """``tw_accessor`` (tilewright/runtime.h)."""

    _fields_ = [
        ("is_dram", ctypes.c_uint32),
        ("sharded", ctypes.c_uint32),
        ("base", ctypes.c_uint32),
        ("page_size", ctypes.c_uint32),
        ("aligned_page_size", ctypes.c_uint32),
        ("rank", ctypes.c_uint32),
        ("num_banks", ctypes.c_uint32),
        ("tensor_shape", ctypes.c_uint32 * 2),
        ("shard_shape", ctypes.c_uint32 * 2),
        ("banks", ctypes.c_uint16 * 64),
    ]


class CallTables:
    """What the external calls of one engine's running launch hand to native code, by
    run index: tensor accessors (handle = list index) and contract observers."""

    __slots__ = ("accessors", "observers")

    def __init__(self) -> None:
        self.accessors: dict[int, list] = {}
        self.observers: dict[int, Callable[[str, int, int], None]] = {}

    def register(self, run_index: int, accessor) -> int:
        """A handle for ``accessor``, valid during the run's external calls of this launch."""
        table = self.accessors.setdefault(run_index, [None])
        table.append(accessor)
        return len(table) - 1

    def accessor(self, run_index: int, handle: int):
        """The accessor of ``handle`` for run ``run_index``, or None if it is not valid."""
        table = self.accessors.get(run_index, [])
        return table[handle] if 0 < handle < len(table) else None

    def clear(self) -> None:
        """Forget everything (the launch is over)."""
        self.accessors.clear()
        self.observers.clear()


def describe(accessor, out: int) -> None:
    """Write the ``tw_accessor`` of a Python TensorAccessor at address ``out``."""
    c = CAccessor.from_address(out)
    args = accessor.args
    c.is_dram = int(bool(args.is_dram))
    c.sharded = int(bool(args.sharded))
    c.base = accessor.bank_base_address
    c.page_size = accessor.page_size
    c.aligned_page_size = accessor.aligned_page_size
    if not args.sharded:
        device = accessor.device
        c.num_banks = device.num_dram_channels if args.is_dram else device.num_l1_banks
        return
    c.rank = 2
    c.num_banks = len(args.bank_coords)
    c.tensor_shape[0], c.tensor_shape[1] = args.tensor_shape
    c.shard_shape[0], c.shard_shape[1] = args.shard_shape
    for i, (x, y) in enumerate(args.bank_coords):
        c.banks[i] = (x << 8) | y
