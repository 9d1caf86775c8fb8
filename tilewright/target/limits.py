"""Physical limits: values no real chip of an architecture can have (rule 26).

tt-mlir accepts any value that fits a descriptor field's FlatBuffer type, so a
descriptor may claim a Wormhole with 2³¹ circular buffers or a 4-GiB L1.  Tilewright
builds real memories and per-core tables from these counts, so before a descriptor
reaches the virtual device every count and size is held to what the architecture
physically has.  The figures come from the team's references:

* worker grid: the chip's Tensix array (Wormhole B0: 8 columns x 10 rows = 80 Tensix;
  Blackhole: 14 x 10 = 140); the largest single-chip grids the TT-Lang spec lists (App.
  E: WH 8x9, BH 13x10) and every real descriptor (n150 8x8, p150 10x11, tt-mlir's
  Blackhole default 10x13) fit inside;
* NoC coordinates are 6-bit (``NOC_XY_ADDR``, tt-metal.md §NoC addressing), so a worker's
  translated coordinate (``coord_translation_offsets`` + logical) is at most 63;
* L1 per core: 1464 KiB on Wormhole (1499136 B, spec App. E), 1.5 MiB on Blackhole;
* DRAM: 12 channels of 1 GiB on Wormhole, 8 channels of 4 GiB on Blackhole (system-desc
  §7: real ``dram_channel_size`` 1073741824 and 4278190080);
* circular buffers: ``tt::CBIndex`` c_0..c_63 (64; the host constant real descriptors
  carry; the Wormhole device limit is 32);
* kernel threads: one compute kernel (the three TRISCs as one) and two data-movement
  kernels on Wormhole and Blackhole; Quasar 4 compute, 8 physical data-movement cores
  ("6 programmable v.s. 8 physical", system-desc §8.1);
* DST: 16 physical tiles in every source (system-desc §1.3: constant 16);
* alignments: at most the NoC's largest packet (``NOC_MAX_BURST_SIZE``: WH 8 KiB, BH 16
  KiB).

No Quasar chip descriptor exists in the references (tt-mlir's Quasar default has no
chips), so Quasar is held to the largest Wormhole/Blackhole figures with its own thread
counts.  Rule 26 is evaluated by ``validate(..., for_device=True)`` (what the virtual
device and ``tilewright sysdesc check`` use); tt-mlir's own rules are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from tilewright.target.enums import Arch
from tilewright.target.findings import Finding, Severity
from tilewright.target.model import ChipDesc, Dim2d

__all__ = ["NOC_COORD_LIMIT", "PHYSICAL_LIMITS", "PhysicalLimits", "physical_findings"]

NOC_COORD_LIMIT: Final = 64
"""NoC coordinates are 6-bit: x and y of every core are below 64."""

_GIB = 1 << 30


@dataclass(frozen=True, slots=True, kw_only=True)
class PhysicalLimits:
    """The largest value each descriptor count or size can have on one architecture."""

    grid: Dim2d
    """Largest worker grid (rows y, columns x): the Tensix array."""
    l1_size: int
    num_dram_channels: int
    dram_channel_size: int
    num_cbs: int
    num_compute_threads: int
    num_datamovement_threads: int
    dst_physical_size_tiles: int
    alignment: int
    """Largest meaningful address alignment: the NoC's largest packet."""


PHYSICAL_LIMITS: Final[Mapping[Arch, PhysicalLimits]] = MappingProxyType(
    {
        Arch.WORMHOLE_B0: PhysicalLimits(
            grid=Dim2d(10, 8),
            l1_size=1499136,
            num_dram_channels=12,
            dram_channel_size=_GIB,
            num_cbs=64,
            num_compute_threads=1,
            num_datamovement_threads=2,
            dst_physical_size_tiles=16,
            alignment=8192,
        ),
        Arch.BLACKHOLE: PhysicalLimits(
            grid=Dim2d(10, 14),
            l1_size=1572864,
            num_dram_channels=8,
            dram_channel_size=4 * _GIB,
            num_cbs=64,
            num_compute_threads=1,
            num_datamovement_threads=2,
            dst_physical_size_tiles=16,
            alignment=16384,
        ),
        Arch.QUASAR: PhysicalLimits(
            grid=Dim2d(10, 14),
            l1_size=1572864,
            num_dram_channels=12,
            dram_channel_size=4 * _GIB,
            num_cbs=64,
            num_compute_threads=4,
            num_datamovement_threads=8,
            dst_physical_size_tiles=16,
            alignment=16384,
        ),
    }
)

#: Scalar fields held to a maximum, with what the limit is.
_SCALAR_LIMITS: Final = (
    ("l1_size", "L1 per core"),
    ("num_dram_channels", "DRAM channels"),
    ("dram_channel_size", "bytes per DRAM channel"),
    ("num_cbs", "circular buffers (tt::CBIndex c_0..c_63)"),
    ("num_compute_threads", "compute kernels per core"),
    ("num_datamovement_threads", "data-movement kernels per core"),
    ("dst_physical_size_tiles", "physical DST tiles"),
)
_ALIGNMENTS: Final = (
    "noc_l1_address_align_bytes",
    "pcie_address_align_bytes",
    "noc_dram_address_align_bytes",
)


def physical_findings(chip: ChipDesc, at: str) -> Iterator[Finding]:
    """Rule 26 (E): every count and size within what ``chip.arch`` physically has."""
    limits = PHYSICAL_LIMITS[chip.arch]
    arch = chip.arch.name.lower()
    grid = chip.grid_size
    if grid.y > limits.grid.y or grid.x > limits.grid.x:
        yield _error(
            f"grid {grid.y}x{grid.x} exceeds the {limits.grid.y}x{limits.grid.x} Tensix "
            f"array of a {arch} chip",
            at + "grid_size",
        )
    offsets = chip.coord_translation_offsets
    if offsets.y < 0 or offsets.x < 0:
        yield _error(
            f"coord_translation_offsets {offsets.y}x{offsets.x} are negative: NoC "
            "coordinates are unsigned",
            at + "coord_translation_offsets",
        )
    elif offsets.y + grid.y > NOC_COORD_LIMIT or offsets.x + grid.x > NOC_COORD_LIMIT:
        yield _error(
            f"coord_translation_offsets {offsets.y}x{offsets.x} + grid {grid.y}x{grid.x} "
            f"put workers beyond NoC coordinate {NOC_COORD_LIMIT - 1} (6-bit coordinates)",
            at + "coord_translation_offsets",
        )
    for name, what in _SCALAR_LIMITS:
        value, limit = getattr(chip, name), getattr(limits, name)
        if value > limit:
            yield _error(f"{name} = {value}: a {arch} chip has at most {limit} {what}", at + name)
    dram = chip.dram_grid_size
    if dram.y * dram.x > limits.num_dram_channels:
        yield _error(
            f"dram_grid {dram.y}x{dram.x} has more DRAM cores than a {arch} chip's "
            f"{limits.num_dram_channels} channels",
            at + "dram_grid_size",
        )
    for name in _ALIGNMENTS:
        value = getattr(chip, name)
        if value > limits.alignment:
            yield _error(
                f"{name} = {value} exceeds the NoC's largest packet on {arch} "
                f"({limits.alignment} B)",
                at + name,
            )


def _error(message: str, path: str) -> Finding:
    return Finding(Severity.ERROR, 26, message, path)
