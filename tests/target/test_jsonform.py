"""The JSON form: ttrt-query layout and an exact inverse (§9.1)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilewright.errors import SystemDescError
from tilewright.target import (
    ChipCapability,
    board_preset,
    decode_ttsys,
    default_system_desc,
    encode_ttsys,
    from_json,
    to_json,
)

from .helpers import real_bytes


def test_ttsys_json_ttsys_is_byte_identical(board):
    data = real_bytes(board)
    assert encode_ttsys(from_json(to_json(decode_ttsys(data)))) == data


def test_layout_like_ttrt_query():
    doc = json.loads(to_json(board_preset("n300")))
    assert list(doc) == [
        "version",
        "schema_hash",
        "ttmlir_git_hash",
        "product_identifier",
        "system_desc",
    ]
    assert doc["version"] == {"major": 0, "minor": 0, "patch": 3758}
    sd = doc["system_desc"]
    assert sd["cpu_descs"] == [{"role": "Host", "target_triple": "x86_64-pc-linux"}]
    assert sd["chip_capabilities"] == ["HostMMIO", 0]  # flatc bit flags: names, or the number 0
    assert sd["chip_coords"] == [{"rack": 0, "shelf": 0, "y": 0, "x": 0}]
    assert sd["chip_channels"] == [
        {
            "device_id0": 0,
            "ethernet_core_coord0": {"y": 9, "x": 0},
            "device_id1": 1,
            "ethernet_core_coord1": {"y": 1, "x": 0},
        }
    ]
    chip = sd["chip_descs"][0]
    assert chip["arch"] == "Wormhole_b0"  # default scalars are printed too
    assert chip["grid_size"] == {"y": 8, "x": 8}
    assert chip["supported_data_types"][:3] == ["Float32", "Float16", "BFloat16"]
    assert len(chip) == 22


def test_defaults_and_quasar_round_trip():
    for root in (default_system_desc("quasar"), default_system_desc("blackhole", chips=3)):
        assert from_json(to_json(root)) == root


def test_absent_product_identifier_is_omitted_and_restored():
    root = dataclasses.replace(board_preset("n150"), product_identifier=None)
    assert "product_identifier" not in json.loads(to_json(root))
    assert from_json(to_json(root)) == root


def test_flatc_style_input_numbers_and_omitted_scalars():
    doc = json.loads(to_json(board_preset("n150")))
    chip = doc["system_desc"]["chip_descs"][0]
    del chip["arch"]  # flatc omits defaults without --defaults-json
    chip["supported_data_types"] = [0, "BFloat16"]
    doc["system_desc"]["chip_capabilities"] = [1]
    del doc["system_desc"]["chip_channels"]
    root = from_json(json.dumps(doc))
    assert root.get_chip_desc(0).arch == board_preset("n150").get_chip_desc(0).arch
    assert [int(t) for t in root.get_chip_desc(0).supported_data_types] == [0, 2]
    assert root.system_desc.chip_capabilities == (ChipCapability.HOST_MMIO,)
    assert root.system_desc.chip_channels == ()


def test_capability_with_unknown_bits_round_trips_as_a_number():
    root = board_preset("n150")
    odd = dataclasses.replace(
        root,
        system_desc=dataclasses.replace(root.system_desc, chip_capabilities=(ChipCapability(3),)),
    )
    assert json.loads(to_json(odd))["system_desc"]["chip_capabilities"] == [3]
    assert from_json(to_json(odd)) == odd


def _mutated(edit) -> str:
    doc = json.loads(to_json(board_preset("n150")))
    edit(doc)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["system_desc"]["chip_descs"][0].update(arch="Wormhole"),
            (
                'system_desc.chip_descs[0].arch: "Wormhole" is not a valid Arch '
                "(0 Wormhole_b0, 1 Blackhole, 2 Quasar)"
            ),
        ),
        (lambda d: d["system_desc"]["chip_descs"][0].update(arch=7), "7 is not a valid Arch"),
        (
            lambda d: d["system_desc"]["chip_descs"][0].update(l1_size=True),
            "expected an integer (uint64), got true",
        ),
        (lambda d: d["system_desc"]["chip_descs"][0].update(num_cbs=-1), "-1 does not fit uint32"),
        (
            lambda d: d["system_desc"]["chip_descs"][0].update(grid=[8, 8]),
            "unknown ChipDesc field(s) ['grid']",
        ),
        (
            lambda d: d.pop("schema_hash"),
            "schema_hash: required SystemDescRoot field 'schema_hash' is missing",
        ),
        (
            lambda d: d["system_desc"].pop("chip_coords"),
            "required SystemDesc field 'chip_coords' is missing",
        ),
        (
            lambda d: d["system_desc"]["chip_descs"][0]["grid_size"].pop("x"),
            "required Dim2d field 'x'",
        ),
        (
            lambda d: d["system_desc"].update(chip_capabilities=["PCIE"]),
            "'PCIE' is not made of ChipCapability names",
        ),
        (lambda d: d["system_desc"].update(cpu_descs={}), "expected a list"),
        (lambda d: d.update(version="0.0.1"), "expected a Version object"),
    ],
)
def test_errors_name_the_path(edit, message):
    with pytest.raises(SystemDescError) as err:
        from_json(_mutated(edit))
    assert message in err.value.message


def test_not_json():
    with pytest.raises(SystemDescError, match="not JSON"):
        from_json("{nope")


def test_to_json_refuses_unrepresentable_values():
    root = dataclasses.replace(board_preset("n150"), ttmlir_git_hash=None)
    with pytest.raises(SystemDescError, match="ttmlir_git_hash: expected a string"):
        to_json(root)


def test_deeply_nested_or_huge_json_is_a_system_desc_error():
    with pytest.raises(SystemDescError, match="not JSON"):
        from_json("[" * 100_000)
    with pytest.raises(SystemDescError, match="not JSON"):
        from_json("9" * 5000)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(
    st.sampled_from(["version", "system_desc", "chip_descs", "arch", "grid_size", "cpu_descs"]),
    _JSON_VALUES,
)
def test_fuzz_json_shapes_only_raise_system_desc_error(key, value):
    doc = json.loads(to_json(board_preset("n300")))
    targets = [doc, doc["system_desc"], doc["system_desc"]["chip_descs"][0]]
    for target in targets:
        if key in target:
            target[key] = value
    try:
        from_json(json.dumps(doc))
    except SystemDescError as err:
        assert err.message
