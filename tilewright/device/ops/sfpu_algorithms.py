"""The SFPU's own algorithms for exp, recip, sqrt, rsqrt, log, sigmoid and tanh, lane by lane.

tt-metal does not compute these ops with a libm: each is a short SFPU program of float32
multiply-adds, exponent / mantissa field operations and Newton steps, with different
programs in precise and approximate mode (``math_approx_mode``, the ``APPROX`` template
flag) and, for several ops, for a 16-bit and a 32-bit DST (``fp32_dest_acc_en``).  This
module is the one definition of those programs for both engines: the Python kernel API
and the block ops of the registry call :func:`sfpu_value`; the native runtime's C++
(``native/runtime/sfpu_math.h``) is the same programs step for step, with every constant
generated from :data:`CONSTANTS` (``twrt_sfpu_math.h``), and
``tests/native/test_sfpu_algorithms.py`` proves the bits equal.

The programs are our own implementations of the algorithms the public LLK sources
document (read, not copied): tenstorrent/tt-llk ``tt_llk_wormhole_b0/common/inc/sfpu/``
``ckernel_sfpu_recip.h`` (quadratic estimate + Newton), ``ckernel_sfpu_sqrt.h`` /
``ckernel_sfpu_rsqrt.h`` (Kokosinski-Moroz SQRT_23 / SQRT_10 magic-constant
algorithms), and tt-metal ``tt_metal/hw/ckernels/wormhole_b0/metal/llk_api/llk_sfpu/``
``ckernel_sfpu_exp.h`` (Schraudolph in approximate mode; Moroz ``exp_21f`` for a bf16
DST; a Cody-Waite + degree-6 polynomial exp for fp32 DST), ``ckernel_sfpu_log.h``
(minimax degree 5 for a bf16 DST, the ``(m-1)/(m+1)`` odd series for fp32 DST),
``ckernel_sfpu_sigmoid.h`` (``1 / (1 + exp(-x))`` from those two; approximate:
``ckernel_sfpu_sigmoid_appx.h``'s six-piece SFPLUTFP32 table) and ``ckernel_sfpu_tanh.h``
(a minimax polynomial and ``2 sigmoid(2x) - 1`` for fp32 DST, a polynomial in ``|x|`` for a
bf16 DST, SFPLUT's three linear pieces in approximate mode).  docs/device.md
("SFPU algorithms") says what is bit-exact and what the public record leaves open.

The lane model (one rule per SFPU operation, each a function below):

* ``mad(a, b, c)``: SFPMAD, ``a * b + c`` with one rounding to float32 (the product is
  exact in float64, the sum is rounded there and then to float32); every NaN it makes is
  ``0x7F800001``.  Wormhole's SFPMAD is "partially fused" (tt-isa-documentation
  ``SFPMAD.md``); how many product bits it keeps is not modelled.  ``mul`` / ``add`` are SFPMAD with ``c = 0`` / ``b = 1``, as SFPI
  compiles them.  Denormal inputs are not flushed.
* ``exexp`` / ``setexp`` / ``setman`` / ``setsgn`` / ``addexp``: bit-field operations
  on the float32 encoding (SFPEXEXP, SFPSETEXP, SFPSETMAN, SFPSETSGN, SFPDIVP2).
* A comparison with zero (SFPSETCC ``< 0``) tests the sign bit, so ``-0.0`` and ``-NaN``
  are negative (SFPSETCC.md: software must flush ``-0`` before comparing).
* Rounding to a bf16 DST (``float_to_fp16b``, round to nearest even) is the DST write's
  own rounding (``formats.bf16.float32_to_bf16_bits``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tilewright.device.formats.bf16 import float32_to_bf16_bits

__all__ = [
    "ALGORITHMS",
    "APPROX_AS_PRECISE",
    "CONSTANTS",
    "INTEGER_CONSTANTS",
    "constant_bits",
    "sfpu_value",
]

F32, F64, I32, U32 = np.float32, np.float64, np.int32, np.uint32


def _lut16(bits: int) -> float:
    """A Lut16ToFp32 coefficient: IEEE half bits, except exponent 31 encodes 0."""
    if bits & 0x7C00 == 0x7C00:
        return 0.0
    return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])


_SIGMOID_LUT = {  # (slope, intercept) half bits per |x| piece (tt-metal sigmoid_appx_init)
    0: (0x33D9, 0x7C00),
    1: (0x32F4, 0x23C8),
    2: (0x318A, 0x2BAA),
    3: (0x300A, 0x3027),
    4: (0x2A35, 0x34CC),
    5: (0x7C00, 0x37FF),
}

CONSTANTS: dict[str, float | int] = {
    # exp, approximate (Schraudolph): i = A * max(x, -88.5) + (B - C) as uint16, << 15.
    "exp_approx_a": float(F32(256.0) * F32(1.4426950408889634)),
    "exp_approx_b_minus_c": 32500.818359375,
    "exp_approx_low": -88.5,
    # exp, precise, bf16 DST (Moroz exp_21f): 2**(x/ln2) from the bits of x/ln2 + 127.
    "exp21f_one_ln2": 1.4426950216293334961,
    "exp21f_c0": 1.0017248,
    "exp21f_c1": 7.839635491371155e-08,
    "exp21f_c2": 4.791750143340323e-15,
    # exp, precise, fp32 DST: k = round(x / ln2), two-part Cody-Waite, degree-6 polynomial.
    "exp_inv_ln2": 1.442695,
    "exp_ln2_hi": -6.93145752e-1,
    "exp_ln2_lo": -1.42860677e-6,
    "exp_p6": 1.37805939e-3,
    "exp_p5": 8.37312452e-3,
    "exp_p4": 4.16695364e-2,
    "exp_p3": 1.66664720e-1,
    "exp_p2": 4.99999851e-1,
    # recip: y = k2 - k1*x + k0*x**2 on [1, 2) (Sollya minimax), then Newton steps.
    "recip_k0": 0.3232325017452239990234375,
    "recip_k1": 1.4545459747314453125,
    "recip_k2": 2.121212482452392578125,
    # sqrt / rsqrt: magic-constant estimate and the SQRT_23 / SQRT_10 refinements.
    "sqrt_magic": 0x5F1110A0,
    "sqrt_k1": 2.2825186,
    "sqrt_k2": 2.2533049,
    "sqrt_approx_magic": 0x5F0B3892,
    "sqrt_approx_k1": 1.89099014875,
    # log, bf16 DST: minimax degree 5 on [1, 2] (ascending powers), plus exponent * ln2.
    "log_ln2": 0.69314718246459961,
    "log_c0": -2.0069785118103027,
    "log_c1": 3.767500400543213,
    "log_c2": -2.800232410430908,
    "log_c3": 1.3681391477584839,
    "log_c4": -0.3706687390804291,
    "log_c5": 0.04224011301994324,
    # log, fp32 DST: m in [sqrt(2)/2, sqrt(2)), z = (m-1)/(m+1), 2z(1 + z^2/3 + ...).
    "log_sqrt2": 1.4142135381698608,
    "log_s1": 0.3333333333333333,
    "log_s2": 0.2,
    "log_s3": 0.14285714285714285,
    "log_s4": 0.1111111111111111,
    "log_s5": 0.09090909090909091,
    # tanh, fp32 DST: x * P(x^2) (Sollya minimax) below 0.6, else 2 * sigmoid(2x) - 1.
    "tanh_small": 0.6,
    "tanh_q0": 0.999999940395355224609375,
    "tanh_q1": -0.33332359790802001953125,
    "tanh_q2": 0.13310669362545013427734375,
    "tanh_q3": -5.21197654306888580322265625e-2,
    "tanh_q4": 1.5497927553951740264892578125e-2,
    # tanh, bf16 DST: a degree-6 polynomial in |x| (no constant term), clamped to 1.
    "tanh_p1": 0.999004364013671875,
    "tanh_p2": 3.0897438526153564453125e-2,
    "tanh_p3": -0.4890659749507904052734375,
    "tanh_p4": 0.281917631626129150390625,
    "tanh_p5": -6.6649019718170166015625e-2,
    "tanh_p6": 5.876733921468257904052734375e-3,
    # tanh, approximate: SFPLUT, three pieces of A * |x| + B by |x| < 1, < 2, else.
    "tanh_lut_a0": 0.90625,
    "tanh_lut_b0": 0.0,
    "tanh_lut_a1": 0.09375,
    "tanh_lut_b1": 0.8125,
    "tanh_lut_a2": 0.0,
    "tanh_lut_b2": 1.0,
    # sigmoid, approximate: SFPLUTFP32 six pieces of sigmoid(|x|) - 0.5 (breaks 0.5, 1, 1.5,
    # 2, 4), the sign of x, then + 0.5.
    **{f"sigmoid_lut_a{i}": _lut16(a) for i, (a, _) in _SIGMOID_LUT.items()},
    **{f"sigmoid_lut_b{i}": _lut16(b) for i, (_, b) in _SIGMOID_LUT.items()},
    "sigmoid_lut_break0": 0.5,
    "sigmoid_lut_break1": 1.0,
    "sigmoid_lut_break2": 1.5,
    "sigmoid_lut_break3": 2.0,
    "sigmoid_lut_break4": 4.0,
}
"""Every constant of the programs (floats are used as float32); the C++ header is
generated from this table, as float32 bit patterns."""

INTEGER_CONSTANTS = frozenset({"sqrt_magic", "sqrt_approx_magic"})
"""The constants that are integer bit patterns (the rest are float32 values)."""


def constant_bits(name: str) -> int:
    """The 32-bit pattern of constant ``name`` (a float as its float32 encoding)."""
    value = CONSTANTS[name]
    if name in INTEGER_CONSTANTS:
        return int(value) & 0xFFFFFFFF
    return int(np.array([value], dtype=F32).view(U32)[0])


def _k(name: str) -> np.float32:
    return F32(CONSTANTS[name])


_INF_BITS = U32(0x7F800000)
MAD_NAN = np.array([0x7F800001], dtype=U32).view(F32)[0]
"""SFPMAD's NaN: the mantissa exactly 1 (SFPMAD.md: the LSB is set; tt-metal's exp relies on
"a mantissa of exactly 1 on Wormhole"), the sign +.  One pattern, so both engines agree
where the host's NaN propagation (operand order, payloads) would not."""
_QNAN = F32(np.nan)  # 0x7FC00000, the SFPI quiet NaN


# -- the lane model ------------------------------------------------------------------------------


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=F32).view(U32)


def _float(u: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(u, dtype=U32).view(F32)


def mad(a, b, c) -> np.ndarray:
    """SFPMAD ``a * b + c``: exact product, one rounding (module docstring); a NaN result is
    :data:`MAD_NAN` whatever the operands' payloads."""
    wide = np.multiply(np.asarray(a, dtype=F32), np.asarray(b, dtype=F32), dtype=F64)
    wide += np.asarray(c, dtype=F32)
    out = np.atleast_1d(wide.astype(F32))
    nan = np.isnan(out)
    if nan.any():
        out[nan] = MAD_NAN
    return out.reshape(np.shape(wide))


def mul(a, b) -> np.ndarray:
    return mad(a, b, F32(0.0))


def add(a, b) -> np.ndarray:
    return mad(a, F32(1.0), b)


def neg(x: np.ndarray) -> np.ndarray:
    """SFPI's unary minus: the sign bit flipped."""
    return _float(_bits(x) ^ U32(0x80000000))


def negative(x: np.ndarray) -> np.ndarray:
    """SFPSETCC ``x < 0``: the sign bit (``-0.0`` and ``-NaN`` included)."""
    return (_bits(x) >> U32(31)).astype(bool)


def exexp(x: np.ndarray) -> np.ndarray:
    """SFPEXEXP: the exponent field minus the bias, as int32."""
    return ((_bits(x) >> U32(23)) & U32(0xFF)).astype(I32) - I32(127)


def exexp_biased(x: np.ndarray) -> np.ndarray:
    return ((_bits(x) >> U32(23)) & U32(0xFF)).astype(I32)


def setexp(x: np.ndarray, e: np.ndarray | int) -> np.ndarray:
    """SFPSETEXP: the exponent field replaced by the low 8 bits of ``e``."""
    field = (np.asarray(e).astype(I32).astype(U32) & U32(0xFF)) << U32(23)
    return _float((_bits(x) & U32(0x807FFFFF)) | field)


def setman(x: np.ndarray, m: np.ndarray | int) -> np.ndarray:
    """SFPSETMAN: the mantissa field replaced by the low 23 bits of ``m``."""
    field = np.asarray(m).astype(U32) & U32(0x7FFFFF)
    return _float((_bits(x) & U32(0xFF800000)) | field)


def setsgn(x: np.ndarray, sign_of: np.ndarray) -> np.ndarray:
    """SFPSETSGN: ``x`` with the sign bit of ``sign_of``."""
    return _float((_bits(x) & U32(0x7FFFFFFF)) | (_bits(sign_of) & U32(0x80000000)))


def addexp(x: np.ndarray, delta: int) -> np.ndarray:
    """SFPDIVP2 (add mode): ``delta`` added to the exponent of a finite non-zero value."""
    u = _bits(x)
    field = (u >> U32(23)) & U32(0xFF)
    moved = (u.astype(np.int64) + (delta << 23)).astype(U32)
    return _float(np.where((field != 0) & (field != 255), moved, u))


def _abs(x: np.ndarray) -> np.ndarray:
    """SFPABS (float): the sign bit cleared."""
    return _float(_bits(x) & U32(0x7FFFFFFF))


def int_to_float(i: np.ndarray) -> np.ndarray:
    """SFPCAST int32 -> float32, round to nearest even."""
    return np.asarray(i, dtype=I32).astype(F32)


def to_bf16(x: np.ndarray) -> np.ndarray:
    """``float_to_fp16b`` round to nearest even, as the DST write rounds (NaN -> 0x7FC0)."""
    return _float(float32_to_bf16_bits(np.asarray(x, dtype=F32)).astype(U32) << U32(16))


def _horner(x: np.ndarray, *coeffs: np.float32) -> np.ndarray:
    """``PolynomialEvaluator::eval(x, c0, c1, ...)``: c0 + x * (c1 + x * (...)), by SFPMAD."""
    acc = np.full_like(x, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = mad(x, acc, c)
    return acc


# -- exp -----------------------------------------------------------------------------------------


def exp_approx(x: np.ndarray) -> np.ndarray:
    """Approximate exp (Schraudolph): the bits of ``A*x + (B-C)`` rounded to uint16 and
    shifted into the exponent.  Inputs below -88.5 are clamped there (0 out); the uint16
    saturates, so from x ~ 88.4 up (and NaN) the result is a NaN pattern, as the LLK's."""
    clamped = np.maximum(x, _k("exp_approx_low"))  # SFPSWAP min/max (NaN kept)
    z = mad(_k("exp_approx_a"), clamped, _k("exp_approx_b_minus_c"))
    with np.errstate(invalid="ignore"):
        rounded = np.clip(np.rint(np.where(np.isnan(z), F32(65535.0), z)), 0.0, 65535.0)
    return _float(rounded.astype(U32) << U32(15))


def _shift(value: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """SFPSHFT: left by ``amount`` (right when negative); 32 or more places give 0."""
    left = np.clip(amount, 0, 31).astype(U32)
    right = np.clip(-amount, 0, 31).astype(U32)
    shifted = np.where(amount >= 0, value << left, value >> right)
    return np.where(np.abs(amount) >= 32, U32(0), shifted).astype(U32)


def exp_21f(x: np.ndarray) -> np.ndarray:
    """Moroz's exp_21f (the bf16-DST precise exp), before any bf16 rounding."""
    xlog2 = mad(x, _k("exp21f_one_ln2"), F32(127.0))
    xlog2 = np.minimum(np.maximum(xlog2, F32(0.0)), F32(255.0))  # NaN stays NaN
    man = (_bits(xlog2) & U32(0x7FFFFF)) | U32(0x800000)
    z = _shift(man, exexp(xlog2))
    exponent = ((z >> U32(23)) & U32(0xFF)).astype(I32)
    frac = int_to_float((z & U32(0x7FFFFF)).astype(I32))
    frac = _horner(frac, _k("exp21f_c0"), _k("exp21f_c1"), _k("exp21f_c2"))
    y = setexp(frac, exponent)
    return np.where(exponent >= 255, F32(np.inf), y)  # the clamp's ceiling is +inf


def exp_fp32(a: np.ndarray) -> np.ndarray:
    """The fp32-DST precise exp: k = round(a/ln2) (a sign-magnitude int16), Cody-Waite
    reduction, a degree-6 polynomial, then 2**k by the exponent field, with the LLK's
    overflow (inf) and underflow (0, NaN kept) rules."""
    j = mul(_k("exp_inv_ln2"), a)
    with np.errstate(invalid="ignore"):
        k = np.clip(np.rint(np.where(np.isnan(j), F32(0.0), j)), -32767.0, 32767.0).astype(I32)
    jf = int_to_float(k)
    f = mad(jf, _k("exp_ln2_hi"), a)
    f = mad(jf, _k("exp_ln2_lo"), f)
    r = np.full_like(f, _k("exp_p6"))
    for name in ("exp_p5", "exp_p4", "exp_p3", "exp_p2"):
        r = mad(r, f, _k(name))
    y = mad(r, f, F32(1.0))
    r = mad(y, f, F32(1.0))
    under = mul(_float(_bits(y) - U32(1)), F32(0.0))  # 0 for finite y, NaN for NaN
    e = exexp_biased(r) + k
    over = add(under, F32(np.inf))
    return np.where(e >= 1, np.where(e < 255, setexp(r, e), over), under)


def exp(x: np.ndarray, approx: bool, fp32_dest: bool) -> np.ndarray:
    if approx:
        return exp_approx(x)
    return exp_fp32(x) if fp32_dest else to_bf16(exp_21f(x))


# -- recip ---------------------------------------------------------------------------------------


def reciprocal(x: np.ndarray, iterations: int) -> np.ndarray:
    """``_sfpu_reciprocal_<iterations>``: a quadratic estimate on the mantissa in [1, 2),
    ``iterations`` Newton steps, the exponent from ``~x`` (so 1/0 = inf, 1/inf = 0)."""
    negative_x = setman(np.full_like(x, -1.0), _bits(x))
    y = mad(_k("recip_k0"), negative_x, _k("recip_k1"))
    scale_bits = ~_bits(x)
    y = mad(y, negative_x, _k("recip_k2"))
    scale = setman(_float(scale_bits), 0)
    t = mad(negative_x, y, F32(1.0))
    scale = mul(scale, F32(0.5))
    y = mad(y, t, y)
    for _ in range(iterations - 1):
        t = mad(negative_x, y, F32(1.0))
        y = mad(y, t, y)
    return setsgn(mul(y, scale), x)


def recip(x: np.ndarray, approx: bool, fp32_dest: bool) -> np.ndarray:
    if approx:
        return reciprocal(x, 1)  # max_iter 0: one Newton step today (ckernel_sfpu_recip.h)
    return reciprocal(x, 2) if fp32_dest else to_bf16(reciprocal(x, 1))


# -- sqrt / rsqrt --------------------------------------------------------------------------------


def _root(x: np.ndarray, approx: bool, reciprocal_root: bool) -> np.ndarray:
    """``_calculate_sqrt_body_``: y0 = magic - bits(x)/2, then SQRT_10 (one step) or
    SQRT_23 (a polynomial step and a Newton step); NaN for negative x."""
    xb = _bits(x)
    magic = "sqrt_approx_magic" if approx else "sqrt_magic"
    y = _float(U32(constant_bits(magic)) - (xb >> U32(1)))
    inf_minus_x = (_INF_BITS - xb).astype(U32)
    finite_nonzero = (inf_minus_x != 0) & (xb != 0)
    if approx:
        c = mul(x, y)
        t = mad(neg(y), c, _k("sqrt_approx_k1"))
        if reciprocal_root:
            y = np.where(finite_nonzero, mul(y, t), _float(inf_minus_x))
        else:
            y = np.where(xb != _INF_BITS, mul(c, t), c)
    else:
        xy = mul(x, y)
        c = mul(neg(y), xy)
        y = mul(y, mad(c, add(_k("sqrt_k2"), c), _k("sqrt_k1")))
        xy = mul(x, y)
        one_minus_xyy = mad(neg(y), xy, F32(1.0))
        if reciprocal_root:
            refined = mad(one_minus_xyy, addexp(y, -1), y)
            y = np.where(finite_nonzero, refined, _float(inf_minus_x))
        else:
            refined = mad(one_minus_xyy, mul(F32(0.5), xy), xy)
            y = np.where(xb.view(I32) < I32(0x7F800000), refined, y)
    return np.where(negative(x), _QNAN, y)


def sqrt(x: np.ndarray, approx: bool, fp32_dest: bool) -> np.ndarray:
    y = _root(x, approx, False)
    return y if fp32_dest else to_bf16(y)


def rsqrt(x: np.ndarray, approx: bool, fp32_dest: bool) -> np.ndarray:
    y = _root(x, approx, True)
    return y if fp32_dest else to_bf16(y)


# -- log -----------------------------------------------------------------------------------------


def _log_specials(x: np.ndarray, value: np.ndarray) -> np.ndarray:
    """+inf -> +inf; NaN, -inf and negative x (sign bit) -> NaN."""
    bad = (exexp(x) == 128) | negative(x)
    return np.where(_bits(x) == _INF_BITS, F32(np.inf), np.where(bad, _QNAN, value))


def log_bf16(x: np.ndarray) -> np.ndarray:
    """The bf16-DST log: degree-5 minimax of ln on the mantissa in [1, 2) + exponent * ln2."""
    m = setexp(x, 127)
    coeffs = [_k(f"log_c{i}") for i in range(6)]
    series = _horner(m, *coeffs)
    value = mad(int_to_float(exexp(x)), _k("log_ln2"), series)
    value = np.where(x == 0, F32(-np.inf), value)
    return to_bf16(_log_specials(x, value))


def log_fp32(x: np.ndarray) -> np.ndarray:
    """The fp32-DST log: m in [sqrt(2)/2, sqrt(2)), z = (m-1)/(m+1) with the precise
    reciprocal, ln m = 2z(1 + z^2/3 + ... + z^10/11), plus exponent * ln2."""
    e = exexp(x)
    m = setexp(x, 127)
    high = m >= _k("log_sqrt2")
    m = np.where(high, mul(m, F32(0.5)), m)
    e = np.where(high, e + 1, e)
    z = mul(add(m, F32(-1.0)), reciprocal(add(m, F32(1.0)), 2))
    z2 = mul(z, z)
    series = _horner(z2, F32(1.0), *(_k(f"log_s{i}") for i in range(1, 6)))
    ln_m = mul(F32(2.0), mul(z, series))
    value = mad(int_to_float(e), _k("log_ln2"), ln_m)
    return _log_specials(x, np.where(x == 0, F32(-np.inf), value))


def log(x: np.ndarray, approx: bool, fp32_dest: bool) -> np.ndarray:
    # calculate_log has no approximate program: APPROXIMATION_MODE is not read.
    return log_fp32(x) if fp32_dest else log_bf16(x)


# -- sigmoid -------------------------------------------------------------------------------------


def sigmoid_lut(x: np.ndarray) -> np.ndarray:
    """The approximate sigmoid: SFPLUTFP32's six linear pieces of sigmoid(|x|) - 0.5 with the
    sign of x (SGN_RETAIN), then SFPADDI 0.5."""
    a = _abs(x)
    piece = np.full(a.shape, 5)
    for i in reversed(range(5)):
        piece = np.where(a < _k(f"sigmoid_lut_break{i}"), i, piece)
    slope = np.choose(piece, [_k(f"sigmoid_lut_a{i}") for i in range(6)]).astype(F32)
    offset = np.choose(piece, [_k(f"sigmoid_lut_b{i}") for i in range(6)]).astype(F32)
    return add(setsgn(mad(slope, a, offset), x), F32(0.5))


def sigmoid(x: np.ndarray, approx: bool, fp32_dest: bool) -> np.ndarray:
    """``1 / (1 + exp(-x))`` with the DST mode's exp and reciprocal (``_sfpu_sigmoid_``);
    approximate: :func:`sigmoid_lut` (``calculate_sigmoid_appx``)."""
    if approx:
        return sigmoid_lut(x)
    if fp32_dest:
        return reciprocal(add(F32(1.0), exp_fp32(neg(x))), 2)
    return to_bf16(reciprocal(add(F32(1.0), exp_21f(neg(x))), 1))


# -- tanh ----------------------------------------------------------------------------------------


def tanh_fp32(x: np.ndarray) -> np.ndarray:
    """The fp32-DST tanh: x * P(x^2) for |x| < 0.6, else 2 * sigmoid(2x) - 1 (fp32 sigmoid)."""
    x2 = mul(x, x)
    small = mul(x, _horner(x2, *(_k(f"tanh_q{i}") for i in range(5))))
    sig = sigmoid(mul(F32(2.0), x), False, True)
    large = mad(F32(2.0), sig, F32(-1.0))
    return np.where(_abs(x) < _k("tanh_small"), small, large)


def tanh_bf16(x: np.ndarray) -> np.ndarray:
    """The bf16-DST tanh: a degree-6 polynomial in |x|, at most 1, the sign of x, bf16 RNE."""
    a = _abs(x)
    p = _horner(a, F32(0.0), *(_k(f"tanh_p{i}") for i in range(1, 7)))
    return to_bf16(setsgn(np.minimum(p, F32(1.0)), x))


def tanh_lut(x: np.ndarray) -> np.ndarray:
    """The approximate tanh: SFPLUT's three linear pieces on |x|, the sign of x kept."""
    a = _abs(x)
    piece = np.where(a < F32(1.0), 0, np.where(a < F32(2.0), 1, 2))
    slope = np.choose(piece, [_k(f"tanh_lut_a{i}") for i in range(3)]).astype(F32)
    offset = np.choose(piece, [_k(f"tanh_lut_b{i}") for i in range(3)]).astype(F32)
    return setsgn(mad(slope, a, offset), x)


def tanh(x: np.ndarray, approx: bool, fp32_dest: bool) -> np.ndarray:
    if approx:
        return tanh_lut(x)
    return tanh_fp32(x) if fp32_dest else tanh_bf16(x)


Algorithm = Callable[[np.ndarray, bool, bool], np.ndarray]

ALGORITHMS: dict[str, Algorithm] = {
    "exp": exp,
    "recip": recip,
    "sqrt": sqrt,
    "rsqrt": rsqrt,
    "log": log,
    "sigmoid": sigmoid,
    "tanh": tanh,
}
"""SFPU stem -> its program ``f(x, approx, fp32_dest)`` (the native runtime's op codes of the
same stems run the C++ twin)."""

APPROX_AS_PRECISE = frozenset({"log"})
"""Stems whose approximate mode runs the precise program: log's LLK has none (the flag is
not read)."""


def sfpu_value(stem: str, x: np.ndarray, *, approx: bool, fp32_dest: bool) -> np.ndarray:
    """The SFPU op ``stem`` on float32 lanes ``x`` as the hardware's program computes it."""
    with np.errstate(all="ignore"):
        return ALGORITHMS[stem](np.asarray(x, dtype=F32), approx, fp32_dest)
