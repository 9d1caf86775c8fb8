"""The capacity table: what one chip offers to kernels, derived from a system descriptor.

Every other layer reads target limits from here and nowhere else: the compiler checks
kernel counts, DFB physical indices and the L1 budget against it, and the device sizes L1,
DRAM channels, alignment and the DST register from it.  Each entry is a descriptor field
or one of tt-mlir's derived facts (reference §6.2 ``getUsableL1Size`` /
``getUsableDramChannelSize``, §8.5 ``getChipDesc``, ``getDstLogicalSizeTiles``,
``DeviceAttr::get``); the derivations are documented in ``docs/system-descriptors.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from tilewright.errors import SystemDescError
from tilewright.target.enums import Arch, DataType
from tilewright.target.model import Dim2d, SystemDesc, SystemDescRoot, dst_logical_tiles

__all__ = [
    "PROCESSOR_NAMES",
    "CapacityTable",
    "KernelSlots",
    "capacity_table",
    "device_worker_grid",
    "kernel_slots",
]

#: Named RISC-V processors per arch and kernel kind, in slot order.  Quasar's descriptor
#: counts (4 compute, 6 data movement) have no names here: slots become compute0.., dm0..
PROCESSOR_NAMES: Final[Mapping[Arch, Mapping[str, tuple[str, ...]]]] = MappingProxyType(
    {
        Arch.WORMHOLE_B0: {"compute": ("trisc",), "data_movement": ("ncrisc", "brisc")},
        Arch.BLACKHOLE: {"compute": ("trisc",), "data_movement": ("ncrisc", "brisc")},
        Arch.QUASAR: {"compute": (), "data_movement": ()},
    }
)
_GENERIC_PREFIX: Final = {"compute": "compute", "data_movement": "dm"}


@dataclass(frozen=True, slots=True)
class KernelSlots:
    """Processor slots of one node, per kernel kind, in assignment order."""

    compute: tuple[str, ...]
    data_movement: tuple[str, ...]

    def __getitem__(self, kind: str) -> tuple[str, ...]:
        """``slots["compute"]`` / ``slots["data_movement"]``."""
        if kind not in _GENERIC_PREFIX:
            raise KeyError(f"unknown kernel kind {kind!r}; expected 'compute' or 'data_movement'")
        return self.compute if kind == "compute" else self.data_movement


def _slot_names(arch: Arch, kind: str, count: int) -> tuple[str, ...]:
    named = PROCESSOR_NAMES[arch][kind]
    if count <= len(named):
        return named[:count]
    # More threads than named processors (Quasar): number them.
    return tuple(f"{_GENERIC_PREFIX[kind]}{i}" for i in range(count))


@dataclass(frozen=True, slots=True, kw_only=True)
class CapacityTable:
    """What the chip at one position offers to a program (all sizes in bytes).

    Attributes:
        arch: chip architecture.
        chip: chip position the table describes (index into ``chip_desc_indices``).
        num_chips: chips in the system.
        is_mmio: the chip is reachable over PCIe (HostMMIO capability).
        grid: worker grid (y, x): ``grid_size`` = ``compute_with_storage_grid_size``.
        coord_translation_offsets: logical → translated NoC coordinate offset (y, x).
        compute_kernels: compute kernels per node (``num_compute_threads``).
        data_movement_kernels: data-movement kernels per node (``num_datamovement_threads``).
        num_cbs: DFB (circular buffer) physical indices per node, ``0 .. num_cbs - 1``.
        l1_size: L1 bytes per worker core.
        l1_unreserved_base: first L1 byte the allocator may hand out.
        usable_l1: the L1 budget for DFBs and L1 buffers, ``l1_size - l1_unreserved_base``.
        erisc_l1_unreserved_base: first free L1 byte on Ethernet cores.
        dst_physical_tiles: physical DST register size in tiles.
        supported_tile_shapes: (y, x) tile shapes.
        supported_data_types: data types the chip supports.
        noc_l1_align / noc_dram_align / pcie_align: NoC address alignment per memory.
        num_dram_channels: DRAM channels (banks).
        dram_channel_size: bytes per DRAM channel.
        dram_unreserved_base / dram_unreserved_end: allocatable window of each channel.
        usable_dram_per_channel: ``dram_unreserved_end - dram_unreserved_base``.
        dram_grid: DRAM grid (y, x).
        dram_bank_to_worker_noc0 / _noc1: per bank, the logical worker (y, x) closest to it.
    """

    arch: Arch
    chip: int
    num_chips: int
    is_mmio: bool
    grid: Dim2d
    coord_translation_offsets: Dim2d
    compute_kernels: int
    data_movement_kernels: int
    num_cbs: int
    l1_size: int
    l1_unreserved_base: int
    usable_l1: int
    erisc_l1_unreserved_base: int
    dst_physical_tiles: int
    supported_tile_shapes: tuple[tuple[int, int], ...]
    supported_data_types: tuple[DataType, ...]
    noc_l1_align: int
    noc_dram_align: int
    pcie_align: int
    num_dram_channels: int
    dram_channel_size: int
    dram_unreserved_base: int
    dram_unreserved_end: int
    usable_dram_per_channel: int
    dram_grid: Dim2d
    dram_bank_to_worker_noc0: tuple[Dim2d, ...]
    dram_bank_to_worker_noc1: tuple[Dim2d, ...]

    @classmethod
    def from_system_desc(cls, sd: SystemDesc | SystemDescRoot, chip: int = 0) -> CapacityTable:
        """Build the table for the chip at position ``chip`` (through ``chip_desc_indices``).

        Raises:
            SystemDescError: no such chip (rules 9, 24), e.g. the Quasar compiler default,
                which has no chips; or inconsistent unreserved regions (rule 20).
        """
        system = sd.system_desc if isinstance(sd, SystemDescRoot) else sd
        desc = system.get_chip_desc(chip)
        return cls(
            arch=desc.arch,
            chip=chip,
            num_chips=system.num_chips,
            is_mmio=system.is_mmio(chip) if chip < len(system.chip_capabilities) else False,
            grid=desc.grid_size,
            coord_translation_offsets=desc.coord_translation_offsets,
            compute_kernels=desc.num_compute_threads,
            data_movement_kernels=desc.num_datamovement_threads,
            num_cbs=desc.num_cbs,
            l1_size=desc.l1_size,
            l1_unreserved_base=desc.l1_unreserved_base,
            usable_l1=desc.usable_l1_size,
            erisc_l1_unreserved_base=desc.erisc_l1_unreserved_base,
            dst_physical_tiles=desc.dst_physical_size_tiles,
            supported_tile_shapes=tuple((t.y, t.x) for t in desc.supported_tile_sizes),
            supported_data_types=desc.supported_data_types,
            noc_l1_align=desc.noc_l1_address_align_bytes,
            noc_dram_align=desc.noc_dram_address_align_bytes,
            pcie_align=desc.pcie_address_align_bytes,
            num_dram_channels=desc.num_dram_channels,
            dram_channel_size=desc.dram_channel_size,
            dram_unreserved_base=desc.dram_unreserved_base,
            dram_unreserved_end=desc.dram_unreserved_end,
            usable_dram_per_channel=desc.usable_dram_channel_size,
            dram_grid=desc.dram_grid_size,
            dram_bank_to_worker_noc0=desc.dram_bank_to_logical_worker_noc0,
            dram_bank_to_worker_noc1=desc.dram_bank_to_logical_worker_noc1,
        )

    @property
    def num_nodes(self) -> int:
        """Worker cores (nodes) on the grid: ``grid.y * grid.x``."""
        return self.grid.y * self.grid.x

    @property
    def address_align(self) -> int:
        """Largest of the three alignments (``getAddressAlignBytes``, §8.5)."""
        return max(self.noc_l1_align, self.noc_dram_align, self.pcie_align)

    @property
    def kernel_slots(self) -> KernelSlots:
        """Processor slots per kernel kind; see :func:`kernel_slots`."""
        return kernel_slots(self)

    def dst_logical_tiles(self, dtype: DataType, full_sync: bool = False) -> int:
        """Tiles of ``dtype`` in DST (§8.5): halved unless full-sync, halved again for 32-bit.

        With 16 physical tiles: bf16 → 8, f32 → 4; full-sync 16 and 8.
        """
        return dst_logical_tiles(self.dst_physical_tiles, dtype, full_sync)

    def supports_tile_shape(self, shape: tuple[int, int]) -> bool:
        return tuple(shape) in self.supported_tile_shapes

    def supports_data_type(self, dtype: DataType) -> bool:
        return dtype in self.supported_data_types


def capacity_table(sd: SystemDesc | SystemDescRoot, chip: int = 0) -> CapacityTable:
    """Shortcut for :meth:`CapacityTable.from_system_desc`."""
    return CapacityTable.from_system_desc(sd, chip)


def kernel_slots(table: CapacityTable) -> KernelSlots:
    """Processor slots per kernel kind for the table's arch and thread counts.

    Wormhole B0 and Blackhole: compute ``("trisc",)`` (one compute kernel runs on the three
    TRISCs as one), data movement ``("ncrisc", "brisc")``.  Counts come from the
    descriptor; beyond the named processors (Quasar: 4 compute, 6 data movement) slots are
    named ``compute0..`` and ``dm0..``.
    """
    return KernelSlots(
        compute=_slot_names(table.arch, "compute", table.compute_kernels),
        data_movement=_slot_names(table.arch, "data_movement", table.data_movement_kernels),
    )


def device_worker_grid(
    sd: SystemDesc | SystemDescRoot, chip_ids: Sequence[int] | None = None
) -> Dim2d:
    """Worker grid of a device over several chips: element-wise minimum (``DeviceAttr::get``).

    Args:
        chip_ids: chip positions (default: all chips).

    Raises:
        SystemDescError: empty ``chip_ids`` or a position out of range (§11 rule 24).
    """
    system = sd.system_desc if isinstance(sd, SystemDescRoot) else sd
    ids = list(range(system.num_chips)) if chip_ids is None else list(chip_ids)
    if not ids:
        raise SystemDescError(
            "a device needs at least one chip id", field="chip_ids", rule="system-desc.24"
        )
    grids = [system.get_chip_desc(i).grid_size for i in ids]
    return Dim2d(min(g.y for g in grids), min(g.x for g in grids))
