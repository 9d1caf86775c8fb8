"""The compute configuration an op's numerics depend on, and the FPU multiply at a fidelity.

Every block op (``OpSpec.apply``) and every tile op of the kernel API
(``tile_ops.SfpuOp.apply``, ...) takes a :class:`MathConfig`: the Python kernel API passes
the running compute kernel's (from its ``ComputeConfig``).  The FPU's multiplies --
``matmul_tiles`` / ``matmul_block``, ``mul_tiles`` (plain, broadcast, DST-reuse) and
``reduce_tile`` SUM / AVG with its scaler -- read ``math_fidelity`` through
:func:`fpu_product`, the one definition of the mantissa slicing; the native runtime's C++
(``native/runtime/compute.cpp``, ``fpu_product``) implements the same algorithm step for
step and ``tests/native/test_fidelity_matrix.py`` proves the bits equal.  DST precision
(``fp32_dest_acc_en``) is applied by the kernel API on every DST write; it and
``math_approx_mode`` select the SFPU's programs of exp, recip, sqrt, rsqrt, log, sigmoid
and tanh (``sfpu_algorithms``, read by ``tile_ops.SfpuOp.apply``; docs/device.md, "SFPU
algorithms").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DEFAULT_MATH",
    "FIDELITY_PHASES",
    "SLICE_MASKS",
    "MathConfig",
    "check_fidelity",
    "fidelity_product",
    "fpu_product",
    "math_config",
]

HIFI4 = 4


@dataclass(frozen=True, slots=True)
class MathConfig:
    """The numerics knobs of one compute kernel (tt-metal ``ComputeConfig``)."""

    math_fidelity: int = HIFI4  # a MathFidelity value (FIDELITY_CHOICES)
    fp32_dest_acc_en: bool = False
    math_approx_mode: bool = False


DEFAULT_MATH = MathConfig()


def math_config(compute) -> MathConfig:
    """The :class:`MathConfig` of a kernel's ``ComputeConfig`` (anything with its fields)."""
    if compute is None:
        return DEFAULT_MATH
    return MathConfig(
        int(getattr(compute, "math_fidelity", HIFI4)),
        bool(getattr(compute, "fp32_dest_acc_en", False)),
        bool(getattr(compute, "math_approx_mode", False)),
    )


# -- math fidelity: the FPU multiplier's mantissa slices ----------------------------------------
#
# The Wormhole / Blackhole FPU multiplies 5 significand bits of SrcA by 7 of SrcB
# (tt-metal tech_reports/matrix_engine/matrix_engine.md); each fidelity phase feeds it one
# slice and adds the partial product into DST.  The slices, as float32 bit masks
# (tt-isa-documentation WormholeB0 MVMUL.md / ELWMUL.md, SrcAFidelityBits / SrcBFidelityBits):
#   A_hi = A & 0xFFF80000 (sign, exponent, hidden bit + top 4 mantissa bits)
#   A_full = A & 0xFFFFC000 (TF32 without its last mantissa bit, which SrcA never uses)
#   A_lo = A_full - A_hi (the next 5 mantissa bits; exact: the low bits of one float32)
#   B_hi = B & 0xFFFE0000 (hidden bit + top 6 mantissa bits)
#   B_full = B & 0xFFFFE000 (TF32), B_lo = B_full - B_hi (the next 4 mantissa bits)
# A non-finite value (inf, NaN) is its own hi and full slice, its lo slice is 0: the masks
# would otherwise turn a NaN with a low payload into inf and inf - inf into NaN.
# Phase p multiplies A_lo when p & 1 else A_hi, by B_lo when p & 2 else B_hi; LoFi (0) runs
# phase 0, HiFi2 phases 0-1, HiFi3 0-2, HiFi4 0-3 (LLK get_math_num_fidelity_phases:
# MathFidelity & 7, LoFi one pass).  Summed, the phases are
#   LoFi  P(B_hi, A_hi)
#   HiFi2 P(B_hi, A_hi) + P(B_hi, A_lo)                = P(B_hi, A_full)
#   HiFi3 ... + P(B_lo, A_hi) = P(B_full, A_full) - P(B_lo, A_lo)
#   HiFi4 all four                                     = P(B, A)
# for the bilinear product P (matmul, elementwise mul, reduce-sum times the scaler).  Each
# fidelity is computed as the right-hand form: one or two float32 products P and at most one
# float32 subtraction, so both engines evaluate the same few float32 operations.  HiFi4 is
# P of the unsliced operands -- exactly what the engines computed before fidelity was
# modelled (the TF32 truncation of float32 operands is applied below HiFi4 only; for bf16
# and block-float operands the HiFi4 masks keep every bit, so nothing differs).

LOFI, HIFI2, HIFI3 = 0, 2, 3

FIDELITY_PHASES: dict[int, int] = {LOFI: 1, HIFI2: 2, HIFI3: 3, HIFI4: 4}
"""Phases run per MathFidelity value (``FIDELITY_CHOICES``)."""

FIDELITY_NAMES: dict[int, str] = {LOFI: "LoFi", HIFI2: "HiFi2", HIFI3: "HiFi3", HIFI4: "HiFi4"}
FIDELITY_CHOICES = "(" + ", ".join(f"{n} {v}" for v, n in FIDELITY_NAMES.items()) + ")"
"""The valid MathFidelity values as every guard names them: ``check_fidelity``,
``device.program.ComputeConfig``, the native runtime (``twrt_fidelity.h``)."""

SLICE_MASKS: dict[str, int] = {
    "a_hi": 0xFFF80000,
    "a_full": 0xFFFFC000,
    "b_hi": 0xFFFE0000,
    "b_full": 0xFFFFE000,
}
"""The float32 bit masks of the slices (the native runtime's header is generated from this)."""

_EXP_MASK = np.uint32(0x7F800000)


def _slices(x: np.ndarray, hi: int, full: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hi, full, lo) slices of ``x`` as float32 (module comment)."""
    values = np.asarray(x, dtype=np.float32)  # 0-d stays 0-d (reduce's scaler)
    bits = (np.ascontiguousarray(values) if values.ndim else values).view(np.uint32)
    finite = (bits & _EXP_MASK) != _EXP_MASK
    ones = np.uint32(0xFFFFFFFF)
    top = (bits & np.where(finite, np.uint32(hi), ones)).view(np.float32)
    whole = (bits & np.where(finite, np.uint32(full), ones)).view(np.float32)
    with np.errstate(invalid="ignore"):  # inf - inf where not finite: replaced by 0
        low = np.where(finite, whole - top, np.float32(0.0)).astype(np.float32)
    return top, whole, low


def check_fidelity(fidelity: int) -> None:
    if fidelity not in FIDELITY_PHASES:
        raise ValueError(f"math_fidelity {fidelity} is not a MathFidelity {FIDELITY_CHOICES}")


def fpu_product(
    product: Callable[[np.ndarray, np.ndarray], np.ndarray],
    src_b: np.ndarray,
    src_a: np.ndarray,
    fidelity: int,
) -> np.ndarray:
    """``product(src_b, src_a)`` as the FPU computes it at ``fidelity`` (module comment).

    ``product`` is bilinear in its operands and computes in float32: ``src_b @ src_a``
    for matmul (in0 is SrcB, in1 SrcA), ``src_a * src_b`` for eltwise mul (in0 SrcA, in1
    SrcB), the reduction of ``src_a`` times the scaler ``src_b`` for reduce.  HiFi4 is
    ``product(src_b, src_a)`` itself.
    """
    check_fidelity(fidelity)
    if fidelity == HIFI4:
        return product(src_b, src_a)
    a_hi, a_full, a_lo = _slices(src_a, SLICE_MASKS["a_hi"], SLICE_MASKS["a_full"])
    b_hi, b_full, b_lo = _slices(src_b, SLICE_MASKS["b_hi"], SLICE_MASKS["b_full"])
    if fidelity == LOFI:
        return product(b_hi, a_hi)
    if fidelity == HIFI2:
        return product(b_hi, a_full)
    with np.errstate(all="ignore"):
        return np.asarray(product(b_full, a_full) - product(b_lo, a_lo), dtype=np.float32)


def fidelity_product(src_b: np.ndarray, src_a: np.ndarray, fidelity: int, *, matmul: bool):
    """``src_b @ src_a`` (``matmul``) or ``src_a * src_b`` as the FPU computes it at a fidelity."""

    def product(b: np.ndarray, a: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(np.matmul(b, a) if matmul else a * b, dtype=np.float32)

    return fpu_product(product, src_b, src_a, fidelity)
