"""Operands in, results out: how every ttnn operation checks, reads and stores tensors.

An operation reads its ttnn tensors as numpy values (``Tensor.to_numpy``: float32 for
float dtypes, integers widened to int64 here), computes, and :func:`store` writes the
result as a new tensor -- or into ``output_tensor`` -- in the output dtype, so the result
is rounded to that dtype's format on store (bfloat16: round to nearest even; block
floats: tt-metal's packer).  Rules this module owns, written once for every operation:

* operands are ttnn tensors (or Python numbers where allowed), all on one device or all
  on the host; the result goes to the same place;
* dtype families: float (bfloat16, float32, bfloat8_b, bfloat4_b) and integer (int32,
  uint32, uint16, uint8); an operation lists the dtypes it supports and operands of one
  call must not mix the families;
* integer results wrap to the output dtype's width (two's complement), as integer
  arithmetic on the device does; non-integral values cannot be stored as integers;
* layout follows the first tensor operand; a TILE result of rank 0 or 1 (a full
  reduction, a squeeze to 1-D) is stored ROW_MAJOR, block floats then as float32
  (tt-metal digest §1.2: row-major block floats fall back to float32);
* memory config: ``memory_config=`` if given, else the first operand's; a sharded
  config is kept only when the result has that operand's shape and layout (otherwise
  the result is interleaved in the same buffer type).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from numbers import Real
from typing import Any

import numpy as np

from tilewright.device.formats import INTEGER_DTYPE, data_type_name, is_block_float
from tilewright.device.ops import OpFormatError, OpParamError, OpShapeError
from tilewright.errors import DeviceError
from tilewright.ttnn.convert import from_torch
from tilewright.ttnn.tensor import Tensor, encode_pages
from tilewright.ttnn.types import (
    DRAM_MEMORY_CONFIG,
    DataType,
    Layout,
    MemoryConfig,
    TensorMemoryLayout,
    Tile,
    data_format_of,
    is_float,
)

__all__ = [
    "ALL_DTYPES",
    "FLOAT_DTYPES",
    "INT_DTYPES",
    "Scalar",
    "broadcast_shape",
    "broadcasts_to",
    "check_dtype_arg",
    "common_device",
    "dtype_name",
    "guard_layout",
    "integer_mode",
    "normalize_dim",
    "normalize_dims",
    "read",
    "scalar_value",
    "store",
    "tensor_arg",
    "tile_arg",
]

Scalar = int | float
FLOAT_DTYPES: frozenset[DataType] = frozenset(d for d in DataType if is_float(d))
INT_DTYPES: frozenset[DataType] = frozenset(d for d in DataType if not is_float(d))
ALL_DTYPES: frozenset[DataType] = FLOAT_DTYPES | INT_DTYPES

_INT_STORAGE: dict[DataType, type[np.integer]] = {
    d: INTEGER_DTYPE[data_format_of(d)].type for d in INT_DTYPES
}
"""Integer dtype -> numpy type whose cast wraps a result to the dtype's width."""


def dtype_name(dtype: DataType) -> str:
    """``"bfloat16"``, ``"int32"``: ttnn's spelling."""
    return data_type_name(dtype)


def _names(dtypes: Iterable[DataType]) -> str:
    return ", ".join(sorted(dtype_name(d) for d in dtypes))


# --- operands ---------------------------------------------------------------------------------


def tensor_arg(op: str, param: str, value: Any) -> Tensor:
    """``value`` if it is a ttnn tensor, else an :class:`OpParamError` naming op and parameter."""
    if not isinstance(value, Tensor):
        raise OpParamError(
            f"{op}: {param} must be a ttnn.Tensor, got {type(value).__name__}",
            hint="make one with ttnn.from_torch(...)",
        )
    return value


def scalar_value(op: str, param: str, value: Any, integer: bool) -> Scalar:
    """A Python number operand, checked against the operation's dtype family."""
    if not isinstance(value, (Real, np.number)):
        raise OpParamError(
            f"{op}: {param} must be a ttnn.Tensor or a number, got {type(value).__name__}"
        )
    number = float(value)
    if not integer:
        return number
    if isinstance(value, (int, np.integer)):
        return int(value)
    if not number.is_integer():
        raise OpFormatError(
            f"{op}: {param}={value!r} is not an integer but the tensor operands are integers",
            hint="typecast the tensor to a float dtype with ttnn.typecast",
        )
    return int(number)


def integer_mode(op: str, operands: Mapping[str, Tensor], allowed: frozenset[DataType]) -> bool:
    """Check every operand's dtype against ``allowed``; True if they are integers.

    Raises:
        OpFormatError: an unsupported dtype, or float and integer operands mixed.
    """
    for param, tensor in operands.items():
        if tensor.dtype not in allowed:
            raise OpFormatError(
                f"{op} does not support {dtype_name(tensor.dtype)} tensors ({param})",
                hint=f"supported dtypes: {_names(allowed)}; convert with ttnn.typecast",
            )
    families = {tensor.dtype in INT_DTYPES for tensor in operands.values()}
    if len(families) > 1:
        kinds = ", ".join(f"{p}: {dtype_name(t.dtype)}" for p, t in operands.items())
        raise OpFormatError(
            f"{op}: operands mix float and integer dtypes ({kinds})",
            hint="typecast the operands to one dtype family with ttnn.typecast",
        )
    return families == {True}


def common_device(op: str, operands: Mapping[str, Tensor]):
    """The device every operand is on (None: all on the host).

    Raises:
        DeviceError: operands on different devices, or some on the host.
    """
    placed = {param: tensor.device() for param, tensor in operands.items()}
    devices = {id(d): d for d in placed.values()}
    if len(devices) > 1:
        where = ", ".join(
            f"{p} on {'the host' if d is None else f'device {d.device_id}'}"
            for p, d in placed.items()
        )
        raise DeviceError(
            f"{op}: tensors must be on one device ({where})",
            hint="move them with ttnn.to_device(tensor, device) or ttnn.from_device(tensor)",
        )
    return next(iter(devices.values()), None)


def read(tensor: Tensor, integer: bool) -> np.ndarray:
    """The tensor's logical values: float32, or int64 for integer dtypes."""
    values = tensor.to_numpy()
    return values.astype(np.int64) if integer else values.astype(np.float32, copy=False)


def broadcast_shape(op: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    """numpy broadcasting of operand shapes, or an :class:`OpShapeError` naming op and shapes."""
    try:
        return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        listed = " and ".join(str(list(s)) for s in shapes)
        raise OpShapeError(
            f"{op}: shapes {listed} do not broadcast",
            hint="dimensions must match or be 1, aligned from the last dimension",
        ) from None


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    """True if ``shape`` broadcasts to exactly ``target``."""
    try:
        return tuple(np.broadcast_shapes(tuple(shape), tuple(target))) == tuple(target)
    except ValueError:
        return False


def normalize_dim(op: str, dim: Any, rank: int, param: str = "dim") -> int:
    """A dimension index in ``[-rank, rank)`` as a non-negative int."""
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise OpParamError(f"{op}: {param} must be an int, got {type(dim).__name__}")
    if not -rank <= dim < rank:
        raise OpShapeError(
            f"{op}: {param}={dim} is out of range for a rank-{rank} tensor "
            f"(valid: {-rank}..{rank - 1})"
        )
    return int(dim) % rank


def normalize_dims(op: str, dims: Any, rank: int, param: str = "dim") -> tuple[int, ...]:
    """``None`` (every dim), an int or a sequence of ints -> sorted unique dims."""
    if dims is None:
        return tuple(range(rank))
    listed = dims if isinstance(dims, (list, tuple)) else [dims]
    norm = [normalize_dim(op, d, rank, param) for d in listed]
    if len(set(norm)) != len(norm):
        raise OpShapeError(f"{op}: {param}={list(listed)} names a dimension twice")
    return tuple(sorted(norm))


def check_dtype_arg(op: str, dtype: Any) -> DataType | None:
    """``dtype=`` as a :class:`DataType` (None stays None)."""
    if dtype is None:
        return None
    try:
        return DataType(dtype)
    except (ValueError, TypeError):
        raise OpParamError(f"{op}: dtype must be a ttnn.DataType, got {dtype!r}") from None


# --- results ----------------------------------------------------------------------------------


def guard_layout(rank: int, layout: Layout, dtype: DataType) -> tuple[Layout, DataType]:
    """(layout, dtype) a rank-``rank`` result can be stored in (module docstring)."""
    if Layout(layout) == Layout.TILE and rank < 2:
        return Layout.ROW_MAJOR, (
            DataType.FLOAT32 if is_block_float(data_format_of(dtype)) else dtype
        )
    return Layout(layout), DataType(dtype)


def _storable(op: str, values: np.ndarray, dtype: DataType) -> np.ndarray:
    """Values in the numpy type that encodes as ``dtype`` (integers wrapped to its width)."""
    values = np.asarray(values)
    if is_float(dtype):
        return values.astype(np.float32, copy=False)
    if values.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            integral = np.isfinite(values) & (values == np.round(values))
        if not integral.all():
            raise OpFormatError(
                f"{op}: the result has non-integer values; they cannot be stored as "
                f"{dtype_name(dtype)}",
                hint="request a float output dtype (dtype=ttnn.bfloat16)",
            )
    return values.astype(np.int64).astype(_INT_STORAGE[dtype])


def _result_memory_config(
    op: str, like: Tensor, shape: tuple[int, ...], layout: Layout, explicit: Any
) -> MemoryConfig | None:
    if like.device() is None:
        if explicit is not None:
            raise OpParamError(
                f"{op}: memory_config is given but the operands are host tensors",
                hint="move the operands to a device with ttnn.to_device first",
            )
        return None
    if explicit is not None:
        if not isinstance(explicit, MemoryConfig):
            raise OpParamError(
                f"{op}: memory_config must be a ttnn.MemoryConfig, got {type(explicit).__name__}"
            )
        return explicit
    config = like.memory_config() or DRAM_MEMORY_CONFIG
    if config.is_sharded() and (tuple(shape) != tuple(like.shape) or layout != like.layout):
        return MemoryConfig(TensorMemoryLayout.INTERLEAVED, config.buffer_type)
    return config


def store(
    op: str,
    values: np.ndarray,
    like: Tensor,
    *,
    dtype: Any = None,
    memory_config: Any = None,
    output_tensor: Any = None,
    tile: Any = None,
) -> Tensor:
    """Store ``values`` as the result of ``op`` (module docstring for the rules).

    Args:
        op: the operation's name, for errors.
        values: the result (float32 or integer numpy array).
        like: the operand whose layout, tile, device and memory config the result takes.
        dtype: output dtype (default: ``like``'s).
        memory_config: output memory config (default: ``like``'s, see module docstring).
        output_tensor: an existing tensor to write into (its dtype, layout and placement win).
        tile: output tile shape (default: ``like``'s).
    """
    out_dtype = check_dtype_arg(op, dtype)
    if output_tensor is not None:
        return _write_into(op, values, output_tensor, out_dtype, memory_config)
    out_dtype = like.dtype if out_dtype is None else out_dtype
    layout, out_dtype = guard_layout(values.ndim, like.layout, out_dtype)
    config = _result_memory_config(op, like, values.shape, layout, memory_config)
    return from_torch(
        _storable(op, values, out_dtype),
        dtype=out_dtype,
        layout=layout,
        tile=like.tile_shape if tile is None else tile,
        device=like.device(),
        memory_config=config,
    )


def _write_into(
    op: str, values: np.ndarray, out: Any, dtype: DataType | None, memory_config: Any
) -> Tensor:
    out = tensor_arg(op, "output_tensor", out)
    if tuple(out.shape) != tuple(values.shape):
        raise OpShapeError(
            f"{op}: output_tensor has shape {list(out.shape)} but the result has shape "
            f"{list(values.shape)}"
        )
    if dtype is not None and dtype != out.dtype:
        raise OpFormatError(
            f"{op}: dtype={dtype_name(dtype)} conflicts with output_tensor's "
            f"{dtype_name(out.dtype)}"
        )
    if memory_config is not None and memory_config != out.memory_config():
        raise OpParamError(f"{op}: memory_config conflicts with output_tensor's memory config")
    device = out.device()
    pages = encode_pages(
        _storable(op, values, out.dtype),
        out.dtype,
        out.layout,
        out.tile_shape,
        0.0,
        device.dram_alignment if device is not None else 32,
    )
    out.replace_pages(pages)
    return out


def tile_arg(op: str, tile: Any) -> Any:
    """``output_tile=``: None, a ``ttnn.Tile`` or an ``(h, w)`` pair."""
    if tile is None or isinstance(tile, Tile):
        return tile
    if isinstance(tile, (list, tuple)) and len(tile) == 2:
        return Tile(tuple(tile))
    raise OpParamError(f"{op}: output_tile must be a ttnn.Tile or (height, width), got {tile!r}")
