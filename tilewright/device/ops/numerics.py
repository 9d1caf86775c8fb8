"""The compute configuration an op's numerics depend on, as one small frozen value.

Every block op (``OpSpec.apply``) and every tile op of the kernel API
(``tile_ops.SfpuOp.apply``, ...) takes a :class:`MathConfig`: the interpreter passes the
TT-Lang kernel's, the Python kernel API the running compute kernel's (from its
``ComputeConfig``).  Today no implementation reads it -- the values are float32 math,
rounded into DST (bf16 unless ``fp32_dest_acc_en``) by the kernel API and into the
destination format by the packer -- so it is the one place where math fidelity,
approximate SFPU modes and DST precision get threaded through (issue 23), instead of a
parameter added to every call site.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DEFAULT_MATH", "FIDELITY_PHASES", "MathConfig", "fidelity_product", "math_config"]

HIFI4 = 4


@dataclass(frozen=True, slots=True)
class MathConfig:
    """The numerics knobs of one compute kernel (tt-metal ``ComputeConfig``)."""

    math_fidelity: int = HIFI4  # MathFidelity value: LoFi 0, HiFi2 2, HiFi3 3, HiFi4 4
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
#   A_lo = (A & 0xFFFFC000) - A_hi (the next 5 mantissa bits; SrcA's TF32 LSB is never used)
#   B_hi = B & 0xFFFE0000 (hidden bit + top 6 mantissa bits)
#   B_lo = (B & 0xFFFFE000) - B_hi (the next 4 mantissa bits: the rest of TF32)
# Phase p uses A_lo when p & 1 and B_lo when p & 2; LoFi (0) runs phase 0, HiFi2 phases 0-1,
# HiFi3 0-2, HiFi4 0-3 (LLK get_math_num_fidelity_phases: MathFidelity & 7, LoFi one pass).

FIDELITY_PHASES: dict[int, int] = {0: 1, 2: 2, 3: 3, 4: 4}
"""Phases run per MathFidelity value (LoFi 0, HiFi2 2, HiFi3 3, HiFi4 4)."""

_A_HI, _A_ALL = np.uint32(0xFFF80000), np.uint32(0xFFFFC000)
_B_HI, _B_ALL = np.uint32(0xFFFE0000), np.uint32(0xFFFFE000)


def _masked(x: np.ndarray, mask: np.uint32) -> np.ndarray:
    return (np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) & mask).view(np.float32)


def _slices(x: np.ndarray, hi: np.uint32, full: np.uint32) -> tuple[np.ndarray, np.ndarray]:
    top = _masked(x, hi)
    return top, _masked(x, full) - top  # exact: the low bits of one float32


def fidelity_product(src_b: np.ndarray, src_a: np.ndarray, fidelity: int, *, matmul: bool):
    """``src_b @ src_a`` (``matmul``) or ``src_a * src_b`` as the FPU computes it at a fidelity.

    ``src_b`` is the operand the unpacker puts in SrcB (matmul: in0, the left matrix;
    eltwise mul: in1), ``src_a`` the SrcA operand.  The partial products of the phases
    are summed in phase order in float32; the order of additions inside one phase's
    16-wide dot product is not public (MVMUL.md calls its model "a rough guide").
    """
    if fidelity not in FIDELITY_PHASES:
        raise ValueError(
            f"math_fidelity {fidelity} is not a MathFidelity (LoFi 0, HiFi2 2, HiFi3 3, HiFi4 4)"
        )
    a = _slices(src_a, _A_HI, _A_ALL)
    b = _slices(src_b, _B_HI, _B_ALL)
    parts = []
    for phase in range(FIDELITY_PHASES[fidelity]):
        sa, sb = a[phase & 1], b[(phase >> 1) & 1]
        parts.append(np.matmul(sb, sa) if matmul else sa * sb)
    out = parts[0]
    for part in parts[1:]:
        out = out + part
    return np.asarray(out, dtype=np.float32)
