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

__all__ = ["DEFAULT_MATH", "MathConfig", "math_config"]

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
