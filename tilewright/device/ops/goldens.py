"""Torch reference implementations ("goldens") of every block op in the registry.

Each golden has its op's calling convention -- block values as torch float32 tensors
(Python numbers where the op accepts scalars), scalar parameters as keywords -- and
returns a torch float32 tensor.  They are written from torch's own functions (the
spec's Appendix B links most activations to their torch modules) and, for the tiled
ops, from an independent torch formulation of the spec's tile semantics, so tests can
check the numpy implementations against them.  The ttnn layer uses the elementwise
ones as its goldens; for ttnn reductions use ``torch.sum``/``torch.amax`` on logical
tensors, not the tiled goldens here.

torch is an optional dependency: it is imported on first use (``tilewright.lazy.torch``),
never when the registry is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilewright.lazy import torch

__all__ = ["GOLDENS", "torch_call"]


def _torch() -> Any:
    return torch


# --- elementwise -----------------------------------------------------------------------------


def _exp(x, *, approx=False, scale=None, skip_clamp_check=False, iterations=8):
    return _torch().exp(x * scale if scale is not None else x)


def _relu_max(x, upper_limit):
    t = _torch()
    return t.relu(t.clamp(x, max=upper_limit))


def _relu_min(x, lower_limit):
    t = _torch()
    return t.relu(t.clamp(x, min=lower_limit))


def _prelu(x, alpha):
    t = _torch()
    return t.nn.functional.prelu(x, t.tensor([alpha], dtype=x.dtype))


def _selu(x, scale=1.0507009873554804934193349852946, alpha=1.6732632423543772848170429916717):
    return scale * _torch().nn.functional.elu(x, alpha=alpha)


def _threshold(x, threshold, value):  # spec semantics: x > threshold -> value
    t = _torch()
    return t.where(x > threshold, t.tensor(value, dtype=x.dtype), x)


def _signbit(x):  # hardware / torch semantics: 1 for negatives and -0
    return _torch().signbit(x).to(x.dtype)


def _typecast(x, dtype):
    t = _torch()
    return x.to(t.bfloat16).to(t.float32) if dtype == "bfloat16" else x.clone()


def _tensor(v: Any) -> Any:
    """Python number operand -> 0-d float32 tensor (torch ops need a tensor first)."""
    t = _torch()
    return v if isinstance(v, t.Tensor) else t.tensor(float(v), dtype=t.float32)


def _binary(name: str):
    def golden(a, b):
        return getattr(_torch(), name)(_tensor(a), _tensor(b))

    return golden


def _compare(name: str):
    def golden(a, b):
        return getattr(_torch(), name)(_tensor(a), _tensor(b)).to(_torch().float32)

    return golden


# --- tiled -----------------------------------------------------------------------------------


def _tiles(x, tile: Sequence[int]):
    """(..., R*th, C*tw) -> (..., R, C, th, tw)."""
    th, tw = tile
    *batch, rows, cols = x.shape
    return x.reshape(*batch, rows // th, th, cols // tw, tw).transpose(-3, -2)


def _untile(t):
    *batch, rows, cols, th, tw = t.shape
    return t.transpose(-3, -2).reshape(*batch, rows * th, cols * tw)


def _reduce(x, dims, tile, combine: str):
    torch = _torch()
    t = _tiles(x, tile)
    ndim = t.dim() - 2  # block rank
    norm = sorted({d % ndim for d in dims})
    for d in norm:  # step 1: tiles combined elementwise along each reduced grid dim
        t = t.sum(dim=d, keepdim=True) if combine == "sum" else t.amax(dim=d, keepdim=True)
    inner = torch.zeros_like(t)
    if ndim - 1 in norm and ndim - 2 in norm:
        scalar = t.sum(dim=(-2, -1)) if combine == "sum" else t.amax(dim=(-2, -1))
        inner[..., 0, 0] = scalar
    elif ndim - 1 in norm:  # row results in column 0
        inner[..., :, 0] = t.sum(dim=-1) if combine == "sum" else t.amax(dim=-1)
    elif ndim - 2 in norm:  # column results in row 0
        inner[..., 0, :] = t.sum(dim=-2) if combine == "sum" else t.amax(dim=-2)
    else:
        inner = t
    return _untile(inner)


def _reduce_sum(x, dims, shape=None, *, tile=(32, 32)):
    return _reduce(x, dims, tile, "sum")


def _reduce_max(x, dims, shape=None, *, tile=(32, 32)):
    return _reduce(x, dims, tile, "max")


def _broadcast(x, dims, shape, *, tile=(32, 32)):
    t = _tiles(x, tile)
    ndim = t.dim() - 2
    norm = {d % ndim for d in dims}
    th, tw = tile
    if ndim - 1 in norm:  # column 0 over the tile's columns
        t = t[..., :, :1].expand(*t.shape[:-1], tw)
    if ndim - 2 in norm:  # row 0 over the tile's rows
        t = t[..., :1, :].expand(*t.shape[:-2], th, t.shape[-1])
    return _untile(t.expand(*shape, th, tw).contiguous())


def _transpose(x, *, tile=(32, 32)):
    t = _tiles(x, tile)  # (R, C, th, tw): swap the grid, transpose each tile
    return _untile(t.transpose(0, 1).transpose(-2, -1).contiguous())


def _fill(value, shape, layout="tile", dtype="bfloat16", tile=(32, 32)):
    th, tw = (1, 1) if layout == "row_major" else tile
    *batch, rows, cols = shape
    return _torch().full((*batch, rows * th, cols * tw), float(value), dtype=_torch().float32)


def _squeeze(x, dims, *, tile=(32, 32)):
    t = _tiles(x, tile)
    ndim = t.dim() - 2
    for d in sorted({d % ndim for d in dims}, reverse=True):
        t = t.squeeze(d)
    return _untile(t)


def _unsqueeze(x, dims, *, tile=(32, 32)):
    t = _tiles(x, tile)
    ndim = t.dim() - 2 + len(dims)
    for d in sorted(d % ndim for d in dims):
        t = t.unsqueeze(d)
    return _untile(t)


def _matmul(a, b, *, transpose_rhs=False):
    return _torch().matmul(a, b.transpose(-1, -2) if transpose_rhs else b)


def _call(name: str):
    def golden(*args, **kwargs):
        return getattr(_torch(), name)(*args, **kwargs)

    return golden


def torch_call(path: str) -> Any:
    """The golden that is torch function ``path`` (``"erf"``, ``"nn.functional.gelu"``),
    looked up on first use (the registry names it; torch stays unimported)."""

    def golden(*args: Any, **kwargs: Any) -> Any:
        fn: Any = _torch()
        for part in path.split("."):
            fn = getattr(fn, part)
        return fn(*args, **kwargs)

    golden.__name__ = golden.__qualname__ = f"torch.{path}"
    return golden


def _nn(name: str):
    def golden(*args, **kwargs):
        return getattr(_torch().nn.functional, name)(*args, **kwargs)

    return golden


GOLDENS: dict[str, Any] = {
    "abs": _call("abs"),
    "neg": _call("neg"),
    "pow": lambda x, exponent: _torch().pow(x, exponent),
    "exp": _exp,
    "exp2": _call("exp2"),
    "expm1": _call("expm1"),
    "log": _call("log"),
    "logp1": _call("log1p"),
    "sqrt": _call("sqrt"),
    "square": _call("square"),
    "rsqrt": _call("rsqrt"),
    "recip": _call("reciprocal"),
    "rsub": lambda x, b: _torch().rsub(x, b),
    "tan": _call("tan"),
    "tanh": _call("tanh"),
    "atan": _call("atan"),
    "atanh": _call("atanh"),
    "sin": _call("sin"),
    "asin": _call("asin"),
    "asinh": _call("asinh"),
    "cos": _call("cos"),
    "acos": _call("acos"),
    "acosh": _call("acosh"),
    "relu": _call("relu"),
    "relu_max": _relu_max,
    "relu_min": _relu_min,
    "leaky_relu": lambda x, slope: _torch().nn.functional.leaky_relu(x, negative_slope=slope),
    "elu": lambda x, slope: _torch().nn.functional.elu(x, alpha=slope),
    "gelu": _nn("gelu"),
    "sigmoid": _call("sigmoid"),
    "celu": lambda x, alpha, alpha_recip: _torch().nn.functional.celu(x, alpha=alpha),
    "silu": _nn("silu"),
    "prelu": _prelu,
    "softplus": lambda x, beta, beta_reciprocal, threshold: _torch().nn.functional.softplus(
        x, beta=beta, threshold=threshold
    ),
    "softsign": _nn("softsign"),
    "hardsigmoid": _nn("hardsigmoid"),
    "hardtanh": lambda x, min, max: _torch().nn.functional.hardtanh(x, min_val=min, max_val=max),
    "selu": _selu,
    "frac": _call("frac"),
    "trunc": _call("trunc"),
    "round": lambda x, decimals=0: _torch().round(x, decimals=decimals),
    "floor": _call("floor"),
    "ceil": _call("ceil"),
    "clamp": lambda x, min, max: _torch().clamp(x, min=min, max=max),
    "threshold": _threshold,
    "sign": _call("sign"),
    "signbit": _signbit,
    "typecast": _typecast,
    "reduce_sum": _reduce_sum,
    "reduce_max": _reduce_max,
    "max": _call("maximum"),
    "min": _call("minimum"),
    "add": _binary("add"),
    "sub": _binary("sub"),
    "mul": _binary("mul"),
    "div": _binary("div"),
    "mod": _binary("remainder"),
    "floordiv": _binary("floor_divide"),
    "gt": _compare("gt"),
    "lt": _compare("lt"),
    "ge": _compare("ge"),
    "le": _compare("le"),
    "eq": _compare("eq"),
    "ne": _compare("ne"),
    "matmul": _matmul,
    "broadcast": _broadcast,
    "transpose": _transpose,
    "fill": _fill,
    "mask": lambda x, mask: _torch().where(mask == 1, _torch().zeros_like(x), x),
    "mask_posinf": lambda x, mask: _torch().where(
        mask == 1, _torch().full_like(x, float("inf")), x
    ),
    "where": lambda condition, true_value, false_value: _torch().where(
        condition == 1, true_value, false_value
    ),
    "squeeze": _squeeze,
    "unsqueeze": _unsqueeze,
}
"""Op name -> torch golden."""
