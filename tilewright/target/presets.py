"""Board presets: the runtime-queried descriptors of real boards, as Python data (reference §7.2).

Each preset reproduces, byte for byte when encoded, one of the four ``.ttsys`` files that
tt-xla checks in (``tests/cpu_compile_only/system_descs/``), produced by tt-mlir
``464a5f3419`` on real hardware:

* ``n150``        one Wormhole B0 chip;
* ``n300``        two Wormhole B0 chips on one card, joined by one Ethernet link; chip 0 is
                  the PCIe (HostMMIO) chip;
* ``n300-llmbox`` four n300 cards (8 chips, chips 0-3 HostMMIO) with 14 Ethernet links;
* ``p150``        one Blackhole chip.

Multi-chip systems with no public runtime descriptor are *derived* (:data:`DERIVED_PRESETS`):
their chips carry the values of a real chip above and their Ethernet links follow tt-metal's
mesh graph descriptors (``tt_metal/fabric/mesh_graph_descriptors``):

* ``galaxy``      32 Wormhole B0 chips (n150 chip values) in a 4x8 2-D torus, 4 links to
                  each of the four neighbours (tt-metal: ``quanta_galaxy_torus_2d``, 8x4);
* ``p300``        two Blackhole chips (p150 chip values) on one card, 2 links;
* ``quietbox``    four p150 cards (Blackhole QuietBox) in a 1x4 line, 4 links per pair
                  (tt-metal: ``p150_x4``).

``t3k`` and ``loudbox`` name the ``n300-llmbox`` (four n300 cards, a 2x4 mesh).
:data:`BOARD_MESH_SHAPES` gives each system's mesh shape (rows, columns), which the
descriptor does not record (its chip coordinates are placeholders).

Per-chip values differ on multi-chip boards (``dram_unreserved_end`` depends on the active
Ethernet cores, bank→worker maps on harvesting), so every chip is spelled out.  Unlike
the compiler defaults (:mod:`defaults`) these carry runtime values: ``num_cbs`` 64, the
allocator's real unreserved bases, triple ``x86_64-pc-linux`` and a single placeholder
chip coordinate.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Final

from tilewright.errors import SystemDescError
from tilewright.target.defaults import STANDARD_DATA_TYPES, STANDARD_TILE_SIZES
from tilewright.target.enums import Arch, ChipCapability, CPURole
from tilewright.target.model import (
    ChipChannel,
    ChipCoord,
    ChipDesc,
    CPUDesc,
    Dim2d,
    SystemDesc,
    SystemDescRoot,
    Version,
    dims,
)

__all__ = [
    "BOARD_ALIASES",
    "BOARD_MESH_SHAPES",
    "BOARD_PRESETS",
    "DERIVED_PRESETS",
    "board_mesh_shape",
    "board_names",
    "board_preset",
]

Banks = tuple[tuple[int, int], ...]

# --- provenance shared by all four files --------------------------------------------------

_VERSION = Version(0, 0, 3758)  # tt-mlir 464a5f3419 = v0.0 + 3758 commits
_SCHEMA_HASH = "7f252e8a9f2f1850b406e7c18440842ccf8d0c51c47b8747c297e5b6bb8a966f"
_GIT_HASH = "464a5f341908d5a3f790e697be5ffa6fd3fb6f32"
_HOST = CPUDesc(CPURole.HOST, "x86_64-pc-linux")  # the runtime's TARGET_TRIPLE, no -gnu
_PLACEHOLDER_COORDS = (ChipCoord(0, 0, 0, 0),)  # "Ignore for now": one entry for any chip count

_MMIO, _REMOTE = ChipCapability.HOST_MMIO, ChipCapability.NONE


def _wormhole_chip(dram_unreserved_end: int, banks: Banks) -> ChipDesc:
    """A runtime-queried Wormhole B0 chip; only the carve-out end and bank map vary."""
    return ChipDesc(
        arch=Arch.WORMHOLE_B0,
        grid_size=Dim2d(8, 8),
        coord_translation_offsets=Dim2d(18, 18),
        l1_size=1499136,
        num_dram_channels=12,
        dram_channel_size=1 << 30,
        noc_l1_address_align_bytes=16,
        pcie_address_align_bytes=32,
        noc_dram_address_align_bytes=32,
        l1_unreserved_base=103840,
        erisc_l1_unreserved_base=98304,
        dram_unreserved_base=2968640,
        dram_unreserved_end=dram_unreserved_end,
        supported_data_types=STANDARD_DATA_TYPES,
        supported_tile_sizes=STANDARD_TILE_SIZES,
        dst_physical_size_tiles=16,
        num_cbs=64,
        num_compute_threads=1,
        num_datamovement_threads=2,
        dram_grid_size=Dim2d(1, 12),
        # NoC 0 and NoC 1 maps are identical in all real files.
        dram_bank_to_logical_worker_noc0=dims(banks),
        dram_bank_to_logical_worker_noc1=dims(banks),
    )


def _blackhole_chip(banks: Banks) -> ChipDesc:
    """The runtime-queried p150 Blackhole chip (10x11 harvested grid, offsets (2, 1))."""
    return ChipDesc(
        arch=Arch.BLACKHOLE,
        grid_size=Dim2d(10, 11),
        coord_translation_offsets=Dim2d(2, 1),
        l1_size=1572864,
        num_dram_channels=8,
        dram_channel_size=4278190080,
        noc_l1_address_align_bytes=16,
        pcie_address_align_bytes=64,
        noc_dram_address_align_bytes=64,
        l1_unreserved_base=111104,
        erisc_l1_unreserved_base=87872,
        dram_unreserved_base=5848704,
        dram_unreserved_end=4276523520,
        supported_data_types=STANDARD_DATA_TYPES,
        supported_tile_sizes=STANDARD_TILE_SIZES,
        dst_physical_size_tiles=16,
        num_cbs=64,
        num_compute_threads=1,
        num_datamovement_threads=2,
        dram_grid_size=Dim2d(1, 8),
        dram_bank_to_logical_worker_noc0=dims(banks),
        dram_bank_to_logical_worker_noc1=dims(banks),
    )


def _links(*links: tuple[int, tuple[int, int], int, tuple[int, int]]) -> tuple[ChipChannel, ...]:
    """Ethernet links (device0, eth core (y, x), device1, eth core (y, x)), runtime order."""
    return tuple(ChipChannel(d0, Dim2d(*c0), d1, Dim2d(*c1)) for d0, c0, d1, c1 in links)


def _board(
    chips: Sequence[ChipDesc],
    caps: Sequence[ChipCapability],
    channels: tuple[ChipChannel, ...] = (),
) -> SystemDescRoot:
    return SystemDescRoot(
        version=_VERSION,
        schema_hash=_SCHEMA_HASH,
        ttmlir_git_hash=_GIT_HASH,
        product_identifier="unknown",
        system_desc=SystemDesc(
            cpu_descs=(_HOST,),
            chip_descs=tuple(chips),
            chip_desc_indices=tuple(range(len(chips))),  # one ChipDesc per device, sorted by id
            chip_capabilities=tuple(caps),
            chip_coords=_PLACEHOLDER_COORDS,
            chip_channels=channels,
        ),
    )


# Board data, one row per chip: (dram_unreserved_end, DRAM bank -> logical worker (y, x) map).
# Bank maps differ per chip because of harvesting; NoC 0 and NoC 1 maps are identical.
# fmt: off

# --- n150: one Wormhole B0 ------------------------------------------------------------------
_N150 = _board(
    [_wormhole_chip(1073118784, ((7, 3), (0, 0), (4, 0), (5, 0), (0, 4), (3, 7),
                                 (1, 4), (7, 4), (6, 4), (2, 4), (4, 4), (5, 4)))],
    [_MMIO],
)

# --- n300: two Wormhole B0, chip 1 reached over Ethernet ------------------------------------
_N300 = _board(
    [
        _wormhole_chip(1073162048, ((7, 3), (0, 2), (3, 0), (4, 0), (2, 6), (7, 7),
                                    (0, 4), (6, 4), (5, 4), (1, 4), (3, 4), (4, 4))),
        _wormhole_chip(1073170688, ((7, 3), (0, 0), (4, 0), (5, 0), (0, 4), (7, 7),
                                    (1, 4), (6, 4), (3, 6), (2, 4), (4, 4), (5, 4))),
    ],
    [_MMIO, _REMOTE],
    _links((0, (9, 0), 1, (1, 0))),
)

# --- n300-llmbox: 8 Wormhole B0, chips 0-3 on PCIe ------------------------------------------
_MMIO_END, _REMOTE_END = 1073136064, 1073153376  # remote chips have fewer active eth cores
_N300_LLMBOX = _board(
    [
        _wormhole_chip(_MMIO_END, ((7, 3), (0, 0), (3, 0), (4, 0), (0, 4), (7, 7),
                                   (2, 6), (6, 4), (5, 4), (1, 4), (3, 4), (4, 4))),
        _wormhole_chip(_MMIO_END, ((7, 0), (0, 0), (4, 0), (5, 0), (0, 4), (7, 4),
                                   (1, 4), (3, 7), (6, 4), (2, 4), (4, 4), (5, 4))),
        _wormhole_chip(_MMIO_END, ((7, 3), (0, 0), (3, 0), (4, 0), (0, 4), (7, 7),
                                   (1, 4), (6, 4), (5, 4), (2, 6), (3, 4), (4, 4))),
        _wormhole_chip(_MMIO_END, ((7, 3), (0, 0), (4, 0), (5, 0), (0, 4), (7, 7),
                                   (1, 4), (6, 4), (3, 6), (2, 4), (4, 4), (5, 4))),
        _wormhole_chip(_REMOTE_END, ((7, 3), (0, 0), (1, 2), (4, 0), (0, 4), (7, 7),
                                     (1, 4), (6, 4), (5, 4), (2, 4), (3, 6), (4, 4))),
        _wormhole_chip(_REMOTE_END, ((7, 0), (0, 0), (3, 0), (1, 3), (0, 4), (7, 4),
                                     (1, 4), (5, 4), (4, 4), (2, 4), (3, 4), (6, 7))),
        _wormhole_chip(_REMOTE_END, ((7, 3), (0, 0), (4, 0), (5, 0), (0, 4), (3, 7),
                                     (1, 4), (7, 4), (6, 4), (2, 4), (4, 4), (5, 4))),
        _wormhole_chip(_REMOTE_END, ((7, 3), (0, 0), (3, 0), (4, 0), (0, 4), (7, 7),
                                     (2, 6), (6, 4), (5, 4), (1, 4), (3, 4), (4, 4))),
    ],
    [_MMIO] * 4 + [_REMOTE] * 4,
    # Normalised (device_id0 <= device_id1), deduplicated, in set order (§8.3); parallel
    # links between the same two chips are separate entries.
    _links(
        (0, (6, 0), 3, (6, 0)), (0, (7, 0), 3, (7, 0)), (0, (9, 0), 6, (1, 0)),
        (0, (14, 0), 1, (14, 0)), (0, (15, 0), 1, (15, 0)),
        (1, (0, 0), 2, (0, 0)), (1, (1, 0), 2, (1, 0)), (1, (9, 0), 5, (1, 0)),
        (2, (9, 0), 7, (1, 0)), (2, (14, 0), 3, (14, 0)), (2, (15, 0), 3, (15, 0)),
        (3, (9, 0), 4, (1, 0)),
        (4, (6, 0), 7, (6, 0)),
        (5, (6, 0), 6, (6, 0)),
    ),
)

# --- p150: one Blackhole --------------------------------------------------------------------
_P150 = _board(
    [_blackhole_chip(((9, 0), (0, 0), (7, 0), (3, 0), (9, 6), (1, 6), (6, 6), (4, 6)))],
    [_MMIO],
)

# fmt: on

#: Board name → its runtime-queried descriptor.
BOARD_PRESETS: Final = MappingProxyType(
    {"n150": _N150, "n300": _N300, "n300-llmbox": _N300_LLMBOX, "p150": _P150}
)


# --- derived multi-chip systems ---------------------------------------------------------------
#
# No runtime-queried descriptor of these systems is public.  Their chips repeat a real chip
# (so a program that uses one chip sees exactly that board's chip), their links follow
# tt-metal's mesh graph descriptors, and the Ethernet cores are numbered per port group as
# logical (y, 0) cores.  Channels are normalised (device_id0 < device_id1) and sorted, as
# the runtime writes them (§8.3).

_N150_CHIP = _N150.system_desc.chip_descs[0]
_P150_CHIP = _P150.system_desc.chip_descs[0]

#: Ethernet cores of each compass port group on a Wormhole chip (16 cores, 4 per side).
_WH_PORTS = {"N": range(0, 4), "E": range(4, 8), "S": range(8, 12), "W": range(12, 16)}
#: A Blackhole chip's Ethernet cores toward its east and west neighbours (lines of cards).
_BH_PORTS = {"E": range(0, 4), "W": range(4, 8)}


def _mesh_links(
    rows: int, cols: int, ports: dict[str, range], links: int, *, wrap: bool
) -> tuple[ChipChannel, ...]:
    """The Ethernet links of a rows x cols mesh (a torus when ``wrap``), chips row-major.

    Each neighbour pair is joined by ``links`` channels from the east (south) ports of the
    first chip to the west (north) ports of the second.
    """
    found = set()
    for r in range(rows):
        for c in range(cols):
            here = r * cols + c
            steps = []
            if c + 1 < cols or (wrap and cols > 2):
                steps.append(("E", "W", r * cols + (c + 1) % cols))
            if r + 1 < rows or (wrap and rows > 2):
                steps.append(("S", "N", ((r + 1) % rows) * cols + c))
            for out, back, there in steps:
                for k in range(links):
                    a = (here, Dim2d(ports[out][k], 0))
                    b = (there, Dim2d(ports[back][k], 0))
                    (d0, c0), (d1, c1) = sorted((a, b))
                    found.add(ChipChannel(d0, c0, d1, c1))
    return tuple(sorted(found))


_GALAXY = _board(
    [_N150_CHIP] * 32,
    [_MMIO] * 32,
    _mesh_links(4, 8, _WH_PORTS, 4, wrap=True),
)
_P300 = _board([_P150_CHIP] * 2, [_MMIO] * 2, _mesh_links(1, 2, _BH_PORTS, 2, wrap=False))
_QUIETBOX = _board([_P150_CHIP] * 4, [_MMIO] * 4, _mesh_links(1, 4, _BH_PORTS, 4, wrap=False))

#: Derived multi-chip systems (see the module docstring): name → descriptor.
DERIVED_PRESETS: Final = MappingProxyType({"galaxy": _GALAXY, "p300": _P300, "quietbox": _QUIETBOX})

#: Other names of boards.
BOARD_ALIASES: Final = MappingProxyType({"t3k": "n300-llmbox", "loudbox": "n300-llmbox"})

#: Each system's mesh (rows, columns) as tt-metal opens it by default.
BOARD_MESH_SHAPES: Final = MappingProxyType(
    {
        "n150": (1, 1),
        "n300": (1, 2),
        "n300-llmbox": (2, 4),
        "p150": (1, 1),
        "galaxy": (4, 8),
        "p300": (1, 2),
        "quietbox": (1, 4),
    }
)


def board_names() -> tuple[str, ...]:
    """Every board name :func:`board_preset` knows (real boards, derived systems, aliases)."""
    return (*BOARD_PRESETS, *DERIVED_PRESETS, *BOARD_ALIASES)


def _key(name: str) -> str:
    key = name.strip().lower().replace("_", "-")
    return BOARD_ALIASES.get(key, key)


def board_preset(name: str) -> SystemDescRoot:
    """The descriptor of a board: a real one (``n150``, ``n300``, ``n300-llmbox``, ``p150``),
    a derived multi-chip system (``galaxy``, ``p300``, ``quietbox``) or an alias (``t3k``,
    ``loudbox``).

    ``_`` and ``-`` are interchangeable and case is ignored (``N300_LLMBOX`` works).

    Raises:
        SystemDescError: unknown board.
    """
    key = _key(name)
    root = BOARD_PRESETS.get(key) or DERIVED_PRESETS.get(key)
    if root is None:
        raise SystemDescError(
            f"unknown board {name!r}; known boards: {', '.join(board_names())}", field="board"
        )
    return root


def board_mesh_shape(name: str) -> tuple[int, int]:
    """The mesh shape (rows, columns) of a board (``board_mesh_shape("t3k") == (2, 4)``).

    Raises:
        SystemDescError: unknown board.
    """
    board_preset(name)
    return BOARD_MESH_SHAPES[_key(name)]
