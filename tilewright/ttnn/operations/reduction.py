"""ttnn reductions over logical dimensions: sum, mean, max, min; and softmax.

These reduce the tensor's *logical* values (torch semantics), unlike the device op
registry's ``reduce_sum`` / ``reduce_max``, whose tiled two-step semantics belong to
TT-Lang blocks (see ``tilewright.device.ops.tiled``); so the reductions are numpy
here, in float32 (int64 for integer sum / max / min, wrapped to the output width on
store).  ``softmax`` uses the registry's ``math.exp`` and ``operator.div`` on the
max-shifted values.  Results are rounded to the input's dtype on store.
``dim=None`` reduces every dimension; with ``keepdim=False`` that gives a rank-0
tensor, stored ROW_MAJOR (``io.guard_layout``).

``compute_kernel_config``: float ``sum`` and ``mean`` read its ``math_fidelity``
(``program_config.math_fidelity_of``; HiFi4 without a config).  On the device they are
``reduce_tile`` SUM / AVG, whose scaler multiply runs on the FPU with the input in SrcA
and the scaler (1.0, or 1/N for the mean) in SrcB; below HiFi4 both are sliced as the
kernel API slices them (``device/ops/numerics.fpu_product``: the sum of each slice of the
input times the scaler's slice).  At HiFi4 the values are the plain numpy ones
(``np.sum``, ``np.mean``: the mean divides by N).  ``max`` / ``min`` run no fidelity
phases (LLK reduce MAX), and nothing else of the config changes values here;
``softmax`` accepts the config and does not read it (its exp, sum and division are the
float32 registry ops; the fidelity of its FPU steps is not modelled).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilewright.device.ops import get_op
from tilewright.device.ops.numerics import HIFI4, fpu_product
from tilewright.lazy import torch
from tilewright.ttnn.operations.io import (
    ALL_DTYPES,
    FLOAT_DTYPES,
    common_device,
    dtype_name,
    integer_mode,
    normalize_dim,
    normalize_dims,
    read,
    store,
    tensor_arg,
)
from tilewright.ttnn.operations.registry import Operation, register_python_operation
from tilewright.ttnn.program_config import math_fidelity_of
from tilewright.ttnn.tensor import Tensor
from tilewright.ttnn.types import DataType

__all__ = ["max_", "mean", "min_", "softmax", "sum_"]


@dataclass(frozen=True, slots=True)
class ReduceRule:
    """One reduction: ttnn name, numpy reduction, torch reference name, dtypes."""

    name: str
    numpy_fn: Callable[..., np.ndarray]
    torch_name: str
    dtypes: frozenset[DataType]
    doc: str


_RULES: dict[str, ReduceRule] = {
    rule.name: rule
    for rule in (
        ReduceRule("sum", np.sum, "sum", ALL_DTYPES, "Sum over dim (float32 accumulation)."),
        ReduceRule("mean", np.mean, "mean", FLOAT_DTYPES, "Mean over dim (float32)."),
        ReduceRule("max", np.max, "amax", ALL_DTYPES, "Maximum over dim."),
        ReduceRule("min", np.min, "amin", ALL_DTYPES, "Minimum over dim."),
    )
}


def _torch() -> Any:
    return torch  # an optional dependency: imported on first use


def _golden(rule: ReduceRule) -> Callable[..., Any]:
    def golden(
        input_tensor: Any, dim: Any = None, keepdim: bool = False, **_ttnn_kwargs: Any
    ) -> Any:
        torch = _torch()
        dims = tuple(range(input_tensor.dim())) if dim is None else dim
        dims = tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)
        source = (
            input_tensor.to(torch.float32) if input_tensor.is_floating_point() else input_tensor
        )
        out = getattr(torch, rule.torch_name)(source, dim=dims, keepdim=keepdim)
        return out.to(input_tensor.dtype)

    golden.__name__ = f"{rule.name}_golden"
    return golden


def _reduction(name: str) -> Operation:
    rule = _RULES[name]
    op = f"ttnn.{name}"

    def function(
        input_tensor: Any,
        dim: Any = None,
        keepdim: bool = False,
        *,
        memory_config: Any = None,
        compute_kernel_config: Any = None,
    ) -> Tensor:
        x = tensor_arg(op, "input_tensor", input_tensor)
        common_device(op, {"input_tensor": x})
        integer = integer_mode(op, {"input_tensor": x}, rule.dtypes)
        axes = normalize_dims(op, dim, len(x.shape))
        fidelity = math_fidelity_of(op, compute_kernel_config)
        values = read(x, integer)
        with np.errstate(all="ignore"):
            if integer or fidelity == HIFI4 or name not in ("sum", "mean"):
                result = np.asarray(rule.numpy_fn(values, axis=axes, keepdims=bool(keepdim)))
            else:
                result = _sliced_sum(values, axes, bool(keepdim), name == "mean", fidelity)
        return store(op, result, x, memory_config=memory_config)

    types = ", ".join(sorted(dtype_name(d) for d in rule.dtypes))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (
        f"{op}(input_tensor, dim=None, keepdim=False, *, memory_config=None, "
        f"compute_kernel_config=None)\n\n{rule.doc}  ``dim`` is None (all dims), an int or a "
        f"list of ints; the result keeps the input's dtype.\n\nSupported dtypes: {types}.  "
        f"Golden: torch.{rule.torch_name} in float32, returned in the input's torch dtype."
    )
    return register_python_operation(name=op, golden_function=_golden(rule))(function)


def _sliced_sum(
    values: np.ndarray, axes: Any, keepdim: bool, mean: bool, fidelity: int
) -> np.ndarray:
    """``sum(x) * scaler`` at a fidelity below HiFi4: x is SrcA, the scaler SrcB."""
    count = int(np.prod([values.shape[a] for a in axes]))
    scaler = np.asarray(1.0 / count if mean else 1.0, dtype=np.float32)

    def scaled(s: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.asarray(np.sum(v, axis=axes, keepdims=keepdim) * s, dtype=np.float32)

    return fpu_product(scaled, scaler, np.asarray(values, dtype=np.float32), fidelity)


sum_ = _reduction("sum")  # ttnn.sum; bound with a trailing underscore to keep the builtins
mean = _reduction("mean")
max_ = _reduction("max")
min_ = _reduction("min")


# --- softmax --------------------------------------------------------------------------------------

_EXP = get_op("exp")
_DIV = get_op("div")


def _softmax_golden(input_tensor: Any, dim: int = -1, **_ttnn_kwargs: Any) -> Any:
    torch = _torch()
    return torch.softmax(input_tensor.to(torch.float32), dim=dim).to(input_tensor.dtype)


@register_python_operation(name="ttnn.softmax", golden_function=_softmax_golden)
def softmax(
    input_tensor: Any,
    dim: int = -1,
    *,
    memory_config: Any = None,
    compute_kernel_config: Any = None,
    numeric_stable: bool = True,
) -> Tensor:
    """ttnn.softmax(input_tensor, dim=-1, *, memory_config=None, compute_kernel_config=None,
    numeric_stable=True)

    ``exp(x - max) / sum(exp(x - max))`` along ``dim``, in float32 with the device op
    registry's ``math.exp`` and ``operator.div``; rounded to the input dtype on store.
    The max shift is always applied (``numeric_stable`` does not change the value
    mathematically).  Float dtypes only.
    """
    op = "ttnn.softmax"
    x = tensor_arg(op, "input_tensor", input_tensor)
    common_device(op, {"input_tensor": x})
    integer_mode(op, {"input_tensor": x}, FLOAT_DTYPES)
    axis = normalize_dim(op, dim, len(x.shape))
    values = read(x, False)
    with np.errstate(all="ignore"):
        shifted = values - np.max(values, axis=axis, keepdims=True)
        numerators = _EXP.impl(shifted)
        result = _DIV.impl(numerators, np.sum(numerators, axis=axis, keepdims=True))
    return store(op, result, x, memory_config=memory_config)
