"""Field tables: slots, flatc add order, MLIR keys, representability (§1.3, §2.3, §6.2)."""

from __future__ import annotations

import dataclasses

import pytest

from tilewright.target import board_preset
from tilewright.target.fields import (
    CHIP_CHANNEL,
    CHIP_DESC,
    CPU_DESC,
    SYSTEM_DESC,
    SYSTEM_DESC_ROOT,
    TABLES,
    VERSION,
    add_order,
    value_problems,
)


@pytest.mark.parametrize("spec", list(TABLES.values()), ids=list(TABLES))
def test_slots_are_contiguous_and_names_are_model_attributes(spec):
    assert [f.slot for f in spec.fields] == list(range(spec.num_slots))
    names = [f.name for f in dataclasses.fields(spec.cls)]
    assert [f.name for f in spec.fields] == names


def test_table_sizes():
    assert (
        CHIP_DESC.num_slots,
        CPU_DESC.num_slots,
        SYSTEM_DESC.num_slots,
        SYSTEM_DESC_ROOT.num_slots,
    ) == (22, 2, 6, 5)


def test_add_order_matches_flatc_create_functions():
    # §2.3: 8-byte fields first, then 4-byte, each class in reverse declaration order.
    assert [f.slot for f in add_order(CHIP_DESC)] == [5, 3, *range(21, 5, -1), 4, 2, 1, 0]
    assert [f.name for f in add_order(CPU_DESC)] == ["target_triple", "role"]
    assert [f.slot for f in add_order(SYSTEM_DESC)] == [5, 4, 3, 2, 1, 0]
    assert [f.name for f in add_order(SYSTEM_DESC_ROOT)] == [
        "system_desc",
        "product_identifier",
        "ttmlir_git_hash",
        "schema_hash",
        "version",
    ]


def test_mlir_keys_follow_section_6_2():
    assert [f.key for f in CHIP_DESC.fields] == [
        "arch",
        "grid",
        "coord_translation_offsets",
        "l1_size",
        "num_dram_channels",
        "dram_channel_size",
        "noc_l1_address_align_bytes",
        "pcie_address_align_bytes",
        "noc_dram_address_align_bytes",
        "l1_unreserved_base",
        "erisc_l1_unreserved_base",
        "dram_unreserved_base",
        "dram_unreserved_end",
        "supported_data_types",
        "supported_tile_sizes",
        "dst_physical_size_tiles",
        "num_cbs",
        "num_compute_threads",
        "num_datamovement_threads",
        "dram_grid",
        "dram_bank_to_logical_worker_noc0",
        "dram_bank_to_logical_worker_noc1",
    ]
    assert [f.key for f in CPU_DESC.fields] == ["role", "target_triple"]


def test_struct_layouts():
    assert (VERSION.fmt, VERSION.size) == ("HHI", 8)
    assert (CHIP_CHANNEL.fmt, CHIP_CHANNEL.size) == ("IiiIii", 24)
    channel = board_preset("n300").system_desc.chip_channels[0]
    assert CHIP_CHANNEL.flatten(channel) == (0, 9, 0, 1, 1, 0)
    assert CHIP_CHANNEL.build(CHIP_CHANNEL.flatten(channel)) == channel


def test_value_problems_name_the_path():
    root = board_preset("n150")
    chip = dataclasses.replace(root.get_chip_desc(0), l1_size=-1, num_cbs=2**32)
    bad = dataclasses.replace(
        root, system_desc=dataclasses.replace(root.system_desc, chip_descs=(chip,))
    )
    problems = value_problems(SYSTEM_DESC_ROOT, bad)
    assert problems == [
        ("system_desc.chip_descs[0].l1_size", "-1 does not fit uint64 [0, 18446744073709551615]"),
        ("system_desc.chip_descs[0].num_cbs", "4294967296 does not fit uint32 [0, 4294967295]"),
    ]
    assert value_problems(SYSTEM_DESC_ROOT, root) == []
