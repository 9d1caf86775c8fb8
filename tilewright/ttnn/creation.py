"""ttnn tensor creation: ``rand``, ``randn``, ``full``, ``zeros``, ``ones``, ``empty`` and
their ``*_like`` forms, on one device or (with a mesh device) replicated on every chip."""

from __future__ import annotations

import sys

import numpy as np

from tilewright.ttnn.distributed import from_torch
from tilewright.ttnn.tensor import Tensor
from tilewright.ttnn.types import DRAM_MEMORY_CONFIG, DataType, Layout, as_data_type, is_float

__all__ = [
    "rand",
    "randn",
    "full",
    "zeros",
    "ones",
    "empty",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
]


def _make(values: np.ndarray, dtype, layout, device, memory_config, tile=None) -> Tensor:
    dtype = as_data_type(dtype)
    return from_torch(
        values, dtype=dtype, layout=layout, device=device, memory_config=memory_config, tile=tile
    )


def _shape(shape) -> tuple[int, ...]:
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(s) for s in shape)


_STREAM = np.random.default_rng(0x5EED)
"""Tilewright's own stream for unseeded draws when torch is not loaded (fixed seed: runs repeat)."""


def _draw(kind: str, shape: tuple[int, ...], seed: int | None) -> np.ndarray:
    """Float32 samples, ``kind`` "uniform" ([0, 1)) or "normal".

    A nonzero ``seed`` gives the same values on every call (numpy's PCG64 of the seed).
    Without one (``None`` or ttnn's ``0``) every call draws new values: from torch's global
    generator when torch is loaded -- so ``torch.manual_seed`` makes a program's tensors
    reproducible, as in tt-lang's simulator -- else from Tilewright's own stream.
    """
    if seed:
        rng = np.random.default_rng(seed)
        out = rng.uniform(size=shape) if kind == "uniform" else rng.standard_normal(size=shape)
        return out.astype(np.float32)
    torch = sys.modules.get("torch")
    if torch is not None:
        fn = torch.rand if kind == "uniform" else torch.randn
        return fn(shape, dtype=torch.float32).numpy()
    out = _STREAM.uniform(size=shape) if kind == "uniform" else _STREAM.standard_normal(size=shape)
    return out.astype(np.float32)


def rand(
    shape,
    *,
    device=None,
    dtype=DataType.BFLOAT16,
    layout=Layout.TILE,
    memory_config=DRAM_MEMORY_CONFIG,
    low: float = 0.0,
    high: float = 1.0,
    seed: int | None = 0,
    tile=None,
) -> Tensor:
    """Uniform values in [low, high).  ``seed`` as ttnn: 0 (the default) or None draws new
    values on every call, any other seed the same values every time (see ``_draw``; the
    values are not bit-equal to ttnn's device RNG)."""
    u = _draw("uniform", _shape(shape), seed)
    values = (np.float32(low) + np.float32(high - low) * u).astype(np.float32)
    return _make(values, dtype, layout, device, memory_config, tile)


def randn(
    shape,
    *,
    device=None,
    dtype=DataType.BFLOAT16,
    layout=Layout.TILE,
    memory_config=DRAM_MEMORY_CONFIG,
    seed: int | None = None,
    tile=None,
) -> Tensor:
    """Standard normal values; ``seed`` as in :func:`rand`."""
    values = _draw("normal", _shape(shape), seed)
    return _make(values, dtype, layout, device, memory_config, tile)


def full(
    shape,
    fill_value,
    dtype=DataType.BFLOAT16,
    layout=Layout.ROW_MAJOR,
    device=None,
    memory_config=None,
    tile=None,
) -> Tensor:
    dtype = as_data_type(dtype if dtype is not None else DataType.BFLOAT16)
    np_type = np.float32 if is_float(dtype) else np.int64
    values = np.full(_shape(shape), fill_value, dtype=np_type)
    return _make(
        values,
        dtype,
        layout if layout is not None else Layout.ROW_MAJOR,
        device,
        memory_config,
        tile,
    )


def zeros(
    shape,
    dtype=DataType.BFLOAT16,
    layout=Layout.ROW_MAJOR,
    device=None,
    memory_config=None,
    tile=None,
) -> Tensor:
    return full(shape, 0, dtype, layout, device, memory_config, tile)


def ones(
    shape,
    dtype=DataType.BFLOAT16,
    layout=Layout.ROW_MAJOR,
    device=None,
    memory_config=None,
    tile=None,
) -> Tensor:
    return full(shape, 1, dtype, layout, device, memory_config, tile)


def empty(
    shape,
    dtype=DataType.BFLOAT16,
    layout=Layout.ROW_MAJOR,
    device=None,
    memory_config=DRAM_MEMORY_CONFIG,
    tile=None,
) -> Tensor:
    """An uninitialised tensor (zero-filled here, so runs stay deterministic)."""
    return full(shape, 0, dtype, layout, device, memory_config, tile)


def _like(
    ref: Tensor, dtype: object, layout: object, device: object, memory_config: object
) -> tuple[object, object, object, object]:
    """(dtype, layout, device, memory_config): the arguments given, else ``ref``'s."""
    return (
        dtype if dtype is not None else ref.dtype,
        layout if layout is not None else ref.layout,
        device if device is not None else ref.device(),
        memory_config if memory_config is not None else ref.memory_config(),
    )


def zeros_like(ref: Tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    return full(
        ref.shape, 0, *_like(ref, dtype, layout, device, memory_config), tile=ref.tile_shape
    )


def ones_like(ref: Tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    return full(
        ref.shape, 1, *_like(ref, dtype, layout, device, memory_config), tile=ref.tile_shape
    )


def full_like(
    ref: Tensor, fill_value, dtype=None, layout=None, device=None, memory_config=None
) -> Tensor:
    return full(
        ref.shape,
        fill_value,
        *_like(ref, dtype, layout, device, memory_config),
        tile=ref.tile_shape,
    )


def empty_like(ref: Tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    return zeros_like(ref, dtype, layout, device, memory_config)


def rand_like(
    ref: Tensor, dtype=None, layout=None, device=None, memory_config=None, seed: int | None = 0
) -> Tensor:
    d, lay, dev, mc = _like(ref, dtype, layout, device, memory_config)
    return rand(
        ref.shape,
        device=dev,
        dtype=d,
        layout=lay,
        memory_config=mc or DRAM_MEMORY_CONFIG,
        seed=seed,
        tile=ref.tile_shape,
    )
