"""tt-mlir's compiler defaults: ``SystemDescAttr::getDefault(arch, meshShape)`` (reference §7.1).

These are tt-mlir's constants (``createDefault{Wormhole,Blackhole,Quasar}SystemDesc`` in
``lib/Dialect/TTCore/IR/TTCoreOpsTypes.cpp``), not a hardware query: they differ from real
boards (``num_cbs`` 32 vs 64, unreserved bases, Blackhole offsets; see :mod:`presets` for
the real values).  The multi-chip form repeats the chip descriptor, marks every chip
HostMMIO and links chips in a ring (§7.1 last row).

Caveat, kept on purpose: the Quasar default has **no** chip descriptors, indices or
capabilities (tt-mlir's stub), so it cannot be printed as text (§6.6), has no capacity
table, and ignores the mesh shape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import MappingProxyType
from typing import Final

from tilewright.errors import SystemDescError
from tilewright.target.enums import ARCH, Arch, ChipCapability, CPURole, DataType
from tilewright.target.model import (
    ChipChannel,
    ChipCoord,
    ChipDesc,
    CPUDesc,
    Dim2d,
    SystemDesc,
    SystemDescRoot,
    dims,
)
from tilewright.target.schema_hashes import make_root

__all__ = [
    "COMPILER_CHIP_DEFAULTS",
    "COMPILER_TARGET_TRIPLE",
    "STANDARD_DATA_TYPES",
    "STANDARD_TILE_SIZES",
    "default_chip_desc",
    "default_system_desc",
    "parse_arch",
    "ring_channels",
]

#: The fixed 13-entry list every producer writes, Float32..Int32 (§1.3 slot 13, §8.1).
STANDARD_DATA_TYPES: Final[tuple[DataType, ...]] = tuple(DataType(v) for v in range(13))

#: The fixed tile shapes (y, x) every producer writes (§1.3 slot 14).
STANDARD_TILE_SIZES: Final[tuple[Dim2d, ...]] = tuple(
    Dim2d(y, x) for y, x in ((4, 16), (16, 16), (32, 16), (4, 32), (16, 32), (32, 32))
)

#: The compiler default's host triple; runtime output says "x86_64-pc-linux" instead (§0.7).
COMPILER_TARGET_TRIPLE: Final = "x86_64-pc-linux-gnu"

# createDefaultWormholeSystemDesc (§7.1, first column).
# fmt: off
_WORMHOLE_B0_BANKS = ((7, 3), (0, 0), (3, 0), (4, 0), (0, 4), (7, 7),
                      (1, 4), (6, 4), (5, 4), (2, 6), (3, 4), (4, 4))  # "captured from an n150"
# fmt: on
_WORMHOLE_B0 = ChipDesc(
    arch=Arch.WORMHOLE_B0,
    grid_size=Dim2d(8, 8),
    coord_translation_offsets=Dim2d(18, 18),
    l1_size=1499136,
    num_dram_channels=12,
    dram_channel_size=1 << 30,
    noc_l1_address_align_bytes=16,
    pcie_address_align_bytes=32,
    noc_dram_address_align_bytes=32,
    l1_unreserved_base=1024,
    erisc_l1_unreserved_base=1024,
    dram_unreserved_base=1024,
    dram_unreserved_end=1 << 30,
    supported_data_types=STANDARD_DATA_TYPES,
    supported_tile_sizes=STANDARD_TILE_SIZES,
    dst_physical_size_tiles=16,
    num_cbs=32,  # the mock says 32; real runtime output says 64 (§7.2 lessons)
    num_compute_threads=1,
    num_datamovement_threads=2,
    dram_grid_size=Dim2d(1, 12),
    dram_bank_to_logical_worker_noc0=dims(_WORMHOLE_B0_BANKS),
    dram_bank_to_logical_worker_noc1=dims(_WORMHOLE_B0_BANKS),
)

# createDefaultBlackholeSystemDesc (§7.1, second column).
_BLACKHOLE_BANKS = ((9, 0), (0, 0), (7, 0), (3, 0), (9, 7), (1, 7), (6, 7), (4, 7))  # from a p150
_BLACKHOLE = ChipDesc(
    arch=Arch.BLACKHOLE,
    grid_size=Dim2d(10, 13),
    coord_translation_offsets=Dim2d(18, 18),  # real p150 hardware reports (2, 1)
    l1_size=1572864,
    num_dram_channels=8,
    dram_channel_size=4278190080,
    noc_l1_address_align_bytes=16,
    pcie_address_align_bytes=64,
    noc_dram_address_align_bytes=64,
    l1_unreserved_base=98304,
    erisc_l1_unreserved_base=100032,
    dram_unreserved_base=64,
    dram_unreserved_end=4276383744,
    supported_data_types=STANDARD_DATA_TYPES,
    supported_tile_sizes=STANDARD_TILE_SIZES,
    dst_physical_size_tiles=16,
    num_cbs=32,
    num_compute_threads=1,
    num_datamovement_threads=2,
    dram_grid_size=Dim2d(1, 8),
    dram_bank_to_logical_worker_noc0=dims(_BLACKHOLE_BANKS),
    dram_bank_to_logical_worker_noc1=dims(_BLACKHOLE_BANKS),
)

#: Compiler default chip descriptor per arch; Quasar's default has none (§7.1).
COMPILER_CHIP_DEFAULTS: Final = MappingProxyType(
    {Arch.WORMHOLE_B0: _WORMHOLE_B0, Arch.BLACKHOLE: _BLACKHOLE, Arch.QUASAR: None}
)


def parse_arch(arch: Arch | str) -> Arch:
    """An :class:`Arch` from itself, an MLIR keyword (``wormhole_b0``) or a FlatBuffer name.

    Raises:
        SystemDescError: unknown name.
    """
    if isinstance(arch, Arch):
        return arch
    text = str(arch).strip().lower()
    for row in ARCH.rows:
        if text in (row.keyword, row.fb_name.lower(), row.member.name.lower()):
            return row.member
    raise SystemDescError(
        f"unknown arch {arch!r}; expected one of {', '.join(ARCH.keywords())}",
        field="arch",
        rule="system-desc.16",
    )


def default_chip_desc(arch: Arch | str) -> ChipDesc | None:
    """The compiler's default chip descriptor for ``arch`` (None for Quasar)."""
    return COMPILER_CHIP_DEFAULTS[parse_arch(arch)]


def ring_channels(num_chips: int) -> tuple[ChipChannel, ...]:
    """The default ring ``i → (i + 1) % n`` with Ethernet cores (0, 0); none for one chip.

    Not deduplicated, as in tt-mlir: two chips give 0→1 and 1→0 (§7.1, E5).
    """
    if num_chips == 1:
        return ()
    return tuple(
        ChipChannel(i, Dim2d(0, 0), (i + 1) % num_chips, Dim2d(0, 0)) for i in range(num_chips)
    )


def _chip_count(chips: int | None, mesh_shape: Sequence[int] | None) -> int:
    # getDefault takes a mesh shape and uses its volume; an empty shape means one chip.
    from_mesh = math.prod(mesh_shape) if mesh_shape is not None else None
    if chips is not None and from_mesh is not None and chips != from_mesh:
        raise SystemDescError(
            f"chips={chips} disagrees with mesh_shape={tuple(mesh_shape or ())} "
            f"(volume {from_mesh})",
            field="chips",
            rule="system-desc.24",
        )
    count = chips if chips is not None else from_mesh if from_mesh is not None else 1
    if count < 1 or (mesh_shape is not None and any(d < 1 for d in mesh_shape)):
        raise SystemDescError(
            f"a system needs at least one chip, got {count} (mesh_shape={mesh_shape})",
            field="chips",
            rule="system-desc.24",
        )
    return count


def default_system_desc(
    arch: Arch | str = Arch.WORMHOLE_B0,
    *,
    chips: int | None = None,
    mesh_shape: Sequence[int] | None = None,
) -> SystemDescRoot:
    """``SystemDescAttr::getDefault(arch, meshShape)`` in the tt-mlir HEAD envelope (§7.1).

    Args:
        arch: ``wormhole_b0``, ``blackhole`` or ``quasar`` (or an :class:`Arch`).
        chips: number of chips (default 1).
        mesh_shape: alternatively a mesh shape; its volume is the chip count.

    Returns:
        n identical chip descriptors, indices ``0..n-1``, every chip HostMMIO, a single
        placeholder coordinate and the ring channels.  Quasar: no chips at all.

    Raises:
        SystemDescError: unknown arch, or a chip count below 1 / inconsistent with the mesh.
    """
    member = parse_arch(arch)
    count = _chip_count(chips, mesh_shape)
    chip = COMPILER_CHIP_DEFAULTS[member]
    count = count if chip is not None else 0  # Quasar ignores the mesh shape
    system_desc = SystemDesc(
        cpu_descs=(CPUDesc(CPURole.HOST, COMPILER_TARGET_TRIPLE),),
        chip_descs=(chip,) * count if chip is not None else (),
        chip_desc_indices=tuple(range(count)),
        chip_capabilities=(ChipCapability.HOST_MMIO,) * count,
        chip_coords=(ChipCoord(0, 0, 0, 0),),
        chip_channels=ring_channels(count) if count else (),
    )
    return make_root(system_desc)
