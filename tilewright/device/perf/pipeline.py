"""The compute kernel's three processors as a pipeline: TRISC0 unpack, TRISC1 math, TRISC2 pack.

A compute kernel runs as one thread here, as on tt-emule, but on the card its three parts
run on three RISC-Vs that hand tiles to each other (reference ``tt-metal.md`` section 4.1):
UNPACK moves tiles from CBs into SrcA/SrcB, MATH computes into DST, PACK moves DST tiles
into CBs.  Each has its own clock in the run's :class:`~.state.PerfRun`:

* a CB wait / pop is UNPACK's, a CB reserve / push PACK's (the engine blocks and wakes the
  run at that processor's clock: :func:`enter` / :func:`leave`);
* an op that reads CB tiles costs UNPACK its unpack cycles, and MATH its math cycles
  once the tiles are unpacked; an op on DST alone (SFPU) costs MATH only;
* ``tile_regs_acquire`` waits until PACK released that DST half (two halves, or one with
  ``dst_full_sync_en``), ``tile_regs_commit`` / ``tile_regs_wait`` hand the half to PACK
  at MATH's clock (``pack_tile`` starts no earlier), ``tile_regs_release`` frees it.

Outside such calls the run's clock is the latest of the three (its end when it returns).
Data-movement runs use their clock directly.  The same rules are in ``perf.cpp``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tilewright.device.perf import costs
from tilewright.device.perf.state import PerfRun
from tilewright.target.enums import DataType

if TYPE_CHECKING:
    from tilewright.device.engine import KernelRun

__all__ = [
    "UNPACK",
    "PACK",
    "perf_of",
    "enter",
    "leave",
    "unpack_math",
    "math_only",
    "acquire",
    "handoff",
    "pack",
    "release",
    "block_store",
    "tile_copy",
    "tile_transpose",
    "tile_binary",
    "tile_dest_reuse",
    "tile_matmul",
    "tile_reduce",
    "tile_sfpu",
    "tile_pack",
    "tile_through",
]

UNPACK, PACK = 0, 2
"""The processor of a CB call on a compute run (TRISC0 or TRISC2)."""


def perf_of(run: KernelRun) -> PerfRun:
    """The run's model state; a compute run's pipeline is set up on first use."""
    pr = run.state.perf
    if not pr.compute:
        ctx = run.context
        cfg = getattr(ctx, "compute", None)
        if cfg is not None:
            pr.compute = 1
            pr.unpack = pr.math = pr.pack = run.clock
            pr.fidelity = costs.fidelity_phases(cfg.math_fidelity)
            pr.fp32_acc = int(cfg.fp32_dest_acc_en)
            pr.full_sync = int(cfg.dst_full_sync_en)
            model = run.core.device.perf.state
            pr.unpack_rate = model.unpack_bytes
            pr.pair_rate = model.unpack_pair_bytes
            pr.pack_rate = model.pack_bytes
    return pr


def _unpack(pr: PerfRun, nbytes: int, pair: bool = False) -> int:
    return costs.unpack_cycles(nbytes, pr.pair_rate if pair else pr.unpack_rate)


def _pack(pr: PerfRun, nbytes: int, l1_acc: bool = False) -> int:
    return costs.pack_cycles(nbytes, pr.pack_rate, l1_acc)


def _front(pr: PerfRun) -> int:
    return max(pr.unpack, pr.math, pr.pack)


def enter(run: KernelRun, stage: int) -> PerfRun:
    """Before a CB call: its cost, and the run's clock set to the processor making it."""
    pr = perf_of(run)
    if pr.compute:
        if stage == UNPACK:
            pr.unpack += costs.CB_OP
            run.clock = pr.unpack
        else:
            pr.pack += costs.CB_OP
            run.clock = pr.pack
    else:
        run.clock += costs.CB_OP
    run.stats_ops += 1
    return pr


def leave(run: KernelRun, pr: PerfRun, stage: int) -> None:
    """After a CB call (the run may have waited): that processor's clock is the run's."""
    if pr.compute:
        if stage == UNPACK:
            pr.wait_front += run.clock - pr.unpack
            pr.unpack = run.clock
        else:
            pr.wait_reserve += run.clock - pr.pack
            pr.pack = run.clock
        run.clock = _front(pr)


def unpack_math(run: KernelRun, unpack: int, math: int) -> None:
    """An op that unpacks CB tiles (``unpack`` cycles) and computes on them (``math``)."""
    pr = perf_of(run)
    pr.unpack += unpack
    m = pr.math if pr.math > pr.unpack else pr.unpack
    pr.math = m + math
    pr.busy_unpack += unpack
    pr.busy_math += math
    run.clock = _front(pr)
    run.stats_ops += 1


def math_only(run: KernelRun, math: int) -> None:
    """An op on DST alone (SFPU, DST-to-DST)."""
    pr = perf_of(run)
    pr.math += math
    pr.busy_math += math
    run.clock = _front(pr)
    run.stats_ops += 1


def acquire(run: KernelRun) -> None:
    pr = perf_of(run)
    half = pr.dst_next
    if pr.dst_free[half] > pr.math:
        pr.math = pr.dst_free[half]
    if not pr.full_sync:
        pr.dst_next = half ^ 1
    run.clock = _front(pr)


def handoff(run: KernelRun) -> None:
    """``tile_regs_commit`` and ``tile_regs_wait`` (one hand-off: MATH commits the half at
    its clock, PACK starts on it no earlier; the native runtime sees both as one call)."""
    pr = perf_of(run)
    pr.dst_commit = pr.math
    pr.committed = 1
    if pr.dst_commit > pr.pack:
        pr.pack = pr.dst_commit
    run.clock = _front(pr)


def pack(run: KernelRun, cycles: int) -> None:
    """Pack tiles from DST (after the commit, or after MATH without a handshake)."""
    pr = perf_of(run)
    ready = pr.dst_commit if pr.committed else pr.math
    if ready > pr.pack:
        pr.pack = ready
    pr.pack += cycles
    pr.busy_pack += cycles
    run.clock = _front(pr)
    run.stats_ops += 1


def release(run: KernelRun) -> None:
    pr = perf_of(run)
    half = pr.dst_rel
    pr.dst_free[half] = pr.pack
    if not pr.full_sync:
        pr.dst_rel = half ^ 1
    pr.committed = 0


def block_store(
    run: KernelRun, tiles: int, unpack: int, math: int, pack_cycles: int, dst_tiles: int
) -> None:
    """A block expression materialised into a block of ``tiles`` tiles, as the compiled
    kernel runs it: DST chunks of ``dst_tiles`` tiles, each acquired, unpacked and
    computed, committed, packed and released; the totals are spread over the chunks."""
    tiles = max(1, tiles)
    chunk = max(1, dst_tiles)
    done = 0
    while done < tiles:
        n = min(chunk, tiles - done)
        share = (done + n, done)
        acquire(run)
        unpack_math(run, _part(unpack, tiles, share), _part(math, tiles, share))
        handoff(run)
        pack(run, _part(pack_cycles, tiles, share))
        release(run)
        done += n


def _part(total: int, tiles: int, share: tuple[int, int]) -> int:
    """Tiles [share[1], share[0]) of ``total`` spread evenly (integer, sums to ``total``)."""
    hi, lo = share
    return total * hi // tiles - total * lo // tiles


# -- the compute kernel API's tile ops (the same formulas in perf.cpp) -------------------------


def tile_copy(run: KernelRun, nbytes: int, tiles: int = 1) -> None:
    """copy_tile / unary_bcast: unpack ``nbytes`` into DST (a datacopy pass per tile)."""
    unpack_math(run, _unpack(perf_of(run), nbytes), costs.DATACOPY_TILE * tiles)


def tile_transpose(run: KernelRun, nbytes: int) -> None:
    unpack_math(run, _unpack(perf_of(run), nbytes), costs.TRANSPOSE_TILE)


def tile_binary(run: KernelRun, nbytes0: int, nbytes1: int, mul: bool) -> None:
    """add / sub / mul_tiles (and their broadcasts): both operands unpacked together."""
    pr = perf_of(run)
    unpack_math(run, _unpack(pr, nbytes0 + nbytes1, True), costs.eltwise_cycles(mul, pr.fidelity))


def tile_dest_reuse(run: KernelRun, nbytes: int, mul: bool) -> None:
    """binary_dest_reuse_tiles: one operand unpacked, the other already in DST."""
    pr = perf_of(run)
    unpack_math(run, _unpack(pr, nbytes), costs.eltwise_cycles(mul, pr.fidelity))


def tile_matmul(run: KernelRun, in0_bytes: int, in1_bytes: int, tiles: int = 1) -> None:
    """matmul_tiles (one tile of each operand, one product) or matmul_block (``rt`` in0
    tiles and ``ct`` in1 tiles unpacked once, ``tiles`` = rt x ct products).  The matmul's
    operands go through the unpackers one after the other (one unpacker's rate: what the
    published GEMM utilisation shows)."""
    pr = perf_of(run)
    unpack_math(
        run,
        _unpack(pr, in0_bytes + in1_bytes),
        costs.matmul_cycles(pr.fidelity, pr.fp32_acc, tiles),
    )


def tile_reduce(run: KernelRun, nbytes: int, scaler_bytes: int, is_max: bool) -> None:
    pr = perf_of(run)
    unpack_math(
        run, _unpack(pr, nbytes + scaler_bytes, True), costs.reduce_cycles(is_max, pr.fidelity)
    )


def tile_sfpu(run: KernelRun, op: str, tiles: int = 1) -> None:
    """An SFPU function on DST tiles (``op`` names its instruction count)."""
    math_only(run, costs.sfpu_cycles(op, tiles))


def tile_pack(run: KernelRun, nbytes: int, l1_acc: bool = False) -> None:
    pack(run, _pack(perf_of(run), nbytes, l1_acc))


def tile_through(run: KernelRun, in_bytes: int, out_bytes: int, tiles: int) -> None:
    """tilize / untilize: tiles unpacked, moved through DST and packed in one call."""
    pr = perf_of(run)
    unpack_math(run, _unpack(pr, in_bytes), costs.DATACOPY_TILE * tiles)
    pack(run, _pack(pr, out_bytes))


# -- TT-Lang block expressions (the interpreter's view of what the compiled kernel runs) ------

Work = tuple[int, int]
"""(unpack cycles, math cycles) of a block expression so far."""
_FPU_BINARY = {"add": False, "sub": False, "mul": True}


def block_op(
    run: KernelRun,
    kind: str,
    name: str,
    operands: list[tuple[int, int, Work]],
    out_tiles: int,
    inner: int = 1,
) -> Work:
    """The work of applying registry op ``name`` (of OpKind value ``kind``) to ``operands``
    -- (tiles, bytes per tile if the operand is a block read else 0, its work so far) --
    producing ``out_tiles`` tiles (``inner``: a matmul's K in tiles), as the compiled
    kernel does it: block operands unpacked from their DFB by the op that consumes them
    (both at once for an FPU binary op), intermediate values already in DST."""
    pr = perf_of(run)
    unpack = sum(w[0] for _, _, w in operands)
    math = sum(w[1] for _, _, w in operands)
    leaves = [(t, b) for t, b, _ in operands if b]
    if kind == "matmul":
        b0 = operands[0][1] or 2048
        b1 = operands[1][1] if len(operands) > 1 and operands[1][1] else b0
        n = out_tiles * inner
        unpack += n * _unpack(pr, b0 + b1)
        math += costs.matmul_cycles(pr.fidelity, pr.fp32_acc, n)
    elif kind == "binary" and name in _FPU_BINARY and len(leaves) == 2:
        unpack += out_tiles * _unpack(pr, leaves[0][1] + leaves[1][1], True)
        math += costs.eltwise_cycles(_FPU_BINARY[name], pr.fidelity, out_tiles)
    elif kind == "binary" and name in _FPU_BINARY and len(leaves) == 1:
        unpack += out_tiles * _unpack(pr, leaves[0][1])
        math += costs.eltwise_cycles(_FPU_BINARY[name], pr.fidelity, out_tiles)
    elif kind == "reduce":
        for tiles, b in leaves:
            unpack += tiles * _unpack(pr, b)
        math += costs.reduce_cycles(name == "reduce_max", pr.fidelity, operands[0][0])
    elif kind in ("broadcast", "transpose", "shape", "typecast"):
        for tiles, b in leaves:
            unpack += tiles * _unpack(pr, b)
        step = costs.TRANSPOSE_TILE if kind == "transpose" else costs.DATACOPY_TILE
        math += step * out_tiles
    else:  # SFPU functions (unary, binary on DST values or with a scalar, ternary, fill)
        for tiles, b in leaves:  # copy_tile into DST first
            unpack += tiles * _unpack(pr, b)
            math += costs.DATACOPY_TILE * tiles
        math += costs.sfpu_cycles(_sfpu_name(kind, name, len(operands)), out_tiles)
    return unpack, math


def _sfpu_name(kind: str, name: str, n_operands: int) -> str:
    if kind == "fill":
        return "fill"
    if n_operands >= 2:
        return "binary"
    return {"neg": "negative", "logp1": "log1p", "pow": "power"}.get(name, name)


def store_block(run: KernelRun, work: Work, leaf_bytes: int, tiles: int, out_bytes: int) -> None:
    """Materialise a block expression of ``work`` into a block of ``tiles`` tiles of
    ``out_bytes`` each (a bare block read is copied: unpacked into DST first)."""
    pr = perf_of(run)
    unpack, math = work
    if leaf_bytes:
        unpack += tiles * _unpack(pr, leaf_bytes)
        math += costs.DATACOPY_TILE * tiles
    dtype = DataType.FLOAT32 if pr.fp32_acc else DataType.BFLOAT16  # the target's DST rule
    dst_tiles = run.kernel_context().device.capacity.dst_logical_tiles(dtype, bool(pr.full_sync))
    block_store(run, tiles, unpack, math, _pack(pr, out_bytes * tiles), dst_tiles)
