"""The #ttcore.system_desc text form: tt-mlir's exact printing and a positional parser (§6)."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilewright.errors import SystemDescError
from tilewright.target import (
    Arch,
    DataType,
    Dim2d,
    board_preset,
    decode_ttsys,
    default_system_desc,
    parse_mlir_system_descs,
    parse_system_desc,
    print_mlir_module,
    print_system_desc,
)

from .helpers import BOARDS, real_bytes

# §6.5 E1: tt-mlir's mock default for Wormhole, one chip, as printed in its tests.
E1 = (
    '#ttcore.system_desc<[{role = host, target_triple = "x86_64-pc-linux-gnu"}], [{arch = '
    "<wormhole_b0>, grid = 8x8, coord_translation_offsets = 18x18, l1_size = 1499136, "
    "num_dram_channels = 12, dram_channel_size = 1073741824, noc_l1_address_align_bytes = 16, "
    "pcie_address_align_bytes = 32, noc_dram_address_align_bytes = 32, l1_unreserved_base = 1024, "
    "erisc_l1_unreserved_base = 1024, dram_unreserved_base = 1024, dram_unreserved_end = "
    "1073741824, supported_data_types = [<f32>, <f16>, <bf16>, <bfp_f8>, <bfp_bf8>, <bfp_f4>, "
    "<bfp_bf4>, <bfp_f2>, <bfp_bf2>, <u32>, <u16>, <u8>, <si32>], supported_tile_sizes = [ 4x16,  "
    "16x16,  32x16,  4x32,  16x32,  32x32], dst_physical_size_tiles = 16, num_cbs = 32, "
    "num_compute_threads = 1, num_datamovement_threads = 2, dram_grid = 1x12, "
    "dram_bank_to_logical_worker_noc0 = [(7, 3), (0, 0), (3, 0), (4, 0), (0, 4), (7, 7), (1, 4), "
    "(6, 4), (5, 4), (2, 6), (3, 4), (4, 4)], dram_bank_to_logical_worker_noc1 = [(7, 3), (0, 0), "
    "(3, 0), (4, 0), (0, 4), (7, 7), (1, 4), (6, 4), (5, 4), (2, 6), (3, 4), (4, 4)]}], [0], "
    "[1 : i32], [ 0x0x0x0]>"
)

# §6.5 E2: a runtime-queried n150 inlined on the module (different allocator values).
E2_MODULE = (
    "module attributes {ttcore.system_desc = "
    + E1.replace("-gnu", "")
    .replace(
        "l1_unreserved_base = 1024, erisc_l1_unreserved_base = 1024, dram_unreserved_base "
        "= 1024, dram_unreserved_end = 1073741824",
        "l1_unreserved_base = 103712, "
        "erisc_l1_unreserved_base = 98304, dram_unreserved_base = 1920032, "
        "dram_unreserved_end = 1073119552",
    )
    .replace("num_cbs = 32", "num_cbs = 64")
    + "} {\n  func.func @f() {\n    return\n  }\n}\n"
)


def test_default_prints_exactly_like_tt_mlir():
    assert print_system_desc(default_system_desc("wormhole_b0")) == E1


def test_n300_tail_matches_e4():
    text = print_system_desc(board_preset("n300"))
    assert text.endswith(", [0, 1], [1 : i32, 0 : i32], [ 0x0x0x0], [<[0, 9, 0], [1, 1, 0]>]>")


def test_ring_default_prints_like_e5():
    text = print_system_desc(default_system_desc("wormhole_b0", mesh_shape=(1, 2)))
    assert text.endswith("[ 0x0x0x0], [<[0, 0, 0], [1, 0, 0]>, <[1, 0, 0], [0, 0, 0]>]>")


def test_empty_channel_list_is_omitted():
    assert print_system_desc(board_preset("n150")).endswith("[1 : i32], [ 0x0x0x0]>")


@pytest.mark.parametrize("board", BOARDS)
def test_real_files_print_and_parse_back(board):
    root = decode_ttsys(real_bytes(board))
    assert parse_system_desc(print_system_desc(root)) == root.system_desc
    assert parse_system_desc(print_mlir_module(root)) == root.system_desc


@pytest.mark.parametrize("arch", ["wormhole_b0", "blackhole"])
@pytest.mark.parametrize("chips", [1, 2, 4])
def test_defaults_print_and_parse_back(arch, chips):
    sd = default_system_desc(arch, chips=chips).system_desc
    assert parse_system_desc(print_system_desc(sd)) == sd


def test_quasar_default_refuses_to_print():
    with pytest.raises(
        SystemDescError, match=r"chip_descs is empty; MLIR cannot parse '\[\]'"
    ) as err:
        print_system_desc(default_system_desc("quasar"))
    assert err.value.rule == "system-desc.25"
    assert "Quasar compiler default has no chips" in err.value.message


def test_e2_module_parses():
    sd = parse_system_desc(E2_MODULE)
    chip = sd.get_chip_desc(0)
    assert (chip.l1_unreserved_base, chip.dram_unreserved_base, chip.num_cbs) == (
        103712,
        1920032,
        64,
    )
    assert sd.cpu_descs[0].target_triple == "x86_64-pc-linux"


def test_module_with_alias_comments_and_other_attributes():
    text = (
        "// RUN: ttmlir-opt %s  -- mentions ttcore.system_desc = #bogus in a comment\n"
        '#layout = #ttnn.ttnn_layout<(d0) -> (d0), "ttcore.system_desc = nothing">\n'
        f"#system_desc = {E1}\n"
        f"#system_desc1 = {print_system_desc(board_preset('p150'))}\n"
        "module attributes {ttcore.system_desc = #system_desc1} {\n}\n"
    )
    found = parse_mlir_system_descs(text)
    assert list(found.aliases) == ["system_desc", "system_desc1"]
    assert found.module == (board_preset("p150").system_desc,)
    assert parse_system_desc(text) == board_preset("p150").system_desc


def test_module_without_module_attribute_uses_the_single_alias():
    assert parse_system_desc(f"#system_desc = {E1}\n") == default_system_desc().system_desc


def test_ambiguous_or_missing_descriptor():
    two = f"#a = {E1}\n#b = {E1}\n"
    with pytest.raises(SystemDescError, match="2 system_desc aliases but no module attribute"):
        parse_system_desc(two)
    with pytest.raises(
        SystemDescError, match=r"1:1: expected a #ttcore.system_desc<...> attribute"
    ):
        parse_system_desc("module {\n}\n")


def test_undefined_alias():
    with pytest.raises(
        SystemDescError,
        match=r"1:41: expected a defined alias \(known: none\), "
        r"found '#system_desc'",
    ):
        parse_system_desc("module attributes {ttcore.system_desc = #system_desc} {}")


def test_whitespace_hex_and_compact_coordinates_are_accepted():
    text = (
        E1.replace(", ", ",\n   ")
        .replace("l1_size = 1499136", "l1_size = 0x16E000")
        .replace("(7, 3)", "(7,3)")
    )
    assert parse_system_desc(text) == default_system_desc().system_desc


def test_string_escapes_round_trip():
    sd = default_system_desc().system_desc
    cpu = dataclasses.replace(sd.cpu_descs[0], target_triple='we"ird\\tripl\u00e9\n')
    odd = dataclasses.replace(sd, cpu_descs=(cpu,))
    text = print_system_desc(odd)
    assert 'target_triple = "we\\22ird\\\\tripl\\C3\\A9\\0A"' in text
    assert parse_system_desc(text) == odd


def _error(text: str) -> str:
    with pytest.raises(SystemDescError) as err:
        parse_system_desc(text)
    return err.value.message


def test_error_missing_comma_reports_line_and_column():
    text = "#system_desc = " + E1.replace("grid = 8x8,", "grid = 8x8", 1)
    column = text.index("coord_translation_offsets") + 1
    assert _error(text).startswith(
        f"1:{column}: expected ',' after ChipDesc field 'grid', found 'coord_translation_offsets'"
    )


def test_error_position_on_later_line():
    line = "#system_desc = " + E1.replace("l1_size", "l1_sise")
    column = line.index("l1_sise") + 1
    assert _error("// header\n\n" + line).startswith(
        f"3:{column}: expected 'l1_size' (ChipDesc field 4 of 22; fields are positional), "
        "found 'l1_sise'"
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("[1 : i32]", "[1]", "expected ': i32' after a capability (an untyped integer is i64"),
        ("[1 : i32]", "[1 : i64]", "expected type 'i32' for a chip capability"),
        (
            "<wormhole_b0>",
            "<wormhole>",
            "expected an arch (wormhole_b0, blackhole, quasar), found 'wormhole'",
        ),
        ("<bf16>", "<f8>", "expected a data type (f32, f16, bf16,"),
        ("role = host", "role = guest", "expected a CPU role (host, device), found 'guest'"),
        (" 4x16,", " 4x16x2,", "expected exactly 2 dimensions for supported_tile_sizes, got 3"),
        (" 0x0x0x0]", " 0x0x0]", "expected exactly 4 dimensions for chip_coords, got 3"),
        ("grid = 8x8", "grid = 8", "expected exactly 2 dimensions for grid, got 1"),
        (
            "[0], [1 : i32]",
            "[], [1 : i32]",
            (
                "expected at least one chip desc index (MLIR cannot parse "
                "an empty list here), found ']' [rule 25]"
            ),
        ),
        (
            "supported_tile_sizes = [ 4x16,  16x16,  32x16,  4x32,  16x32,  32x32]",
            "supported_tile_sizes = []",
            "expected at least one supported_tile_sizes",
        ),
        (
            "l1_size = 1499136",
            "l1_size = 4294967296",
            (
                "expected l1_size <= 4294967295 (MLIR unsigned is 32-bit), found '4294967296' "
                "[rule 21]"
            ),
        ),
        (
            "[ 0x0x0x0]>",
            "[ 0x0x0x0], [<[0, 9, 0, 1], [1, 1, 0]>]>",
            (
                "expected ']': an ethernet core coordinate has exactly 2 components, found ',' "
                "[rule 14]"
            ),
        ),
        ("[ 0x0x0x0]>", "[ 0x0x0x0]", "expected '>' to close #ttcore.system_desc"),
        ('"x86_64-pc-linux-gnu"', '"x86_64\\q"', "expected an escape"),
        (
            '"x86_64-pc-linux-gnu"}',
            '"x86_64-pc-linux-gnu}',
            "expected a closing '\"' for target_triple",
        ),
        ("(7, 3)", "(7 3)", "expected ',' between y and x, found '3'"),
    ],
)
def test_parse_errors_say_what_was_expected(old, new, expected):
    assert old in E1
    message = _error(E1.replace(old, new, 1))
    assert expected in message
    assert message.split(":")[0].isdigit()  # starts with line:column


def test_trailing_garbage_after_attribute():
    assert _error(E1 + " extra").startswith(f"1:{len(E1) + 2}: expected end of input after")


def test_empty_bank_maps_parse_and_print():
    chip = dataclasses.replace(
        default_system_desc().get_chip_desc(0),
        dram_bank_to_logical_worker_noc0=(),
        dram_bank_to_logical_worker_noc1=(),
    )
    sd = dataclasses.replace(default_system_desc().system_desc, chip_descs=(chip,))
    text = print_system_desc(sd)
    assert "dram_bank_to_logical_worker_noc0 = []" in text
    assert parse_system_desc(text) == sd


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"l1_size": 2**32}, "l1_size = 4294967296 does not fit MLIR's 32-bit unsigned"),
        (
            {"supported_data_types": (DataType.FLOAT32, DataType.INT8)},
            "Int8 have no MLIR spelling (FlatBuffer-only data types 13-17)",
        ),
        ({"supported_data_types": ()}, "supported_data_types is empty"),
        (
            {"coord_translation_offsets": Dim2d(-1, 0)},
            "coord_translation_offsets has a negative dimension",
        ),
    ],
)
def test_printer_refuses_what_cannot_parse_back(change, message):
    chip = dataclasses.replace(default_system_desc().get_chip_desc(0), **change)
    sd = dataclasses.replace(default_system_desc().system_desc, chip_descs=(chip,))
    with pytest.raises(SystemDescError, match=re.escape(message)):
        print_system_desc(sd)


def test_bool_prints_as_i1():
    chip = dataclasses.replace(
        default_system_desc().get_chip_desc(0),
        supported_data_types=(DataType.BOOL,),
        arch=Arch.QUASAR,
    )
    sd = dataclasses.replace(default_system_desc().system_desc, chip_descs=(chip,))
    text = print_system_desc(sd)
    assert "supported_data_types = [<i1>]" in text and "arch = <quasar>" in text
    assert parse_system_desc(text) == sd


def test_module_printer_uses_the_alias():
    text = print_mlir_module(board_preset("n150"))
    first, second = text.splitlines()[:2]
    assert first.startswith("#system_desc = #ttcore.system_desc<[{role = host")
    assert second == "module attributes {ttcore.system_desc = #system_desc} {"


# --- the parser never fails with anything but SystemDescError ------------------------------

_MODULE = print_mlir_module(board_preset("n300"))


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 10_000), st.integers(0, 8), st.text(max_size=6)),
        min_size=1,
        max_size=4,
    )
)
def test_fuzz_parser_only_raises_system_desc_error(edits):
    text = _MODULE
    for pos, cut, insert in edits:
        at = pos % (len(text) + 1)
        text = text[:at] + insert + text[at + cut :]
    try:
        parse_system_desc(text)
    except SystemDescError as err:
        assert err.message
