"""The capacity table and kernel slots (§6.2, §8.5)."""

from __future__ import annotations

import dataclasses

import pytest

from tilewright.errors import SystemDescError
from tilewright.target import (
    Arch,
    CapacityTable,
    DataType,
    Dim2d,
    board_preset,
    capacity_table,
    default_system_desc,
    device_worker_grid,
    kernel_slots,
)


def test_n150_table():
    table = capacity_table(board_preset("n150"))
    assert table.arch is Arch.WORMHOLE_B0
    assert tuple(table.grid) == (8, 8) and table.num_nodes == 64
    assert (table.compute_kernels, table.data_movement_kernels, table.num_cbs) == (1, 2, 64)
    assert (table.l1_size, table.l1_unreserved_base, table.usable_l1) == (1499136, 103840, 1395296)
    assert table.dst_physical_tiles == 16
    assert (table.noc_l1_align, table.noc_dram_align, table.pcie_align, table.address_align) == (
        16,
        32,
        32,
        32,
    )
    assert (table.num_dram_channels, table.dram_channel_size) == (12, 1 << 30)
    assert (table.dram_unreserved_base, table.dram_unreserved_end) == (2968640, 1073118784)
    assert table.usable_dram_per_channel == 1073118784 - 2968640
    assert table.dram_bank_to_worker_noc0[0] == Dim2d(7, 3)
    assert table.supported_tile_shapes[-1] == (32, 32) and table.supports_tile_shape((16, 32))
    assert not table.supports_tile_shape((8, 8))
    assert table.supports_data_type(DataType.BFP_BFLOAT8)
    assert (table.chip, table.num_chips, table.is_mmio) == (0, 1, True)


def test_table_is_frozen_and_hashable():
    table = capacity_table(board_preset("p150"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.num_cbs = 1  # type: ignore[misc]
    assert hash(table) == hash(CapacityTable.from_system_desc(board_preset("p150").system_desc))


def test_compiler_default_differs_from_real_board():
    default = capacity_table(default_system_desc("blackhole"))
    real = capacity_table(board_preset("p150"))
    assert (default.num_cbs, real.num_cbs) == (32, 64)
    assert (tuple(default.grid), tuple(real.grid)) == ((10, 13), (10, 11))
    assert default.usable_l1 == 1572864 - 98304


@pytest.mark.parametrize(
    ("dtype", "full_sync", "tiles"),
    [
        (DataType.BFLOAT16, False, 8),
        (DataType.FLOAT32, False, 4),
        (DataType.BFLOAT16, True, 16),
        (DataType.FLOAT32, True, 8),
    ],
)
def test_dst_logical_tiles(dtype, full_sync, tiles):
    assert capacity_table(board_preset("n150")).dst_logical_tiles(dtype, full_sync) == tiles


def test_chip_position_goes_through_indices():
    root = board_preset("n300")
    swapped = dataclasses.replace(root.system_desc, chip_desc_indices=(1, 0))
    table = capacity_table(swapped, chip=0)
    assert table.dram_unreserved_end == root.system_desc.chip_descs[1].dram_unreserved_end
    assert capacity_table(root, chip=1).is_mmio is False


def test_no_such_chip():
    with pytest.raises(SystemDescError, match="chip position 2 out of range"):
        capacity_table(board_preset("n300"), chip=2)
    with pytest.raises(SystemDescError, match="chip position 0 out of range: the system has 0"):
        capacity_table(default_system_desc("quasar"))


def test_inconsistent_l1_is_rejected():
    root = board_preset("n150")
    chip = dataclasses.replace(root.get_chip_desc(0), l1_unreserved_base=2_000_000)
    sd = dataclasses.replace(root.system_desc, chip_descs=(chip,))
    with pytest.raises(SystemDescError, match="exceeds l1_size"):
        capacity_table(sd)


def test_kernel_slots_wormhole_and_blackhole():
    for root in (board_preset("n150"), board_preset("p150")):
        slots = kernel_slots(capacity_table(root))
        assert slots.compute == ("trisc",)
        assert slots.data_movement == ("ncrisc", "brisc")
        assert slots["data_movement"] == slots.data_movement
    assert capacity_table(board_preset("n150")).kernel_slots.compute == ("trisc",)


def test_kernel_slots_quasar_from_descriptor_counts():
    # The Quasar default has no chips; a runtime Quasar chip has 4 compute and 6 DM threads.
    chip = dataclasses.replace(
        default_system_desc().get_chip_desc(0),
        arch=Arch.QUASAR,
        num_compute_threads=4,
        num_datamovement_threads=6,
    )
    sd = dataclasses.replace(default_system_desc().system_desc, chip_descs=(chip,))
    slots = capacity_table(sd).kernel_slots
    assert slots.compute == ("compute0", "compute1", "compute2", "compute3")
    assert slots.data_movement == ("dm0", "dm1", "dm2", "dm3", "dm4", "dm5")
    with pytest.raises(KeyError, match="unknown kernel kind 'math'"):
        slots["math"]


def test_kernel_slots_follow_counts_on_named_arches():
    chip = dataclasses.replace(default_system_desc().get_chip_desc(0), num_datamovement_threads=1)
    sd = dataclasses.replace(default_system_desc().system_desc, chip_descs=(chip,))
    assert capacity_table(sd).kernel_slots.data_movement == ("ncrisc",)


def test_device_worker_grid_is_the_elementwise_minimum():
    root = board_preset("n300")
    small = dataclasses.replace(root.system_desc.chip_descs[1], grid_size=Dim2d(9, 7))
    sd = dataclasses.replace(root.system_desc, chip_descs=(root.system_desc.chip_descs[0], small))
    assert device_worker_grid(sd) == Dim2d(8, 7)
    assert device_worker_grid(sd, [0]) == Dim2d(8, 8)
    with pytest.raises(SystemDescError, match="at least one chip id"):
        device_worker_grid(sd, [])
