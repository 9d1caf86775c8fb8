"""The .ttsys codec: byte-exact writing and a reader that checks everything (§2, App. A/B)."""

from __future__ import annotations

import dataclasses
import hashlib
import struct
import warnings

import pytest

from tilewright.errors import SystemDescError
from tilewright.target import (
    HEAD_SCHEMA_HASH,
    Arch,
    ChipCapability,
    ChipChannel,
    ChipCoord,
    ChipDesc,
    CPUDesc,
    CPURole,
    SystemDesc,
    SystemDescRoot,
    SystemDescWarning,
    Version,
    board_preset,
    decode_ttsys,
    encode_ttsys,
)
from tilewright.target.fields import SYSTEM_DESC
from tilewright.target.ttsys import decode_with_findings

from .helpers import (
    DATA_DIR,
    chip_desc_table,
    field_pos,
    follow,
    patch,
    real_bytes,
    root_table,
    root_with_extra_slot,
    system_desc_table,
    table_at,
    vtable_entry_pos,
)


def _decode_quietly(data: bytes, **kwargs) -> SystemDescRoot:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # real files must decode without warnings
        return decode_ttsys(data, **kwargs)


def test_repo_copies_match_sha256sums():
    for line in (DATA_DIR / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split()
        assert hashlib.sha256((DATA_DIR / name).read_bytes()).hexdigest() == digest, name


def test_decode_then_encode_is_byte_identical(board):
    data = real_bytes(board)
    assert encode_ttsys(_decode_quietly(data)) == data


def test_decoded_values_match_section_7_2():
    n150 = _decode_quietly(real_bytes("n150"))
    assert n150.version == Version(0, 0, 3758)
    assert n150.product_identifier == "unknown"
    assert n150.ttmlir_git_hash == "464a5f341908d5a3f790e697be5ffa6fd3fb6f32"
    chip = n150.get_chip_desc(0)
    assert (chip.arch, tuple(chip.grid_size), chip.l1_unreserved_base, chip.num_cbs) == (
        Arch.WORMHOLE_B0,
        (8, 8),
        103840,
        64,
    )
    assert n150.system_desc.cpu_descs == (CPUDesc(CPURole.HOST, "x86_64-pc-linux"),)
    assert n150.system_desc.chip_channels == ()
    llmbox = _decode_quietly(real_bytes("n300-llmbox")).system_desc
    assert llmbox.num_chips == 8 and len(llmbox.chip_channels) == 14
    assert [int(c) for c in llmbox.chip_capabilities] == [1, 1, 1, 1, 0, 0, 0, 0]
    assert llmbox.chip_coords == (ChipCoord(0, 0, 0, 0),)
    p150 = _decode_quietly(real_bytes("p150")).get_chip_desc(0)
    assert (p150.arch, tuple(p150.grid_size), tuple(p150.coord_translation_offsets)) == (
        Arch.BLACKHOLE,
        (10, 11),
        (2, 1),
    )
    assert p150.dram_channel_size == 4278190080


def test_appendix_b1_p150_rebuilt_from_plain_values():
    chip = {
        "arch": 1,
        "grid_size": [10, 11],
        "coord_translation_offsets": [2, 1],
        "dram_grid_size": [1, 8],
        "l1_size": 1572864,
        "dram_channel_size": 4278190080,
        "num_dram_channels": 8,
        "noc_l1_address_align_bytes": 16,
        "pcie_address_align_bytes": 64,
        "noc_dram_address_align_bytes": 64,
        "l1_unreserved_base": 111104,
        "erisc_l1_unreserved_base": 87872,
        "dram_unreserved_base": 5848704,
        "dram_unreserved_end": 4276523520,
        "dst_physical_size_tiles": 16,
        "num_cbs": 64,
        "num_compute_threads": 1,
        "num_datamovement_threads": 2,
        "supported_data_types": list(range(13)),
        "supported_tile_sizes": [[4, 16], [16, 16], [32, 16], [4, 32], [16, 32], [32, 32]],
        "dram_bank_to_logical_worker_noc0": [
            [9, 0],
            [0, 0],
            [7, 0],
            [3, 0],
            [9, 6],
            [1, 6],
            [6, 6],
            [4, 6],
        ],
        "dram_bank_to_logical_worker_noc1": [
            [9, 0],
            [0, 0],
            [7, 0],
            [3, 0],
            [9, 6],
            [1, 6],
            [6, 6],
            [4, 6],
        ],
    }
    root = SystemDescRoot(
        version=[0, 0, 3758],
        schema_hash="7f252e8a9f2f1850b406e7c18440842ccf8d0c51c47b8747c297e5b6bb8a966f",
        ttmlir_git_hash="464a5f341908d5a3f790e697be5ffa6fd3fb6f32",
        product_identifier="unknown",
        system_desc=SystemDesc(
            cpu_descs=[CPUDesc(0, "x86_64-pc-linux")],
            chip_descs=[ChipDesc(**chip)],
            chip_desc_indices=[0],
            chip_capabilities=[1],
            chip_coords=[ChipCoord(0, 0, 0, 0)],
            chip_channels=[],
        ),
    )
    data = encode_ttsys(root)
    assert len(data) == 712
    assert hashlib.sha256(data).hexdigest() == (
        "655fabe5445624b0c9a6a312b90fb5e9a30a78614e43d331e9d622561e09b5ac"
    )


def test_appendix_b2_synthetic_two_chip_file():
    banks = (
        (7, 3),
        (0, 0),
        (3, 0),
        (4, 0),
        (0, 4),
        (7, 7),
        (1, 4),
        (6, 4),
        (5, 4),
        (2, 6),
        (3, 4),
        (4, 4),
    )
    chip = dataclasses.replace(
        board_preset("n150").get_chip_desc(0),
        l1_unreserved_base=103712,
        dram_unreserved_base=1920032,
        dram_unreserved_end=1073119552,
        dram_bank_to_logical_worker_noc0=banks,
        dram_bank_to_logical_worker_noc1=banks,
    )
    root = SystemDescRoot(
        version=Version(0, 0, 4155),
        schema_hash="0123456789abcdef" * 4,
        ttmlir_git_hash="19c86fca45ae7c3d8f886c0401d8b40a40d2f294",
        product_identifier="unknown",
        system_desc=SystemDesc(
            cpu_descs=(CPUDesc(CPURole.HOST, "x86_64-pc-linux"),),
            chip_descs=(chip, chip),
            chip_desc_indices=(0, 1),
            chip_capabilities=(ChipCapability.HOST_MMIO, ChipCapability.NONE),
            chip_coords=(ChipCoord(0, 0, 0, 0),),
            chip_channels=(ChipChannel(0, (0, 9), 1, (0, 9)), ChipChannel(0, (6, 9), 1, (6, 9))),
        ),
    )
    data = encode_ttsys(root)
    assert len(data) == 1272
    assert hashlib.sha256(data).hexdigest() == (
        "0de7faa136bcd6504487e7e1834d7ff8d4ab4b7ff0c54cf8c46146cf6a8905e7"
    )
    with pytest.warns(SystemDescWarning, match="not a known tt-mlir schema"):
        assert decode_ttsys(data) == root


def test_envelope_layout():
    data = real_bytes("n150")
    assert struct.unpack_from("<I", data, 0)[0] == len(data) - 4
    assert data[8:12] == b"TTSY"
    # Zero scalars are omitted: arch = Wormhole_b0 has no vtable entry (§2.3).
    assert struct.unpack_from("<H", data, vtable_entry_pos(data, chip_desc_table(data), 0))[0] == 0


def test_bare_system_desc_gets_head_envelope_and_hash_can_be_chosen():
    sd = board_preset("n150").system_desc
    assert decode_ttsys(encode_ttsys(sd)).schema_hash == HEAD_SCHEMA_HASH
    with pytest.warns(SystemDescWarning):
        chosen = decode_ttsys(encode_ttsys(board_preset("n150"), schema_hash="ab" * 32))
    assert chosen.schema_hash == "ab" * 32
    kept = decode_ttsys(encode_ttsys(board_preset("n150")))
    assert kept.schema_hash == board_preset("n150").schema_hash
    head = decode_ttsys(encode_ttsys(board_preset("n150"), schema_hash="head"))
    assert head.schema_hash == HEAD_SCHEMA_HASH


def test_absent_optional_fields():
    root = dataclasses.replace(board_preset("n150"), product_identifier=None)
    assert decode_ttsys(encode_ttsys(root)).product_identifier is None
    data = real_bytes("n300")
    no_channels = patch(data, vtable_entry_pos(data, system_desc_table(data), 5), "H", 0)
    assert decode_ttsys(no_channels).system_desc.chip_channels == ()


def test_encoder_rejects_unrepresentable_values():
    root = board_preset("n150")
    chip = dataclasses.replace(root.get_chip_desc(0), num_cbs=-1)
    bad = dataclasses.replace(
        root, system_desc=dataclasses.replace(root.system_desc, chip_descs=(chip,))
    )
    with pytest.raises(SystemDescError, match=r"chip_descs\[0\]\.num_cbs: -1 does not fit uint32"):
        encode_ttsys(bad)
    with pytest.raises(SystemDescError, match="expected a string"):
        encode_ttsys(dataclasses.replace(root, schema_hash=5))


# --- malformed input: the error names the rule, the field and the byte offset ---------------


def _error(data: bytes, **kwargs) -> SystemDescError:
    with pytest.raises(SystemDescError) as info:
        decode_ttsys(data, **kwargs)
    return info.value


def test_too_short():
    err = _error(b"\x08\x00\x00\x00TTSY")
    assert "shorter than the 12-byte header" in err.message and err.rule == "system-desc.1"


def test_truncated_file():
    err = _error(real_bytes("n150")[:500])
    assert "size prefix says 764 bytes follow but the file has 496" in err.message
    assert err.offset == 0


def test_wrong_identifier():
    data = real_bytes("n150")
    err = _error(data[:8] + b"TTNN" + data[12:])
    assert "file identifier is b'TTNN'" in err.message and err.offset == 8
    assert err.rule == "system-desc.2"


def test_root_offset_out_of_range():
    err = _error(patch(real_bytes("n150"), 4, "I", 10_000))
    assert (
        "offset to root table points to byte 10004" in err.message and err.rule == "system-desc.3"
    )


def test_vtable_size_odd():
    data = real_bytes("n150")
    _, vtable = table_at(data, root_table(data))
    err = _error(patch(data, vtable, "H", 7))
    assert "SystemDescRoot vtable size 7 is not an even number >= 4" in err.message
    assert err.offset == vtable


def test_vtable_outside_buffer():
    data = real_bytes("n150")
    err = _error(patch(data, root_table(data), "i", -5000))
    assert "SystemDescRoot vtable" in err.message and "runs past the end" in err.message


def test_field_outside_its_table():
    data = real_bytes("n150")
    entry = vtable_entry_pos(data, chip_desc_table(data), 3)  # l1_size
    err = _error(patch(data, entry, "H", 400))
    assert "field ChipDesc.l1_size at table offset 400" in err.message
    assert err.field == "system_desc.chip_descs[0].l1_size"


@pytest.mark.parametrize(
    ("slot", "name", "rule"),
    [(1, "schema_hash", 5), (2, "ttmlir_git_hash", 5), (0, "version", 5), (4, "system_desc", 5)],
)
def test_missing_root_field(slot, name, rule):
    data = real_bytes("n150")
    err = _error(patch(data, vtable_entry_pos(data, root_table(data), slot), "H", 0))
    assert f"required field SystemDescRoot.{name} is absent" in err.message
    assert err.rule == f"system-desc.{rule}" and err.field == name


@pytest.mark.parametrize("slot", range(5))
def test_missing_system_desc_vector(slot):
    data = real_bytes("n150")
    err = _error(patch(data, vtable_entry_pos(data, system_desc_table(data), slot), "H", 0))
    assert f"required field SystemDesc.{SYSTEM_DESC.fields[slot].name} is absent" in err.message
    assert err.rule == "system-desc.8"


@pytest.mark.parametrize(
    ("slot", "rule"), [(1, 17), (2, 17), (19, 17), (13, 18), (14, 18), (20, 19), (21, 19)]
)
def test_missing_chip_desc_field(slot, rule):
    data = real_bytes("n150")
    err = _error(patch(data, vtable_entry_pos(data, chip_desc_table(data), slot), "H", 0))
    assert "required field ChipDesc." in err.message and err.rule == f"system-desc.{rule}"


def test_unknown_arch_mentions_mlir_numbering():
    data = real_bytes("p150")  # Blackhole: arch is present on the wire
    err = _error(patch(data, field_pos(data, chip_desc_table(data), 0), "I", 3))
    assert "3 is not a FlatBuffer Arch (0 Wormhole_b0, 1 Blackhole, 2 Quasar)" in err.message
    assert "MLIR numbering is FlatBuffer + 1" in err.message
    assert err.rule == "system-desc.16" and err.field == "system_desc.chip_descs[0].arch"


def test_unknown_data_type():
    data = real_bytes("n150")
    vector = follow(data, field_pos(data, chip_desc_table(data), 13))
    err = _error(patch(data, vector + 4 + 2 * 3, "H", 19))
    assert "19 is not a FlatBuffer DataType" in err.message
    assert err.field == "system_desc.chip_descs[0].supported_data_types[3]"
    assert err.offset == vector + 10 and err.rule == "system-desc.18"


def test_unknown_cpu_role():
    data = real_bytes("n150")
    vector = follow(data, field_pos(data, system_desc_table(data), 0))
    cpu = follow(data, vector + 4)
    # role is 0 (absent) in real files; point the role entry at the string offset field.
    entry = vtable_entry_pos(data, cpu, 0)
    triple_entry = struct.unpack_from("<H", data, vtable_entry_pos(data, cpu, 1))[0]
    err = _error(patch(data, entry, "H", triple_entry))
    assert "is not a FlatBuffer CPURole" in err.message and err.rule == "system-desc.15"


def test_vector_overrun():
    data = real_bytes("n150")
    vector = follow(data, field_pos(data, chip_desc_table(data), 20))
    err = _error(patch(data, vector, "I", 1_000_000))
    assert "vector of 1000000 x 8 bytes" in err.message and "runs past the end" in err.message
    assert err.field == "system_desc.chip_descs[0].dram_bank_to_logical_worker_noc0"


def test_string_checks():
    data = real_bytes("n150")
    string = follow(data, field_pos(data, root_table(data), 3))  # "unknown"
    err = _error(patch(data, string, "I", 100_000))
    assert "string of 100000 bytes" in err.message and err.field == "product_identifier"
    err = _error(patch(data, string + 4 + 7, "B", ord("x")))
    assert "string is not NUL-terminated" in err.message
    err = _error(patch(data, string + 4, "B", 0xFF))
    assert "string is not valid UTF-8" in err.message and err.offset == string + 4


def test_zero_offset_is_rejected():
    data = real_bytes("n150")
    err = _error(patch(data, field_pos(data, root_table(data), 1), "I", 0))
    assert "offset to schema_hash points to byte" in err.message


def test_unknown_vtable_slot_warns_or_rejects_in_strict_mode():
    data = root_with_extra_slot(7)
    with pytest.warns(
        SystemDescWarning, match=r"unknown slot\(s\) \[5\] \(newer schema\?\); ignored"
    ):
        assert decode_ttsys(data) == board_preset("n150")
    with pytest.raises(SystemDescError, match="rejected in strict mode") as err:
        decode_ttsys(data, strict=True)
    assert err.value.rule == "system-desc.4"
    _, findings = decode_with_findings(root_with_extra_slot(0))
    assert findings == []  # a zero entry is no field at all


def test_accepts_bytearray_and_memoryview():
    data = real_bytes("p150")
    assert decode_ttsys(bytearray(data)) == decode_ttsys(memoryview(data))
