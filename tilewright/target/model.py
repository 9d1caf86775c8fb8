"""The system-descriptor model: frozen, slotted, hashable dataclasses (reference §1).

Class and field names are the FlatBuffer schema's (``system_desc.fbs``, ``types.fbs``),
in declaration order, so ``fields.py`` can map each FlatBuffer slot to an attribute by
name.  Sequences are tuples and nested records are frozen, so every descriptor is
hashable and compares by value.  For convenience the constructors accept lists for
tuples, ``(y, x)`` pairs for :class:`Dim2d` and plain ints for enums; they are coerced
once in ``__post_init__``.

This module owns the data and the few derived facts tt-mlir defines on it
(``getChipDesc``, ``getUsableL1Size``, ``getUsableDramChannelSize``,
``getDstLogicalSizeTiles``, §6.2 and §8.5).  Codecs, defaults, validation and the
capacity table live in their own modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from tilewright.errors import SystemDescError
from tilewright.target.enums import (
    DST_32BIT_TYPES,
    Arch,
    ChipCapability,
    CPURole,
    DataType,
)

__all__ = [
    "CPUDesc",
    "ChipChannel",
    "ChipCoord",
    "ChipDesc",
    "Dim2d",
    "SystemDesc",
    "SystemDescRoot",
    "Version",
    "dims",
    "dst_logical_tiles",
]


def _as_dim(value: Any) -> Any:
    """``(y, x)`` → :class:`Dim2d`; anything else is left for validation to judge."""
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return Dim2d(*value)
    return value


def _to_enum(obj: Any, name: str, enum_type: Any, value: Any) -> Any:
    if isinstance(value, enum_type) or not isinstance(value, int):
        return value  # already an enum, or a wrong type that validation reports
    try:
        return enum_type(value)
    except ValueError:
        raise SystemDescError(
            f"{type(obj).__name__}.{name}: {value} is not a FlatBuffer {enum_type.__name__}",
            field=name,
        ) from None


def _coerce(
    obj: Any,
    tuples: tuple[str, ...] = (),
    dim_fields: tuple[str, ...] = (),
    dim_tuples: tuple[str, ...] = (),
    enums: tuple[tuple[str, Any], ...] = (),
    enum_tuples: tuple[tuple[str, Any], ...] = (),
) -> None:
    """Normalise constructor arguments of a frozen dataclass in place (once, at creation)."""
    for name in tuples:
        value = getattr(obj, name)
        if not isinstance(value, tuple):
            object.__setattr__(obj, name, tuple(value))
    for name in dim_fields:
        object.__setattr__(obj, name, _as_dim(getattr(obj, name)))
    for name in dim_tuples:
        object.__setattr__(obj, name, tuple(_as_dim(v) for v in getattr(obj, name)))
    for name, enum_type in enums:
        object.__setattr__(obj, name, _to_enum(obj, name, enum_type, getattr(obj, name)))
    for name, enum_type in enum_tuples:
        values = getattr(obj, name)
        object.__setattr__(obj, name, tuple(_to_enum(obj, name, enum_type, v) for v in values))


def dims(pairs: Iterable[tuple[int, int]]) -> tuple[Dim2d, ...]:
    """``[(y, x), ...]`` → a tuple of :class:`Dim2d` (for readable tables of coordinates)."""
    return tuple(Dim2d(y, x) for y, x in pairs)


def dst_logical_tiles(physical_tiles: int, dtype: DataType, full_sync: bool = False) -> int:
    """DST tiles of ``dtype`` (``getDstLogicalSizeTiles``, §8.5).

    Half the physical size unless full-sync (double buffering splits DST in two), and half
    again for 32-bit types (Float32, UInt32, Int32).
    """
    tiles = physical_tiles if full_sync else physical_tiles // 2
    return tiles // 2 if DataType(dtype) in DST_32BIT_TYPES else tiles


@dataclass(frozen=True, slots=True, order=True)
class Version:
    """tt-mlir version (``version.fbs``): u16 major, u16 minor, u32 patch (§3).

    ``patch`` counts commits since the ``v<major>.<minor>`` tag (real files: ``0.0.3758``).
    """

    major: int
    minor: int
    patch: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    @classmethod
    def parse(cls, text: str) -> Version:
        """``"0.0.3758"`` → ``Version(0, 0, 3758)``."""
        parts = text.strip().split(".")
        if len(parts) != 3 or not all(p.isascii() and p.isdigit() and len(p) <= 10 for p in parts):
            raise SystemDescError(f"version {text!r} is not 'major.minor.patch'", field="version")
        return cls(int(parts[0]), int(parts[1]), int(parts[2]))


@dataclass(frozen=True, slots=True, order=True)
class Dim2d:
    """A (y, x) pair of int32 (grid sizes, core coordinates, tile shapes)."""

    y: int
    x: int

    def __iter__(self) -> Iterator[int]:
        # Lets callers write ``rows, cols = table.grid``.
        yield self.y
        yield self.x


@dataclass(frozen=True, slots=True, order=True)
class ChipCoord:
    """Physical chip coordinate (rack, shelf, y, x), uint32 each.

    The runtime writes one placeholder ``(0, 0, 0, 0)`` whatever the chip count (§0.7), so
    coordinates are never topology.
    """

    rack: int
    shelf: int
    y: int
    x: int


@dataclass(frozen=True, slots=True, order=True)
class ChipChannel:
    """An Ethernet link between two chips (§8.3).

    ``device_id0``/``device_id1`` are TT-Metal device ids, **not** chip positions; the
    coordinates are logical Ethernet-core coordinates stored (y, x).
    """

    device_id0: int
    ethernet_core_coord0: Dim2d
    device_id1: int
    ethernet_core_coord1: Dim2d

    def __post_init__(self) -> None:
        _coerce(self, dim_fields=("ethernet_core_coord0", "ethernet_core_coord1"))


@dataclass(frozen=True, slots=True)
class CPUDesc:
    """A CPU of the system: its role and LLVM target triple."""

    role: CPURole
    target_triple: str

    def __post_init__(self) -> None:
        _coerce(self, enums=(("role", CPURole),))


@dataclass(frozen=True, slots=True, kw_only=True)
class ChipDesc:
    """Everything the compiler knows about one chip (``ChipDesc``, 22 slots, §1.3).

    Field meanings are documented in ``docs/system-descriptors.md``.  ``grid_size`` is the
    worker grid (``compute_with_storage_grid_size``), ``l1_unreserved_base`` the first L1
    byte the allocator may hand out, and ``dram_unreserved_end`` the conservative top of
    each DRAM channel after the kernel-binary carve-out (§8.2).
    """

    arch: Arch
    grid_size: Dim2d
    coord_translation_offsets: Dim2d
    l1_size: int
    num_dram_channels: int
    dram_channel_size: int
    noc_l1_address_align_bytes: int
    pcie_address_align_bytes: int
    noc_dram_address_align_bytes: int
    l1_unreserved_base: int
    erisc_l1_unreserved_base: int
    dram_unreserved_base: int
    dram_unreserved_end: int
    supported_data_types: tuple[DataType, ...]
    supported_tile_sizes: tuple[Dim2d, ...]
    dst_physical_size_tiles: int
    num_cbs: int
    num_compute_threads: int
    num_datamovement_threads: int
    dram_grid_size: Dim2d
    dram_bank_to_logical_worker_noc0: tuple[Dim2d, ...]
    dram_bank_to_logical_worker_noc1: tuple[Dim2d, ...]

    _DIMS: ClassVar[tuple[str, ...]] = ("grid_size", "coord_translation_offsets", "dram_grid_size")
    _DIM_TUPLES: ClassVar[tuple[str, ...]] = (
        "supported_tile_sizes",
        "dram_bank_to_logical_worker_noc0",
        "dram_bank_to_logical_worker_noc1",
    )

    def __post_init__(self) -> None:
        _coerce(
            self,
            dim_fields=self._DIMS,
            dim_tuples=self._DIM_TUPLES,
            enums=(("arch", Arch),),
            enum_tuples=(("supported_data_types", DataType),),
        )

    @property
    def usable_l1_size(self) -> int:
        """``l1_size - l1_unreserved_base`` (``getUsableL1Size``, §6.2).

        Raises:
            SystemDescError: if the base lies above the size (§11 rule 20); tt-mlir would
                wrap around in unsigned arithmetic instead.
        """
        if self.l1_unreserved_base > self.l1_size:
            raise SystemDescError(
                f"l1_unreserved_base {self.l1_unreserved_base} exceeds l1_size {self.l1_size}",
                field="l1_unreserved_base",
                rule="system-desc.20",
            )
        return self.l1_size - self.l1_unreserved_base

    @property
    def usable_dram_channel_size(self) -> int:
        """``dram_unreserved_end - dram_unreserved_base`` (``getUsableDramChannelSize``, §6.2).

        Raises:
            SystemDescError: if the base lies above the end (§11 rule 20).
        """
        if self.dram_unreserved_base > self.dram_unreserved_end:
            raise SystemDescError(
                f"dram_unreserved_base {self.dram_unreserved_base} exceeds "
                f"dram_unreserved_end {self.dram_unreserved_end}",
                field="dram_unreserved_base",
                rule="system-desc.20",
            )
        return self.dram_unreserved_end - self.dram_unreserved_base

    def dst_logical_size_tiles(
        self, dtype: DataType, full_sync: bool = False, override_physical_size: int = 0
    ) -> int:
        """Tiles of ``dtype`` the DST register holds (``getDstLogicalSizeTiles``, §8.5).

        Half the physical size unless full-sync (double-buffering splits DST in two), and
        half again for 32-bit types.  With 16 physical tiles: bf16 → 8, f32 → 4; full sync
        16 and 8.
        """
        physical = (
            override_physical_size if override_physical_size > 0 else self.dst_physical_size_tiles
        )
        return dst_logical_tiles(physical, dtype, full_sync)


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemDesc:
    """The system: CPUs, chip descriptors and per-chip-position tables (§1.3, §0.6).

    ``chip_desc_indices[i]`` is the index into ``chip_descs`` of the chip at position
    ``i``; ``chip_capabilities`` is parallel to the indices; ``chip_channels`` endpoints are
    TT-Metal device ids.  The number of chips is ``len(chip_desc_indices)``.
    """

    cpu_descs: tuple[CPUDesc, ...]
    chip_descs: tuple[ChipDesc, ...]
    chip_desc_indices: tuple[int, ...]
    chip_capabilities: tuple[ChipCapability, ...]
    chip_coords: tuple[ChipCoord, ...]
    chip_channels: tuple[ChipChannel, ...] = ()

    def __post_init__(self) -> None:
        _coerce(
            self,
            tuples=("cpu_descs", "chip_descs", "chip_desc_indices", "chip_coords", "chip_channels"),
            enum_tuples=(("chip_capabilities", ChipCapability),),
        )

    @property
    def num_chips(self) -> int:
        """Number of chip positions: ``len(chip_desc_indices)`` (§0.6, §8.5)."""
        return len(self.chip_desc_indices)

    def get_chip_desc(self, chip: int = 0) -> ChipDesc:
        """The descriptor of the chip at position ``chip`` (``getChipDesc``, §8.5).

        Goes through ``chip_desc_indices`` (positions are not indices into
        ``chip_descs``), with the bounds checks tt-mlir leaves to debug asserts.

        Raises:
            SystemDescError: position or index out of range (§11 rules 9 and 24).
        """
        if not 0 <= chip < len(self.chip_desc_indices):
            raise SystemDescError(
                f"chip position {chip} out of range: the system has {len(self.chip_desc_indices)} "
                "chip(s) (len(chip_desc_indices))",
                field="chip_desc_indices",
                rule="system-desc.24",
            )
        index = self.chip_desc_indices[chip]
        if not 0 <= index < len(self.chip_descs):
            raise SystemDescError(
                f"chip_desc_indices[{chip}] = {index} out of range: there are "
                f"{len(self.chip_descs)} chip_descs",
                field=f"chip_desc_indices[{chip}]",
                rule="system-desc.9",
            )
        return self.chip_descs[index]

    def is_mmio(self, chip: int = 0) -> bool:
        """True if the chip at position ``chip`` has the HostMMIO capability."""
        return bool(self.chip_capabilities[chip] & ChipCapability.HOST_MMIO)


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemDescRoot:
    """The ``.ttsys`` envelope (``SystemDescRoot``, §1 and §3).

    ``product_identifier`` is None when absent from the file; the runtime always writes
    ``"unknown"``.
    """

    version: Version
    schema_hash: str
    ttmlir_git_hash: str
    product_identifier: str | None = "unknown"
    system_desc: SystemDesc

    def __post_init__(self) -> None:
        if isinstance(self.version, (tuple, list)):
            object.__setattr__(self, "version", Version(*self.version))
        elif isinstance(self.version, str):
            object.__setattr__(self, "version", Version.parse(self.version))

    def get_chip_desc(self, chip: int = 0) -> ChipDesc:
        """Shortcut for ``self.system_desc.get_chip_desc(chip)``."""
        return self.system_desc.get_chip_desc(chip)
