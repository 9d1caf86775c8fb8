"""Validation: one test per rule of §11 (plus rule 0), each asserting severity and message."""

from __future__ import annotations

import dataclasses

import pytest

from tilewright.errors import SystemDescError
from tilewright.target import (
    ChipCapability,
    ChipChannel,
    ChipCoord,
    DataType,
    Dim2d,
    Finding,
    Severity,
    board_preset,
    check,
    default_system_desc,
    encode_ttsys,
    validate,
)

from .helpers import (
    chip_desc_table,
    field_pos,
    follow,
    patch,
    real_bytes,
    root_table,
    root_with_extra_slot,
    system_desc_table,
    vtable_entry_pos,
)

E, W = Severity.ERROR, Severity.WARNING


def _root(**system_changes):
    root = board_preset("n300")
    return dataclasses.replace(
        root, system_desc=dataclasses.replace(root.system_desc, **system_changes)
    )


def _chip(**changes):
    """The n150 board with its chip changed."""
    root = board_preset("n150")
    chip = dataclasses.replace(root.get_chip_desc(0), **changes)
    return dataclasses.replace(
        root, system_desc=dataclasses.replace(root.system_desc, chip_descs=(chip,))
    )


def _only(findings: list[Finding], rule: int) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


def _one(
    findings: list[Finding], rule: int, severity: Severity, text: str, path: str | None = None
) -> Finding:
    matching = [f for f in _only(findings, rule) if text in f.message]
    assert len(matching) == 1, findings
    finding = matching[0]
    assert finding.severity is severity
    if path is not None:
        assert finding.path == path
    return finding


def test_real_boards_and_defaults_are_clean():
    for name in ("n150", "n300", "n300-llmbox", "p150"):
        assert validate(real_bytes(name)) == []
        assert validate(board_preset(name)) == []
        assert validate(board_preset(name).system_desc) == []
    assert validate(default_system_desc("blackhole")) == []
    assert validate(default_system_desc("wormhole_b0")) == []


def test_rule_0_unrepresentable_value():
    findings = validate(_chip(num_dram_channels=-3))
    _one(findings, 0, E, "-3 does not fit uint32", "system_desc.chip_descs[0].num_dram_channels")
    assert len(findings) == 1  # later rules would only repeat the confusion


def test_rule_1_size_prefix():
    _one(
        validate(real_bytes("n150")[:-1]),
        1,
        E,
        "size prefix says 764 bytes follow but the file has 763",
    )
    _one(validate(b"abc"), 1, E, "shorter than the 12-byte header")


def test_rule_2_identifier():
    data = real_bytes("n150")
    _one(validate(data[:8] + b"XXXX" + data[12:]), 2, E, "file identifier is b'XXXX'")


def test_rule_3_bounds():
    data = real_bytes("n150")
    vector = follow(data, field_pos(data, chip_desc_table(data), 14))
    finding = _one(validate(patch(data, vector, "I", 9999)), 3, E, "runs past the end")
    assert finding.path == "system_desc.chip_descs[0].supported_tile_sizes"
    assert finding.offset == vector + 4  # where the elements start


def test_rule_4_unknown_vtable_slot():
    data = root_with_extra_slot(1)
    _one(validate(data), 4, W, "unknown slot(s) [5] (newer schema?); ignored")
    _one(validate(data, strict=True), 4, E, "rejected in strict mode")


def test_rule_5_root_fields():
    data = real_bytes("n150")
    missing = patch(data, vtable_entry_pos(data, root_table(data), 1), "H", 0)
    _one(
        validate(missing),
        5,
        E,
        "required field SystemDescRoot.schema_hash is absent",
        "schema_hash",
    )


def test_rule_6_schema_hash():
    unknown = dataclasses.replace(board_preset("n150"), schema_hash="ab" * 32)
    _one(validate(unknown), 6, W, "is not a known tt-mlir schema")
    _one(validate(unknown, strict=True), 6, E, "is not a known tt-mlir schema")
    finding = _one(
        validate(board_preset("n150"), schema_hash="head"), 6, W, "differs from the targeted"
    )
    assert "(tt-mlir c7d92e92e8)" in finding.message and "(tt-mlir f6cc00fad1)" in finding.message
    assert validate(board_preset("n150"), schema_hash="c7d92e92e8") == []
    malformed = dataclasses.replace(board_preset("n150"), schema_hash="ABC")
    _one(validate(malformed), 6, W, "'ABC' is not 64 lowercase hex digits")


def test_rule_7_provenance():
    root = dataclasses.replace(
        board_preset("n150"), ttmlir_git_hash="464a5f3419", product_identifier=None
    )
    findings = validate(root)
    _one(findings, 7, W, "'464a5f3419' is not a 40-digit git commit hash", "ttmlir_git_hash")
    _one(findings, 7, W, "product_identifier is absent", "product_identifier")


def test_rule_8_system_desc_vectors():
    data = real_bytes("n150")
    missing = patch(data, vtable_entry_pos(data, system_desc_table(data), 4), "H", 0)
    _one(validate(missing), 8, E, "required field SystemDesc.chip_coords is absent")


def test_rule_9_index_out_of_range():
    findings = validate(_root(chip_desc_indices=(0, 2)))
    _one(
        findings,
        9,
        E,
        "chip_desc_indices[1] = 2 but there are only 2 chip_descs",
        "system_desc.chip_desc_indices[1]",
    )


def test_rule_10_capabilities_parallel_to_indices():
    _one(
        validate(_root(chip_capabilities=(ChipCapability.HOST_MMIO,))),
        10,
        E,
        "1 chip_capabilities for 2 chips",
    )


def test_rule_11_capability_bits():
    _one(
        validate(_root(chip_capabilities=(ChipCapability(3), ChipCapability.NONE))),
        11,
        E,
        "capability 3 has bits other than HostMMIO (1)",
        "system_desc.chip_capabilities[0]",
    )


def test_rule_12_unused_and_non_identity_indices():
    findings = validate(_root(chip_desc_indices=(1, 1)))
    _one(findings, 12, W, "chip_descs [0] are never referenced")
    _one(findings, 12, W, "chip_desc_indices [1, 1] are not 0..n-1")


def test_rule_13_coords_count():
    coords = tuple(ChipCoord(0, 0, 0, x) for x in range(3))
    _one(validate(_root(chip_coords=coords)), 13, W, "3 chip_coords for 2 chips")
    assert _only(validate(_root(chip_coords=coords[:2])), 13) == []


def test_rule_14_channels():
    channels = (
        ChipChannel(0, (1, 0), 1, (2, 0)),
        ChipChannel(1, (2, 0), 0, (1, 0)),  # reversed, and id0 > id1
        ChipChannel(0, (1, 0), 1, (2, 0)),  # duplicate
        ChipChannel(1, (3, 0), 1, (4, 0)),  # self link
    )
    findings = validate(_root(chip_channels=channels))
    _one(
        findings,
        14,
        W,
        "channel 1 (1 → 0) device_id0 > device_id1 (runtime output is "
        "normalised); reverses an earlier channel",
    )
    _one(findings, 14, W, "channel 2 (0 → 1) duplicates an earlier channel")
    _one(findings, 14, W, "channel 3 (1 → 1) links a device to itself")
    # Endpoints are TT-Metal device ids, not chip positions: large ids are fine.
    assert validate(_root(chip_channels=(ChipChannel(4, (0, 0), 7, (0, 0)),))) == []


def test_rule_14_text_coordinates_need_two_components():
    from tilewright.target import parse_system_desc, print_system_desc

    text = print_system_desc(board_preset("n300")).replace("[0, 9, 0]", "[0, 9]")
    with pytest.raises(SystemDescError, match="expected ','"):
        parse_system_desc(text)
    text = print_system_desc(board_preset("n300")).replace("[0, 9, 0]", "[0, 9, 0, 0]")
    with pytest.raises(SystemDescError, match=r"exactly 2 components.*\[rule 14\]"):
        parse_system_desc(text)


def test_rule_15_cpu_descs():
    data = real_bytes("n150")
    cpu = follow(data, follow(data, field_pos(data, system_desc_table(data), 0)) + 4)
    missing = patch(data, vtable_entry_pos(data, cpu, 1), "H", 0)
    _one(validate(missing), 15, E, "required field CPUDesc.target_triple is absent")
    no_cpus = _root(cpu_descs=())
    _one(validate(no_cpus), 15, W, "cpu_descs is empty")
    _one(validate(no_cpus, for_mlir=True), 15, E, "cpu_descs is empty")


def test_rule_16_arch():
    data = real_bytes("p150")
    bad = patch(data, field_pos(data, chip_desc_table(data), 0), "I", 9)
    _one(
        validate(bad),
        16,
        E,
        "9 is not a FlatBuffer Arch (0 Wormhole_b0, 1 Blackhole, 2 Quasar) "
        "(MLIR numbering is FlatBuffer + 1)",
    )


def test_rule_17_grids():
    _one(validate(_chip(grid_size=Dim2d(0, 8))), 17, E, "grid 0x8 has no worker cores")
    _one(validate(_chip(dram_grid_size=Dim2d(1, 0))), 17, E, "dram_grid 1x0 has no DRAM cores")
    _one(
        validate(_chip(dram_grid_size=Dim2d(2, 12))),
        17,
        W,
        "dram_grid 2x12 has 24 cores but num_dram_channels is 12",
    )
    data = real_bytes("n150")
    _one(
        validate(patch(data, vtable_entry_pos(data, chip_desc_table(data), 1), "H", 0)),
        17,
        E,
        "required field ChipDesc.grid_size is absent",
    )


def test_rule_18_data_types_and_tile_sizes():
    types = (DataType.FLOAT32, DataType.BOOL, DataType.INT8)
    findings = validate(_chip(supported_data_types=types))
    _one(findings, 18, W, "data types ['BOOL', 'INT8'] (FlatBuffer 13-18) are dropped")
    _one(validate(_chip(supported_tile_sizes=())), 18, W, "supported_tile_sizes is empty")
    _one(
        validate(_chip(supported_tile_sizes=()), for_mlir=True),
        18,
        E,
        "supported_tile_sizes is empty",
    )
    data = real_bytes("n150")
    vector = follow(data, field_pos(data, chip_desc_table(data), 13))
    _one(validate(patch(data, vector + 4, "H", 40)), 18, E, "40 is not a FlatBuffer DataType")


def test_rule_19_bank_maps():
    chip = board_preset("n150").get_chip_desc(0)
    short = chip.dram_bank_to_logical_worker_noc0[:5]
    _one(
        validate(_chip(dram_bank_to_logical_worker_noc0=short)),
        19,
        W,
        "5 banks mapped but num_dram_channels is 12",
    )
    outside = (Dim2d(8, 0),) + chip.dram_bank_to_logical_worker_noc1[1:]
    _one(
        validate(_chip(dram_bank_to_logical_worker_noc1=outside)),
        19,
        W,
        "workers [(8, 0)] lie outside the 8x8 grid",
    )
    assert _only(validate(_chip(dram_bank_to_logical_worker_noc0=())), 19) == []  # Quasar-like
    data = real_bytes("n150")
    _one(
        validate(patch(data, vtable_entry_pos(data, chip_desc_table(data), 21), "H", 0)),
        19,
        E,
        "required field ChipDesc.dram_bank_to_logical_worker_noc1 is absent",
    )


def test_rule_20_unreserved_regions():
    _one(
        validate(_chip(l1_unreserved_base=2_000_000)),
        20,
        E,
        "l1_unreserved_base 2000000 > l1_size 1499136",
    )
    _one(
        validate(_chip(dram_unreserved_base=1 << 30)),
        20,
        E,
        "dram_unreserved_base 1073741824 > dram_unreserved_end 1073118784",
    )
    _one(
        validate(_chip(dram_unreserved_end=(1 << 30) + 32)),
        20,
        E,
        "dram_unreserved_end 1073741856 > dram_channel_size 1073741824",
    )


def test_rule_21_sizes_for_mlir():
    big = _chip(l1_size=1 << 32)
    _one(validate(big), 21, W, "l1_size = 4294967296 does not fit MLIR's 32-bit unsigned")
    _one(validate(big, for_mlir=True), 21, E, "l1_size = 4294967296")


def test_rule_22_alignment():
    _one(
        validate(_chip(noc_l1_address_align_bytes=24)),
        22,
        W,
        "noc_l1_address_align_bytes = 24 is not a power of two",
    )
    _one(validate(_chip(pcie_address_align_bytes=0)), 22, W, "pcie_address_align_bytes = 0")
    _one(
        validate(_chip(dram_unreserved_end=1073118784 - 16)),
        22,
        W,
        "dram_unreserved_end 1073118768 is not a multiple of noc_dram_address_align_bytes 32",
    )


def test_rule_23_dst_and_counts():
    _one(validate(_chip(dst_physical_size_tiles=6)), 23, W, "dst_physical_size_tiles = 6")
    _one(validate(_chip(num_cbs=0)), 23, W, "num_cbs = 0: no kernel can use it")
    _one(validate(_chip(num_compute_threads=0)), 23, W, "num_compute_threads = 0")


def test_rule_24_device_chip_ids_and_mesh():
    root = board_preset("n300")
    _one(validate(root, chip_ids=[0, 2]), 24, E, "chip id 2 is not a chip position (0..1)")
    _one(validate(root, chip_ids=[]), 24, E, "a device needs at least one chip id")
    _one(
        validate(root, mesh_shape=[2, 2]),
        24,
        E,
        "mesh shape [2, 2] needs 4 chips; the system has 2",
    )
    assert validate(root, chip_ids=[1, 0], mesh_shape=[1, 2]) == []


def test_rule_25_printable():
    quasar = default_system_desc("quasar")
    findings = validate(quasar, for_mlir=True)
    _one(findings, 25, E, "chip_descs is empty", "system_desc.chip_descs")
    _one(findings, 25, E, "chip_desc_indices is empty")
    _one(findings, 25, E, "chip_capabilities is empty")
    assert all(f.severity is W for f in validate(quasar))


def test_check_raises_the_first_error_and_returns_warnings():
    with pytest.raises(SystemDescError) as err:
        check(_root(chip_desc_indices=(0, 5)))
    assert err.value.rule == "system-desc.9"
    assert err.value.field == "system_desc.chip_desc_indices[1]"
    assert "[rule 9: chip_desc_indices in range]" in err.value.message
    warnings = check(default_system_desc(chips=2))
    assert [f.rule for f in warnings] == [14]
    assert check(encode_ttsys(board_preset("p150"))) == []


def test_finding_text():
    finding = Finding(E, 9, "bad", "system_desc.chip_desc_indices[0]", 12)
    assert str(finding) == "E [rule 9] system_desc.chip_desc_indices[0]: bad (byte offset 12)"
    assert finding.rule_id == "system-desc.9"
