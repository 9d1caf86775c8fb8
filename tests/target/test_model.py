"""The model: frozen, hashable, coerced, with tt-mlir's derived facts (§1, §6.2, §8.5)."""

from __future__ import annotations

import dataclasses

import pytest

from tilewright.errors import SystemDescError
from tilewright.target import (
    Arch,
    ChipCapability,
    ChipChannel,
    CPUDesc,
    CPURole,
    DataType,
    Dim2d,
    SystemDescRoot,
    Version,
    board_preset,
    default_system_desc,
)
from tilewright.target.model import dst_logical_tiles


def _wormhole():
    return default_system_desc("wormhole_b0").system_desc.chip_descs[0]


def test_models_are_frozen_hashable_and_compare_by_value():
    a, b = board_preset("n300"), board_preset("n300")
    assert a == b and hash(a) == hash(b)
    assert len({a, b, board_preset("n150")}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.schema_hash = "x"  # type: ignore[misc]
    assert not hasattr(a, "__dict__")  # slotted


def test_constructor_coerces_lists_pairs_and_ints():
    chip = dataclasses.replace(
        _wormhole(),
        arch=1,
        grid_size=(10, 13),
        supported_data_types=[0, 2],
        dram_bank_to_logical_worker_noc0=[(1, 2)],
    )
    assert chip.arch is Arch.BLACKHOLE
    assert chip.grid_size == Dim2d(10, 13)
    assert chip.supported_data_types == (DataType.FLOAT32, DataType.BFLOAT16)
    assert chip.dram_bank_to_logical_worker_noc0 == (Dim2d(1, 2),)
    assert CPUDesc(1, "t").role is CPURole.DEVICE
    assert ChipChannel(0, (9, 0), 1, (1, 0)).ethernet_core_coord0 == Dim2d(9, 0)
    root = dataclasses.replace(board_preset("n150"), version="1.2.3")
    assert root.version == Version(1, 2, 3)


def test_invalid_enum_number_is_a_system_desc_error():
    with pytest.raises(SystemDescError, match="7 is not a FlatBuffer Arch"):
        dataclasses.replace(_wormhole(), arch=7)
    with pytest.raises(SystemDescError, match="19 is not a FlatBuffer DataType"):
        dataclasses.replace(_wormhole(), supported_data_types=[19])


def test_version_parse_and_str():
    assert Version.parse("0.0.3758") == Version(0, 0, 3758)
    assert str(Version(0, 0, 3758)) == "0.0.3758"
    with pytest.raises(SystemDescError, match="major.minor.patch"):
        Version.parse("1.2")


def test_dim2d_unpacks_as_y_x():
    rows, cols = Dim2d(8, 7)
    assert (rows, cols) == (8, 7)


def test_get_chip_desc_goes_through_indices():
    sd = board_preset("n300").system_desc
    swapped = dataclasses.replace(sd, chip_desc_indices=(1, 0))
    assert swapped.get_chip_desc(0) is sd.chip_descs[1]
    assert swapped.get_chip_desc(1) is sd.chip_descs[0]
    assert swapped.num_chips == 2


def test_get_chip_desc_out_of_range():
    sd = board_preset("n150").system_desc
    with pytest.raises(SystemDescError, match="chip position 1 out of range") as err:
        sd.get_chip_desc(1)
    assert err.value.rule == "system-desc.24"
    bad = dataclasses.replace(sd, chip_desc_indices=(3,))
    with pytest.raises(SystemDescError, match=r"chip_desc_indices\[0\] = 3 out of range") as err:
        bad.get_chip_desc(0)
    assert err.value.rule == "system-desc.9"


def test_usable_sizes_match_tt_mlir():
    chip = board_preset("n150").get_chip_desc(0)
    assert chip.usable_l1_size == 1499136 - 103840
    assert chip.usable_dram_channel_size == 1073118784 - 2968640


def test_usable_sizes_refuse_to_wrap():
    chip = _wormhole()
    with pytest.raises(SystemDescError, match="exceeds l1_size"):
        _ = dataclasses.replace(chip, l1_unreserved_base=chip.l1_size + 1).usable_l1_size
    with pytest.raises(SystemDescError, match="exceeds dram_unreserved_end"):
        _ = dataclasses.replace(
            chip, dram_unreserved_base=chip.dram_unreserved_end + 1
        ).usable_dram_channel_size


@pytest.mark.parametrize(
    ("dtype", "full_sync", "tiles"),
    [
        (DataType.BFLOAT16, False, 8),
        (DataType.FLOAT32, False, 4),
        (DataType.BFLOAT16, True, 16),
        (DataType.FLOAT32, True, 8),
        (DataType.INT32, False, 4),
        (DataType.UINT32, True, 8),
        (DataType.BFP_BFLOAT8, False, 8),
        (DataType.UINT8, False, 8),
    ],
)
def test_dst_logical_size_tiles(dtype, full_sync, tiles):
    assert _wormhole().dst_logical_size_tiles(dtype, full_sync) == tiles
    assert dst_logical_tiles(16, dtype, full_sync) == tiles


def test_dst_logical_size_override():
    assert _wormhole().dst_logical_size_tiles(DataType.FLOAT32, override_physical_size=8) == 2


def test_root_defaults_product_identifier():
    sd = board_preset("n150").system_desc
    root = SystemDescRoot(
        version=Version(0, 0, 1), schema_hash="h", ttmlir_git_hash="g", system_desc=sd
    )
    assert root.product_identifier == "unknown"
    assert sd.is_mmio(0)
    assert ChipCapability.NONE == 0
