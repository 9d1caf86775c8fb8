"""ttnn shape operations: reshape, squeeze, unsqueeze, repeat, transpose, permute, concat.

Each rearranges the tensor's logical values (torch semantics) and stores them again in
the input's dtype, layout and memory config.  Values are exact for every dtype except
the block floats (bfloat8_b / bfloat4_b), whose shared exponents are recomputed for the
new tile contents -- as re-tiling on the device does.  Integer tensors are supported.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tilewright.device.ops import OpFormatError, OpParamError, OpShapeError
from tilewright.lazy import torch
from tilewright.ttnn.operations.io import (
    ALL_DTYPES,
    common_device,
    dtype_name,
    integer_mode,
    normalize_dim,
    normalize_dims,
    read,
    store,
    tensor_arg,
)
from tilewright.ttnn.operations.registry import register_python_operation
from tilewright.ttnn.tensor import Tensor

__all__ = ["concat", "permute", "repeat", "reshape", "squeeze", "transpose", "unsqueeze"]


def _values(op: str, input_tensor: Any) -> tuple[Tensor, np.ndarray]:
    """The checked input tensor and its exact values (float32 or int64)."""
    x = tensor_arg(op, "input_tensor", input_tensor)
    common_device(op, {"input_tensor": x})
    integer = integer_mode(op, {"input_tensor": x}, ALL_DTYPES)
    return x, read(x, integer)


def _ints(op: str, param: str, value: Any) -> tuple[int, ...]:
    """A shape-like argument (list, tuple, ttnn.Shape or one int) as a tuple of ints."""
    listed = value if isinstance(value, (list, tuple)) else (value,)
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in listed):
        raise OpParamError(f"{op}: {param} must be a list of ints, got {value!r}")
    return tuple(int(v) for v in listed)


def _torch() -> Any:
    return torch  # an optional dependency: imported on first use


# --- reshape --------------------------------------------------------------------------------------


def _reshape_golden(input_tensor: Any, shape: Any, *args: Any, **_ttnn_kwargs: Any) -> Any:
    return input_tensor.reshape(tuple(shape))


@register_python_operation(name="ttnn.reshape", golden_function=_reshape_golden)
def reshape(input_tensor: Any, shape: Any, *, memory_config: Any = None) -> Tensor:
    """ttnn.reshape(input_tensor, shape, *, memory_config=None)

    The same values in ``shape`` (row-major order; one entry may be -1).
    """
    op = "ttnn.reshape"
    x, values = _values(op, input_tensor)
    target = _ints(op, "shape", shape)
    known = math.prod(d for d in target if d != -1)
    if (
        sum(d == -1 for d in target) > 1
        or any(d < -1 for d in target)
        or (-1 not in target and known != values.size)
        or (-1 in target and (known == 0 or values.size % known))
    ):
        raise OpShapeError(
            f"{op}: cannot reshape {list(x.shape)} ({values.size} values) to {list(target)}"
        )
    return store(op, values.reshape(target), x, memory_config=memory_config)


# --- squeeze / unsqueeze --------------------------------------------------------------------------


def _squeeze_golden(input_tensor: Any, dim: Any = None, **_ttnn_kwargs: Any) -> Any:
    if dim is None:
        return input_tensor.squeeze()
    return input_tensor.squeeze(tuple(dim) if isinstance(dim, (list, tuple)) else dim)


@register_python_operation(name="ttnn.squeeze", golden_function=_squeeze_golden)
def squeeze(input_tensor: Any, dim: Any = None, *, memory_config: Any = None) -> Tensor:
    """ttnn.squeeze(input_tensor, dim=None, *, memory_config=None)

    Remove the dims in ``dim`` (an int, a list, or None for all) that have extent 1;
    named dims of another extent are kept (torch.squeeze).
    """
    op = "ttnn.squeeze"
    x, values = _values(op, input_tensor)
    axes = normalize_dims(op, dim, values.ndim)
    drop = tuple(a for a in axes if values.shape[a] == 1)
    return store(op, np.squeeze(values, axis=drop), x, memory_config=memory_config)


def _unsqueeze_golden(input_tensor: Any, dim: int, **_ttnn_kwargs: Any) -> Any:
    return input_tensor.unsqueeze(dim)


@register_python_operation(name="ttnn.unsqueeze", golden_function=_unsqueeze_golden)
def unsqueeze(input_tensor: Any, dim: int, *, memory_config: Any = None) -> Tensor:
    """ttnn.unsqueeze(input_tensor, dim, *, memory_config=None)

    Insert a dim of extent 1 at position ``dim`` of the result (``-rank-1 <= dim <= rank``).
    """
    op = "ttnn.unsqueeze"
    x, values = _values(op, input_tensor)
    axis = normalize_dim(op, dim, values.ndim + 1)
    return store(op, np.expand_dims(values, axis), x, memory_config=memory_config)


# --- repeat ---------------------------------------------------------------------------------------


def _repeat_golden(input_tensor: Any, repetition_vector: Any, **_ttnn_kwargs: Any) -> Any:
    return input_tensor.repeat(*tuple(repetition_vector))


@register_python_operation(name="ttnn.repeat", golden_function=_repeat_golden)
def repeat(input_tensor: Any, repetition_vector: Any, *, memory_config: Any = None) -> Tensor:
    """ttnn.repeat(input_tensor, repetition_vector, *, memory_config=None)

    Tile the tensor ``repetition_vector[i]`` times along dim ``i`` (torch.Tensor.repeat;
    a longer vector adds leading dims).
    """
    op = "ttnn.repeat"
    x, values = _values(op, input_tensor)
    reps = _ints(op, "repetition_vector", repetition_vector)
    if len(reps) < values.ndim or any(r < 0 for r in reps):
        raise OpShapeError(
            f"{op}: repetition_vector {list(reps)} needs one non-negative count per dim of "
            f"{list(x.shape)}"
        )
    return store(op, np.tile(values, reps), x, memory_config=memory_config)


# --- transpose / permute --------------------------------------------------------------------------


def _transpose_golden(input_tensor: Any, dim0: int, dim1: int, **_ttnn_kwargs: Any) -> Any:
    return input_tensor.transpose(dim0, dim1)


@register_python_operation(name="ttnn.transpose", golden_function=_transpose_golden)
def transpose(input_tensor: Any, dim0: int, dim1: int, *, memory_config: Any = None) -> Tensor:
    """ttnn.transpose(input_tensor, dim0, dim1, *, memory_config=None)

    Swap dims ``dim0`` and ``dim1``.
    """
    op = "ttnn.transpose"
    x, values = _values(op, input_tensor)
    a = normalize_dim(op, dim0, values.ndim, "dim0")
    b = normalize_dim(op, dim1, values.ndim, "dim1")
    return store(
        op, np.ascontiguousarray(np.swapaxes(values, a, b)), x, memory_config=memory_config
    )


def _permute_golden(input_tensor: Any, dims: Any, **_ttnn_kwargs: Any) -> Any:
    return input_tensor.permute(tuple(dims))


@register_python_operation(name="ttnn.permute", golden_function=_permute_golden)
def permute(input_tensor: Any, dims: Any, *, memory_config: Any = None) -> Tensor:
    """ttnn.permute(input_tensor, dims, *, memory_config=None)

    Reorder the dims: result dim ``i`` is input dim ``dims[i]``.
    """
    op = "ttnn.permute"
    x, values = _values(op, input_tensor)
    order = _ints(op, "dims", dims)
    norm = [normalize_dim(op, d, values.ndim, "dims") for d in order]
    if sorted(norm) != list(range(values.ndim)):
        raise OpShapeError(f"{op}: dims {list(order)} is not a permutation of {values.ndim} dims")
    return store(
        op, np.ascontiguousarray(np.transpose(values, norm)), x, memory_config=memory_config
    )


# --- concat ---------------------------------------------------------------------------------------


def _concat_golden(tensors: Any, dim: int = 0, **_ttnn_kwargs: Any) -> Any:
    return _torch().cat(list(tensors), dim=dim)


@register_python_operation(name="ttnn.concat", golden_function=_concat_golden)
def concat(tensors: Any, dim: int = 0, *, memory_config: Any = None) -> Tensor:
    """ttnn.concat(tensors, dim=0, *, memory_config=None)

    Join tensors of one rank, dtype and layout along ``dim``; the other dims must match.
    The result takes the first tensor's layout and memory config.
    """
    op = "ttnn.concat"
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise OpParamError(f"{op}: tensors must be a non-empty list of ttnn.Tensor")
    named = {f"tensors[{i}]": tensor_arg(op, f"tensors[{i}]", t) for i, t in enumerate(tensors)}
    first = next(iter(named.values()))
    common_device(op, named)
    integer = integer_mode(op, named, ALL_DTYPES)
    for param, t in named.items():
        if t.dtype != first.dtype or t.layout != first.layout:
            raise OpFormatError(
                f"{op}: {param} is {dtype_name(t.dtype)} {t.layout.name} but tensors[0] is "
                f"{dtype_name(first.dtype)} {first.layout.name}",
                hint="convert with ttnn.typecast / ttnn.to_layout first",
            )
    rank = len(first.shape)
    axis = normalize_dim(op, dim, rank)
    for param, t in named.items():
        rest = [s for i, s in enumerate(t.shape) if i != axis]
        if len(t.shape) != rank or rest != [s for i, s in enumerate(first.shape) if i != axis]:
            raise OpShapeError(
                f"{op}: {param} has shape {list(t.shape)}, which does not match tensors[0]'s "
                f"{list(first.shape)} outside dim {axis}"
            )
    joined = np.concatenate([read(t, integer) for t in named.values()], axis=axis)
    return store(op, joined, first, memory_config=memory_config)
