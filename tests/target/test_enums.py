"""Enum numbering in both spellings (reference §1.2, §6.1)."""

from __future__ import annotations

import pytest

from tilewright.target.enums import (
    ARCH,
    CHIP_CAPABILITY,
    CPU_ROLE,
    DATA_TYPE,
    DST_32BIT_TYPES,
    MLIR_DATA_TYPES,
    Arch,
    ChipCapability,
    CPURole,
    DataType,
)


def test_arch_flatbuffer_and_mlir_numbers_differ_by_one():
    assert [a.value for a in Arch] == [0, 1, 2]
    assert [ARCH.mlir_value(a) for a in Arch] == [1, 2, 3]
    assert [ARCH.fb_name(a) for a in Arch] == ["Wormhole_b0", "Blackhole", "Quasar"]
    assert [ARCH.keyword(a) for a in Arch] == ["wormhole_b0", "blackhole", "quasar"]
    # The trap: MLIR 1 is Wormhole, FlatBuffer 1 is Blackhole.
    assert ARCH.from_mlir(1) is Arch.WORMHOLE_B0
    assert ARCH.from_fb(1) is Arch.BLACKHOLE
    assert ARCH.from_fb(3) is None and ARCH.from_mlir(0) is None


def test_data_type_bool_is_18_on_the_wire_and_13_in_mlir():
    assert DataType.BOOL.value == 18
    assert DATA_TYPE.mlir_value(DataType.BOOL) == 13
    assert DATA_TYPE.from_mlir(13) is DataType.BOOL
    assert DATA_TYPE.from_fb(13) is DataType.FLOAT64
    assert DATA_TYPE.keyword(DataType.BOOL) == "i1"


def test_data_types_0_to_12_agree_and_13_to_17_have_no_mlir_spelling():
    for value in range(13):
        member = DataType(value)
        assert DATA_TYPE.mlir_value(member) == value
    fb_only = [DataType(v) for v in range(13, 18)]
    assert all(DATA_TYPE.keyword(t) is None and DATA_TYPE.mlir_value(t) is None for t in fb_only)
    assert MLIR_DATA_TYPES == frozenset(DataType) - frozenset(fb_only)
    assert DATA_TYPE.keywords() == (
        "f32",
        "f16",
        "bf16",
        "bfp_f8",
        "bfp_bf8",
        "bfp_f4",
        "bfp_bf4",
        "bfp_f2",
        "bfp_bf2",
        "u32",
        "u16",
        "u8",
        "si32",
        "i1",
    )


@pytest.mark.parametrize("table", [ARCH, DATA_TYPE, CPU_ROLE, CHIP_CAPABILITY])
def test_every_spelling_round_trips(table):
    for row in table.rows:
        assert table.from_fb(row.member.value) is row.member
        assert table.from_fb_name(row.fb_name) is row.member
        if row.mlir_value is not None:
            assert table.from_mlir(row.mlir_value) is row.member
        if row.keyword is not None:
            assert table.from_keyword(row.keyword) is row.member


def test_cpu_role_and_capability_values():
    assert [CPU_ROLE.keyword(r) for r in CPURole] == ["host", "device"]
    assert CPU_ROLE.fb_name(CPURole.DEVICE) == "Device"
    assert ChipCapability.HOST_MMIO == 1
    assert CHIP_CAPABILITY.fb_name(ChipCapability.HOST_MMIO) == "HostMMIO"
    # Unknown bits are kept so validation can report them (rule 11).
    assert int(ChipCapability(3)) == 3


def test_dst_32bit_types_are_those_of_section_8_5():
    assert DST_32BIT_TYPES == {DataType.FLOAT32, DataType.UINT32, DataType.INT32}


def test_fb_values_message_lists_all_members():
    assert ARCH.fb_values() == "0 Wormhole_b0, 1 Blackhole, 2 Quasar"
