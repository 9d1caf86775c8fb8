"""compute_kernel_lib (``ttnn/cpp/ttnn/kernel_lib``): compute kernels written in the style of
ttnn's current eltwise and reduction kernels -- ``eltwise_chain``, ``eltwise_pipeline``,
``reduce`` -- run natively through both host front ends.

Each chain is checked two ways: bit for bit against the same op written with the raw
compute API (``eltwise_sfpu.cpp`` with ``SFPU_OP_CHAIN_0``, or numpy for the exact FPU ops)
and against torch in float32 within the op's documented bound.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.native.test_kernel_sets import CB, KERNELS, VIA, K, Spec, grid, run, tiles
from tilewright import ttnn
from tilewright.device.coords import CoreCoord
from tilewright.device.program import ComputeConfig, Program
from tilewright.errors import NativeBuildError
from tilewright.native.kernels import NativeKernel

LIB = "kernel_lib/"
C0 = CoreCoord(0, 0)


def unary_set(x, out, compute: K) -> Spec:
    n = x.buffer.num_pages
    core = grid(1, 1)
    return Spec(
        [
            K(
                "reader_unary.cpp",
                core,
                "reader",
                ttnn.TensorAccessorArgs(x).get_compile_time_args(),
                args={C0: [x.buffer_address(), 0, n]},
            ),
            compute,
            K(
                "writer_unary.cpp",
                core,
                "writer",
                ttnn.TensorAccessorArgs(out).get_compile_time_args(),
                args={C0: [out.buffer_address(), 0, n]},
            ),
        ],
        [CB(0, core, 2), CB(16, core, 2)],
    )


UNARY = [
    ("Exp<>", "exp_tile_init(); exp_tile(0);", torch.exp, 2**-7),
    ("Relu<>", "relu_tile_init(); relu_tile(0);", torch.relu, 0),
    ("Sqrt<>", "sqrt_tile_init(); sqrt_tile(0);", lambda x: torch.sqrt(x.abs()), None),
    ("Negative<Approx::Exact, Dst::D0>", "negative_tile_init(); negative_tile(0);", torch.neg, 0),
    ("Sigmoid<>", "sigmoid_tile_init(); sigmoid_tile(0);", torch.sigmoid, 2**-7),
]


@VIA
@pytest.mark.parametrize("op, chain, fn, rtol", UNARY, ids=[u[0].split("<")[0] for u in UNARY])
def test_unary_eltwise_chain(device, via, op, chain, fn, rtol):
    torch.manual_seed(5)
    x_h = torch.randn(64, 128).to(torch.bfloat16)
    if op == "Sqrt<>":
        x_h = x_h.abs()
    x = tiles(device, x_h)
    got_t, raw_t = tiles(device, torch.zeros(64, 128)), tiles(device, torch.zeros(64, 128))
    n = x.buffer.num_pages
    run(
        unary_set(x, got_t, K(LIB + "unary_chain.cpp", grid(1, 1), "compute", [n], {"CKL_OP": op})),
        [x, got_t],
        via,
    )
    run(
        unary_set(
            x, raw_t, K("eltwise_sfpu.cpp", grid(1, 1), "compute", [n], {"SFPU_OP_CHAIN_0": chain})
        ),
        [x, raw_t],
        via,
    )
    got = ttnn.to_torch(got_t).float()
    assert torch.equal(got, ttnn.to_torch(raw_t).float())  # the same op by the raw API
    want = fn(x_h.float())
    if rtol == 0:
        assert torch.equal(got, want.to(torch.bfloat16).float())
    else:
        assert torch.allclose(got, want, rtol=rtol or 2**-7, atol=1e-6)


@VIA
def test_kernels_own_element_runs_the_sfpu_op_chain_define(device, via):
    """A UnaryOp element of the kernel's own running ttnn's SFPU_OP_CHAIN_0 define: the same
    bits as the raw-API kernel with that define."""
    torch.manual_seed(11)
    x_h = torch.randn(64, 64).to(torch.bfloat16)
    x = tiles(device, x_h)
    got_t, raw_t = tiles(device, torch.zeros(64, 64)), tiles(device, torch.zeros(64, 64))
    n = x.buffer.num_pages
    chain = {"SFPU_OP_CHAIN_0": "gelu_tile_init(); gelu_tile(0);"}
    run(
        unary_set(x, got_t, K(LIB + "own_element.cpp", grid(1, 1), "compute", [n], chain)),
        [x, got_t],
        via,
    )
    run(
        unary_set(x, raw_t, K("eltwise_sfpu.cpp", grid(1, 1), "compute", [n], chain)),
        [x, raw_t],
        via,
    )
    got = ttnn.to_torch(got_t).float()
    assert torch.equal(got, ttnn.to_torch(raw_t).float())
    want = torch.nn.functional.gelu(x_h.float())
    assert torch.allclose(got, want, rtol=2**-7, atol=1e-2)


@VIA
def test_unary_eltwise_pipeline_fan_out(device, via):
    """x * sigmoid(x) from one CB tile copied to two DST slots (waited and popped once)."""
    torch.manual_seed(6)
    x_h = torch.randn(64, 64).to(torch.bfloat16)
    x, out = tiles(device, x_h), tiles(device, torch.zeros(64, 64))
    n = x.buffer.num_pages
    run(unary_set(x, out, K(LIB + "unary_pipeline.cpp", grid(1, 1), "compute", [n])), [x, out], via)
    xf = x_h.float()
    assert torch.allclose(ttnn.to_torch(out).float(), xf * torch.sigmoid(xf), rtol=2**-6, atol=1e-3)


def binary_set(
    a, b, out, compute: K, *, second=None, b_pages=2, cb2=1, n2=None, chunk=0, hw=None
) -> Spec:
    core = grid(1, 1)
    ht, wt, nc = hw or (1, a.buffer.num_pages, 1)
    reader_args = [
        a.buffer_address(),
        b.buffer_address(),
        ht,
        wt,
        nc,
        chunk,
        cb2,
        b.buffer.num_pages if n2 is None else n2,
    ]
    ct = [
        *ttnn.TensorAccessorArgs(a).get_compile_time_args(),
        *ttnn.TensorAccessorArgs(b).get_compile_time_args(),
    ]
    m = out.buffer.num_pages
    return Spec(
        [
            K(LIB + "reader_two.cpp", core, "reader", ct, args={C0: reader_args}),
            compute,
            K(
                "writer_unary.cpp",
                core,
                "writer",
                ttnn.TensorAccessorArgs(out).get_compile_time_args(),
                args={C0: [out.buffer_address(), 0, m]},
            ),
        ],
        [CB(0, core, 2), CB(cb2, core, b_pages), CB(16, core, max(m, 2))],
    )


@VIA
@pytest.mark.parametrize(
    "op, post, fn",
    [
        ("Add", "Relu<>", lambda a, b: torch.relu(a + b)),
        ("Mul", "Abs<>", lambda a, b: (a * b).abs()),
    ],
)
def test_binary_eltwise_chain(device, via, op, post, fn):
    """BinaryFpu then an SFPU element, Bulk output; the reader sends all of b before a."""
    torch.manual_seed(7)
    a_h, b_h = torch.randn(64, 128).to(torch.bfloat16), torch.randn(64, 128).to(torch.bfloat16)
    a, b, out = tiles(device, a_h), tiles(device, b_h), tiles(device, torch.zeros(64, 128))
    n = a.buffer.num_pages
    compute = K(
        LIB + "binary_chain.cpp", grid(1, 1), "compute", [n], {"CKL_BINARY": op, "CKL_POST": post}
    )
    run(binary_set(a, b, out, compute, b_pages=n), [a, b, out], via)
    want = fn(a_h.float(), b_h.float()).to(torch.bfloat16)
    assert torch.equal(ttnn.to_torch(out), want)  # add / mul of bf16 in HiFi4, exact + one rounding


@VIA
def test_row_operand_over_a_tile_grid(device, via):
    """OperandKind::Row: b's Wt tiles, waited for once, are read by column for every row."""
    torch.manual_seed(8)
    ht, wt = 2, 3
    a_h = torch.randn(32 * ht, 32 * wt).to(torch.bfloat16)
    b_h = torch.randn(32, 32 * wt).to(torch.bfloat16)
    a, b, out = tiles(device, a_h), tiles(device, b_h), tiles(device, torch.zeros(32 * ht, 32 * wt))
    compute = K(LIB + "row_operand.cpp", grid(1, 1), "compute", [ht, wt])
    run(binary_set(a, b, out, compute, b_pages=wt, hw=(ht, wt, 1)), [a, b, out], via)
    want = (a_h.float() + b_h.float().repeat(ht, 1)).to(torch.bfloat16)
    assert torch.equal(ttnn.to_torch(out), want)


REDUCE = [
    ("SUM", "REDUCE_ROW", "WaitAndPopPerTile"),
    ("MAX", "REDUCE_ROW", "BulkWaitBulkPop"),
    ("SUM", "REDUCE_COL", "WaitAndPopPerTile"),
    ("SUM", "REDUCE_COL", "WaitUpfrontNoPop"),
    ("MAX", "REDUCE_SCALAR", "WaitAndPopPerTile"),
]


@pytest.mark.parametrize("pool, dim, policy", REDUCE, ids=["-".join(r) for r in REDUCE])
def test_reduce_helper(device, pool, dim, policy):
    torch.manual_seed(9)
    ht, wt, nc = (2, 10, 1) if dim == "REDUCE_COL" else (2, 3, 2)  # 10 columns: two DST chunks
    x_h = torch.randn(nc, 32 * ht, 32 * wt).to(torch.bfloat16)
    scaler = 0.5 if pool == "SUM" else 1.0
    x = tiles(device, x_h)
    s = tiles(device, torch.full((32, 32), scaler))
    outs = {"REDUCE_ROW": ht, "REDUCE_COL": wt, "REDUCE_SCALAR": 1}[dim] * nc
    out = tiles(device, torch.zeros(outs * 32, 32))
    chunk = 8 if dim == "REDUCE_COL" and policy in ("WaitAndPopPerTile", "BulkWaitBulkPop") else 0
    compute = K(
        LIB + "reduce.cpp",
        grid(1, 1),
        "compute",
        [ht, wt, nc],
        {"REDUCE_OP": pool, "REDUCE_DIM": dim, "REDUCE_POLICY": policy},
    )
    pages = 2 if policy == "WaitAndPopPerTile" else ht * wt * nc
    spec = binary_set(x, s, out, compute, cb2=2, n2=1, chunk=chunk, hw=(ht, wt, nc))
    spec.cbs[0] = CB(0, grid(1, 1), pages)
    run(spec, [x, s, out], "program")
    got = ttnn.to_torch(out).float().numpy().reshape(outs, 32, 32)
    xf = x_h.float().numpy().reshape(nc, ht, 32, wt, 32)
    red = np.sum if pool == "SUM" else np.max
    if dim == "REDUCE_ROW":  # column 0 of each output tile: the row's reduction
        want = red(xf, axis=(3, 4)).reshape(outs, 32) * scaler
        res = got[:, :, 0]
    elif dim == "REDUCE_COL":  # row 0: the column's reduction
        want = red(xf, axis=(1, 2)).reshape(outs, 32) * scaler
        res = got[:, 0, :]
    else:
        want = red(xf, axis=(1, 2, 3, 4)).reshape(outs) * scaler
        res = got[:, 0, 0]
    assert np.allclose(res, want, rtol=2**-6, atol=0.05)


BAD_OFFSET = """
#include "ttnn/cpp/ttnn/kernel_lib/eltwise_helpers.hpp"
void kernel_main() {
    using namespace compute_kernel_lib;
    eltwise_chain(EltwiseShape::tiles(1),
                  CopyTile<0, Dst::D0, input(InputLifecycle::Bulk, OperandKind::Block,
                                             DataFormatReconfig::Enabled, TileOffset::Set)>{},
                  PackTile<16>{});
}
"""


def test_unprovided_construct_is_a_build_error_naming_it(device):
    x, out = tiles(device, torch.zeros(32, 32)), tiles(device, torch.zeros(32, 32))
    path = KERNELS / LIB / "_bad_offset.cpp"
    spec = unary_set(x, out, K(LIB + "_bad_offset.cpp", grid(1, 1), "compute", [1]))
    path.write_text(BAD_OFFSET)
    try:
        with pytest.raises(NativeBuildError, match="TileOffset::Set is not provided by Tilewright"):
            run(spec, [x, out], "program")
    finally:
        path.unlink()


BULK_TOO_BIG = """#include "ttnn/cpp/ttnn/kernel_lib/eltwise_helpers.hpp"
void kernel_main() {
    using namespace compute_kernel_lib;
    compute_kernel_hw_startup(0, 16);
    eltwise_chain(EltwiseShape::tiles(4), CopyTile<0, Dst::D0, input(InputLifecycle::Bulk, OperandKind::Block)>{},
                  PackTile<16>{});
}
"""

PARTIAL_SCALER = """#include "ttnn/cpp/ttnn/kernel_lib/reduce_helpers_compute.hpp"
void kernel_main() {
    using namespace compute_kernel_lib;
    compute_kernel_hw_startup(0, 2, 16);
    reduce<SUM, REDUCE_ROW, 0, 2, 16>(ReduceInputBlockShape::single(), ReduceInputMemoryLayout::contiguous(),
                                      NoAccumulation{}, NoOp{}, ReducePartialScaler::with_partial());
}
"""


@pytest.mark.parametrize(
    "source, error, message",
    [
        (
            BULK_TOO_BIG,
            "DFBContractError",
            "cb_wait_front(cb 0, 4) can never succeed: the buffer has only 2 pages",
        ),
        (PARTIAL_SCALER, "KernelError", "ReducePartialScaler::with_partial() is not provided"),
    ],
    ids=["bulk-wait-beyond-the-cb", "partial-scaler"],
)
def test_helper_errors_point_at_the_kernels_call(device, source, error, message):
    """A kernel-API error inside a helper names the kernel's line of the helper call."""
    x, out = tiles(device, torch.zeros(32, 128)), tiles(device, torch.zeros(32, 128))
    name = "_helper_error.cpp"
    path = KERNELS / LIB / name
    path.write_text(source)
    try:
        with pytest.raises(Exception) as info:
            run(unary_set(x, out, K(LIB + name, grid(1, 1), "compute", [1])), [x, out], "program")
    finally:
        path.unlink()
    assert type(info.value).__name__ == error
    text = str(info.value)
    assert message in text
    assert f"{name}:5:" in text


@pytest.mark.parametrize("dim", ["Row", "Col", "Scalar"])
def test_broadcast_binary_with_a_held_operand(device, dim):
    torch.manual_seed(10)
    a_h = torch.randn(32, 128).to(torch.bfloat16)
    b_h = torch.randn(32, 32).to(torch.bfloat16)
    a, b, out = tiles(device, a_h), tiles(device, b_h), tiles(device, torch.zeros(32, 128))
    n = a.buffer.num_pages
    compute = K(LIB + "bcast_chain.cpp", grid(1, 1), "compute", [n], {"CKL_BCAST": dim})
    run(binary_set(a, b, out, compute, b_pages=1), [a, b, out], "program")
    bf = b_h.float()
    held = {
        "Row": bf[0:1, :].expand(32, 32),
        "Col": bf[:, 0:1].expand(32, 32),
        "Scalar": bf[0, 0].expand(32, 32),
    }
    want = (a_h.float() + held[dim].repeat(1, 4)).to(torch.bfloat16)
    assert torch.equal(ttnn.to_torch(out), want)


DEST_LIMIT = """#include "ttnn/cpp/ttnn/kernel_lib/dest_helpers.hpp"
static_assert(compute_kernel_lib::DEST_AUTO_LIMIT == EXPECTED, "DEST_AUTO_LIMIT follows the compute config");
void kernel_main() {}
"""


@pytest.mark.parametrize("fp32, full_sync, expected", [(0, 0, 8), (1, 0, 4), (0, 1, 16), (1, 1, 8)])
def test_dest_auto_limit_is_the_targets_dst_rule(device, fp32, full_sync, expected):
    """DEST_AUTO_LIMIT is the number the runtime checks DST indices against."""
    program = Program("dest_limit")
    config = ComputeConfig(
        fp32_dest_acc_en=bool(fp32),
        dst_full_sync_en=bool(full_sync),
        defines=(("EXPECTED", str(expected)),),
    )
    program.create_kernel(NativeKernel(source=DEST_LIMIT), grid(1, 1), config)
    device.command_queue.enqueue_program(program)
    wrong = ComputeConfig(
        fp32_dest_acc_en=bool(fp32),
        dst_full_sync_en=bool(full_sync),
        defines=(("EXPECTED", str(expected + 1)),),
    )
    program = Program("dest_limit_wrong")
    program.create_kernel(NativeKernel(source=DEST_LIMIT), grid(1, 1), wrong)
    with pytest.raises(NativeBuildError, match="DEST_AUTO_LIMIT follows the compute config"):
        device.command_queue.enqueue_program(program)


@pytest.mark.parametrize("reuse", ["DEST_TO_SRCA", "DEST_TO_SRCB"])
def test_dest_reuse_binary(device, reuse):
    torch.manual_seed(12)
    a_h, b_h = torch.randn(32, 128).to(torch.bfloat16), torch.randn(32, 128).to(torch.bfloat16)
    a, b, out = tiles(device, a_h), tiles(device, b_h), tiles(device, torch.zeros(32, 128))
    n = a.buffer.num_pages
    compute = K(LIB + "dest_reuse.cpp", grid(1, 1), "compute", [n], {"CKL_REUSE": reuse})
    run(binary_set(a, b, out, compute, b_pages=n), [a, b, out], "program")
    af, bf = a_h.float(), b_h.float()
    want = (af - bf if reuse == "DEST_TO_SRCA" else bf - af).to(torch.bfloat16)
    assert torch.equal(ttnn.to_torch(out), want)
