"""Kernel sets written the way tt-metal programs are, run natively through ``ttnn.generic_op``
and through the host ``Program`` API, checked against torch.

Each set is described once as plain data (:class:`Spec`); ``via`` runs it either as a ttnn
ProgramDescriptor or with the host API calls (CircularBufferConfig, create_kernel with a
NativeKernel, set_runtime_args, create_semaphore).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from tilewright import ttnn
from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet
from tilewright.device.formats import TTNN_TO_DATA_FORMAT, TtnnDataType
from tilewright.device.program import (
    NOC,
    CircularBufferConfig,
    ComputeConfig,
    DataMovementConfig,
    DataMovementProcessor,
    Program,
)
from tilewright.native.kernels import NativeKernel

KERNELS = Path(__file__).resolve().parent / "kernels"
TILE = 32 * 32
BF16_TILE = 2048


@dataclass
class K:
    """One kernel of a set: file, cores, kind, compile args, defines, runtime args per core."""

    file: str
    cores: CoreRangeSet
    kind: str  # reader | writer | compute
    ct: list[int] = field(default_factory=list)
    defines: dict[str, str] = field(default_factory=dict)
    args: dict[CoreCoord, list[int]] = field(default_factory=dict)
    fp32: bool = False


@dataclass
class CB:
    index: int
    cores: CoreRangeSet
    pages: int
    dtype: object = ttnn.bfloat16
    page_size: int = BF16_TILE
    buffer: object = None


@dataclass
class Spec:
    kernels: list[K]
    cbs: list[CB]
    semaphores: list[tuple[CoreRangeSet, int]] = field(default_factory=list)


def run(spec: Spec, tensors, via: str) -> None:
    if via == "generic_op":
        kernels = []
        for k in spec.kernels:
            if k.kind == "reader":
                config = ttnn.ReaderConfigDescriptor()
            elif k.kind == "writer":
                config = ttnn.WriterConfigDescriptor()
            else:
                config = ttnn.ComputeConfigDescriptor(fp32_dest_acc_en=k.fp32)
            rt = ttnn.RuntimeArgs()
            for c, a in k.args.items():
                rt[c.x][c.y] = a
            kernels.append(
                ttnn.KernelDescriptor(
                    kernel_source=str(KERNELS / k.file),
                    core_ranges=k.cores,
                    compile_time_args=k.ct,
                    defines=list(k.defines.items()),
                    runtime_args=rt,
                    config=config,
                )
            )
        cbs = []
        for cb in spec.cbs:
            fmt = ttnn.CBFormatDescriptor(cb.index, cb.dtype, cb.page_size)
            cbs.append(
                ttnn.CBDescriptor(cb.pages * cb.page_size, cb.cores, [fmt], buffer=cb.buffer)
            )
        sems = [
            ttnn.SemaphoreDescriptor(core_ranges=c, initial_value=v) for c, v in spec.semaphores
        ]
        out = ttnn.generic_op(
            list(tensors), ttnn.ProgramDescriptor(kernels=kernels, cbs=cbs, semaphores=sems)
        )
        assert out is tensors[-1]
        return
    program = Program("kernel_set")
    for cb in spec.cbs:
        fmt = TTNN_TO_DATA_FORMAT[TtnnDataType(int(cb.dtype))]
        cfg = CircularBufferConfig(cb.pages * cb.page_size, {cb.index: fmt}).set_page_size(
            cb.index, cb.page_size
        )
        if cb.buffer is not None:
            cfg.set_globally_allocated_address(cb.buffer)
        program.create_circular_buffer(cb.cores, cfg)
    for cores, value in spec.semaphores:
        program.create_semaphore(cores, value)
    for k in spec.kernels:
        defines = tuple(k.defines.items())
        if k.kind == "compute":
            config = ComputeConfig(
                fp32_dest_acc_en=k.fp32, compile_args=tuple(k.ct), defines=defines
            )
        elif k.kind == "reader":
            config = DataMovementConfig(
                DataMovementProcessor.RISCV_1, NOC.NOC_0, tuple(k.ct), defines
            )
        else:
            config = DataMovementConfig(
                DataMovementProcessor.RISCV_0, NOC.NOC_1, tuple(k.ct), defines
            )
        handle = program.create_kernel(NativeKernel(KERNELS / k.file), k.cores, config)
        for c, a in k.args.items():
            program.set_runtime_args(handle, c, a)
    tensors[-1].device().command_queue.enqueue_program(program)


VIA = pytest.mark.parametrize("via", ["generic_op", "program"])


def grid(x: int, y: int) -> CoreRangeSet:
    return CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(x - 1, y - 1))])


def tiles(device, t, dtype=ttnn.bfloat16, memory_config=None):
    return ttnn.from_torch(
        t,
        dtype=dtype,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=memory_config or ttnn.DRAM_MEMORY_CONFIG,
    )


def split(cores: CoreRangeSet, n: int):
    """(core, start, count) per core, as split_work_to_cores hands out the units."""
    _, _, g1, g2, n1, n2 = ttnn.split_work_to_cores(cores, n)
    out, start = [], 0
    for group, count in ((g1, n1), (g2, n2)):
        for c in group.cores():
            out.append((c, start, count))
            start += count
    return out


# -- loopback ---------------------------------------------------------------------------------


@VIA
def test_loopback(device, via):
    n = 4096
    src_h = torch.randint(0, 2**31, (n,), dtype=torch.int32)
    src = ttnn.from_torch(
        src_h.reshape(1, n), dtype=ttnn.int32, device=device, layout=ttnn.ROW_MAJOR_LAYOUT
    )
    dst = ttnn.from_torch(
        torch.zeros(1, n, dtype=torch.int32),
        dtype=ttnn.int32,
        device=device,
        layout=ttnn.ROW_MAJOR_LAYOUT,
    )
    core = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(0, 0))])
    scratch = ttnn.from_torch(
        torch.zeros(1, 1024, dtype=torch.int32),
        dtype=ttnn.int32,
        device=device,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )
    args = [scratch.buffer_address(), src.buffer_address(), dst.buffer_address(), n * 4, 1024]
    spec = Spec([K("loopback.cpp", core, "reader", args={CoreCoord(0, 0): args})], [])
    run(spec, [src, scratch, dst], via)
    assert torch.equal(ttnn.to_torch(dst).reshape(-1), src_h)


# -- eltwise binary ----------------------------------------------------------------------------


@VIA
@pytest.mark.parametrize("op, fn", [("add_tiles", torch.add), ("mul_tiles", torch.mul)])
def test_eltwise_binary(device, via, op, fn):
    torch.manual_seed(1)
    a_h, b_h = torch.randn(128, 256).to(torch.bfloat16), torch.randn(128, 256).to(torch.bfloat16)
    a, b, out = tiles(device, a_h), tiles(device, b_h), tiles(device, torch.zeros(128, 256))
    cores = grid(3, 2)
    work = split(cores, a.buffer.num_pages)
    used = CoreRangeSet([CoreRange(c, c) for c, _, _ in work])
    ct = [
        *ttnn.TensorAccessorArgs(a).get_compile_time_args(),
        *ttnn.TensorAccessorArgs(b).get_compile_time_args(),
    ]
    spec = Spec(
        [
            K(
                "reader_binary.cpp",
                used,
                "reader",
                ct,
                args={c: [a.buffer_address(), b.buffer_address(), s, n] for c, s, n in work},
            ),
            K(
                "eltwise_binary.cpp",
                used,
                "compute",
                defines={"ELTWISE_OP": op},
                args={c: [n] for c, _, n in work},
            ),
            K(
                "writer_unary.cpp",
                used,
                "writer",
                ttnn.TensorAccessorArgs(out).get_compile_time_args(),
                args={c: [out.buffer_address(), s, n] for c, s, n in work},
            ),
        ],
        [CB(0, used, 2), CB(1, used, 2), CB(16, used, 2)],
    )
    run(spec, [a, b, out], via)
    assert torch.equal(ttnn.to_torch(out), fn(a_h.float(), b_h.float()).to(torch.bfloat16))


# -- eltwise SFPU with defines ---------------------------------------------------------------------

SFPU_CASES = [
    (
        "relu",
        {"SFPU_OP_CHAIN_0": "relu_tile_init(); relu_tile(0);", "SFPU_OP_RELU_FAMILY_INCLUDE": "1"},
        torch.relu,
        0,
    ),
    (
        "exp",
        {
            "SFPU_OP_CHAIN_0": "exp_tile_init<false>(); exp_tile<false>(0);",
            "SFPU_OP_EXP_INCLUDE": "1",
        },
        torch.exp,
        1,
    ),
    (
        "leaky_relu",
        {
            "SFPU_OP_CHAIN_0": f"leaky_relu_tile_init(); leaky_relu_tile(0, {struct.unpack('<I', struct.pack('<f', 0.25))[0]}u);"
        },
        lambda x: torch.nn.functional.leaky_relu(x, 0.25),
        0,
    ),
    ("erf", {"SFPU_OP_CHAIN_0": "erf_tile_init(); erf_tile(0);"}, torch.erf, 1),
]


@VIA
@pytest.mark.parametrize("name, defines, fn, ulps", SFPU_CASES, ids=[c[0] for c in SFPU_CASES])
def test_eltwise_sfpu_with_defines(device, via, name, defines, fn, ulps):
    torch.manual_seed(2)
    x_h = torch.randn(64, 128).to(torch.bfloat16)
    x, out = tiles(device, x_h), tiles(device, torch.zeros(64, 128))
    n = x.buffer.num_pages
    core = grid(1, 1)
    c0 = CoreCoord(0, 0)
    spec = Spec(
        [
            K(
                "reader_unary.cpp",
                core,
                "reader",
                ttnn.TensorAccessorArgs(x).get_compile_time_args(),
                args={c0: [x.buffer_address(), 0, n]},
            ),
            K("eltwise_sfpu.cpp", core, "compute", [n], defines),
            K(
                "writer_unary.cpp",
                core,
                "writer",
                ttnn.TensorAccessorArgs(out).get_compile_time_args(),
                args={c0: [out.buffer_address(), 0, n]},
            ),
        ],
        [CB(0, core, 2), CB(16, core, 2)],
    )
    run(spec, [x, out], via)
    got = ttnn.to_torch(out).float()
    want = fn(x_h.float()).to(torch.bfloat16).float()
    if ulps == 0:
        assert torch.equal(got, want)
    else:  # transcendental: within one bf16 ulp of torch's float32 result
        assert torch.allclose(got, want, rtol=2**-7, atol=1e-6)


# -- matmul: single core and multicore -----------------------------------------------------------


def matmul_spec(a, b, out, cores: CoreRangeSet) -> Spec:
    Mt, Kt = a.shape[-2] // 32, a.shape[-1] // 32
    Nt = b.shape[-1] // 32
    work = split(cores, Mt * Nt)
    used = CoreRangeSet([CoreRange(c, c) for c, _, _ in work])
    ct = [
        *ttnn.TensorAccessorArgs(a).get_compile_time_args(),
        *ttnn.TensorAccessorArgs(b).get_compile_time_args(),
    ]
    return Spec(
        [
            K(
                "reader_mm.cpp",
                used,
                "reader",
                ct,
                args={
                    c: [a.buffer_address(), b.buffer_address(), Kt, Nt, s, n] for c, s, n in work
                },
            ),
            K("mm.cpp", used, "compute", args={c: [n, Kt] for c, _, n in work}),
            K(
                "writer_unary.cpp",
                used,
                "writer",
                ttnn.TensorAccessorArgs(out).get_compile_time_args(),
                args={c: [out.buffer_address(), s, n] for c, s, n in work},
            ),
        ],
        [CB(0, used, 2), CB(1, used, 2), CB(16, used, 2)],
    )


@VIA
@pytest.mark.parametrize("cores", [(1, 1), (4, 2)], ids=["single_core", "multicore"])
def test_matmul(device, via, cores):
    torch.manual_seed(3)
    a_h, b_h = torch.randn(96, 128).to(torch.bfloat16), torch.randn(128, 64).to(torch.bfloat16)
    a, b, out = tiles(device, a_h), tiles(device, b_h), tiles(device, torch.zeros(96, 64))
    run(matmul_spec(a, b, out, grid(*cores)), [a, b, out], via)
    want = a_h.float() @ b_h.float()
    got = ttnn.to_torch(out).float()
    assert torch.allclose(got, want, rtol=0.02, atol=0.1), (got - want).abs().max()


# -- reuse + multicast matmul with semaphores --------------------------------------------------------


@VIA
def test_reuse_multicast_matmul(device, via):
    torch.manual_seed(4)
    gx, gy, pm, pn, bw, Kt = 3, 2, 2, 2, 2, 4
    M, N, K_ = gy * pm * 32, gx * pn * 32, Kt * 32
    a_h, b_h = torch.randn(M, K_).to(torch.bfloat16), torch.randn(K_, N).to(torch.bfloat16)
    a, b, out = tiles(device, a_h), tiles(device, b_h), tiles(device, torch.zeros(M, N))
    cores = grid(gx, gy)
    noc = {
        (x, y): device.worker_core_from_logical_core(CoreCoord(x, y))
        for x in range(gx)
        for y in range(gy)
    }
    in0_args, in1_args = {}, {}
    for x in range(gx):
        for y in range(gy):
            c = CoreCoord(x, y)
            row0, row1 = noc[(1 % gx, y)], noc[(gx - 1, y)]
            in0_args[c] = [
                a.buffer_address(),
                Kt,
                bw,
                pm,
                y * pm,
                int(x == 0),
                noc[(0, y)].x,
                noc[(0, y)].y,
                row0.x,
                row0.y,
                row1.x,
                row1.y,
                gx - 1,
            ]
            col0, col1 = noc[(x, 1 % gy)], noc[(x, gy - 1)]
            in1_args[c] = [
                b.buffer_address(),
                out.buffer_address(),
                Kt,
                N // 32,
                bw,
                pm,
                pn,
                y * pm,
                x * pn,
                int(y == 0),
                noc[(x, 0)].x,
                noc[(x, 0)].y,
                col0.x,
                col0.y,
                col1.x,
                col1.y,
                gy - 1,
            ]
    spec = Spec(
        [
            K(
                "mcast_in0.cpp",
                cores,
                "reader",
                [0, 1, *ttnn.TensorAccessorArgs(a).get_compile_time_args()],
                args=in0_args,
            ),
            K("mm_block.cpp", cores, "compute", [Kt // bw, bw, pm, pn]),
            K(
                "mcast_in1_writer.cpp",
                cores,
                "writer",
                [
                    2,
                    3,
                    *ttnn.TensorAccessorArgs(b).get_compile_time_args(),
                    *ttnn.TensorAccessorArgs(out).get_compile_time_args(),
                ],
                args=in1_args,
            ),
        ],
        [CB(0, cores, 2 * pm * bw), CB(1, cores, 2 * bw * pn), CB(16, cores, pm * pn)],
        [(cores, 0), (cores, 0), (cores, 0), (cores, 0)],
    )
    run(spec, [a, b, out], via)
    want = a_h.float() @ b_h.float()
    got = ttnn.to_torch(out).float()
    assert torch.allclose(got, want, rtol=0.02, atol=0.1), (got - want).abs().max()


# -- sharded data ------------------------------------------------------------------------------


@VIA
def test_sharded_relu_in_place_of_the_shards(device, via):
    torch.manual_seed(5)
    x_h = torch.randn(256, 64).to(torch.bfloat16)
    g = ttnn.CoreGrid(y=1, x=4)
    mem = ttnn.create_sharded_memory_config((256, 64), g, ttnn.ShardStrategy.HEIGHT)
    x = tiles(device, x_h, memory_config=mem)
    out = tiles(device, torch.zeros(256, 64), memory_config=mem)
    cores = g.to_core_range_set()
    per_core = x.buffer.num_pages // 4
    in_cb = ttnn.cb_descriptor_from_sharded_tensor(0, x)
    out_cb = ttnn.cb_descriptor_from_sharded_tensor(16, out)
    args = {c: [per_core] for c in cores.cores()}
    spec = Spec(
        [
            K("sharded_reader.cpp", cores, "reader", args=args),
            K(
                "eltwise_sfpu.cpp",
                cores,
                "compute",
                [per_core],
                {"SFPU_OP_CHAIN_0": "relu_tile_init(); relu_tile(0);"},
            ),
            K("sharded_writer.cpp", cores, "writer", args=args),
        ],
        [
            CB(
                0, cores, per_core, page_size=in_cb.format_descriptors[0].page_size, buffer=x.buffer
            ),
            CB(
                16,
                cores,
                per_core,
                page_size=out_cb.format_descriptors[0].page_size,
                buffer=out.buffer,
            ),
        ],
    )
    run(spec, [x, out], via)
    assert torch.equal(ttnn.to_torch(out), torch.relu(x_h.float()).to(torch.bfloat16))


# -- add integers on a RISC-V with raw L1 pointers; DPRINT ------------------------------------------


def int_tensor(device, value, memory_config=None):
    return ttnn.from_torch(
        torch.tensor([[value]], dtype=torch.int32),
        dtype=ttnn.int32,
        device=device,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        memory_config=memory_config or ttnn.DRAM_MEMORY_CONFIG,
    )


@VIA
def test_add_integers_on_riscv_with_raw_l1_pointers(device, via, capsys):
    a, b, out = int_tensor(device, 14), int_tensor(device, 7), int_tensor(device, 0)
    l1 = [int_tensor(device, 0, ttnn.L1_MEMORY_CONFIG) for _ in range(3)]
    core = CoreRangeSet([CoreRange(CoreCoord(2, 1), CoreCoord(2, 1))])
    args = [
        a.buffer_address(),
        b.buffer_address(),
        out.buffer_address(),
        *(t.buffer_address() for t in l1),
    ]
    spec = Spec([K("add_ints.cpp", core, "reader", args={CoreCoord(2, 1): args})], [])
    run(spec, [a, b, *l1, out], via)
    assert ttnn.to_torch(out).item() == 21
    assert "0:(2, 1):NC: Adding integers: 14 + 7 = 21" in capsys.readouterr().out


@VIA
def test_dprint_prefixes_each_processor_like_the_dprint_server(device, via, capsys):
    cores = grid(2, 1)
    dummy = int_tensor(device, 0)
    spec = Spec(
        [
            K("hello.cpp", cores, "writer", args={CoreCoord(x, 0): [0xAB + x] for x in range(2)}),
            K(
                "hello.cpp",
                cores,
                "compute",
                defines={"HELLO_COMPUTE": "1"},
                args={CoreCoord(x, 0): [x] for x in range(2)},
            ),
        ],
        [],
    )
    run(spec, [dummy], via)
    out = capsys.readouterr().out.splitlines()
    assert "0:(0, 0):BR: core 0,0 says 0xab" in out
    assert "0:(1, 0):BR: core 1,0 says 0xac" in out
    assert [line for line in out if line.startswith("0:(1, 0):TR")] == [
        "0:(1, 0):TR0: compute 1",
        "0:(1, 0):TR1: compute 1",
        "0:(1, 0):TR2: compute 1",
        "0:(1, 0):TR1: math only",
    ]


# -- the object API (Noc, CircularBuffer, DataflowBuffer) and SFPI ------------------------------


@VIA
def test_object_api_reader_and_writer(device, via):
    """eltwise_sfpu's reader and ttnn's unary writer shapes: Noc + CircularBuffer / DataflowBuffer
    with designated-initializer page and offset args, around an SFPU op from defines."""
    torch.manual_seed(5)
    x_h = torch.randn(64, 96).to(torch.bfloat16)
    x, out = tiles(device, x_h), tiles(device, torch.zeros(64, 96))
    cores = grid(2, 1)
    work = split(cores, x.buffer.num_pages)
    used = CoreRangeSet([CoreRange(c, c) for c, _, _ in work])
    defines = {
        "SFPU_OP_CHAIN_0": "relu_tile_init(); relu_tile(0);",
        "SFPU_OP_RELU_FAMILY_INCLUDE": "1",
    }
    per_core = {n for _, _, n in work}
    assert len(per_core) == 1  # eltwise_sfpu.cpp takes its count as a compile-time arg
    spec = Spec(
        [
            K(
                "reader_unary_objects.cpp",
                used,
                "reader",
                ttnn.TensorAccessorArgs(x).get_compile_time_args(),
                args={c: [x.buffer_address(), s, n] for c, s, n in work},
            ),
            K("eltwise_sfpu.cpp", used, "compute", [per_core.pop()], defines),
            K(
                "writer_unary_objects.cpp",
                used,
                "writer",
                [16, *ttnn.TensorAccessorArgs(out).get_compile_time_args()],
                args={c: [out.buffer_address(), s, n] for c, s, n in work},
            ),
        ],
        [CB(0, used, 2), CB(16, used, 2)],
    )
    run(spec, [x, out], via)
    assert torch.equal(ttnn.to_torch(out), torch.relu(x_h))


@VIA
def test_custom_sfpi_add(device, via):
    """custom_sfpi_add's shape: an SFPI face function through SFPU_BINARY_CALL_NO_TEMPLATE_ARGS."""
    torch.manual_seed(6)
    a_h, b_h = torch.randn(64, 128).to(torch.bfloat16), torch.randn(64, 128).to(torch.bfloat16)
    a, b, out = tiles(device, a_h), tiles(device, b_h), tiles(device, torch.zeros(64, 128))
    cores = grid(2, 2)
    work = split(cores, a.buffer.num_pages)
    used = CoreRangeSet([CoreRange(c, c) for c, _, _ in work])
    ct = [
        *ttnn.TensorAccessorArgs(a).get_compile_time_args(),
        *ttnn.TensorAccessorArgs(b).get_compile_time_args(),
    ]
    spec = Spec(
        [
            K(
                "reader_binary.cpp",
                used,
                "reader",
                ct,
                args={c: [a.buffer_address(), b.buffer_address(), s, n] for c, s, n in work},
            ),
            K("sfpi_add.cpp", used, "compute", args={c: [n] for c, _, n in work}),
            K(
                "writer_unary_objects.cpp",
                used,
                "writer",
                [16, *ttnn.TensorAccessorArgs(out).get_compile_time_args()],
                args={c: [out.buffer_address(), s, n] for c, s, n in work},
            ),
        ],
        [CB(0, used, 2), CB(1, used, 2), CB(16, used, 2)],
    )
    run(spec, [a, b, out], via)
    # SFPSTORE into the bf16 DST truncates the float32 sum (it does not round).
    total = (a_h.float() + b_h.float()).view(torch.int32) & ~0xFFFF
    assert torch.equal(ttnn.to_torch(out).float(), total.view(torch.float32))


def test_object_api_endpoints(device):
    n = 64
    out = ttnn.from_torch(
        torch.full((1, n), -1, dtype=torch.int32),
        dtype=ttnn.int32,
        device=device,
        layout=ttnn.ROW_MAJOR_LAYOUT,
    )
    core = grid(1, 1)
    spec = Spec(
        [
            K(
                "objects_endpoints.cpp",
                core,
                "reader",
                ttnn.TensorAccessorArgs(out).get_compile_time_args(),
                args={CoreCoord(0, 0): [out.buffer_address()]},
            )
        ],
        [CB(0, core, 1, ttnn.int32, 256), CB(1, core, 1, ttnn.int32, 256)],
    )
    run(spec, [out], "generic_op")
    got = ttnn.to_torch(out).reshape(-1).tolist()
    pattern = [100 + i for i in range(16)]
    assert got[:16] == pattern
    assert got[16] == 0xABCD
    assert got[32:48] == pattern
    assert got[48:56] == pattern[8:]
    assert got[17:24] == [-1] * 7 and got[24:32] == [0] * 8  # zeroed in L1
    assert got[56:64] == [0] * 8  # zeroed in the tensor (-1 in L1)


def test_device_print_formats_like_std_format(device, capsys):
    core = grid(1, 1)
    dummy = int_tensor(device, 0)
    spec = Spec([K("device_print.cpp", core, "reader", args={CoreCoord(0, 0): [0x2A5]})], [])
    run(spec, [dummy], "generic_op")
    out = capsys.readouterr().out.splitlines()
    assert "0:(0, 0):NC: plain text" in out
    assert "0:(0, 0):NC: v=677 hex=0x2a5 bin=10100101 {literal}" in out
    assert "0:(0, 0):NC: [    42] [-7    ] [  mid  ] [****3]" in out
    assert "0:(0, 0):NC: 2 before 1; f=3.142 g=0.1 true" in out


BAD_FORMATS = [
    ('DEVICE_PRINT("{} {}\\n", 1);', "Number of {} placeholders must match"),
    ('DEVICE_PRINT("{0} {}\\n", 1, 2);', "Cannot mix indexed"),
    ('DEVICE_PRINT("{x}\\n", 1);', "Invalid format string"),
    ('DEVICE_PRINT("{1}\\n", 1, 2);', "Indexed placeholders must be in range"),
]


@pytest.mark.parametrize("stmt, message", BAD_FORMATS, ids=[m for _, m in BAD_FORMATS])
def test_device_print_format_errors_are_build_errors(device, stmt, message):
    from tilewright.errors import NativeBuildError

    program = Program("bad_print")
    source = f"void kernel_main() {{ {stmt} }}\n"
    program.create_kernel(
        NativeKernel(source=source),
        grid(1, 1),
        DataMovementConfig(DataMovementProcessor.RISCV_1, NOC.NOC_0, (), ()),
    )
    with pytest.raises(NativeBuildError, match=re.escape(message)):
        device.command_queue.enqueue_program(program)
