"""The kernel API beyond the basics: stateful NoC transfers, transaction ids, shards, tilize /
untilize, matmul_block with L1 accumulation, transpose, dest reuse, format switches and SFPU
ops with parameters -- C++ kernels (through the bridge) and Python kernels (the reference).

Compute tests feed circular buffers from a Python reader and drain them with a Python
writer (raw L1 bytes), so each compute kernel is checked against torch / numpy on the exact
bytes the hardware format defines.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import torch

from tilewright import ttnn
from tilewright.device.formats import (
    DataFormat,
    TILE_32x32,
    decode_block,
    encode_block,
    encode_elements,
)
from tilewright.device.kernel_api import (
    EltwiseBinaryReuseDestType,
    EltwiseBinaryType,
    TensorAccessor,
    TensorAccessorArgs,
    binary_dest_reuse_tiles,
    cb_pop_front,
    cb_push_back,
    cb_reserve_back,
    cb_wait_front,
    copy_tile,
    get_read_ptr,
    get_write_ptr,
    leaky_relu_tile,
    matmul_block,
    mm_block_init,
    noc_async_read_one_packet_with_state,
    noc_async_read_set_trid,
    noc_async_read_shard,
    pack_reconfig_l1_acc,
    pack_tile,
    pack_tile_block,
    pack_untilize_block,
    pack_untilize_dest,
    pack_untilize_init,
    read_l1,
    tile_regs_acquire,
    tile_regs_commit,
    tile_regs_release,
    tile_regs_wait,
    tilize_block,
    tilize_init,
    untilize_block,
    untilize_init,
    write_l1,
)
from tilewright.device.kernel_api.accessor import tensor_accessor_args
from tilewright.device.program import (
    CircularBufferConfig,
    ComputeConfig,
    Program,
    ReaderDataMovementConfig,
    WriterDataMovementConfig,
)
from tilewright.errors import KernelError, NocError
from tilewright.native.kernels import NativeKernel

CPP = Path(__file__).resolve().parent / "cpp"
BF16, FP32, BFP8 = DataFormat.Float16_b, DataFormat.Float32, DataFormat.Bfp8_b
PAGE = {BF16: 2048, FP32: 4096, BFP8: 1088, DataFormat.Float16: 2048}
CORE = ttnn.CoreCoord(0, 0)


def bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bf16(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.bfloat16)


def tiles_bytes(matrix: torch.Tensor, fmt=BF16) -> np.ndarray:
    """Row-major tiles of a (32r x 32c) matrix, in the device format."""
    return encode_block(matrix.float().numpy(), fmt)


def rows_bytes(matrix: torch.Tensor, fmt=BF16) -> np.ndarray:
    """A row-major block (rows stored one after another)."""
    return encode_elements(matrix.float().numpy(), fmt)


def as_matrix(data: np.ndarray, rows: int, cols: int, fmt=BF16) -> torch.Tensor:
    return torch.from_numpy(decode_block(data, fmt, TILE_32x32, rows, cols))


def run_on_core(device, compute, cbs, pushes, pops, *, config=None):
    """Run ``compute`` on one core between a Python reader and writer.

    ``cbs``: {index: (format, pages)}; ``pushes``: [(cb, pages, bytes)] in order;
    ``pops``: [(cb, pages)] in order.  Returns the bytes of every pop, in order.
    """
    program = Program("kernel_api")
    for index, (fmt, pages) in cbs.items():
        page = PAGE[fmt]
        program.create_circular_buffer(
            CORE, CircularBufferConfig(pages * page, {index: fmt}).set_page_size(index, page)
        )
    out: list[np.ndarray] = []

    def reader():
        for cb, pages, data in pushes:
            cb_reserve_back(cb, pages)
            write_l1(get_write_ptr(cb), data)
            cb_push_back(cb, pages)

    def writer():
        for cb, pages in pops:
            cb_wait_front(cb, pages)
            out.append(read_l1(get_read_ptr(cb), pages * PAGE[cbs[cb][0]]))
            cb_pop_front(cb, pages)

    program.create_kernel(reader, CORE, ReaderDataMovementConfig())
    program.create_kernel(compute, CORE, config or ComputeConfig(), name="compute")
    program.create_kernel(writer, CORE, WriterDataMovementConfig())
    device.command_queue.enqueue_program(program)
    return out


# -- data movement -----------------------------------------------------------------------------


def test_stateful_noc_trid_bank_id_shards_and_cb_queries_from_cpp(device, capsys):
    torch.manual_seed(1)
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    a_h = bf16(torch.randn(64, 64))
    s_h = bf16(torch.randn(128, 64))
    a = ttnn.from_torch(a_h, memory_config=ttnn.DRAM_MEMORY_CONFIG, **kw)
    out = ttnn.from_torch(torch.zeros(64, 64), memory_config=ttnn.DRAM_MEMORY_CONFIG, **kw)
    s_cfg = ttnn.create_sharded_memory_config(
        (128, 64), ttnn.CoreGrid(y=1, x=2), ttnn.ShardStrategy.HEIGHT
    )
    s = ttnn.from_torch(s_h, memory_config=s_cfg, **kw)
    program = Program("dataflow_state")
    for index, fmt, pages in [(0, BF16, 4), (1, FP32, 1), (2, BFP8, 1)]:
        program.create_circular_buffer(
            CORE,
            CircularBufferConfig(pages * PAGE[fmt], {index: fmt}).set_page_size(index, PAGE[fmt]),
        )
    cta = [*tensor_accessor_args(a.buffer), *tensor_accessor_args(out.buffer),
           *tensor_accessor_args(s.buffer)]  # fmt: skip
    k = program.create_kernel(
        NativeKernel(CPP / "dataflow_state.cpp"), CORE, ReaderDataMovementConfig(cta)
    )
    program.set_runtime_args(
        k, CORE,
        [a.buffer_address(), out.buffer_address(), s.buffer_address(), device.num_dram_channels],
    )  # fmt: skip
    device.command_queue.enqueue_program(program)
    assert torch.equal(ttnn.to_torch(out), a_h)
    assert torch.equal(ttnn.to_torch(s), torch.cat([s_h[64:], s_h[64:]]))
    text = capsys.readouterr().out
    assert "tile 2048 hw 1024 faces 4 format 5" in text  # Float16_b = 5
    assert "cb 1 tile 4096 format 0" in text and "cb 2 tile 1088 format 6" in text
    assert "reservable true" in text
    assert "bank address matches true" in text
    assert "available true reservable false" in text
    s.deallocate()


def _dm_error(device, body, match, exc=NocError):
    program = Program("dm_error")
    program.create_circular_buffer(
        CORE, CircularBufferConfig(4 * 2048, {0: BF16}).set_page_size(0, 2048)
    )
    program.create_kernel(body, CORE, ReaderDataMovementConfig())
    with pytest.raises(exc, match=match):
        device.command_queue.enqueue_program(program)


def test_with_state_without_set_state_is_an_error(device):
    def body():
        noc_async_read_one_packet_with_state(0x1000, get_write_ptr(0))

    _dm_error(device, body, "no noc_async_read_one_packet_set_state on NoC 0 before it")


def test_transaction_ids_are_four_bits(device):
    _dm_error(device, lambda: noc_async_read_set_trid(16), "transaction id 16 does not fit")


def test_shard_access_checks_the_accessor(device):
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    s_cfg = ttnn.create_sharded_memory_config(
        (128, 64), ttnn.CoreGrid(y=1, x=2), ttnn.ShardStrategy.HEIGHT
    )
    s = ttnn.from_torch(torch.zeros(128, 64), memory_config=s_cfg, **kw)
    d = ttnn.from_torch(torch.zeros(64, 64), memory_config=ttnn.DRAM_MEMORY_CONFIG, **kw)

    def past_the_end():
        acc = TensorAccessor(TensorAccessorArgs(0), s.buffer_address(), 2048)
        noc_async_read_shard(2, acc, get_write_ptr(0))

    def interleaved():
        acc = TensorAccessor(TensorAccessorArgs(2), d.buffer_address(), 2048)
        noc_async_read_shard(0, acc, get_write_ptr(0))

    for body, match, exc in [
        (past_the_end, "shard 2 is outside the tensor", NocError),
        (interleaved, "the tensor accessor is interleaved", KernelError),
    ]:
        program = Program("shards")
        program.create_circular_buffer(
            CORE, CircularBufferConfig(4 * 2048, {0: BF16}).set_page_size(0, 2048)
        )
        cta = [*tensor_accessor_args(s.buffer), *tensor_accessor_args(d.buffer)]
        program.create_kernel(body, CORE, ReaderDataMovementConfig(cta))
        with pytest.raises(exc, match=match):
            device.command_queue.enqueue_program(program)
    s.deallocate()


# -- tilize / untilize ------------------------------------------------------------------------

BLOCK = 4


def py_tilize_untilize():
    """The Python-kernel twin of cpp/tilize_untilize.cpp (block = 4)."""
    block = BLOCK
    tilize_init(0, block, 16)
    cb_wait_front(0, block)
    cb_reserve_back(16, block)
    tilize_block(0, block, 16)
    cb_push_back(16, block)
    cb_pop_front(0, block)
    untilize_init(1)
    cb_wait_front(1, block)
    cb_reserve_back(17, block)
    untilize_block(1, block, 17, block_ct_dim=2)
    cb_push_back(17, block)
    cb_pop_front(1, block)
    pack_untilize_init(2, 18, 2, block)
    cb_reserve_back(18, 2 * block)
    for b in range(block // 2):
        cb_wait_front(2, 4)
        pack_untilize_block(2, 2, 18, b, block_ct_dim=2, full_ct_dim=block)
        cb_pop_front(2, 4)
    cb_push_back(18, 2 * block)


@pytest.mark.parametrize(
    "kind, rm_fmt, tiled_fmt",
    [("cpp", BF16, BF16), ("python", BF16, BF16), ("cpp", FP32, BFP8)],
    ids=["cpp-bf16", "python-bf16", "cpp-fp32-to-bfp8"],
)
def test_tilize_untilize_pack_untilize(device, kind, rm_fmt, tiled_fmt):
    torch.manual_seed(2)
    w = BLOCK * 32
    m0 = torch.randn(32, w)
    if rm_fmt == BF16:
        m0 = bf16(m0).float()
    m1, m2 = bf16(torch.randn(32, w)).float(), bf16(torch.randn(64, w)).float()
    # c_2 receives m2 in 2x2-tile chunks, column block by column block.
    chunks = [tiles_bytes(m2[:, 64 * b : 64 * b + 64]) for b in range(BLOCK // 2)]
    rm_pages = 32 * w * (4 if rm_fmt == FP32 else 2) // PAGE[rm_fmt]
    cbs = {0: (rm_fmt, rm_pages), 1: (BF16, BLOCK), 2: (BF16, 4), 16: (tiled_fmt, BLOCK),
           17: (BF16, BLOCK), 18: (BF16, 2 * BLOCK)}  # fmt: skip
    pushes = [(0, rm_pages, rows_bytes(m0, rm_fmt)), (1, BLOCK, tiles_bytes(m1)),
              *[(2, 4, c) for c in chunks]]  # fmt: skip
    pops = [(16, BLOCK), (17, BLOCK), (18, 2 * BLOCK)]
    if kind == "cpp":
        compute = NativeKernel(CPP / "tilize_untilize.cpp")
        config = ComputeConfig(compile_args=(BLOCK,), fp32_dest_acc_en=rm_fmt == FP32)
    else:
        compute, config = py_tilize_untilize, ComputeConfig()
    tiles, rm, wide = run_on_core(device, compute, cbs, pushes, pops, config=config)
    # tilize: bit-exact against the host tilizer in the output format (via DST: fp32 kept
    # with fp32_dest_acc_en, then packed to bfp8 with the device codec)
    assert np.array_equal(tiles, tiles_bytes(m0, tiled_fmt))
    # untilize / pack_untilize: bit-exact row-major bf16
    assert np.array_equal(rm, rows_bytes(m1))
    assert np.array_equal(wide, rows_bytes(m2))


def test_tilize_of_a_partial_block_is_an_error(device):
    def compute():
        tilize_init(0, BLOCK, 16)
        cb_wait_front(0, BLOCK - 1)
        cb_reserve_back(16, BLOCK)
        tilize_block(0, BLOCK, 16)

    cbs = {0: (BF16, BLOCK), 16: (BF16, BLOCK)}
    pushes = [(0, BLOCK - 1, np.zeros((BLOCK - 1) * 2048, np.uint8))]
    with pytest.raises(
        KernelError, match=r"only 3 pages \(6144 bytes\) are waited .*a partial block"
    ):
        run_on_core(device, compute, cbs, pushes, [])


def test_tilize_from_a_block_float_cb_is_an_error(device):
    def compute():
        cb_wait_front(0, 1)
        tilize_block(0, 1, 16)

    cbs = {0: (BFP8, 1), 16: (BF16, 1)}
    with pytest.raises(KernelError, match="block-float format, which has no row-major form"):
        run_on_core(device, compute, cbs, [(0, 1, np.zeros(1088, np.uint8))], [])


def test_untilize_block_wider_than_dst_is_an_error(device):
    def compute():
        cb_wait_front(0, 8)
        cb_reserve_back(16, 8)
        untilize_block(0, 8, 16, block_ct_dim=8)  # fp32 DST: 4 tiles per acquire

    cbs = {0: (BF16, 8), 16: (BF16, 8)}
    with pytest.raises(KernelError, match="block_ct_dim=8 tiles do not fit the 4 DST tiles"):
        run_on_core(device, compute, cbs, [(0, 8, np.zeros(8 * 2048, np.uint8))], [],
                    config=ComputeConfig(fp32_dest_acc_en=True))  # fmt: skip


def test_pack_untilize_dest_writes_dst_row_major(device):
    torch.manual_seed(3)
    m = bf16(torch.randn(64, 64)).float()

    def compute():
        cb_wait_front(0, 4)
        tile_regs_acquire()
        for i in range(4):
            copy_tile(0, i, i)
        tile_regs_commit()
        cb_reserve_back(16, 4)
        tile_regs_wait()
        pack_untilize_dest(16, block_rt_dim=2, block_ct_dim=2)
        tile_regs_release()
        cb_push_back(16, 4)

    (out,) = run_on_core(device, compute, {0: (BF16, 4), 16: (BF16, 4)},
                         [(0, 4, tiles_bytes(m))], [(16, 4)])  # fmt: skip
    assert np.array_equal(out, rows_bytes(m))


# -- matmul_block, L1 accumulation -----------------------------------------------------------


@pytest.mark.parametrize("transpose", [0, 1])
def test_cpp_matmul_block_with_l1_accumulation_matches_torch(device, transpose):
    torch.manual_seed(4)
    rt, ct, kt, kb = 2, 2, 2, 2
    a = bf16(torch.randn(32 * rt, 32 * kt * kb)).float()
    b = bf16(torch.randn(32 * kt * kb, 32 * ct)).float()
    pushes = []
    for k in range(kb):
        a_blk = a[:, 32 * kt * k : 32 * kt * (k + 1)]
        b_blk = b[32 * kt * k : 32 * kt * (k + 1), :]
        if transpose:  # each B tile arrives transposed; the unpacker transposes it back
            b_blk = b_blk.reshape(kt, 32, ct, 32).transpose(1, 3).reshape(32 * kt, 32 * ct)
        pushes += [(0, rt * kt, tiles_bytes(a_blk)), (1, kt * ct, tiles_bytes(b_blk))]
    compute = NativeKernel(CPP / "matmul_block.cpp")
    config = ComputeConfig(compile_args=(rt, ct, kt, kb, transpose), fp32_dest_acc_en=True)
    cbs = {0: (BF16, rt * kt), 1: (BF16, kt * ct), 16: (FP32, rt * ct)}
    (out,) = run_on_core(device, compute, cbs, pushes, [(16, rt * ct)], config=config)
    got = as_matrix(out, rt, ct, FP32)
    assert torch.allclose(got, a @ b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("b_format", [BF16, DataFormat.Float16, BFP8], ids=lambda f: f.name)
@pytest.mark.parametrize("transpose", [0, 1])
def test_cpp_matmul_block_is_bit_identical_to_the_python_kernel(device, b_format, transpose):
    """A 1x4-tile block (B's tiles decoded side by side into one row: in place for bf16,
    staged through a tile for the other formats) gives the Python kernel's bits."""
    torch.manual_seed(6)
    rt, ct, kt, kb = 1, 4, 2, 2
    a = bf16(torch.randn(32 * rt, 32 * kt * kb)).float()
    b = torch.randn(32 * kt * kb, 32 * ct)
    pushes = []
    for k in range(kb):
        b_blk = b[32 * kt * k : 32 * kt * (k + 1), :]
        if transpose:
            b_blk = b_blk.reshape(kt, 32, ct, 32).transpose(1, 3).reshape(32 * kt, 32 * ct)
        pushes += [
            (0, rt * kt, tiles_bytes(a[:, 32 * kt * k : 32 * kt * (k + 1)])),
            (1, kt * ct, tiles_bytes(b_blk, b_format)),
        ]

    def python_compute():
        mm_block_init(0, 1, 16, transpose, ct, rt, kt)
        cb_reserve_back(16, rt * ct)
        for kbi in range(kb):
            cb_wait_front(0, rt * kt)
            cb_wait_front(1, kt * ct)
            tile_regs_acquire()
            for k in range(kt):
                matmul_block(0, 1, k, k * ct, 0, transpose, ct, rt, kt)
            tile_regs_commit()
            cb_pop_front(0, rt * kt)
            cb_pop_front(1, kt * ct)
            tile_regs_wait()
            pack_reconfig_l1_acc(0 if kbi == 0 else 1)
            if kbi == 0:
                pack_tile_block(0, 16, rt * ct)
            else:
                for i in range(rt * ct):
                    pack_tile(i, 16, i, out_of_order=True)
            tile_regs_release()
        pack_reconfig_l1_acc(0)
        cb_push_back(16, rt * ct)

    config = ComputeConfig(compile_args=(rt, ct, kt, kb, transpose), fp32_dest_acc_en=True)
    cbs = {0: (BF16, rt * kt), 1: (b_format, kt * ct), 16: (FP32, rt * ct)}
    (native,) = run_on_core(device, NativeKernel(CPP / "matmul_block.cpp"), cbs, pushes,
                            [(16, rt * ct)], config=config)  # fmt: skip
    (python,) = run_on_core(device, python_compute, cbs, pushes, [(16, rt * ct)], config=config)
    assert np.array_equal(native, python)
    # and torch's product of B as the device holds it (bfp8_b quantises each face row)
    blocks = [as_matrix(data, kt, ct, b_format) for cb, _, data in pushes if cb == 1]
    if transpose:
        blocks = [
            x.reshape(kt, 32, ct, 32).transpose(1, 3).reshape(32 * kt, 32 * ct) for x in blocks
        ]
    got = as_matrix(native, rt, ct, FP32)
    assert torch.allclose(got, a @ torch.cat(blocks), rtol=1e-5, atol=1e-4)


def test_l1_accumulation_adds_in_the_cb_format(device):
    """Two packs of the same tile into one slot with L1 accumulation: CB = bf16(x) + x."""
    torch.manual_seed(5)
    x = bf16(torch.randn(32, 32)).float()

    def compute():
        cb_wait_front(0, 1)
        cb_reserve_back(16, 1)
        tile_regs_acquire()
        copy_tile(0, 0, 0)
        tile_regs_commit()
        tile_regs_wait()
        pack_reconfig_l1_acc(0)
        pack_tile(0, 16, 0, out_of_order=True)
        pack_reconfig_l1_acc(1)
        pack_tile(0, 16, 0, out_of_order=True)
        pack_tile(0, 16, 0, out_of_order=True)
        tile_regs_release()
        cb_push_back(16, 1)

    (out,) = run_on_core(device, compute, {0: (BF16, 1), 16: (BF16, 1)},
                         [(0, 1, tiles_bytes(x))], [(16, 1)])  # fmt: skip
    assert torch.equal(as_matrix(out, 1, 1), bf16(bf16(2 * x).float() + x).float())


@pytest.mark.parametrize(
    "case, match",
    [
        (
            "dst",
            r"matmul_block\(ct_dim=4, rt_dim=3, kt_dim=1\) writes DST tiles 0..11, beyond the 8",
        ),
        ("init", "the last matmul_block_init / mm_block_init configured ct_dim=2, rt_dim=1"),
        ("l1acc", r"pack_reconfig_l1_acc\(2\): the flag must be 0 or 1"),
        ("reuse", "binary_dest_reuse_tiles needs EltwiseBinaryReuseDestType::DEST_TO_SRCA or"),
    ],
)
def test_compute_misuse_is_reported(device, case, match):
    def compute():
        cb_wait_front(0, 1)
        tile_regs_acquire()
        if case == "dst":
            matmul_block(0, 0, 0, 0, 0, 0, 4, 3, 1)
        elif case == "init":
            mm_block_init(0, 0, 16, 0, 2, 1, 1)
            matmul_block(0, 0, 0, 0, 0, 0, 1, 1, 1)
        elif case == "l1acc":
            pack_reconfig_l1_acc(2)
        else:
            binary_dest_reuse_tiles(
                0, 0, 0, EltwiseBinaryType.ELWADD, EltwiseBinaryReuseDestType.NONE
            )

    with pytest.raises(KernelError, match=match):
        run_on_core(device, compute, {0: (BF16, 1)}, [(0, 1, np.zeros(2048, np.uint8))], [])


# -- transpose, dest reuse, format switches ----------------------------------------------------


def test_cpp_transpose_dest_reuse_and_format_switches(device):
    torch.manual_seed(6)
    x, y = bf16(torch.randn(32, 32)).float(), bf16(torch.randn(32, 32)).float()
    cbs = {0: (BF16, 1), 1: (BF16, 1), 16: (BF16, 5), 17: (FP32, 1)}
    pushes = [(0, 1, tiles_bytes(x)), (1, 1, tiles_bytes(y))]
    out, out_f32 = run_on_core(device, NativeKernel(CPP / "transpose_reuse.cpp"), cbs, pushes,
                               [(16, 5), (17, 1)])  # fmt: skip
    got = as_matrix(out, 1, 5)
    expect = [x.T, x.T, bf16(x - y).float(), bf16(y - x).float().T, bf16(y * x).float()]
    for i, e in enumerate(expect):
        assert torch.equal(got[:, 32 * i : 32 * (i + 1)], e), i
    # DST is bf16 (no fp32_dest_acc_en): the fp32 CB receives the bf16 value exactly
    assert torch.equal(as_matrix(out_f32, 1, 1, FP32), bf16(x - y).float())


# -- SFPU ops with parameters --------------------------------------------------------------


def _sfpu_expected(x: torch.Tensor) -> list[tuple[torch.Tensor, bool]]:
    """(reference, bit-exact?) per output tile of cpp/sfpu_params.cpp."""
    F = torch.nn.functional
    return [
        (F.leaky_relu(x, 0.1), True),
        (F.elu(x, 0.5), False),
        (x.clamp(0.0, 1.5), True),
        (x.clamp(min=-0.5), True),
        (x.pow(2.5), False),  # NaN for negative x, as torch.pow
        (x.pow(3), False),
        (2.0 - x, True),
        (F.softplus(x, beta=2.0, threshold=20.0), False),
        (x + 0.75, True),
        (x * -3.0, True),
        (torch.round(x, decimals=1), False),
        (torch.trunc(x), True),
        (torch.frac(x), True),
        (F.hardsigmoid(x), False),
        (torch.atan(x), False),
        (torch.signbit(x).float(), True),
    ]


def test_cpp_sfpu_ops_with_parameters_match_torch(device):
    torch.manual_seed(7)
    x = bf16(torch.randn(32, 32) * 2).float()
    cbs = {0: (BF16, 1), 16: (BF16, 16)}
    (out,) = run_on_core(device, NativeKernel(CPP / "sfpu_params.cpp"), cbs,
                         [(0, 1, tiles_bytes(x))], [(16, 16)])  # fmt: skip
    got = as_matrix(out, 1, 16)
    for i, (ref, exact) in enumerate(_sfpu_expected(x)):
        tile = got[:, 32 * i : 32 * (i + 1)]
        want = bf16(ref).float()
        if exact:
            assert torch.equal(tile, want), i
        else:
            assert torch.allclose(tile, want, rtol=1.6e-2, atol=1e-2, equal_nan=True), i


def test_python_sfpu_parameters_are_floats_or_their_bits(device):
    torch.manual_seed(8)
    x = bf16(torch.randn(32, 32)).float()

    def compute():
        cb_wait_front(0, 1)
        cb_reserve_back(16, 2)
        tile_regs_acquire()
        copy_tile(0, 0, 0)
        copy_tile(0, 0, 1)
        leaky_relu_tile(0, 0.25)  # a float
        leaky_relu_tile(1, bits(0.25))  # the bits C++ passes
        tile_regs_commit()
        tile_regs_wait()
        pack_tile(0, 16)
        pack_tile(1, 16)
        tile_regs_release()
        cb_push_back(16, 2)

    (out,) = run_on_core(device, compute, {0: (BF16, 1), 16: (BF16, 2)},
                         [(0, 1, tiles_bytes(x))], [(16, 2)])  # fmt: skip
    want = bf16(torch.nn.functional.leaky_relu(x, 0.25)).float()
    got = as_matrix(out, 1, 2)
    assert torch.equal(got[:, :32], want) and torch.equal(got[:, 32:], want)
