"""Tensor accessors handed to native code by Python (tensor arguments of external calls).

``ttl.call_extern_func`` passes a tensor to a data-movement function as a
``TensorAccessor``: Python registers its accessor for the running call
(:func:`register`, an integer handle), and the C++ side asks for its description
(``accessor_describe`` request), which :func:`describe` writes in the runtime's
``tw_accessor`` layout (tilewright/runtime.h).
"""

from __future__ import annotations

import ctypes

from tilewright.device.engine import ACTIVE
from tilewright.errors import KernelError

__all__ = ["CAccessor", "register", "describe", "drop"]


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


ACCESSORS: dict[int, list] = {}
"""Run index -> the tensor accessors handed to its native calls (handle = list index)."""


def register(accessor) -> int:
    """A handle for ``accessor`` valid during the running kernel's external calls."""
    run = ACTIVE.run
    if run is None:
        raise KernelError("tensor accessors are handed to native code inside kernels")
    table = ACCESSORS.setdefault(run.index, [None])
    table.append(accessor)
    return len(table) - 1


def drop(run_index: int, mark: int) -> None:
    """Forget the handles a call created (they are valid for that call only)."""
    table = ACCESSORS.get(run_index)
    if table is not None and len(table) > mark:
        del table[mark:]


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
