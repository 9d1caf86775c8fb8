"""tt-mlir's compiler defaults (§7.1)."""

from __future__ import annotations

import pytest

from tilewright.errors import SystemDescError
from tilewright.target import (
    HEAD_SCHEMA_HASH,
    STANDARD_DATA_TYPES,
    STANDARD_TILE_SIZES,
    Arch,
    ChipCapability,
    ChipChannel,
    ChipCoord,
    CPURole,
    Dim2d,
    default_chip_desc,
    default_system_desc,
    parse_arch,
)


def test_wormhole_default_values():
    chip = default_chip_desc("wormhole_b0")
    assert (chip.arch, tuple(chip.grid_size), tuple(chip.coord_translation_offsets)) == (
        Arch.WORMHOLE_B0,
        (8, 8),
        (18, 18),
    )
    assert (chip.l1_size, chip.num_dram_channels, chip.dram_channel_size) == (1499136, 12, 1 << 30)
    assert (
        chip.noc_l1_address_align_bytes,
        chip.pcie_address_align_bytes,
        chip.noc_dram_address_align_bytes,
    ) == (16, 32, 32)
    assert (
        chip.l1_unreserved_base,
        chip.erisc_l1_unreserved_base,
        chip.dram_unreserved_base,
        chip.dram_unreserved_end,
    ) == (1024, 1024, 1024, 1 << 30)
    assert (
        chip.dst_physical_size_tiles,
        chip.num_cbs,
        chip.num_compute_threads,
        chip.num_datamovement_threads,
    ) == (16, 32, 1, 2)
    assert tuple(chip.dram_grid_size) == (1, 12)
    assert chip.dram_bank_to_logical_worker_noc0[:2] == (Dim2d(7, 3), Dim2d(0, 0))
    assert chip.dram_bank_to_logical_worker_noc0 == chip.dram_bank_to_logical_worker_noc1
    assert chip.supported_data_types == STANDARD_DATA_TYPES and len(STANDARD_DATA_TYPES) == 13
    assert [tuple(t) for t in chip.supported_tile_sizes] == [
        (4, 16),
        (16, 16),
        (32, 16),
        (4, 32),
        (16, 32),
        (32, 32),
    ]
    assert chip.supported_tile_sizes == STANDARD_TILE_SIZES


def test_blackhole_default_values():
    chip = default_chip_desc(Arch.BLACKHOLE)
    assert (tuple(chip.grid_size), tuple(chip.coord_translation_offsets)) == ((10, 13), (18, 18))
    assert (chip.l1_size, chip.num_dram_channels, chip.dram_channel_size) == (
        1572864,
        8,
        4278190080,
    )
    assert (chip.pcie_address_align_bytes, chip.noc_dram_address_align_bytes) == (64, 64)
    assert (
        chip.l1_unreserved_base,
        chip.erisc_l1_unreserved_base,
        chip.dram_unreserved_base,
        chip.dram_unreserved_end,
    ) == (98304, 100032, 64, 4276383744)
    assert (chip.num_cbs, tuple(chip.dram_grid_size)) == (32, (1, 8))
    assert chip.dram_bank_to_logical_worker_noc1 == tuple(
        Dim2d(y, x) for y, x in ((9, 0), (0, 0), (7, 0), (3, 0), (9, 7), (1, 7), (6, 7), (4, 7))
    )


def test_single_chip_system():
    sd = default_system_desc().system_desc
    assert sd.cpu_descs[0].role is CPURole.HOST
    assert sd.cpu_descs[0].target_triple == "x86_64-pc-linux-gnu"
    assert (sd.chip_desc_indices, sd.chip_capabilities) == ((0,), (ChipCapability.HOST_MMIO,))
    assert sd.chip_coords == (ChipCoord(0, 0, 0, 0),)
    assert sd.chip_channels == ()


def test_multi_chip_ring():
    sd = default_system_desc("blackhole", mesh_shape=(2, 2)).system_desc
    assert sd.num_chips == 4 and len(sd.chip_descs) == 4
    assert sd.chip_desc_indices == (0, 1, 2, 3)
    assert all(c is ChipCapability.HOST_MMIO for c in sd.chip_capabilities)
    assert sd.chip_coords == (ChipCoord(0, 0, 0, 0),)  # one placeholder, whatever the count
    assert [(c.device_id0, c.device_id1) for c in sd.chip_channels] == [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 0),
    ]
    assert all(c.ethernet_core_coord0 == Dim2d(0, 0) for c in sd.chip_channels)


def test_two_chips_give_two_channels():
    channels = default_system_desc(chips=2).system_desc.chip_channels
    assert channels == (ChipChannel(0, (0, 0), 1, (0, 0)), ChipChannel(1, (0, 0), 0, (0, 0)))


def test_quasar_default_has_no_chips_and_ignores_the_mesh():
    for kwargs in ({}, {"chips": 4}):
        sd = default_system_desc("quasar", **kwargs).system_desc
        assert (sd.chip_descs, sd.chip_desc_indices, sd.chip_capabilities, sd.chip_channels) == (
            (),
            (),
            (),
            (),
        )
        assert len(sd.cpu_descs) == 1 and sd.chip_coords == (ChipCoord(0, 0, 0, 0),)
    assert default_chip_desc("quasar") is None


def test_envelope_is_tt_mlir_head():
    assert default_system_desc().schema_hash == HEAD_SCHEMA_HASH


def test_empty_mesh_shape_means_one_chip():
    assert default_system_desc(mesh_shape=()).system_desc.num_chips == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chips": 0}, "at least one chip"),
        ({"mesh_shape": (2, 0)}, "at least one chip"),
        ({"chips": 3, "mesh_shape": (2, 2)}, "chips=3 disagrees with mesh_shape=(2, 2) (volume 4)"),
    ],
)
def test_bad_chip_counts(kwargs, message):
    with pytest.raises(SystemDescError) as err:
        default_system_desc("wormhole_b0", **kwargs)
    assert message in err.value.message


@pytest.mark.parametrize("name", ["wormhole_b0", "Wormhole_b0", "WORMHOLE_B0", Arch.WORMHOLE_B0])
def test_parse_arch_spellings(name):
    assert parse_arch(name) is Arch.WORMHOLE_B0


def test_parse_arch_unknown():
    with pytest.raises(
        SystemDescError,
        match="unknown arch 'grayskull'; expected one of wormhole_b0, blackhole, quasar",
    ):
        parse_arch("grayskull")
