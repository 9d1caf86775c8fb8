"""SFPI user code (sfpi.h, tilewright/sfpi_glue.h): vector types, DST rows and the Wormhole
lane model, nested lane predication, the sfpi:: intrinsics and the SFPU call wrappers,
checked against numpy models of the documented hardware behaviour; unsupported SFPI
constructs are build errors naming them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tilewright.device.program import ComputeConfig
from tilewright.errors import KernelError, NativeBuildError
from tilewright.native.kernels import NativeKernel

from .test_kernel_api import BF16, FP32, as_matrix, run_on_core, tiles_bytes

CPP = Path(__file__).resolve().parent / "cpp"


def f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def bits(x: np.ndarray) -> np.ndarray:
    return f32(x).view(np.uint32)


def from_bits(b: np.ndarray) -> np.ndarray:
    return np.asarray(b, dtype=np.uint32).view(np.float32)


def lane_model_probe(x: np.ndarray) -> np.ndarray:
    """dst_reg[0] = dst_reg[1]; dst_reg[8] = old dst_reg[0] on one tile (SFPLOAD/SFPSTORE).

    Vector i is DST rows (2i & ~3) .. +3, even columns for even i, odd for odd i; DST row
    16f + r of a tile is row r of face f (faces 16x16: top-left, top-right, bottom-left, ...).
    """

    def cells(i):
        addr = 2 * i
        out = []
        for lane in range(32):
            row = (addr & ~3) + lane // 8
            col = (lane % 8) * 2 + (1 if addr & 2 else 0)
            face, fr = row // 16, row % 16
            out.append(((face // 2) * 16 + fr, (face % 2) * 16 + col))
        return out

    out = x.copy()
    v0 = [x[r, c] for r, c in cells(0)]
    for (r, c), (r1, c1) in zip(cells(0), cells(1), strict=True):
        out[r, c] = x[r1, c1]
    for (r, c), v in zip(cells(8), v0, strict=True):
        out[r, c] = v
    return out


def lut8(x: int) -> np.float32:
    if x == 0xFF:
        return np.float32(0)
    b = ((x >> 7) << 31) | ((127 - ((x >> 4) & 7)) << 23) | ((x & 0xF) << 19)
    return from_bits(np.array([b]))[0]


def lut_model(x: np.ndarray, l0: int, l1: int, l2: int) -> np.ndarray:
    a = np.abs(x)
    coeffs = np.where(a < 1, l0, np.where(a < 2, l1, l2))
    out = np.empty_like(x)
    for idx, c in np.ndenumerate(coeffs):
        out[idx] = np.float32(lut8((int(c) >> 8) & 0xFF) * a[idx]) + lut8(int(c) & 0xFF)
    return np.copysign(out, x).astype(np.float32)


def run_sfpi_ops(device, x: np.ndarray, y: np.ndarray, fp32: bool):
    fmt = FP32 if fp32 else BF16
    data = tiles_bytes(torch.from_numpy(np.concatenate([x, y], axis=1)), fmt)
    pops = [(16, 4), (16, 4), (16, 4), (16, 3)]
    rounds = run_on_core(
        device,
        NativeKernel(CPP / "sfpi_ops.cpp"),
        {0: (fmt, 2), 16: (fmt, 8)},
        [(0, 2, data)],
        pops,
        config=ComputeConfig(fp32_dest_acc_en=fp32),
    )
    out = []
    for data, (_, n) in zip(rounds, pops, strict=True):
        m = as_matrix(data, 1, n, fmt).numpy()
        out += [m[:, 32 * i : 32 * (i + 1)] for i in range(n)]
    return out


def test_sfpi_ops_fp32_dest_match_numpy(device):
    rng = np.random.default_rng(11)
    x = f32(rng.standard_normal((32, 32)) * 3)
    x[0, :4] = [0.0, -0.0, 1.0, -1.0]
    y = f32(rng.standard_normal((32, 32)) * 3)
    got = run_sfpi_ops(device, x, y, fp32=True)
    np.testing.assert_array_equal(got[0], x)
    np.testing.assert_array_equal(got[1], y)
    np.testing.assert_array_equal(got[2], x + y)
    np.testing.assert_array_equal(got[3], np.abs(x - y))  # max - min
    # SFPI compares by the sign of x - c, so -0.0 counts as negative: (-0)*(-0) = 0.
    neg = np.signbit(x)
    want = np.where(
        neg,
        np.where(np.signbit(x + 1), f32(-1), x * x),
        np.where(np.signbit(x - 1), x * f32(0.5), np.abs(x) + 1),
    )
    np.testing.assert_array_equal(got[4], want)
    np.testing.assert_array_equal(got[5], lut_model(x, 0x1020, 0x00A1, 0x3000))
    rows = x.copy()
    rows[:16] += f32(100)  # VectorMode::R: faces 0 and 1
    np.testing.assert_array_equal(got[6], rows)
    cols = x.copy()
    cols[:, :16] -= f32(100)  # VectorMode::C: faces 0 and 2
    np.testing.assert_array_equal(got[7], cols)

    b = bits(x)
    exp = ((b >> 23) & 0xFF).astype(np.int32)
    np.testing.assert_array_equal(got[8], (exp - 127).astype(np.float32))
    np.testing.assert_array_equal(got[9], from_bits((b & 0x807FFFFF) | (127 << 23)))
    lz = np.array([32 - int(v).bit_length() for v in b.ravel()], dtype=np.float32).reshape(b.shape)
    np.testing.assert_array_equal(got[10], lz)
    np.testing.assert_array_equal(got[11], from_bits(b & 0xFFFF0000))
    scaled = (
        torch.from_numpy(x * f32(2.5)).to(torch.bfloat16).float().numpy()
    )  # round to nearest even
    np.testing.assert_array_equal(got[12], scaled)
    np.testing.assert_array_equal(
        got[13],
        np.where(exp >= 127, from_bits((b & 0x807FFFFF) | (126 << 23)), from_bits(b & 0xFF800000)),
    )
    np.testing.assert_array_equal(got[14], lane_model_probe(x))


def test_sfpi_store_into_bf16_dest_truncates(device):
    rng = np.random.default_rng(12)
    x = torch.from_numpy(f32(rng.standard_normal((32, 32)))).to(torch.bfloat16).float().numpy()
    y = torch.from_numpy(f32(rng.standard_normal((32, 32)))).to(torch.bfloat16).float().numpy()
    got = run_sfpi_ops(device, x, y, fp32=False)
    truncated = from_bits(bits(x + y) & 0xFFFF0000)  # SFPSTORE to bf16: truncation, not rounding
    np.testing.assert_array_equal(got[2], truncated)
    rounded = torch.from_numpy(x + y).to(torch.bfloat16).float().numpy()
    assert (truncated != rounded).any()  # the inputs do exercise the difference

    def trunc(v):
        return from_bits(bits(v) & 0xFFFF0000)

    np.testing.assert_array_equal(got[3], trunc(np.abs(x - y)))
    neg = np.signbit(x)
    piecewise = np.where(
        neg,
        np.where(np.signbit(x + 1), f32(-1), x * x),
        np.where(np.signbit(x - 1), x * f32(0.5), np.abs(x) + 1),
    )
    np.testing.assert_array_equal(got[4], trunc(piecewise))
    np.testing.assert_array_equal(got[11], x)  # truncating a bf16 value changes nothing
    np.testing.assert_array_equal(got[14], lane_model_probe(x))


UNSUPPORTED = [
    ("a / b", "vFloat division"),
    ("lut2(a, b)", "sfpi::lut2"),
    ("reinterpret<vInt>(a) >> 3", "arithmetic right shift of vInt"),
    ("reinterpret<vInt>(a) * reinterpret<vInt>(b)", "integer vector multiplication"),
    ("subvec_shflror1(a)", "sfpi::subvec_shflror1"),
    ("vFloat(l_reg[LRegs::LReg0])", "sfpi::l_reg"),
    ("[] { vInt t = vConstTileId; return t; }()", "sfpi::vConstTileId"),
]


@pytest.mark.parametrize("expr, message", UNSUPPORTED, ids=[u[1] for u in UNSUPPORTED])
def test_unsupported_sfpi_is_a_build_error_naming_it(device, expr, message):
    source = f"""
#include "api/compute/common.h"
namespace ckernel::sfpu {{
inline void face() {{
    vFloat a = dst_reg[0];
    vFloat b = dst_reg[1];
    auto r = {expr};
    (void)r;
}}
}}
void kernel_main() {{
    tile_regs_acquire();
    _llk_math_eltwise_unary_sfpu_params_(ckernel::sfpu::face, 0);
    tile_regs_release();
}}
"""
    with pytest.raises(NativeBuildError, match=message):
        run_on_core(device, NativeKernel(source=source), {0: (BF16, 1)}, [], [])


def test_dst_reg_outside_a_wrapper_and_past_dst_are_errors(device):
    outside = """
#include "api/compute/common.h"
void kernel_main() {
    tile_regs_acquire();
    vFloat a = dst_reg[0];
    (void)a;
    tile_regs_release();
}
"""
    with pytest.raises(KernelError, match="outside an SFPU call wrapper"):
        run_on_core(device, NativeKernel(source=outside), {0: (BF16, 1)}, [], [])
    beyond = """
#include "api/compute/common.h"
inline void face(uint32_t in0, uint32_t in1, uint32_t out) { dst_reg[in0 * 32] = dst_reg[in1 * 32]; }
void kernel_main() {
    tile_regs_acquire();
    _llk_math_eltwise_binary_sfpu_params_(face, 0, 40, 0);
    tile_regs_release();
}
"""
    with pytest.raises(KernelError, match="dst_index_in1 40 is beyond"):
        run_on_core(device, NativeKernel(source=beyond), {0: (BF16, 1)}, [], [])


OLD_STYLE = """
#include "compute_kernel_api/common.h"
#include "compute_kernel_api/tile_move_copy.h"
#include "compute_kernel_api/eltwise_binary_sfpu.h"
#include "compute_kernel_api/eltwise_unary/eltwise_unary.h"
#include "compute_kernel_api.h"
#ifdef TRISC_MATH
void mul_face(const uint32_t in0, const uint32_t in1, const uint32_t out) {
    for (size_t i = 0; i < 8; i++) {
        vFloat a = dst_reg[in0 * 32 + i];
        vFloat b = dst_reg[in1 * 32 + i];
        dst_reg[out * 32 + i] = a * b;
    }
}
#endif
void my_mul_tiles(uint32_t a, uint32_t b, uint32_t out) {
    MATH(_llk_math_eltwise_binary_sfpu_params_<false>(mul_face, a, b, out));
}
namespace NAMESPACE {
void MAIN {
    init_sfpu(tt::CBIndex::c_0, tt::CBIndex::c_16);
    cb_wait_front(tt::CBIndex::c_0, 2);
    tile_regs_acquire();
    copy_tile(tt::CBIndex::c_0, 0, 0);
    copy_tile(tt::CBIndex::c_0, 1, 1);
    my_mul_tiles(0, 1, 0);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(tt::CBIndex::c_16, 1);
    pack_tile(0, tt::CBIndex::c_16);
    cb_push_back(tt::CBIndex::c_16, 1);
    cb_pop_front(tt::CBIndex::c_0, 2);
    tile_regs_release();
}
}
"""


def test_older_custom_sfpi_style(device):
    """The earlier custom_sfpi_add layout: unqualified SFPI names, NAMESPACE / MAIN, the
    <false> wrapper without a vector mode."""
    rng = np.random.default_rng(13)
    x, y = f32(rng.standard_normal((32, 32))), f32(rng.standard_normal((32, 32)))
    data = tiles_bytes(torch.from_numpy(np.concatenate([x, y], axis=1)), FP32)
    (out,) = run_on_core(
        device,
        NativeKernel(source=OLD_STYLE),
        {0: (FP32, 2), 16: (FP32, 1)},
        [(0, 2, data)],
        [(16, 1)],
        config=ComputeConfig(fp32_dest_acc_en=True),
    )
    np.testing.assert_array_equal(as_matrix(out, 1, 1, FP32).numpy(), x * y)


DST_ROW_OPS = """
#include "api/compute/common.h"
#include "api/compute/tile_move_copy.h"
namespace ckernel::sfpu {
inline void twice_abs() {
    for (int d = 0; d < 8; ++d) {
        v_if(dst_reg[0] < 0.0f) { dst_reg[0] = -dst_reg[0]; }
        v_endif;
        dst_reg[0] *= 2.0f;
        dst_reg[0] += vConst1;
        dst_reg++;
    }
}
}
void kernel_main() {
    cb_wait_front(tt::CBIndex::c_0, 1);
    tile_regs_acquire();
    copy_tile(tt::CBIndex::c_0, 0, 0);
    MATH(SFPU_UNARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC_MODE, DST_ACCUM_MODE, twice_abs, 0, VectorMode::RC));
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(tt::CBIndex::c_16, 1);
    pack_tile(0, tt::CBIndex::c_16);
    cb_push_back(tt::CBIndex::c_16, 1);
    tile_regs_release();
    cb_pop_front(tt::CBIndex::c_0, 1);
}
"""


def test_dst_rows_in_expressions_and_predication(device):
    rng = np.random.default_rng(14)
    x = f32(rng.standard_normal((32, 32)))
    (out,) = run_on_core(
        device,
        NativeKernel(source=DST_ROW_OPS),
        {0: (FP32, 1), 16: (FP32, 1)},
        [(0, 1, tiles_bytes(torch.from_numpy(x), FP32))],
        [(16, 1)],
        config=ComputeConfig(fp32_dest_acc_en=True),
    )
    np.testing.assert_array_equal(as_matrix(out, 1, 1, FP32).numpy(), np.abs(x) * f32(2) + f32(1))
