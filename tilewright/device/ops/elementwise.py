"""Elementwise block math: the numpy implementations of unary, binary and ternary ops.

Every function takes float32 block values (see ``tilewright.device.ops``; Python
numbers where the op ``accepts_scalar``) plus the op's scalar parameters as keywords,
and returns a new float32 array.  Tiles play no role here: an elementwise op on a
block is the op on its logical elements, padding included.  Shapes are not checked
(``shapes.result_shape`` does that once per expression); floating-point exceptions
are silent, as on the device (``inf``/``nan`` come out, no warnings).

Semantics follow the TT-Lang specification v0.20, Appendix B (function list and
one-line meanings; "[Name](pytorch link)" entries mean the torch function).  Where
the spec is terse we used the tt-lang simulator (``python/sim/math.py``) and ttnn;
the decisions are in each docstring.  Parameters the spec types ``NaturalInt`` but
that are real-valued (slopes, limits, thresholds) accept any real number.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from tilewright.device.formats.bf16 import round_to_bf16

from .sfpu_algorithms import sfpu_value
from .special import erf

__all__ = [
    "abs_",
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "ceil",
    "celu",
    "clamp",
    "cos",
    "div",
    "elu",
    "eq",
    "exp",
    "exp2",
    "expm1",
    "floor",
    "floordiv",
    "frac",
    "ge",
    "gelu",
    "gt",
    "hardsigmoid",
    "hardtanh",
    "le",
    "leaky_relu",
    "log",
    "logp1",
    "lt",
    "mask",
    "mask_posinf",
    "max_",
    "min_",
    "mod",
    "mul",
    "ne",
    "neg",
    "pow_",
    "prelu",
    "recip",
    "relu",
    "relu_max",
    "relu_min",
    "round_",
    "rsqrt",
    "rsub",
    "selu",
    "sigmoid",
    "sign",
    "signbit",
    "silu",
    "sin",
    "softplus",
    "softsign",
    "sqrt",
    "square",
    "sub",
    "tan",
    "tanh",
    "threshold",
    "trunc",
    "typecast",
    "where",
]  # fmt: skip

F32 = np.float32


def kernel(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """Make ``fn`` silent on floating-point exceptions and float32 out."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with np.errstate(all="ignore"):
            return np.asarray(fn(*args, **kwargs), dtype=F32)

    return run


def _unary(ufunc: np.ufunc, doc: str) -> Callable[[np.ndarray], np.ndarray]:
    @kernel
    def op(x: np.ndarray) -> np.ndarray:
        return ufunc(x)

    op.__doc__ = doc
    op.__name__ = op.__qualname__ = ufunc.__name__
    return op


def _binary(ufunc: np.ufunc, doc: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    @kernel
    def op(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return ufunc(a, b)

    op.__doc__ = doc
    op.__name__ = op.__qualname__ = ufunc.__name__
    return op


def _compare(ufunc: np.ufunc, doc: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    @kernel
    def op(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return ufunc(a, b).astype(F32)

    op.__doc__ = doc
    op.__name__ = op.__qualname__ = ufunc.__name__
    return op


# --- basic unary -----------------------------------------------------------------------------

abs_ = _unary(np.abs, "``abs(x)`` / ``ttl.math.abs``: absolute value.")
neg = _unary(np.negative, "``-x`` / ``ttl.math.neg``: negation.")
exp2 = _unary(np.exp2, "``2**x``.")
expm1 = _unary(np.expm1, "``exp(x) - 1`` (accurate near 0).")


def _sfpu_program(stem: str, doc: str) -> Callable[[np.ndarray], np.ndarray]:
    """The op as the SFPU's precise program computes it with a float32 DST
    (``sfpu_algorithms``): the numerics of compiled TT-Lang kernels, so the interpreter's
    block math gives the same bits."""

    @kernel
    def op(x: np.ndarray) -> np.ndarray:
        return sfpu_value(stem, x, approx=False, fp32_dest=True)

    op.__doc__ = doc
    op.__name__ = op.__qualname__ = stem
    return op


log = _sfpu_program("log", "Natural logarithm (``-inf`` at 0, NaN below and at ``-0``).")
logp1 = _unary(np.log1p, "``log(x + 1)`` (torch ``log1p``).")
sqrt = _sfpu_program("sqrt", "Square root (NaN below 0 and at ``-0``).")
square = _unary(np.square, "``x * x``.")
recip = _sfpu_program("recip", "``1 / x`` (``recip(NaN)`` is a signed 0, as the SFPU's).")
tan = _unary(np.tan, "Tangent.")
atan = _unary(np.arctan, "Arctangent.")
atanh = _unary(np.arctanh, "Hyperbolic arctangent.")
sin = _unary(np.sin, "Sine.")
asin = _unary(np.arcsin, "Arcsine.")
asinh = _unary(np.arcsinh, "Hyperbolic arcsine.")
cos = _unary(np.cos, "Cosine.")
acos = _unary(np.arccos, "Arccosine.")
acosh = _unary(np.arccosh, "Hyperbolic arccosine.")
floor = _unary(np.floor, "Floor.")
ceil = _unary(np.ceil, "Ceil.")
trunc = _unary(np.trunc, "Integer part, rounded towards zero.")
sign = _unary(np.sign, "1 for positive, -1 for negative, 0 for (either) zero; NaN stays NaN.")


@kernel
def pow_(x: np.ndarray, exponent: int) -> np.ndarray:
    """``x ** exponent`` / ``ttl.math.pow`` with a natural-number exponent (``x**0`` is 1)."""
    return np.power(x, exponent)


@kernel
def exp(
    x: np.ndarray,
    *,
    approx: bool = False,
    scale: float | None = None,
    skip_clamp_check: bool = False,
    iterations: int = 8,
) -> np.ndarray:
    """``e**x``, or ``e**(scale * x)`` when ``scale`` is given (spec v0.20).

    The value is the SFPU's precise exp with a float32 DST (``sfpu_algorithms.exp_fp32``),
    as compiled kernels compute it.  The hardware flags do not change it: compiled
    TT-Lang lowers ``exp`` to the precise ``exp_tile`` whatever ``approx`` says, so the
    interpreter does too (the approximate program is ``math_approx_mode`` of C++ and
    kernel-API kernels); ``skip_clamp_check`` only matters for the approximation's inputs
    below ~-88.5; ``iterations`` is the SFPU lane count.  ``scale`` multiplies ``x`` in
    float32 before the exponential, as the compiler's canonicalisation of ``exp(c * x)``
    does.
    """
    if scale is not None:
        x = x * F32(scale)
    return sfpu_value("exp", x, approx=False, fp32_dest=True)


rsqrt = _sfpu_program("rsqrt", "``1 / sqrt(x)`` (NaN below 0 and at ``-0``).")


@kernel
def rsub(x: np.ndarray, b: int) -> np.ndarray:
    """``b - x`` with the scalar ``b`` (spec: ``rsub(a, b)`` "Subtract a from b")."""
    return F32(b) - x


# --- activations -----------------------------------------------------------------------------


@kernel
def relu(x: np.ndarray) -> np.ndarray:
    """``max(x, 0)``."""
    return np.maximum(x, F32(0.0))


@kernel
def relu_max(x: np.ndarray, upper_limit: float) -> np.ndarray:
    """``relu(min(x, upper_limit))`` (spec), i.e. ``x`` clamped to ``[0, upper_limit]``."""
    return np.maximum(np.minimum(x, F32(upper_limit)), F32(0.0))


@kernel
def relu_min(x: np.ndarray, lower_limit: float) -> np.ndarray:
    """``relu(max(x, lower_limit))`` (spec)."""
    return np.maximum(np.maximum(x, F32(lower_limit)), F32(0.0))


@kernel
def leaky_relu(x: np.ndarray, slope: float) -> np.ndarray:
    """``x`` for ``x >= 0``, else ``slope * x`` (torch LeakyReLU, ``negative_slope=slope``)."""
    return np.where(x >= 0, x, x * F32(slope))


@kernel
def prelu(x: np.ndarray, alpha: float) -> np.ndarray:
    """PReLU with one scalar weight: ``x`` for ``x >= 0``, else ``alpha * x``."""
    return np.where(x >= 0, x, x * F32(alpha))


@kernel
def elu(x: np.ndarray, slope: float) -> np.ndarray:
    """ELU: ``x`` for ``x > 0``, else ``slope * (exp(x) - 1)`` (torch ELU ``alpha=slope``)."""
    return np.where(x > 0, x, F32(slope) * np.expm1(x))


@kernel
def celu(x: np.ndarray, alpha: float, alpha_recip: float) -> np.ndarray:
    """CELU: ``x`` for ``x > 0``, else ``alpha * (exp(x * alpha_recip) - 1)``.

    The device kernel takes ``1/alpha`` precomputed (``alpha_recip``) and multiplies by
    it; so does this one (torch divides by ``alpha``: equal when the caller passes
    ``alpha_recip == 1/alpha``, as the spec intends).
    """
    return np.where(x > 0, x, F32(alpha) * np.expm1(x * F32(alpha_recip)))


@kernel
def selu(
    x: np.ndarray,
    scale: float = 1.0507009873554804934193349852946,
    alpha: float = 1.6732632423543772848170429916717,
) -> np.ndarray:
    """SELU: ``scale * (x if x > 0 else alpha * (exp(x) - 1))``.

    The spec requires ``scale`` and ``alpha``; the defaults (torch's constants) keep the
    parameterless ``selu(x)`` of older simulator versions working.
    """
    return F32(scale) * np.where(x > 0, x, F32(alpha) * np.expm1(x))


@kernel
def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU ``x/2 * (1 + erf(x / sqrt(2)))`` (torch's default, ``approximate='none'``;
    ttnn's ``gelu`` default ``fast_and_approximate_mode=False`` is also the erf form)."""
    wide = x.astype(np.float64)
    return 0.5 * wide * (1.0 + erf(wide * np.sqrt(0.5)))


sigmoid = _sfpu_program("sigmoid", "``1 / (1 + exp(-x))``.")
tanh = _sfpu_program("tanh", "Hyperbolic tangent.")


@kernel
def silu(x: np.ndarray) -> np.ndarray:
    """SiLU (swish): ``x * sigmoid(x)``."""
    return x / (F32(1.0) + np.exp(-x))


@kernel
def softplus(x: np.ndarray, beta: float, beta_reciprocal: float, threshold: float) -> np.ndarray:
    """Softplus: ``log(1 + exp(beta*x)) * beta_reciprocal``, and ``x`` where ``beta*x > threshold``.

    The threshold rule is torch's (the spec links torch Softplus; the newest simulator
    drops it, an older one used torch's).  As on the device, the division by ``beta``
    is a multiplication by the caller's ``beta_reciprocal``.
    """
    scaled = x * F32(beta)
    return np.where(scaled > F32(threshold), x, np.log1p(np.exp(scaled)) * F32(beta_reciprocal))


@kernel
def softsign(x: np.ndarray) -> np.ndarray:
    """``x / (1 + |x|)``."""
    return x / (F32(1.0) + np.abs(x))


@kernel
def hardsigmoid(x: np.ndarray) -> np.ndarray:
    """``relu6(x + 3) / 6`` (torch Hardsigmoid; ttnn ``hardsigmoid`` is the same)."""
    return np.minimum(np.maximum(x + F32(3.0), F32(0.0)), F32(6.0)) / F32(6.0)


@kernel
def hardtanh(x: np.ndarray, min: float, max: float) -> np.ndarray:
    """``x`` clamped to ``[min, max]`` (torch Hardtanh)."""
    return np.minimum(np.maximum(x, F32(min)), F32(max))


# --- rounding --------------------------------------------------------------------------------


@kernel
def frac(x: np.ndarray) -> np.ndarray:
    """Fractional part ``x - trunc(x)`` (sign of ``x``; torch ``frac``)."""
    return x - np.trunc(x)


@kernel
def round_(x: np.ndarray, decimals: int = 0) -> np.ndarray:
    """Round to ``decimals`` decimal places, ties to even (torch/numpy ``round``).

    The spec requires ``decimals``; the default 0 is the simulator's.
    """
    return np.round(x, decimals)


@kernel
def clamp(x: np.ndarray, min: float, max: float) -> np.ndarray:
    """``min(max(x, min), max)`` (torch ``clamp``: ``max`` wins when ``min > max``)."""
    return np.minimum(np.maximum(x, F32(min)), F32(max))


@kernel
def threshold(x: np.ndarray, threshold: float, value: float) -> np.ndarray:
    """Elements *greater than* ``threshold`` become ``value``; the rest are kept.

    This is the spec's wording ("For all values greater than specified threshold
    replace with specified value") and the simulator's; it is the opposite of
    ``torch.nn.functional.threshold`` / ``ttnn.threshold`` (which keep ``x > threshold``).
    """
    return np.where(x > F32(threshold), F32(value), x)


@kernel
def signbit(x: np.ndarray) -> np.ndarray:
    """1.0 where the sign bit is set (negative numbers and -0), 0.0 elsewhere.

    Spec v0.20's prose says the opposite ("Replace positive and positive zero elements
    with 1"), but the compiler lowers to tt-metal's ``signbit_tile``, and torch, ttnn and
    the tt-lang simulator all give 1 for negatives: hardware behaviour wins
    (docs/language.md lists the deviation).
    """
    return np.where(np.signbit(x), F32(1.0), F32(0.0))


@kernel
def typecast(x: np.ndarray, dtype: str) -> np.ndarray:
    """The value of ``x`` after conversion to ``dtype`` (still float32-valued).

    ``bfloat16``: round to nearest even; ``float32``: unchanged; ``bfloat8_b`` /
    ``bfloat4_b``: unchanged here -- their shared-exponent quantisation is applied by
    the format codec when the block is stored, and the result's format is ``dtype``.
    """
    if dtype == "bfloat16":
        return round_to_bf16(x)
    return x.copy()


# --- binary ----------------------------------------------------------------------------------

max_ = _binary(np.maximum, "Elementwise maximum (``ttl.math.max``).")
min_ = _binary(np.minimum, "Elementwise minimum (``ttl.math.min``).")
add = _binary(np.add, "``a + b``.")
sub = _binary(np.subtract, "``a - b``.")
mul = _binary(np.multiply, "``a * b`` (``scalar * a`` is the compiler's mul_unary_const).")
div = _binary(np.true_divide, "``a / b`` (true division).")
mod = _binary(np.mod, "``a % b``: floored modulo, sign of ``b`` (Python/torch ``remainder``).")
floordiv = _binary(np.floor_divide, "``a // b``: floor of the quotient (torch ``floor_divide``).")
gt = _compare(np.greater, "``a > b`` as 1.0 / 0.0.")
lt = _compare(np.less, "``a < b`` as 1.0 / 0.0.")
ge = _compare(np.greater_equal, "``a >= b`` as 1.0 / 0.0.")
le = _compare(np.less_equal, "``a <= b`` as 1.0 / 0.0.")
eq = _compare(np.equal, "``a == b`` as 1.0 / 0.0.")
ne = _compare(np.not_equal, "``a != b`` as 1.0 / 0.0.")


# --- mask / where ----------------------------------------------------------------------------


@kernel
def mask(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``x`` with the elements whose ``mask`` element equals 1 replaced by 0 (spec)."""
    return np.where(mask == 1, F32(0.0), x)


@kernel
def mask_posinf(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``x`` with the elements whose ``mask`` element equals 1 replaced by ``+inf`` (spec)."""
    return np.where(mask == 1, F32(np.inf), x)


@kernel
def where(condition: np.ndarray, true_value: np.ndarray, false_value: np.ndarray) -> np.ndarray:
    """``true_value`` where ``condition`` equals 1, else ``false_value``.

    The spec defines condition elements 1 (true) and 0 (false); any other value selects
    ``false_value``, as in the simulator (``cond == 1``).
    """
    return np.where(condition == 1, true_value, false_value)
