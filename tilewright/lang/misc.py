"""Smaller language pieces at run time: signposts, static_range, raw element access.

* ``ttl.signpost(name)``: a profiling zone (a trace span); the name is a literal of
  ``[A-Za-z0-9_-]``.
* ``ttl.static_range(*args)``: a range the front end unrolls; its arguments must be
  compile-time ints.
* ``ttl.raw_element_read/write``, ``ttl.read_index`` (spec 0.18): scalar access to
  one element of a block on data-movement kernels; f32 and bf16 only; one flat
  element coordinate per block dimension.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Literal

import numpy as np

from tilewright.device.engine import ACTIVE
from tilewright.device.formats import DataFormat, data_type_name
from tilewright.errors import BlockStateError, KernelError
from tilewright.lang import state
from tilewright.lang.blockstate import State
from tilewright.lang.dfb import TensorBlock, current_kernel
from tilewright.lang.rules.copy import check_dm_only

if TYPE_CHECKING:
    from tilewright.device.engine import KernelRun

__all__ = ["signpost", "static_range", "raw_element_read", "raw_element_write", "read_index"]

_SIGNPOST_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_SCALAR_FORMATS = (DataFormat.Float32, DataFormat.Float16_b)


class signpost:  # noqa: N801 - the language's spelling
    """``with ttl.signpost("name"):`` — a named zone in the trace."""

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not _SIGNPOST_NAME.match(name):
            raise KernelError(f"ttl.signpost name must be a literal of [A-Za-z0-9_-], got {name!r}")
        self.name = name
        self._start = 0
        self._run: KernelRun | None = None

    def __enter__(self) -> None:
        self._run = ACTIVE.run
        if self._run is not None:
            self._start = self._run.clock

    def __exit__(self, *exc: object) -> Literal[False]:
        tracer = state.TRACER
        if tracer is not None and self._run is not None:
            tracer.span(self._run, f"signpost {self.name}", self._start, self._run.clock)
        return False


def static_range(*args: int) -> range:
    """A range unrolled by the front end: arguments must be compile-time ints."""
    for a in args:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise KernelError(f"ttl.static_range arguments must be compile-time ints, got {a!r}")
    return range(*args)


def _element(block: TensorBlock, coords, what: str) -> int:
    run = current_kernel(what)
    check_dm_only(what, run.name, run.kernel_context().kernel.kind == "compute")
    if not isinstance(block, TensorBlock):
        raise KernelError(f"{what}: the first argument must be a block, got {type(block).__name__}")
    if block.dfb.data_format not in _SCALAR_FORMATS:
        raise KernelError(
            f"{what}: blocks of {data_type_name(block.dtype)} are not supported (f32 and bf16 only)"
        )
    dfb = block.dfb
    if dfb.tiled:
        *batch, r, c = dfb.shape
        extent = (*batch, r * dfb.tile.height, c * dfb.tile.width)
    else:
        extent = dfb.shape
    if len(coords) != len(extent):
        raise KernelError(
            f"{what}: give one element coordinate per block dimension ({len(extent)}), got {len(coords)}"
        )
    for i, (c, n) in enumerate(zip(coords, extent)):
        if not isinstance(c, (int, np.integer)) or not 0 <= c < n:
            raise KernelError(f"{what}: coordinate {i} is {c!r}, outside 0..{n - 1}")
    return int(np.ravel_multi_index(tuple(int(c) for c in coords), extent))


def _values(block: TensorBlock) -> np.ndarray:
    return block.values().reshape(-1)


def raw_element_read(block: TensorBlock, *coords: int) -> float:
    """One element of a block (block in MR or RW; it becomes RW)."""
    flat = _element(block, coords, "ttl.raw_element_read")
    if block.state not in (State.MR, State.RW):
        raise BlockStateError(
            f"ttl.raw_element_read: {block.describe()} is in state {block.state.name}; it must be "
            "filled (MR or RW)"
        )
    block.state = State.RW
    return float(_values(block)[flat])


def raw_element_write(block: TensorBlock, *args: float) -> None:
    """Write one element (block in MW or RW; it becomes RW)."""
    *coords, value = args
    flat = _element(block, coords, "ttl.raw_element_write")
    if block.state not in (State.MW, State.RW):
        raise BlockStateError(
            f"ttl.raw_element_write: {block.describe()} is in state {block.state.name}; it must be "
            "writable (MW or RW)"
        )
    if not isinstance(value, (float, int, np.floating)) or isinstance(value, bool):
        raise KernelError(
            f"ttl.raw_element_write: value must be a float, got {type(value).__name__}"
        )
    vals = _values(block).copy()
    vals[flat] = value
    shape = block.values().shape
    block.write_values(vals.reshape(shape))
    block.state = State.RW


def read_index(block: TensorBlock, *coords: int) -> int:
    """An element as an index: truncated toward zero; finite, >= 0 and <= INT32_MAX."""
    v = raw_element_read(block, *coords)
    if not math.isfinite(v) or v < 0 or v > 2**31 - 1:
        raise KernelError(
            f"ttl.read_index: element value {v} is not a valid index (finite, 0..2**31-1)"
        )
    return int(v)
