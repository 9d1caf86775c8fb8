"""ttnn.matmul's program configs: tt-metal's checks, its program selection, and their device time."""

import inspect

import pytest
import torch

from tilewright import ttnn
from tilewright.device import session
from tilewright.device.ops import OpParamError
from tilewright.ttnn.device_time.matmul import select_program


@pytest.fixture
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def _ab(device, m=256, k=256, n=256):
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    return ttnn.from_torch(torch.ones(m, k), **kw), ttnn.from_torch(torch.ones(k, n), **kw)


def _cfg(**kw):
    base = dict(
        compute_with_storage_grid_size=(8, 8),
        in0_block_w=2,
        out_subblock_h=1,
        out_subblock_w=1,
        per_core_M=1,
        per_core_N=1,
    )
    base.update(kw)
    return ttnn.MatmulMultiCoreReuseMultiCastProgramConfig(**base)


BAD = [
    (_cfg(in0_block_w=3), "in0_block_w (3) must divide K in tiles (8)"),
    (_cfg(out_subblock_h=3, out_subblock_w=3, per_core_M=3, per_core_N=3),
     "out_subblock_h * out_subblock_w (3 * 3) must be at most 8"),
    (_cfg(out_subblock_w=2, per_core_N=3), "must be a whole number of subblocks (1 x 2)"),
    (_cfg(compute_with_storage_grid_size=(4, 4)),
     "need a 8x8 grid of cores for 8x8 output tiles; the grid is 4x4"),
    (_cfg(compute_with_storage_grid_size=(9, 8)), "exceeds the device's 8x8 grid"),
]  # fmt: skip


@pytest.mark.parametrize("config, message", BAD)
def test_a_program_config_tt_metal_rejects_is_an_error_at_the_call(device, config, message):
    a, b = _ab(device)
    with pytest.raises(OpParamError) as info:
        ttnn.matmul(a, b, program_config=config)
    line = inspect.currentframe().f_lineno - 1
    assert message in str(info.value) and "MatmulMultiCoreReuseMultiCastProgramConfig" in str(
        info.value
    )
    assert info.value.loc is not None and info.value.loc.line == line


def test_a_config_must_be_a_matmul_program_config(device):
    a, b = _ab(device)
    with pytest.raises(OpParamError, match="program_config must be a ttnn.MatmulMultiCoreReuse"):
        ttnn.matmul(a, b, program_config=object())


def test_fp32_accumulation_halves_the_subblock_limit(device):
    a, b = _ab(device)
    cfg = ttnn.WormholeComputeKernelConfig(fp32_dest_acc_en=True)
    with pytest.raises(
        OpParamError, match=r"at most 4: the DST tiles of one acquire \(fp32_dest_acc_en=True\)"
    ):
        ttnn.matmul(a, b, program_config=_cfg(out_subblock_w=8, per_core_N=8, compute_with_storage_grid_size=(1, 8)),
                    compute_kernel_config=cfg)  # fmt: skip


def test_default_selection_follows_tt_metal():
    square = select_program(m_tiles=64, k_tiles=64, n_tiles=64, batch_a=1, batch_b=1, grid=(8, 8),
                            tile_bytes=(2048,) * 3, fp32=False)  # fmt: skip
    assert square.mcast == "2d" and (square.per_core_m, square.per_core_n, square.in0_block_w) == (
        8,
        8,
        4,
    )
    assert (square.subblock_h, square.subblock_w) == (1, 4)  # narrower than the block: one row
    wide = select_program(m_tiles=1, k_tiles=64, n_tiles=128, batch_a=1, batch_b=1, grid=(8, 8),
                          tile_bytes=(2048,) * 3, fp32=False)  # fmt: skip
    assert wide.mcast == "in0" and wide.per_core_n == 2
    tall = select_program(m_tiles=256, k_tiles=8, n_tiles=4, batch_a=1, batch_b=1, grid=(8, 8),
                          tile_bytes=(2048,) * 3, fp32=False)  # fmt: skip
    assert tall.mcast == "in1" and tall.per_core_m == 4
    batched = select_program(m_tiles=4, k_tiles=4, n_tiles=4, batch_a=8, batch_b=8, grid=(8, 8),
                             tile_bytes=(2048,) * 3, fp32=False)  # fmt: skip
    assert batched.config == "MatmulMultiCoreReuseProgramConfig"


def _time(device, **kw):
    session.reset(stats=True)
    a, b = _ab(device, 1024, 1024, 1024)
    ttnn.matmul(a, b, **kw)
    return session.OPTIONS.ops[-1].kernel_cycles


def test_fidelity_l1_accumulation_and_configs_change_the_device_time(device):
    lofi = _time(device)
    hifi4 = _time(
        device,
        compute_kernel_config=ttnn.WormholeComputeKernelConfig(
            math_fidelity=ttnn.MathFidelity.HiFi4
        ),
    )
    l1acc = _time(device, compute_kernel_config=ttnn.WormholeComputeKernelConfig(
        math_fidelity=ttnn.MathFidelity.HiFi4, packer_l1_acc=True))  # fmt: skip
    assert hifi4 > lofi and l1acc < hifi4
    tuned = _time(device, program_config=_cfg(in0_block_w=8, out_subblock_h=1, out_subblock_w=2,
                                              per_core_M=4, per_core_N=4))  # fmt: skip
    small_grid = _time(device, core_grid=ttnn.CoreGrid(y=4, x=4))
    assert tuned != lofi and small_grid > lofi
