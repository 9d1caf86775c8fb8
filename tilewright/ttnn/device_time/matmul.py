"""``ttnn.matmul`` / ``ttnn.linear`` as the tt-metal program they run, and its device time.

Program selection follows tt-metal's (``matmul_program_config.cpp``) when no
``program_config`` is given: a batched ``b`` -> ``MatmulMultiCoreReuse``; a narrow output
(aspect ratio above 8) or a dimension of one tile -> the 1-D systolic config (multicast
in0 for wide outputs, in1 for tall ones); else the 2-D multicast config over the device
grid with per-core blocks of ``ceil(Mt / rows) x ceil(Nt / cols)`` tiles, ``in0_block_w``
the largest of 4..1 dividing Kt, output blocks shrunk until the circular buffers fit
L1, subblocks from tt-metal's list (a subblock narrower than the block is one row high).

Time: the program is a pipeline of K blocks on every core.  Per K block a core's compute
kernel unpacks each subblock's in0 / in1 tiles (one tile of each per product row /
column), multiplies (16 cycles per tile per fidelity phase), and -- without
``packer_l1_acc`` -- spills the partial output block to an intermediate CB and reloads
it at the next block; meanwhile the row's in0 sender reads the in0 block from DRAM (or
L1) and multicasts it along the row, the column's in1 sender likewise down the column,
all senders sharing the chip's DRAM banks.  With double-buffered CBs a K block takes the
slowest of the three; the first block's read fills the pipeline and the writer drains
the last output block.  Every figure comes from ``device/perf`` (tile costs, NoC and
DRAM rates of the device's architecture).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilewright.device.perf import costs
from tilewright.device.perf.arch import ArchPerf
from tilewright.ttnn import program_config as pc

__all__ = ["MatmulProgram", "MatmulTime", "select_program", "program_time"]

_SUBBLOCKS = (
    (4, 2), (2, 4), (8, 1), (1, 8), (7, 1), (1, 7), (3, 2), (2, 3), (6, 1), (1, 6),
    (5, 1), (1, 5), (2, 2), (4, 1), (1, 4), (3, 1), (1, 3), (2, 1), (1, 2), (1, 1),
)  # fmt: skip
"""tt-metal's SUBBLOCK_HW_CHOICES as (w, h), largest first."""
_NARROW = 8
_L1_BUDGET = 1_200_000
"""Bytes of L1 the matmul's circular buffers may take (tt-metal's max_l1_space: the usable
L1 less the reserved regions; WH 1.43 MiB total)."""
_HANDSHAKE = (3, 2)
"""Semaphore latencies per multicast block not hidden by double buffering, as a ratio: the
data-valid flag always, the receivers' ready signal about half the time (fitted to the
published small-matmul times; the rest of the model is first-principles)."""


@dataclass(frozen=True, slots=True)
class MatmulProgram:
    """The tt-metal matmul program an op runs (what its profiler row's ATTRIBUTES say)."""

    config: str  # the program config's class name
    mcast: str  # "2d", "in0" (1-D, in0 multicast), "in1", "none", "dram_sharded"
    grid: tuple[int, int]  # (x, y) cores that compute
    per_core_m: int
    per_core_n: int
    in0_block_w: int
    out_block_h: int
    out_block_w: int
    subblock_h: int
    subblock_w: int
    batch: int  # products each core repeats (unfused batches)

    @property
    def cores(self) -> int:
        return self.grid[0] * self.grid[1]

    def attributes(self) -> str:
        return (
            f"'program_config': '{self.config}(compute_with_storage_grid_size=({self.grid[0]};"
            f"{self.grid[1]}); in0_block_w={self.in0_block_w}; out_subblock_h={self.subblock_h}; "
            f"out_subblock_w={self.subblock_w}; out_block_h={self.out_block_h}; "
            f"out_block_w={self.out_block_w}; per_core_M={self.per_core_m}; "
            f"per_core_N={self.per_core_n})'"
        )


@dataclass(frozen=True, slots=True)
class MatmulTime:
    """Modelled cycles of a matmul program and where they went."""

    total: int
    compute: int  # the compute kernel's busy time (the busiest of unpack / math / pack)
    noc: int  # the multicast senders' NoC time
    dram: int  # DRAM reads and writes of the busiest sender / writer
    ideal: int  # the products at peak on the used cores


def _subblock(block_h: int, block_w: int, fp32: bool, narrow_rule: bool) -> tuple[int, int]:
    for w, h in _SUBBLOCKS:
        if (h * w <= 4 or not fp32) and block_h % h == 0 and block_w % w == 0:
            if narrow_rule and w != block_w:
                return 1, w
            return h, w
    return 1, 1


def _cb_bytes(m: int, n: int, k: int, ba: int, bb: int, bo: int, interm: int) -> int:
    """The matmul's CBs: in0 and in1 double-buffered, the output and intermediate blocks."""
    return 2 * m * k * ba + 2 * k * n * bb + m * n * (bo + interm)


def _fit(m: int, n: int, k: int, ba: int, bb: int, bo: int, interm: int) -> tuple[int, int]:
    """The output block: the per-core block, or the largest divisor pair that fits L1."""
    if _cb_bytes(m, n, k, ba, bb, bo, interm) < _L1_BUDGET:
        return m, n
    best = (1, 1)
    for fm in range(m, 0, -1):
        if m % fm:
            continue
        for fn in range(n, 0, -1):
            if n % fn or fm * fn <= best[0] * best[1]:
                continue
            if _cb_bytes(fm, fn, k, ba, bb, bo, interm) < _L1_BUDGET:
                ratio = max(fm, fn) / min(fm, fn)
                if fm * fn > best[0] * best[1] or ratio < max(best) / min(best):
                    best = (fm, fn)
    return best


def select_program(
    *,
    m_tiles: int,
    k_tiles: int,
    n_tiles: int,
    batch_a: int,
    batch_b: int,
    grid: tuple[int, int],
    tile_bytes: tuple[int, int, int],
    fp32: bool,
    config: object = None,
) -> MatmulProgram:
    """The program of a product of ``batch_a`` x [Mt, Kt] by ``batch_b`` x [Kt, Nt] tiles."""
    ba, bb, bo = tile_bytes
    interm = 4096 if fp32 else bo
    gx, gy = grid
    if config is not None:
        return _from_config(config, m_tiles, k_tiles, n_tiles, batch_a, tile_bytes, fp32)
    if batch_b > 1:  # MatmulMultiCoreReuse: a core per batched product
        k = 1
        m, n = _fit(m_tiles, n_tiles, k, ba, bb, bo, interm)
        h, w = _subblock(m, n, fp32, False)
        used = min(batch_a * batch_b, gx * gy)
        return MatmulProgram(
            "MatmulMultiCoreReuseProgramConfig", "none", (min(used, gx), -(-used // gx)),
            m_tiles, n_tiles, k, m, n, h, w, -(-batch_a * batch_b // max(1, used)),
        )  # fmt: skip
    mt = batch_a * m_tiles
    height, width = mt * 32, n_tiles * 32
    ratio = max(height, width) // max(1, min(height, width))
    cores = gx * gy
    if ratio > _NARROW or min(m_tiles, k_tiles, n_tiles) <= 1:
        tall = mt > n_tiles
        if tall:
            pm, pn = -(-mt // cores), n_tiles
        else:
            pm, pn = mt, -(-n_tiles // cores)
        k = max(1, -(-k_tiles // cores))
        while k_tiles % k:
            k -= 1
        m, n = _fit(pm, pn, k, ba, bb, bo, interm)
        h, w = _subblock(m, n, fp32, False)
        used = -(-mt // pm) * -(-n_tiles // pn)
        return MatmulProgram(
            "MatmulMultiCoreReuseMultiCast1DProgramConfig", "in1" if tall else "in0",
            (min(used, gx), -(-used // gx)), pm, pn, k, m, n, h, w, 1,
        )  # fmt: skip
    pm, pn = -(-mt // gy), -(-n_tiles // gx)
    k = 4
    while k_tiles % k:
        k -= 1
    m, n = _fit(pm, pn, k, ba, bb, bo, interm)
    h, w = _subblock(m, n, fp32, True)
    grid_used = (-(-n_tiles // pn), -(-mt // pm))
    return MatmulProgram(
        "MatmulMultiCoreReuseMultiCastProgramConfig", "2d", grid_used, pm, pn, k, m, n, h, w, 1
    )


def _from_config(
    config, mt: int, kt: int, nt: int, batch_a: int, tile_bytes, fp32
) -> MatmulProgram:
    name = type(config).__name__
    pm, pn, k = config.per_core_M, config.per_core_N, config.in0_block_w
    if isinstance(config, pc.MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig):
        cores = -(-nt // pn)
        return MatmulProgram(name, "dram_sharded", (cores, 1), pm, pn, k, pm, pn, 1, 1, 1)
    m = getattr(config, "out_block_h", None) or pm
    n = getattr(config, "out_block_w", None) or pn
    h, w = config.out_subblock_h, config.out_subblock_w
    rows_m = batch_a * mt
    if isinstance(config, pc.MatmulMultiCoreReuseMultiCastProgramConfig):
        cols, rows = -(-nt // pn), -(-rows_m // pm)
        if config.transpose_mcast:
            cols, rows = rows, cols
        return MatmulProgram(name, "2d", (cols, rows), pm, pn, k, m, n, h, w, 1)
    gx, _ = pc.grid_xy(config.compute_with_storage_grid_size)
    if isinstance(config, pc.MatmulMultiCoreReuseMultiCast1DProgramConfig):
        used = -(-rows_m // pm) * -(-nt // pn)
        kind = "in0" if config.mcast_in0 else "in1"
        return MatmulProgram(name, kind, (min(used, gx), -(-used // gx)), pm, pn, k, m, n, h, w, 1)
    used = -(-rows_m // pm) * -(-nt // pn)
    return MatmulProgram(name, "none", (min(used, gx), -(-used // gx)), pm, pn, k, m, n, h, w, 1)


def _dram_read(arch: ArchPerf, nbytes: int, readers: int, total: int, banks: int) -> int:
    """Cycles for one reader to take ``nbytes`` from interleaved DRAM while ``readers``
    readers take ``total`` bytes together (the chip's banks are shared)."""
    own = -(-nbytes * arch.dram_core_rate[1] // arch.dram_core_rate[0])
    num, den = arch.dram_bank_rate
    shared = -(-total * den // (num * banks))
    return max(own, shared)


def _mcast(arch: ArchPerf, nbytes: int, receivers: int, span: int) -> int:
    """A sender multicasting ``nbytes`` (linked packets) to ``receivers`` cores ``span``
    hops away, with its semaphore hand-shakes."""
    if receivers <= 0 or nbytes <= 0:
        return 0
    pkt = arch.max_packet
    n = -(-nbytes // pkt)
    num, den = arch.write_rate
    ser = -(-nbytes * den // num) + n * arch.issue_write
    setup = arch.mcast_setup + arch.mcast_setup_per_span * (span + 2)
    latency = 2 * span * arch.hop + arch.base_write
    return ser + setup + latency * _HANDSHAKE[0] // _HANDSHAKE[1]


def program_time(
    arch: ArchPerf,
    prog: MatmulProgram,
    *,
    k_tiles: int,
    tile_bytes: tuple[int, int, int],
    fidelity: int,
    fp32: bool,
    l1_acc: bool,
    in_dram: tuple[bool, bool, bool],
    banks: int,
) -> MatmulTime:
    """Modelled cycles of ``prog`` (``fidelity`` in phases; ``in_dram``: in0, in1, output)."""
    ba, bb, bo = tile_bytes
    interm = 4096 if fp32 else bo
    kb = prog.in0_block_w
    nk = max(1, k_tiles // kb)
    mb, nb, h, w = prog.out_block_h, prog.out_block_w, prog.subblock_h, prog.subblock_w
    blocks = (-(-prog.per_core_m // mb)) * (-(-prog.per_core_n // nb)) * prog.batch
    # -- compute kernel, per K block ---------------------------------------------------------
    subblocks = (mb // h) * (nb // w)
    unpack = costs.unpack_cycles(subblocks * kb * (h * ba + w * bb), arch.unpack_bytes)
    math = costs.matmul_cycles(fidelity, int(fp32), mb * nb * kb)
    if l1_acc:
        pack = costs.pack_cycles(mb * nb * interm, arch.pack_bytes, l1_acc=True)
        reload = 0
    else:
        pack = costs.pack_cycles(mb * nb * interm, arch.pack_bytes)
        reload = costs.unpack_cycles(mb * nb * interm, arch.unpack_bytes)
        math += costs.DATACOPY_TILE * mb * nb
    step_compute = max(unpack + reload, math, pack)
    # -- data movement, per K block ----------------------------------------------------------
    gx, gy = prog.grid
    a_bytes, b_bytes = mb * kb * ba, kb * nb * bb
    if prog.mcast == "2d":
        senders_a, senders_b, recv_a, recv_b = gy, gx, gx - 1, gy - 1
        span_a, span_b = gx, gy
    elif prog.mcast == "in0":
        senders_a, senders_b, recv_a, recv_b = 1, prog.cores, prog.cores - 1, 0
        span_a, span_b = gx + gy, 0
    elif prog.mcast == "in1":
        senders_a, senders_b, recv_a, recv_b = prog.cores, 1, 0, prog.cores - 1
        span_a, span_b = 0, gx + gy
    else:  # every core reads its own operands (no multicast; DRAM-sharded streams in1)
        senders_a, senders_b, recv_a, recv_b = prog.cores, prog.cores, 0, 0
        span_a = span_b = 0
    total = senders_a * a_bytes * in_dram[0] + senders_b * b_bytes * in_dram[1]
    readers = senders_a * in_dram[0] + senders_b * in_dram[1]
    if prog.mcast == "dram_sharded":  # each worker streams its bank: no sharing
        dram_b = -(-b_bytes * arch.dram_bank_rate[1] // arch.dram_bank_rate[0])
        dram_a = _dram_read(arch, a_bytes, 1, a_bytes, banks) if in_dram[0] else 0
    else:
        dram_a = _dram_read(arch, a_bytes, readers, total, banks) if in_dram[0] else 0
        dram_b = _dram_read(arch, b_bytes, readers, total, banks) if in_dram[1] else 0
    noc_a = _mcast(arch, a_bytes, recv_a, span_a)
    noc_b = _mcast(arch, b_bytes, recv_b, span_b)
    step_a, step_b = dram_a + noc_a, dram_b + noc_b
    step = max(step_compute, step_a, step_b)
    # -- the output: packed, then written by the writer (overlapping the next block) ----------
    out_bytes = mb * nb * bo
    out_pack = costs.pack_cycles(out_bytes, arch.pack_bytes)
    if in_dram[2]:
        num, den = arch.dram_core_rate
        write = -(-out_bytes * den // num)
    else:
        write = -(-out_bytes * arch.write_rate[1] // arch.write_rate[0])
    per_block = max(nk * step + out_pack, write)
    latency = arch.base_read + arch.dram_latency + 2 * (gx + gy) * arch.hop
    fill = max(step_a, step_b) + latency
    total_cycles = fill + blocks * per_block + write + arch.base_write
    ideal = costs.matmul_cycles(fidelity, int(fp32), prog.per_core_m * prog.per_core_n * k_tiles)
    return MatmulTime(
        total=total_cycles,
        compute=blocks * nk * step_compute,
        noc=blocks * nk * max(noc_a, noc_b),
        dram=blocks * nk * max(dram_a, dram_b) + blocks * write,
        ideal=ideal * prog.batch,
    )
