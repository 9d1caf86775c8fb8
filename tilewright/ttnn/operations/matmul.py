"""ttnn.matmul and ttnn.linear: batched matrix products on the virtual device.

Numerics (fidelity).  Operands are decoded to float32 and multiplied by the device op
registry's ``operator.matmul`` (numpy float32 ``matmul``) at the math fidelity of
``compute_kernel_config`` (``program_config.math_fidelity_of``; HiFi4 without one) through
``device/ops/numerics.fpu_product``, the kernel API's slicing (input_tensor_a is SrcB,
input_tensor_b SrcA): LoFi..HiFi3 drop low mantissa bits of both operands as the FPU's
phases do; at HiFi4 every product of two bfloat16 (or bfloat8_b / bfloat4_b) values is
exact in float32.  Products are accumulated in float32, as the device does with
``fp32_dest_acc_en``.  The result is rounded once, to the output dtype, on store;
``linear``'s bias and any ``activation`` are applied in float32 before that rounding
(fused, as on the device).  Not modelled: bfloat16 accumulation without
``fp32_dest_acc_en`` (the config's ``fp32_dest_acc_en``, ``math_approx_mode``,
``packer_l1_acc`` and ``dst_full_sync_en`` do not change the values here), TF32
truncation of float32 operands at HiFi4, and the accumulation order of the hardware
(tile by tile along K).  ``program_config`` is checked as tt-metal checks it; it,
``compute_kernel_config`` and ``core_grid`` shape the modelled device time
(``ttnn/device_time``).

Shapes follow torch.matmul: ``[..., M, K] @ [..., K, N] -> [..., M, N]`` with batch
dims broadcast; a 1-D operand is a row (left) or column (right) vector.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tilewright.device.ops import OpShapeError, get_op
from tilewright.device.ops.numerics import fpu_product
from tilewright.lazy import torch
from tilewright.ttnn.device_time import check_matmul_config
from tilewright.ttnn.operations.eltwise_rules import activation_rule, apply_activations
from tilewright.ttnn.operations.io import (
    FLOAT_DTYPES,
    broadcast_shape,
    broadcasts_to,
    common_device,
    integer_mode,
    read,
    store,
    tensor_arg,
    tile_arg,
)
from tilewright.ttnn.operations.registry import register_python_operation
from tilewright.ttnn.program_config import math_fidelity_of
from tilewright.ttnn.tensor import Tensor

__all__ = ["linear", "matmul"]

_MATMUL = get_op("matmul")


def _product_shape(op: str, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """Result shape of ``a @ b`` (torch rules), or an :class:`OpShapeError`."""
    if not a or not b:
        raise OpShapeError(f"{op}: operands must have rank 1 or more, got {list(a)} and {list(b)}")
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise OpShapeError(
            f"{op}: shapes {list(a)} and {list(b)} do not conform: input_tensor_a has "
            f"{a2[-1]} columns but input_tensor_b has {b2[-2]} rows",
            hint="transpose an operand with transpose_a= / transpose_b=",
        )
    batch = broadcast_shape(op, a2[:-2], b2[:-2])
    out = (*batch, a2[-2], b2[-1])
    if len(b) == 1:
        out = out[:-1]
    if len(a) == 1:
        out = out[:-2] + out[-1:] if len(b) > 1 else out[:-1]
    return out


def _dry_run(t: Tensor) -> bool:
    dev = t.device()
    perf = getattr(dev, "perf", None)
    return bool(perf is not None and perf.state.dry_run)


def _t(shape, transpose: bool) -> tuple[int, ...]:
    s = tuple(shape)
    return (*s[:-2], s[-1], s[-2]) if transpose and len(s) >= 2 else s


def _operand(values: np.ndarray, transpose: bool) -> np.ndarray:
    return np.swapaxes(values, -1, -2) if transpose and values.ndim >= 2 else values


def _run(
    op: str,
    input_tensor_a: Any,
    input_tensor_b: Any,
    bias: Any,
    *,
    transpose_a: bool,
    transpose_b: bool,
    memory_config: Any,
    dtype: Any,
    activation: Any,
    output_tile: Any,
    optional_output_tensor: Any,
    program_config: Any = None,
    compute_kernel_config: Any = None,
) -> Tensor:
    a = tensor_arg(op, "input_tensor_a", input_tensor_a)
    b = tensor_arg(op, "input_tensor_b", input_tensor_b)
    operands = {"input_tensor_a": a, "input_tensor_b": b}
    if bias is not None:
        operands["bias"] = tensor_arg(op, "bias", bias)
    placed = dict(operands)
    if optional_output_tensor is not None:
        placed["optional_output_tensor"] = tensor_arg(
            op, "optional_output_tensor", optional_output_tensor
        )
    common_device(op, placed)
    integer_mode(op, operands, FLOAT_DTYPES)
    check_matmul_config(op, a, b, program_config, compute_kernel_config, transpose_a, transpose_b)
    if activation is not None:
        activation_rule(op, activation)
    if _dry_run(a):  # tilewright run --dry-run: the shapes, no product (the time is modelled)
        sa = _t(a.shape, transpose_a)
        sb = _t(b.shape, transpose_b)
        shape = _product_shape(op, sa, sb)
        result = np.zeros(shape, dtype=np.float32)
    else:
        va = _operand(read(a, False), transpose_a)
        vb = _operand(read(b, False), transpose_b)
        shape = _product_shape(op, va.shape, vb.shape)
        lhs = va[np.newaxis, :] if va.ndim == 1 else va
        rhs = vb[:, np.newaxis] if vb.ndim == 1 else vb
        fidelity = math_fidelity_of(op, compute_kernel_config)
        result = fpu_product(_MATMUL.impl, lhs, rhs, fidelity).reshape(shape)
    if bias is not None:
        if not broadcasts_to(bias.shape, shape):
            raise OpShapeError(
                f"{op}: bias of shape {list(bias.shape)} does not broadcast to the product's "
                f"shape {list(shape)}"
            )
        if not _dry_run(a):
            result = result + read(bias, False)
    result = apply_activations(op, activation, result, integer=False)
    return store(
        op,
        result,
        a,
        dtype=dtype,
        memory_config=memory_config,
        output_tensor=optional_output_tensor,
        tile=tile_arg(op, output_tile),
    )


# --- goldens --------------------------------------------------------------------------------------


def _reference(
    a: Any, b: Any, bias: Any, transpose_a: bool, transpose_b: bool, activation: Any, op: str
) -> Any:
    f32 = torch.float32
    lhs = a.to(f32).transpose(-1, -2) if transpose_a and a.dim() >= 2 else a.to(f32)
    rhs = b.to(f32).transpose(-1, -2) if transpose_b and b.dim() >= 2 else b.to(f32)
    out = torch.matmul(lhs, rhs)
    if bias is not None:
        out = out + bias.to(f32)
    if activation is not None:
        out = activation_rule(op, activation).torch_reference()(out)
    return out.to(a.dtype)


def _matmul_golden(
    input_tensor_a: Any,
    input_tensor_b: Any,
    *args: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    activation: Any = None,
    **_ttnn_kwargs: Any,
) -> Any:
    """torch reference of ttnn.matmul (float32 product, returned in a's torch dtype)."""
    return _reference(
        input_tensor_a, input_tensor_b, None, transpose_a, transpose_b, activation, "ttnn.matmul"
    )


def _linear_golden(
    input_tensor_a: Any,
    input_tensor_b: Any,
    bias: Any = None,
    *args: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    activation: Any = None,
    **_ttnn_kwargs: Any,
) -> Any:
    """torch reference of ttnn.linear: ``a @ b + bias`` (b is [K, N], not torch's [N, K])."""
    return _reference(
        input_tensor_a, input_tensor_b, bias, transpose_a, transpose_b, activation, "ttnn.linear"
    )


# --- operations -----------------------------------------------------------------------------------


@register_python_operation(name="ttnn.matmul", golden_function=_matmul_golden)
def matmul(
    input_tensor_a: Any,
    input_tensor_b: Any,
    *,
    transpose_a: bool = False,
    transpose_b: bool = False,
    memory_config: Any = None,
    dtype: Any = None,
    program_config: Any = None,
    activation: Any = None,
    compute_kernel_config: Any = None,
    core_grid: Any = None,
    output_tile: Any = None,
    optional_output_tensor: Any = None,
    global_cb: Any = None,
    sub_device_id: Any = None,
) -> Tensor:
    """ttnn.matmul(input_tensor_a, input_tensor_b, *, transpose_a=False, transpose_b=False,
    memory_config=None, dtype=None, program_config=None, activation=None,
    compute_kernel_config=None, core_grid=None, output_tile=None, optional_output_tensor=None)

    Batched matrix product ``a @ b`` (torch.matmul shapes; ``transpose_a`` /
    ``transpose_b`` transpose the last two dims first).  Float dtypes only.  The result
    takes ``a``'s dtype (or ``dtype=``), layout, tile (or ``output_tile=``) and memory
    config; ``activation`` names a unary operation applied before the store.
    ``optional_output_tensor`` receives the result in place.

    Numerics: HiFi4 -- exact products of bfloat16 operands, float32 accumulation, one
    rounding to the output dtype (module docstring for what is not modelled).
    """
    return _run(
        "ttnn.matmul",
        input_tensor_a,
        input_tensor_b,
        None,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
        memory_config=memory_config,
        dtype=dtype,
        activation=activation,
        output_tile=output_tile,
        optional_output_tensor=optional_output_tensor,
        program_config=program_config,
        compute_kernel_config=compute_kernel_config,
    )


@register_python_operation(name="ttnn.linear", golden_function=_linear_golden)
def linear(
    input_tensor_a: Any,
    input_tensor_b: Any,
    bias: Any = None,
    *,
    transpose_a: bool = False,
    transpose_b: bool = False,
    memory_config: Any = None,
    dtype: Any = None,
    program_config: Any = None,
    activation: Any = None,
    compute_kernel_config: Any = None,
    core_grid: Any = None,
    output_tile: Any = None,
    optional_output_tensor: Any = None,
    global_cb: Any = None,
    sub_device_id: Any = None,
) -> Tensor:
    """ttnn.linear(input_tensor_a, input_tensor_b, bias=None, *, transpose_a=False,
    transpose_b=False, memory_config=None, dtype=None, program_config=None, activation=None,
    compute_kernel_config=None, core_grid=None, output_tile=None, optional_output_tensor=None)

    ``a @ b + bias`` then ``activation``, with ``b`` of shape ``[..., K, N]`` (ttnn's
    weight layout, not torch's ``[N, K]``) and ``bias`` broadcasting to the product
    (usually ``[1, N]``).  Same numerics as :func:`matmul`; the bias is added in float32
    before the single rounding.
    """
    return _run(
        "ttnn.linear",
        input_tensor_a,
        input_tensor_b,
        bias,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
        memory_config=memory_config,
        dtype=dtype,
        activation=activation,
        output_tile=output_tile,
        optional_output_tensor=optional_output_tensor,
        program_config=program_config,
        compute_kernel_config=compute_kernel_config,
    )
