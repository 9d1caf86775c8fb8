"""ttnn's matmul program configs and compute kernel configs (the ``ttnn.*`` spellings).

What a user passes as ``ttnn.matmul(..., program_config=..., compute_kernel_config=...)``
(tt-metal ``ttnn/cpp/ttnn/operations/matmul/device/config/matmul_program_config_types.hpp``,
``ttnn/operations/core/compute_kernel/compute_kernel_config.hpp``).  Numerics read the
compute kernel config's ``math_fidelity`` (:func:`math_fidelity_of`; ``ttnn.matmul``'s
docstring says what is modelled); the device-time model runs the program they describe
(``ttnn/device_time``), and :func:`check_program_config`
applies the rules tt-metal's matmul validation applies, so a config that would fail on
the card fails here, naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilewright.device.ops import OpParamError
from tilewright.device.program import MathFidelity

__all__ = [
    "MatmulMultiCoreReuseProgramConfig",
    "MatmulMultiCoreReuseMultiCastProgramConfig",
    "MatmulMultiCoreReuseMultiCast1DProgramConfig",
    "MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig",
    "WormholeComputeKernelConfig",
    "BlackholeComputeKernelConfig",
    "GrayskullComputeKernelConfig",
    "init_device_compute_kernel_config",
    "math_fidelity_of",
    "check_program_config",
    "grid_xy",
]


@dataclass(frozen=True, kw_only=True)
class MatmulMultiCoreReuseProgramConfig:
    """Each core computes its own output block, no multicast (batched ``b``)."""

    compute_with_storage_grid_size: Any
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int
    per_core_M: int
    per_core_N: int


@dataclass(frozen=True, kw_only=True)
class MatmulMultiCoreReuseMultiCastProgramConfig:
    """2-D multicast: in0 multicast along each row of cores, in1 down each column."""

    compute_with_storage_grid_size: Any
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int
    per_core_M: int
    per_core_N: int
    out_block_h: int | None = None
    out_block_w: int | None = None
    transpose_mcast: bool = False
    fused_activation: Any = None
    fuse_batch: bool = True


@dataclass(frozen=True, kw_only=True)
class MatmulMultiCoreReuseMultiCast1DProgramConfig:
    """1-D multicast: in0 to every core (``mcast_in0``, wide outputs) or in1 (tall ones)."""

    compute_with_storage_grid_size: Any
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int
    per_core_M: int
    per_core_N: int
    fuse_batch: bool = True
    fused_activation: Any = None
    mcast_in0: bool = True
    out_block_h: int | None = None
    out_block_w: int | None = None
    gather_in0: bool = False
    num_global_cb_receivers: int = 1


@dataclass(frozen=True, kw_only=True)
class MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig:
    """One worker per DRAM bank streams its shard of ``b`` (decode-style matmuls)."""

    in0_block_w: int
    per_core_M: int
    per_core_N: int
    fused_activation: Any = None


@dataclass(frozen=True, kw_only=True)
class WormholeComputeKernelConfig:
    """``ttnn.WormholeComputeKernelConfig`` (the defaults are tt-metal's)."""

    math_fidelity: MathFidelity = MathFidelity.LoFi
    math_approx_mode: bool = True
    fp32_dest_acc_en: bool = False
    packer_l1_acc: bool = False
    dst_full_sync_en: bool = False


BlackholeComputeKernelConfig = WormholeComputeKernelConfig


@dataclass(frozen=True, kw_only=True)
class GrayskullComputeKernelConfig:
    math_fidelity: MathFidelity = MathFidelity.LoFi
    math_approx_mode: bool = True
    dst_full_sync_en: bool = False


def init_device_compute_kernel_config(
    arch: object = None,
    config: object = None,
    math_fidelity: MathFidelity = MathFidelity.LoFi,
    math_approx_mode: bool = True,
    fp32_dest_acc_en: bool = False,
    packer_l1_acc: bool = False,
    dst_full_sync_en: bool = False,
) -> WormholeComputeKernelConfig:
    """``config`` if given, else one with these values (``ttnn.init_device_compute_kernel_config``)."""
    if config is not None:
        return config  # type: ignore[return-value]
    return WormholeComputeKernelConfig(
        math_fidelity=math_fidelity,
        math_approx_mode=math_approx_mode,
        fp32_dest_acc_en=fp32_dest_acc_en,
        packer_l1_acc=packer_l1_acc,
        dst_full_sync_en=dst_full_sync_en,
    )


def math_fidelity_of(op: str, config: Any) -> int:
    """The MathFidelity value an op's numerics run at for its ``compute_kernel_config``.

    None: HiFi4 -- the numerics of an op called without a config are the unsliced float32
    products (what Tilewright always computed; tt-metal picks a per-op default there, which
    the device-time model follows).  A config without ``math_fidelity`` has tt-metal's
    default, LoFi (``WormholeComputeKernelConfig``).
    """
    if config is None:
        return int(MathFidelity.HiFi4)
    value = getattr(config, "math_fidelity", WormholeComputeKernelConfig().math_fidelity)
    try:
        return int(MathFidelity(int(value)))
    except (TypeError, ValueError):
        raise OpParamError(
            f"{op}: compute_kernel_config.math_fidelity={value!r} is not a ttnn.MathFidelity "
            "(LoFi, HiFi2, HiFi3, HiFi4)"
        ) from None


def grid_xy(grid: Any) -> tuple[int, int]:
    """(x, y) of a ``compute_with_storage_grid_size``: a CoreCoord, a CoreGrid or a pair."""
    if isinstance(grid, (tuple, list)) and len(grid) == 2:
        return int(grid[0]), int(grid[1])
    return int(grid.x), int(grid.y)


_PROGRAM_CONFIGS = (
    MatmulMultiCoreReuseProgramConfig,
    MatmulMultiCoreReuseMultiCastProgramConfig,
    MatmulMultiCoreReuseMultiCast1DProgramConfig,
    MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig,
)


def check_program_config(
    op: str,
    config: Any,
    *,
    m_tiles: int,
    k_tiles: int,
    n_tiles: int,
    fp32_dest_acc: bool,
    dst_tiles: int,
    device_grid: tuple[int, int],
) -> None:
    """tt-metal's matmul checks of a program config against the product's tile counts."""
    if not isinstance(config, _PROGRAM_CONFIGS):
        raise OpParamError(
            f"{op}: program_config must be a ttnn.MatmulMultiCoreReuse*ProgramConfig, got "
            f"{type(config).__name__}"
        )
    name = type(config).__name__

    def fail(rule: str) -> None:
        raise OpParamError(f"{op}: {name}: {rule}", hint="tt-metal rejects this program config")

    for field in ("in0_block_w", "per_core_M", "per_core_N"):
        if int(getattr(config, field)) < 1:
            fail(f"{field} must be at least 1, got {getattr(config, field)}")
    if k_tiles % config.in0_block_w:
        fail(f"in0_block_w ({config.in0_block_w}) must divide K in tiles ({k_tiles})")
    if isinstance(config, MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig):
        return
    h, w = config.out_subblock_h, config.out_subblock_w
    if h < 1 or w < 1:
        fail(f"out_subblock_h and out_subblock_w must be at least 1, got {h} and {w}")
    limit = dst_tiles  # kernel_api.compute.dst_tiles: 8, 4 with fp32_dest_acc_en
    if h * w > limit:
        fail(
            f"out_subblock_h * out_subblock_w ({h} * {w}) must be at most {limit}: the DST "
            f"tiles of one acquire (fp32_dest_acc_en={fp32_dest_acc})"
        )
    block_h = getattr(config, "out_block_h", None) or config.per_core_M
    block_w = getattr(config, "out_block_w", None) or config.per_core_N
    if block_h % h or block_w % w:
        fail(
            f"the output block ({block_h} x {block_w} tiles) must be a whole number of "
            f"subblocks ({h} x {w})"
        )
    gx, gy = grid_xy(config.compute_with_storage_grid_size)
    if gx > device_grid[0] or gy > device_grid[1]:
        fail(
            f"compute_with_storage_grid_size {gx}x{gy} exceeds the device's {device_grid[0]}x{device_grid[1]} grid"
        )
    if isinstance(config, MatmulMultiCoreReuseMultiCastProgramConfig):
        rows = -(-m_tiles // config.per_core_M)
        cols = -(-n_tiles // config.per_core_N)
        if config.transpose_mcast:
            rows, cols = cols, rows
        if rows > gy or cols > gx:
            fail(
                f"per_core_M={config.per_core_M} and per_core_N={config.per_core_N} need a "
                f"{cols}x{rows} grid of cores for {m_tiles}x{n_tiles} output tiles; the grid is {gx}x{gy}"
            )
    elif isinstance(config, MatmulMultiCoreReuseMultiCast1DProgramConfig):
        blocks = -(-m_tiles // config.per_core_M) * -(-n_tiles // config.per_core_N)
        if blocks > gx * gy:
            fail(
                f"per_core_M={config.per_core_M} and per_core_N={config.per_core_N} need "
                f"{blocks} cores for {m_tiles}x{n_tiles} output tiles; the grid has {gx * gy}"
            )
