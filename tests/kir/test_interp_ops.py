"""Kernel-API ops of the IR, compiled vs interpreted: the same kernels run through the native
engine (emitted C++) and the IR interpreter, and their output bytes must be equal.

Compute: copy (with transpose), FPU binary ops with every broadcast, dest reuse, SFPU ops with
parameters, SFPU binary ops, fill, unary broadcast, transpose, matmul (tiles and block),
reduce, pack with L1 accumulation -- in fp32 and bf16 DST.  Data movement: page reads and
writes through accessors, NoC reads and writes, inline writes, multicast, and every semaphore op
between two cores.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from tests.kir.interp_harness import (
    ENGINES,
    accessor,
    cb,
    read_ptr,
    run_ir,
    tensor,
    write_ptr,
    writer,
)
from tests.native_fixtures import device  # noqa: F401
from tilewright import ttnn
from tilewright.errors import IRVerifyError
from tilewright.kir.builder import Builder
from tilewright.kir.ir import (
    KIND_COMPUTE,
    KIND_DM,
    Arg,
    BinOp,
    Cast,
    Const,
    Intrinsic,
    Kernel,
    Op,
    Ty,
    const,
    u32,
)

TILES = 3  # per input: tile 0 random normal, tiles 1 and 2 small integers (exact matmul sums)


def _inputs(dev):
    torch.manual_seed(13)

    def make():
        normal = torch.randn(32, 32)
        ints = (torch.randint(-4, 5, (32, 64)) * 0.25).float()
        return tensor(dev, torch.cat([normal, ints], dim=1))

    scaler = tensor(dev, torch.full((32, 32), 0.5))
    return make(), make(), scaler


def _multi_reader(sources) -> Kernel:
    """Each (accessor, cb, tiles) of ``sources`` read page by page (runtime arg k: address k)."""
    cbs = tuple(c for _, c, _ in sources)
    accs = tuple(a for a, _, _ in sources)
    b = Builder("reader", KIND_DM, slot="ncrisc", cbs=cbs, accessors=accs, args=("a", "b", "s"))
    i = b.local("i", Ty.I64)
    for acc, c, tiles in sources:
        with b.for_(i, 0, tiles):
            b.op("cb.reserve_back", c.index, 1)
            b.op("noc.read_page", acc.name, Cast(i, Ty.U32), write_ptr(c.index))
            b.op("noc.read_barrier")
            b.op("cb.push_back", c.index, 1)
    return b.kernel()


Math = Callable[[Builder], None]


def _copy(tile: int, dst: int = 0, cbi: int = 0, transpose: int = 0) -> Math:
    return lambda b: b.op("copy_tile", cbi, u32(tile), dst, transpose)


def _seq(*steps: Math) -> Math:
    def run(b: Builder) -> None:
        for step in steps:
            step(b)

    return run


def _sfpu(name: str, *params) -> Math:
    return lambda b: b.op("sfpu", name, 0, tuple(params))


F32_ARG = Cast(Arg(0, "scale", Ty.U32), Ty.F32)  # runtime arg 0 (3) as a float

PRODUCTS: list[tuple[int, Math]] = [
    (  # first: a two-page push must not cross the end of the two-page FIFO
        2,
        _seq(
            lambda b: b.op("fill_tile", 0, const(0.0)),
            lambda b: b.op("fill_tile", 1, const(0.0)),
            lambda b: b.op("matmul_block", 0, 1, u32(1), u32(1), 0, 0, 2, 1, 1),
        ),
    ),
    (1, _seq(_copy(0), _sfpu("mul_scalar", const(2.5)))),
    (1, _seq(_copy(0), _sfpu("clamp", const(-0.5), const(0.5)))),
    (1, _seq(_copy(0), _sfpu("leaky_relu", Const(0.1, Ty.F32)))),
    (1, _seq(_copy(0), _sfpu("threshold", const(0.2), const(-1.0)))),
    (1, _seq(_copy(0), _sfpu("relu"), _sfpu("neg"), _sfpu("abs"), _sfpu("square"))),
    (1, _seq(_copy(0), _sfpu("add_scalar", F32_ARG), _sfpu("rsub_scalar", const(1.0)))),
    (1, _seq(_copy(0), _sfpu("hardtanh", const(-0.25), const(0.75)), _sfpu("floor"))),
    (1, _copy(0, transpose=1)),
    (1, lambda b: b.op("binary_tiles", "add", "none", 0, 1, u32(0), u32(0), 0)),
    (1, lambda b: b.op("binary_tiles", "sub", "rows", 0, 1, u32(0), u32(0), 0)),
    (1, lambda b: b.op("binary_tiles", "mul", "cols", 0, 1, u32(0), u32(0), 0)),
    (1, lambda b: b.op("binary_tiles", "add", "scalar", 0, 1, u32(0), u32(1), 0)),
    (1, _seq(_copy(0), lambda b: b.op("binary_dest_reuse", "mul", "srca", 1, u32(0), 0))),
    (1, _seq(_copy(0), lambda b: b.op("binary_dest_reuse", "sub", "srcb", 1, u32(0), 0))),
    *(
        (1, _seq(_copy(0), _copy(0, 1, cbi=1), lambda b, o=o: b.op("sfpu_binary", o, 0, 1, 0)))
        for o in ("add", "sub", "mul", "div", "max", "min")
    ),
    (1, lambda b: b.op("fill_tile", 0, BinOp("truediv", const(1.0), const(3.0), Ty.F64))),
    (1, lambda b: b.op("fill_tile", 0, F32_ARG)),
    *((1, lambda b, d=d: b.op("unary_bcast", d, 1, u32(0), 0)) for d in ("rows", "cols", "scalar")),
    (1, lambda b: b.op("transpose_tile", 0, u32(1), 0)),
    (
        1,
        _seq(
            lambda b: b.op("fill_tile", 0, const(0.0)),
            lambda b: b.op("matmul_tiles", 0, 1, u32(1), u32(1), 0, 0),
            lambda b: b.op("matmul_tiles", 0, 1, u32(2), u32(2), 0, 1),
        ),
    ),
    *(
        (
            1,
            _seq(
                lambda b: b.op("fill_tile", 0, const(0.0)),
                lambda b, p=p, d=d: b.op("reduce_tile", p, d, 0, 2, u32(1), 0),
            ),
        )
        for p, d in (("sum", "row"), ("max", "col"), ("sum", "scalar"))
    ),
]


# Evaluated in double and rounded once by the native runtime, by numpy's float32 loops in the
# Python kernel API: the engines agree within 3 float32 ulps (docs/cpp-kernels.md, "Numerics").
TRANSCENDENTAL: list[tuple[int, Math]] = [
    *(
        (1, _seq(_copy(0), _sfpu(name)))
        for name in ("exp", "log", "tanh", "sigmoid", "silu", "sin", "cos", "atan", "expm1")
    ),
    (1, _seq(_copy(0), _sfpu("elu", const(0.5)))),
    (1, _seq(_copy(0), _sfpu("softplus", const(1.0), const(1.0), const(20.0)))),
    *((1, _seq(_copy(0), _sfpu(name))) for name in ("sqrt", "rsqrt", "recip", "gelu", "sign")),
]


def _compute(fp32: bool, products: list[tuple[int, Math]] = PRODUCTS) -> tuple[Kernel, int]:
    ins = (cb(0, "a", TILES), cb(1, "b", TILES), cb(2, "scaler", 1))
    out = cb(16, "out", 2, "Float32")
    b = Builder("compute", KIND_COMPUTE, slot="trisc", cbs=(*ins, out), dst_tiles=4, args=("k",))
    b.op("compute.init", 0, 1, 16)
    for c in ins:
        b.op("cb.wait_front", c.index, c.num_pages)
    pages = 0
    for n_out, math in products:
        b.op("cb.reserve_back", 16, n_out)
        b.op("tile_regs.acquire")
        math(b)
        b.op("tile_regs.commit")
        b.op("tile_regs.wait")
        for d in range(n_out):
            b.op("pack_tile", d, 16, u32(d))
        b.op("tile_regs.release")
        b.op("cb.push_back", 16, n_out)
        pages += n_out
    # pack with L1 accumulation: slot 0 = A0 + A0 (second pack adds into the first)
    b.op("cb.reserve_back", 16, 1)
    b.op("tile_regs.acquire")
    _copy(0)(b)
    b.op("tile_regs.commit")
    b.op("tile_regs.wait")
    b.op("pack_tile", 0, 16, u32(0))
    b.op("pack_l1_acc", 1)
    b.op("pack_tile", 0, 16, u32(0))
    b.op("pack_l1_acc", 0)
    b.op("tile_regs.release")
    b.op("cb.push_back", 16, 1)
    for c in ins:
        b.op("cb.pop_front", c.index, c.num_pages)
    k = b.kernel()
    if not fp32:
        from dataclasses import replace

        k = replace(k, fp32_dest_acc=False)
    return k, pages + 1


def _run_compute(device, compute: Kernel, pages: int) -> dict[str, torch.Tensor]:  # noqa: F811
    """The output pages (int32 bit patterns, 32 x 32*pages) of ``compute`` on each engine."""
    a, bt, s = _inputs(device)
    results = {}
    for engine in ENGINES:
        out = tensor(device, torch.zeros(32, 32 * pages), dtype=ttnn.float32)
        sources, cta = [], 0
        inputs = [("a", a, cb(0, "a", TILES)), ("b", bt, cb(1, "b", TILES))]
        for i, (name, t, c) in enumerate([*inputs, ("s", s, cb(2, "scaler", 1))]):
            acc = accessor(name, t, cta, i)
            sources.append((acc, c, c.num_pages))
            cta += len(acc.words)
        kernels = [
            _multi_reader(sources),
            compute,
            writer(accessor("out", out, 0, 0), cb(16, "out", 2, "Float32"), pages),
        ]
        addrs = [a.buffer_address(), bt.buffer_address(), s.buffer_address()]
        run_ir(device, kernels, [addrs, [3], [out.buffer_address()]], engine)
        results[engine] = ttnn.to_torch(out).view(torch.int32)
    return results


def _page(t: torch.Tensor, p: int) -> torch.Tensor:
    return t[:, 32 * p : 32 * p + 32]


@pytest.mark.parametrize("fp32", [True, False], ids=["fp32-dst", "bf16-dst"])
def test_compute_ops_give_the_compiled_kernels_bytes(device, fp32):  # noqa: F811
    compute, pages = _compute(fp32)
    results = _run_compute(device, compute, pages)
    native, python = results["native"], results["python"]
    differ = [p for p in range(pages) if not torch.equal(_page(native, p), _page(python, p))]
    assert not differ, f"pages {differ} differ"
    values = python.view(torch.float32)
    assert values.abs().sum() > 0 and not torch.equal(_page(values, 0), _page(values, 2))


def test_transcendental_sfpu_ops_agree_within_three_ulps(device):  # noqa: F811
    compute, pages = _compute(True, TRANSCENDENTAL)
    results = _run_compute(device, compute, pages)
    native, python = results["native"], results["python"]
    nan = torch.isnan(native.view(torch.float32))
    assert torch.equal(nan, torch.isnan(python.view(torch.float32)))
    ulps = (native.long() - python.long()).abs()[~nan]
    assert int(ulps.max()) <= 3
    assert int((ulps == 0).sum()) > ulps.numel() // 2  # mostly exact


# -- data movement between two cores ------------------------------------------------------------

SENDER, RECEIVER = ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0)


def _sem(i: int) -> Intrinsic:
    return Intrinsic("semaphore", (u32(i),), Ty.U32)


def _at(offset: int) -> BinOp:
    return BinOp("add", write_ptr(0), u32(offset), Ty.U32)


def _dm_kernel() -> Kernel:
    """Core 0 writes words into core 1's CB page (NoC write, inline write, multicast) and
    signals it with every semaphore op; core 1 waits on them.  Both push their page."""
    page = cb(0, "page", 1, "Float32")
    args = ("peer_x", "peer_y", "sender")
    px, py, sender = Arg(0, "peer_x"), Arg(1, "peer_y"), Arg(2, "sender")
    send = Builder("dm", KIND_DM, slot="ncrisc", cbs=(page,), args=args)
    k = send.local("k", Ty.U32)
    with send.for_(k, u32(0), u32(8)):
        value = BinOp("add", BinOp("mul", k, k, Ty.U32), u32(1), Ty.U32)
        send.op(
            "sem.set", BinOp("add", write_ptr(0), BinOp("mul", k, u32(4), Ty.U32), Ty.U32), value
        )
    send.op("sem.set", _at(256), u32(7))
    send.op("noc.write", write_ptr(0), px, py, write_ptr(0), u32(32))
    send.op("noc.write_barrier")
    send.op("noc.inline_write", px, py, _at(64), u32(0xABCD))
    send.op("noc.write_mcast", write_ptr(0), px, py, px, py, _at(128), u32(32), 1)
    send.op("noc.write_barrier")
    send.op("sem.inc", px, py, _sem(0), u32(1))
    send.op("sem.set_remote", _at(256), px, py, _sem(1))
    send.op("sem.set_mcast", _at(256), px, py, px, py, _sem(2), 1)
    send.op("noc.write_barrier")
    receive = (
        Op("sem.wait", (_sem(0), u32(1), "eq")),
        Op("sem.wait", (_sem(1), u32(7), "ge")),
        Op("sem.wait", (_sem(2), u32(7), "eq")),
    )
    b = Builder("dm", KIND_DM, slot="ncrisc", cbs=(page,), args=args)
    b.local("k", Ty.U32)
    b.op("cb.reserve_back", 0, 1)
    is_sender = BinOp("ne", sender, u32(0), Ty.BOOL)
    b.op("if", is_sender, regions=(send.kernel().body, receive))
    b.op("cb.push_back", 0, 1)
    return b.kernel()


def test_noc_and_semaphore_ops_give_the_compiled_kernels_bytes(device):  # noqa: F811
    dm = _dm_kernel()
    noc = {c: device.worker_core_from_logical_core(c) for c in (SENDER, RECEIVER)}
    results = {}
    for engine in ENGINES:
        out = tensor(device, torch.zeros(32, 64), dtype=ttnn.float32)
        w = _page_writer(accessor("out", out, 0, 0))
        dm_args = {
            SENDER: [noc[RECEIVER].x, noc[RECEIVER].y, 1],
            RECEIVER: [noc[SENDER].x, noc[SENDER].y, 0],
        }
        w_args = {SENDER: [out.buffer_address(), 0], RECEIVER: [out.buffer_address(), 1]}
        run_ir(
            device,
            [dm, w],
            [dm_args, w_args],
            engine,
            semaphores=[0, 0, 0],
            cores=(SENDER, RECEIVER),
        )
        results[engine] = page_words_2(out)
    assert results["native"] == results["python"]
    received = results["python"][1]
    assert received[:8] == [k * k + 1 for k in range(8)]
    assert received[16] == 0xABCD and received[32:40] == [k * k + 1 for k in range(8)]


def _page_writer(acc) -> Kernel:
    """CB 0's page to page rt[1] of the output (runtime arg 0: its address)."""
    c = cb(0, "page", 1, "Float32")
    b = Builder("writer", KIND_DM, slot="brisc", cbs=(c,), accessors=(acc,), args=("out", "page"))
    b.op("cb.wait_front", 0, 1)
    b.op("noc.write_page", acc.name, Arg(1, "page"), read_ptr(0))
    b.op("noc.write_barrier")
    b.op("cb.pop_front", 0, 1)
    return b.kernel()


def page_words_2(t) -> list[list[int]]:
    import numpy as np

    from tilewright.device.formats import DataFormat, encode_block

    host = ttnn.to_torch(t).float().numpy()
    return [
        encode_block(host[:, 32 * p : 32 * p + 32], DataFormat.Float32).view(np.uint32).tolist()
        for p in range(2)
    ]


# -- noc.read: one node reads another's L1 ------------------------------------------------------


def _read_kernel() -> Kernel:
    """Core 0 writes eight words into its CB page and signals core 1, which reads them over the
    NoC into its own page at byte 64 (``noc.read``); both push their page."""
    page = cb(0, "page", 1, "Float32")
    args = ("peer_x", "peer_y", "sender")
    px, py, sender = Arg(0, "peer_x"), Arg(1, "peer_y"), Arg(2, "sender")
    send = Builder("rd", KIND_DM, slot="ncrisc", cbs=(page,), args=args)
    k = send.local("k", Ty.U32)
    with send.for_(k, u32(0), u32(8)):
        value = BinOp("add", BinOp("mul", k, u32(3), Ty.U32), u32(5), Ty.U32)
        send.op(
            "sem.set", BinOp("add", write_ptr(0), BinOp("mul", k, u32(4), Ty.U32), Ty.U32), value
        )
    send.op("sem.inc", px, py, _sem(0), u32(1))
    send.op("noc.write_barrier")
    receive = (
        Op("sem.wait", (_sem(0), u32(1), "eq")),
        Op("noc.read", (px, py, write_ptr(0), _at(64), u32(32))),
        Op("noc.read_barrier"),
    )
    b = Builder("rd", KIND_DM, slot="ncrisc", cbs=(page,), args=args)
    b.local("k", Ty.U32)
    b.op("cb.reserve_back", 0, 1)
    b.op("if", BinOp("ne", sender, u32(0), Ty.BOOL), regions=(send.kernel().body, receive))
    b.op("cb.push_back", 0, 1)
    return b.kernel()


def test_noc_read_gives_the_compiled_kernels_bytes(device):  # noqa: F811
    rd = _read_kernel()
    noc = {c: device.worker_core_from_logical_core(c) for c in (SENDER, RECEIVER)}
    results = {}
    for engine in ENGINES:
        out = tensor(device, torch.zeros(32, 64), dtype=ttnn.float32)
        w = _page_writer(accessor("out", out, 0, 0))
        rd_args = {
            SENDER: [noc[RECEIVER].x, noc[RECEIVER].y, 1],
            RECEIVER: [noc[SENDER].x, noc[SENDER].y, 0],
        }
        w_args = {SENDER: [out.buffer_address(), 0], RECEIVER: [out.buffer_address(), 1]}
        run_ir(device, [rd, w], [rd_args, w_args], engine, semaphores=[0], cores=(SENDER, RECEIVER))
        results[engine] = page_words_2(out)
    assert results["native"] == results["python"]
    assert results["python"][1][16:24] == [3 * k + 5 for k in range(8)]


def test_noc_read_runs_on_data_movement_kernels_only():
    b = Builder("k", KIND_COMPUTE, dst_tiles=4)
    b.op("noc.read", u32(0), u32(0), u32(0), u32(0), u32(4))
    with pytest.raises(IRVerifyError, match="'noc.read' does not run on compute kernels"):
        b.kernel()
