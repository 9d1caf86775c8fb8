"""Per-architecture parameters of the device-time model, and the chip's NoC floorplan.

Every number the model runs on is defined here once, with its source
(``shared/reference/perf-model.md`` and the tt-metal files it cites).  Integer cycles and
integer ratios only: the Python kernel API and the native runtime (which reads these
numbers from the generated ``twrt_perf.h``) must compute bit-identical times.

The floorplan places the virtual device's worker cores and DRAM banks on the physical
NoC of the architecture (Wormhole B0: a 10 x 12 torus, Tensix columns 1-4 / 6-9 and
rows 1-5 / 7-11, DRAM in columns 0 and 5; Blackhole: 17 x 12, Tensix columns 1-7 /
10-16 and rows 2-11, DRAM in columns 0 and 9 -- tt-metal ``soc_descriptors/*_arch.yaml``).
Logical worker (x, y) sits at (column x, row y) of the Tensix lists; DRAM bank b sits
in the DRAM column nearest to the worker the system descriptor names for it
(``dram_bank_to_logical_worker_noc0``), in that worker's row, so "a reader next to its
bank" means what it means on the card.  A descriptor whose grid is larger than the
floorplan gets a synthetic torus (its grid plus a margin) with the Wormhole figures.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ArchPerf", "Floorplan", "WORMHOLE_B0", "BLACKHOLE", "arch_perf", "floorplan"]


@dataclass(frozen=True, slots=True)
class ArchPerf:
    """The model's numbers for one architecture (cycles of the AI clock unless noted)."""

    name: str
    """tt-metal's arch name (``wormhole_b0``, ``blackhole``): the op report's DEVICE ARCH."""
    clock_mhz: int
    """AICLK: cycles -> time (tt-metal test_benchmark.py ``get_device_frequency``)."""
    noc_size: tuple[int, int]
    """The NoC torus (x, y) (soc descriptor ``grid``)."""
    tensix_cols: tuple[int, ...]
    tensix_rows: tuple[int, ...]
    dram_cols: tuple[int, ...]
    flit_bytes: int
    """One flit per cycle per link (WH 32 B, BH 64 B: NoC README, BH DRAM report)."""
    max_packet: int
    """NOC_MAX_BURST_SIZE: a transfer is split into packets of at most this many bytes."""
    # -- NoC transactions (fitted to noc_latencies.csv, see docs/performance-model.md) --------
    issue_write: int
    """RISC cycles to issue one write packet (256 back-to-back 64 B writes: WH 5907, BH 6228)."""
    issue_read: int
    """RISC cycles to issue one read request (WH 256 x 64 B reads 6579; BH 9280)."""
    hop: int
    """Router-to-router latency per hop (WH NoC README: 9)."""
    base_write: int
    """Fixed part of a write with its acknowledgement (NIU in/out, ack, barrier): what
    remains of the measured 64 B transfer (WH 293, BH 358 cycles, 22 / 29 hops)."""
    base_read: int
    """Fixed part of a read: what remains of the measured 64 B read (WH 293, BH 373)."""
    write_rate: tuple[int, int]
    """Write serialisation (bytes, cycles): WH 29.7 B/cycle, BH 60.5 (the reference's
    two-point fit; streaming measures 31.1 / 62.1)."""
    read_rate: tuple[int, int]
    """Read response serialisation (bytes, cycles): WH 28.5, BH 60.4."""
    read_window: int
    """Read packets a RISC may have outstanding before its next read waits (the NIU's
    response buffers; bounds how far issuing runs ahead of the data)."""
    mcast_setup: int
    """A multicast that does not follow a linked one holds its path for this long before
    its data (WH 256 non-linked 64 B multicasts to 2x2 cores: 169 cycles each, linked 24)."""
    mcast_setup_per_span: int
    """... plus this per row and column of the destination rectangle (2x2 -> 5x5: +13/unit)."""
    # -- the compute engine's data paths ---------------------------------------------------
    unpack_bytes: int
    """L1 bytes one unpacker reads per cycle (WH: 4 x 128 bit, TensixTile/L1.md; BH: twice
    that, fitted to the published BH GEMM utilisation -- see docs/performance-model.md)."""
    unpack_pair_bytes: int
    """... both unpackers together (WH 5 x 128 bit)."""
    pack_bytes: int
    """L1 bytes the packer writes per cycle (WH 4 x 128 bit; half that with L1 accumulation)."""
    # -- DRAM (tt-metal DRAM reports; the reference's section 4) ------------------------------
    dram_latency: int
    """Extra latency of a DRAM access over an L1 one (64 B interleaved read ~380 WH, ~480 BH)."""
    dram_bank_rate: tuple[int, int]
    """What one bank serves (bytes, cycles): WH 288 GB/s x 92 % / 12 banks; BH 512 x 98 % / 8."""
    dram_core_rate: tuple[int, int]
    """What one requester gets from DRAM (bytes, cycles): single-core ideal, WH 22, BH 33."""
    # -- Ethernet (the fabric between chips) -------------------------------------------------
    eth_hop: int
    """Cycles per Ethernet hop (router, link, the far side's forwarding: about 1 us)."""
    eth_rate: tuple[int, int]
    """Payload (bytes, cycles) of one link: WH 100 GbE = 12.5 GB/s; BH 400 GbE x 85 %."""
    # -- dispatch (trace mode, WH measured) ---------------------------------------------------
    dispatch_ns: tuple[int, int, int]
    """Per-program dispatch, ns: data-movement only, compute only, both (2.6 / 2.9 / 3.0 us)."""
    dispatch_ns_per_kernel_kib: int
    """Growth with kernel binary size (256 B -> 12 KiB: up to +2.3 / +3 us)."""

    def ns(self, cycles: int) -> float:
        """Cycles of this clock in nanoseconds."""
        return cycles * 1000.0 / self.clock_mhz


WORMHOLE_B0 = ArchPerf(
    name="wormhole_b0",
    clock_mhz=1000,
    noc_size=(10, 12),
    tensix_cols=(1, 2, 3, 4, 6, 7, 8, 9),
    tensix_rows=(1, 2, 3, 4, 5, 7, 8, 9, 10, 11),
    dram_cols=(0, 5),
    flit_bytes=32,
    max_packet=8192,
    issue_write=22,
    issue_read=23,
    hop=9,
    base_write=70,
    base_read=69,
    write_rate=(297, 10),
    read_rate=(285, 10),
    read_window=8,
    mcast_setup=93,
    mcast_setup_per_span=13,
    unpack_bytes=64,
    unpack_pair_bytes=80,
    pack_bytes=64,
    dram_latency=90,
    dram_bank_rate=(22, 1),
    dram_core_rate=(22, 1),
    eth_hop=1000,
    eth_rate=(12, 1),
    dispatch_ns=(2600, 2900, 3000),
    dispatch_ns_per_kernel_kib=250,
)

BLACKHOLE = ArchPerf(
    name="blackhole",
    clock_mhz=1350,
    noc_size=(17, 12),
    tensix_cols=(1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16),
    tensix_rows=(2, 3, 4, 5, 6, 7, 8, 9, 10, 11),
    dram_cols=(0, 9),
    flit_bytes=64,
    max_packet=16384,
    issue_write=24,
    issue_read=36,
    hop=9,
    base_write=72,
    base_read=74,
    write_rate=(605, 10),
    read_rate=(604, 10),
    read_window=8,
    mcast_setup=221,
    mcast_setup_per_span=8,
    unpack_bytes=128,
    unpack_pair_bytes=160,
    pack_bytes=128,
    dram_latency=110,
    dram_bank_rate=(465, 10),
    dram_core_rate=(33, 1),
    eth_hop=1350,
    eth_rate=(31, 1),
    dispatch_ns=(2600, 2900, 3000),
    dispatch_ns_per_kernel_kib=250,
)

_BY_ARCH = {"WORMHOLE_B0": WORMHOLE_B0, "BLACKHOLE": BLACKHOLE}


def arch_perf(arch: object) -> ArchPerf:
    """The parameters of a ``target.Arch`` (or its name); other architectures (Quasar) use
    Wormhole B0's, as nothing is published for them."""
    name = getattr(arch, "name", str(arch)).upper()
    return _BY_ARCH.get(name, WORMHOLE_B0)


@dataclass(frozen=True, slots=True)
class Floorplan:
    """Where a device's workers and DRAM banks sit on the physical NoC torus."""

    size: tuple[int, int]
    workers: tuple[tuple[int, int], ...]
    """Physical (x, y) of each worker, by core index (row-major logical order)."""
    dram: tuple[tuple[int, int], ...]
    """Physical (x, y) of each DRAM bank's NoC endpoint."""

    @property
    def routers(self) -> int:
        return self.size[0] * self.size[1]


def floorplan(arch: ArchPerf, grid_x: int, grid_y: int, dram_workers) -> Floorplan:
    """The floorplan of a ``grid_x`` x ``grid_y`` worker grid with ``dram_workers[b]`` the
    logical (x, y) worker next to DRAM bank ``b``."""
    cols, rows, size = arch.tensix_cols, arch.tensix_rows, arch.noc_size
    dram_cols = arch.dram_cols
    if grid_x > len(cols) or grid_y > len(rows):  # a descriptor larger than the chip
        cols = tuple(range(1, grid_x + 1))
        rows = tuple(range(1, grid_y + 1))
        size = (grid_x + 2, grid_y + 2)
        dram_cols = (0, grid_x + 1)
    workers = tuple((cols[x], rows[y]) for y in range(grid_y) for x in range(grid_x))
    dram = []
    for b, (wx, wy) in enumerate(dram_workers):
        if 0 <= wx < grid_x and 0 <= wy < grid_y:
            px, py = cols[wx], rows[wy]
        else:  # no (or a bad) map entry: spread the banks down the DRAM columns
            px, py = cols[0], rows[b % len(rows)]
        col = min(dram_cols, key=lambda c: (abs(c - px), c))
        dram.append((col, py))
    return Floorplan(size, workers, tuple(dram))
