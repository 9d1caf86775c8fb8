"""Setup declarations: DFB factories, kernel decorators, ``ttl.node`` / ``ttl.grid_size``.

These run while an operation body is evaluated for one node (``NodeSetup``) —
or, for ``node`` / ``grid_size``, inside that node's kernels.  They validate
their arguments (naming the parameter) and record what they declare.
"""

from __future__ import annotations

import inspect
import linecache
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from tilewright.device.engine import ACTIVE
from tilewright.device.formats import (
    TILE_32x32,
    TileShape,
    TtnnDataType,
    data_type_named,
    element_size,
    tile_size_bytes,
)
from tilewright.errors import InterfaceError, KernelError, SourceLoc, user_frame, user_location
from tilewright.lang import state
from tilewright.lang.dfb import DataflowBuffer
from tilewright.lang.node import SETUP_STACK, KernelDecl, current_setup
from tilewright.lang.resets import DFBAllocationGroup
from tilewright.lang.selectors import Kernel, KernelKind, PipeSourceKernel
from tilewright.ttnn.tensor import Tensor
from tilewright.ttnn.types import DataType, Layout, data_format_of

__all__ = [
    "CircularBuffer",
    "TILE_SHAPE",
    "make_dataflow_buffer_like",
    "make_circular_buffer_like",
    "make_dfb",
    "compute",
    "datamovement",
    "node",
    "node_coords",
    "grid_size",
    "grid_extent",
    "parse_dtype",
]

TILE_SHAPE = (TILE_32x32.height, TILE_32x32.width)
"""``ttl.TILE_SHAPE``: the default tile, (32, 32) (tt-lang's simulator exports it)."""

_MAX_BLOCK_COUNT = 32
_TILE_HEIGHTS = (1, 2, 4, 8, 16, 32)
_TILE_WIDTHS = (16, 32)


def parse_dtype(dtype: object, what: str = "dtype") -> DataType:
    """A ttnn DataType from a ttnn dtype, a name such as "bf16", or a torch dtype."""
    if isinstance(dtype, DataType):
        return dtype
    if isinstance(dtype, str):
        found = data_type_named(dtype)
    else:  # a torch (or numpy) dtype, by its name: torch.float32, torch.bfloat16, ...
        name = str(dtype).rsplit(".", 1)[-1]
        # torch's float16 has no twin on the device; ttnn.from_torch stores it as bfloat16.
        found = TtnnDataType.BFLOAT16 if name == "float16" else data_type_named(name)
    if found is not None:
        return DataType(found)
    raise InterfaceError(
        f"{what} {dtype!r} is not a TT-Lang data type (bf16, f32, bfp8_b, bfp4_b, "
        "int32, uint32, uint16, uint8)",
        loc=user_location(),
    )


def _check_shape(shape, what: str, tiled: bool):
    if isinstance(shape, int):
        shape = (shape,)
    if (
        not isinstance(shape, (tuple, list))
        or not shape
        or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in shape)
    ):
        raise InterfaceError(
            f"{what}: shape must be a tuple of positive ints, got {shape!r}", loc=user_location()
        )
    if tiled and len(shape) < 2:
        raise InterfaceError(
            f"{what}: shape {tuple(shape)} needs at least 2 dimensions (tiles of rows and columns)",
            loc=user_location(),
        )
    return tuple(shape)


def _check_block_count(block_count, what: str) -> int:
    if (
        not isinstance(block_count, int)
        or isinstance(block_count, bool)
        or not (1 <= block_count <= _MAX_BLOCK_COUNT)
    ):
        raise InterfaceError(
            f"{what}: block_count must be an int in 1..{_MAX_BLOCK_COUNT}, got {block_count!r}",
            loc=user_location(),
        )
    return block_count


def _dfb_name(setup, fallback: str) -> str:
    """The variable the user's declaration binds (``a_cb = ttl.make_circular_buffer_like(...)``):
    the statement in the user's innermost frame, however many factory spellings lie between."""
    frame = user_frame(sys._getframe(1))
    if frame is None:
        return fallback
    return setup.op.declared_name(frame.f_code.co_filename, frame.f_lineno) or fallback


def _new_dfb(setup, *, name, shape, block_count, dtype: DataType, tile: TileShape, tiled: bool):
    fmt = data_format_of(dtype)
    device = setup.device
    if tiled:
        page = tile_size_bytes(fmt, tile, dram_alignment=device.dram_alignment)
        elem = 0
    else:
        elem = element_size(fmt)
        page = shape[-1] * elem
    dfb = DataflowBuffer(
        name=name,
        core=setup.core,
        index=len(setup.dfbs),
        shape=shape,
        block_count=block_count,
        data_format=fmt,
        dtype=dtype,
        tile=tile,
        tiled=tiled,
        page_size=page,
        elem_size=elem,
        loc=user_location(),
    )
    setup.dfbs.append(dfb)
    return dfb


def make_dataflow_buffer_like(
    tensor: Tensor,
    shape: int | Sequence[int],
    block_count: int = 2,
    *,
    allocation_group: DFBAllocationGroup | None = None,
    address_scope: object = None,
    buffer_factor: int | None = None,
) -> DataflowBuffer:
    """A DFB whose data type and tile come from ``tensor`` (spec §Dataflow buffers).

    ``shape`` is in tiles for TILE tensors and in elements for ROW_MAJOR ones; a block
    holds ``prod(shape)`` tiles and the DFB ``block_count`` blocks.
    """
    what = "ttl.make_dataflow_buffer_like"
    setup = current_setup(what)
    if buffer_factor is not None:  # legacy spelling (spec 0.15: buffer_factor -> block_count)
        block_count = buffer_factor
    _check_group(allocation_group, what)
    if not isinstance(tensor, Tensor):
        raise InterfaceError(
            f"{what}: the first argument must be a TT-NN tensor, got {type(tensor).__name__}",
            loc=user_location(),
        )
    tiled = tensor.layout == Layout.TILE
    shape = _check_shape(shape, what, tiled)
    block_count = _check_block_count(block_count, what)
    dfb = _new_dfb(
        setup,
        name=_dfb_name(setup, f"dfb{len(setup.dfbs)}"),
        shape=shape,
        block_count=block_count,
        dtype=tensor.dtype,
        tile=tensor.tile_shape,
        tiled=tiled,
    )
    dfb.allocation_group = allocation_group
    return dfb


def make_circular_buffer_like(
    tensor: Tensor,
    shape: int | Sequence[int],
    buffer_factor: int = 2,
    *,
    block_count: int | None = None,
    allocation_group: DFBAllocationGroup | None = None,
    address_scope: object = None,
) -> DataflowBuffer:
    """Legacy spelling of ``make_dataflow_buffer_like`` (spec 0.5 / 0.15)."""
    return make_dataflow_buffer_like(
        tensor,
        shape,
        buffer_factor if block_count is None else block_count,
        allocation_group=allocation_group,
        address_scope=address_scope,
    )


class _CircularBufferType(type):
    """``isinstance(x, ttl.CircularBuffer)`` is ``isinstance(x, ttl.DataflowBuffer)``."""

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, DataflowBuffer)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, DataflowBuffer)


class CircularBuffer(metaclass=_CircularBufferType):
    """Legacy ``ttl.CircularBuffer(tensor, shape=, buffer_factor=2)`` (before spec 0.5): a DFB
    like ``tensor``, as ``ttl.make_dataflow_buffer_like(tensor, shape, block_count=...)``.
    Constructing one returns the DataflowBuffer; ``isinstance`` matches every DFB."""

    def __new__(  # type: ignore[misc]  # the legacy constructor builds a DataflowBuffer
        cls,
        tensor: Tensor,
        shape: int | Sequence[int],
        buffer_factor: int = 2,
        *,
        block_count: int | None = None,
    ) -> DataflowBuffer:
        return make_circular_buffer_like(tensor, shape, buffer_factor, block_count=block_count)


def make_dfb(
    dtype: object,
    shape: int | Sequence[int],
    block_count: int = 2,
    tile: Sequence[int] = (32, 32),
    *,
    allocation_group: DFBAllocationGroup | None = None,
    address_scope: object = None,
) -> DataflowBuffer:
    """A tiled DFB of an explicit data type (spec §Dataflow buffers, ``ttl.make_dfb``)."""
    what = "ttl.make_dfb"
    setup = current_setup(what)
    _check_group(allocation_group, what)
    dt = parse_dtype(dtype, f"{what}: dtype")
    shape = _check_shape(shape, what, True)
    block_count = _check_block_count(block_count, what)
    try:
        th, tw = (int(tile[0]), int(tile[1]))
    except (TypeError, ValueError, IndexError):
        raise InterfaceError(
            f"{what}: tile must be (height, width), got {tile!r}", loc=user_location()
        ) from None
    if th not in _TILE_HEIGHTS or tw not in _TILE_WIDTHS:
        raise InterfaceError(
            f"{what}: tile ({th}, {tw}) is not supported; heights {_TILE_HEIGHTS}, widths {_TILE_WIDTHS}",
            loc=user_location(),
        )
    tile_shape = TILE_32x32 if (th, tw) == (32, 32) else TileShape(th, tw)
    dfb = _new_dfb(
        setup,
        name=_dfb_name(setup, f"dfb{len(setup.dfbs)}"),
        shape=shape,
        block_count=block_count,
        dtype=dt,
        tile=tile_shape,
        tiled=True,
    )
    dfb.allocation_group = allocation_group
    return dfb


def _check_group(group, what: str) -> None:
    """``allocation_group=`` takes a ``ttl.make_dfb_allocation_group()`` identity (reference A.4)."""
    if group is not None and not isinstance(group, DFBAllocationGroup):
        raise InterfaceError(
            f"{what}(allocation_group=...): expected a ttl.DFBAllocationGroup "
            f"(ttl.make_dfb_allocation_group()), got {type(group).__name__}",
            loc=user_location(),
        )


KernelFn = TypeVar("KernelFn", bound=Callable[[], object])


def _kernel_decorator(
    kind: str, deco: str, kernel: object, verbose: object = None
) -> Callable[[KernelFn], KernelFn]:
    loc = user_location()

    def register(fn: KernelFn) -> KernelFn:
        if not callable(fn):
            raise InterfaceError(f"{deco}() decorates a kernel function", loc=loc)
        _check_plain_function(fn, deco)
        setup = current_setup(f"{deco}()")
        setup.kernels.append(KernelDecl(fn.__name__, kind, fn, kernel, loc))
        return fn

    return register


_DEFERRED = (
    (inspect.isasyncgenfunction, "an async generator function"),
    (inspect.iscoroutinefunction, "an async function"),
    (inspect.isgeneratorfunction, "a generator function"),
)


def _check_plain_function(fn: object, deco: str) -> None:
    """A generator or ``async`` kernel would only create an object when called, and its
    body would never run: refuse it at its ``def`` line."""
    for test, kind in _DEFERRED:
        if test(fn):
            raise KernelError(
                f"{deco}() kernel '{getattr(fn, '__name__', fn)}' is {kind}: calling it only "
                "creates an object, so its body would never run",
                loc=_def_line(fn),
                rule="kernel-function",
                hint="write kernels as plain functions (no yield, no async def)",
            )


def _def_line(fn: object) -> SourceLoc | None:
    """The line of ``def`` (``co_firstlineno`` is the first decorator's)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    line = code.co_firstlineno
    for offset in range(50):
        text = linecache.getline(code.co_filename, line + offset).lstrip()
        if text.startswith(("def ", "async def ")):
            return SourceLoc(code.co_filename, line + offset)
        if not text:
            break
    return SourceLoc(code.co_filename, line)


def compute(kernel: object = None, *, verbose: object = None) -> Any:
    """``@ttl.compute()``: declare the node's compute kernel function (spec §Kernels).

    ``kernel=`` selects its logical kernel (a ``ttl.KernelKind`` member, a ``ttl.Kernel``
    handle); the bare ``@ttl.compute`` form decorates directly.
    """
    if callable(kernel) and not _is_selector(kernel):  # bare @ttl.compute
        return _kernel_decorator("compute", "@ttl.compute", None)(kernel)
    return _kernel_decorator("compute", "@ttl.compute", kernel, verbose)


def datamovement(kernel: object = None, *, verbose: object = None) -> Any:
    """``@ttl.datamovement()``: declare a data-movement kernel function of the node."""
    if callable(kernel) and not _is_selector(kernel):
        return _kernel_decorator("data_movement", "@ttl.datamovement", None)(kernel)
    return _kernel_decorator("data_movement", "@ttl.datamovement", kernel, verbose)


def _is_selector(x) -> bool:
    return isinstance(x, (Kernel, KernelKind, PipeSourceKernel))


def _grid_and_node() -> tuple[tuple[int, ...], tuple[int, int]] | None:
    """(grid, this node) inside an operation body or kernel; None outside."""
    run = ACTIVE.run
    if run is not None and state.CURRENT is not None:
        return state.CURRENT.grid, (run.core.logical.x, run.core.logical.y)
    if SETUP_STACK:
        s = SETUP_STACK[-1]
        return s.grid, s.node
    return None


def _check_dims(dims) -> int:
    if not isinstance(dims, int) or isinstance(dims, bool) or dims < 1:
        raise InterfaceError(f"dims must be a positive int, got {dims!r}", loc=user_location())
    return dims


def grid_extent(grid: Sequence[int], dims: int) -> int | tuple[int, ...]:
    """``ttl.grid_size(dims)`` of a (columns, rows) grid: the one definition (also used by
    the DFB allocator's node-domain evaluation, ``split.domains``)."""
    g = (grid[0], grid[1])
    if dims == 1:
        return math.prod(g)
    return g + (1,) * (dims - 2)


def node_coords(grid: Sequence[int], xy: tuple[int, int], dims: int) -> int | tuple[int, ...]:
    """``ttl.node(dims)`` of node ``xy`` on a (columns, rows) grid: the one definition."""
    x, y = xy
    if dims == 1:
        return x * grid[1] + y
    return (x, y) + (0,) * (dims - 2)


def grid_size(dims: int = 2) -> Any:
    """The grid's size in ``dims`` dimensions (spec §Grid): fewer dims flatten the highest
    ones, more dims pad with 1.  ``dims=1`` gives the node count.  In host code after a
    launch it is the last operation's grid (as tt-lang's simulator does)."""
    dims = _check_dims(dims)
    inside = _grid_and_node()
    if inside is not None:
        return grid_extent(inside[0], dims)
    if state.LAST_GRID is not None:  # host code after a launch: that operation's grid
        return grid_extent(state.LAST_GRID, dims)
    raise KernelError(
        "ttl.grid_size() is used outside an @ttl.operation before any operation ran: it is the "
        "grid of the running operation (or, in host code, of the last one launched)",
        loc=user_location(),
    )


def node(dims: int = 2) -> Any:
    """This node's coordinates (0-based) in ``dims`` dimensions (spec §Node).

    ``dims=2`` gives ``(x, y)``; ``dims=1`` gives ``x * rows + y`` (the compiler's
    flattening); more dims pad with 0.
    """
    dims = _check_dims(dims)
    inside = _grid_and_node()
    if inside is None:
        raise KernelError(
            "ttl.node() is used outside an @ttl.operation: it is the coordinate of the node "
            "running the operation body or kernel",
            loc=user_location(),
        )
    return node_coords(inside[0], inside[1], dims)
