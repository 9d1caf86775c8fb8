"""Reading and writing descriptor files by extension."""

from __future__ import annotations

import pytest

from tilewright.errors import SystemDescError
from tilewright.target import (
    HEAD_SCHEMA_HASH,
    Version,
    board_preset,
    default_system_desc,
    file_format,
    read_system_desc,
    write_system_desc,
)

from .helpers import real_bytes, real_path


def test_read_real_file(board):
    assert read_system_desc(real_path(board)) == board_preset(board)


@pytest.mark.parametrize("suffix", [".ttsys", ".json", ".mlir"])
def test_write_then_read(tmp_path, suffix):
    root = board_preset("n300")
    path = tmp_path / f"desc{suffix}"
    write_system_desc(root, path)
    back = read_system_desc(path)
    assert back.system_desc == root.system_desc
    if suffix != ".mlir":
        assert back == root  # the envelope travels too
    else:
        assert back.schema_hash == HEAD_SCHEMA_HASH  # text has no envelope
        assert path.read_text().startswith("#system_desc = #ttcore.system_desc<")


def test_ttsys_written_is_byte_identical(tmp_path):
    path = tmp_path / "n150.ttsys"
    write_system_desc(read_system_desc(real_path("n150")), path)
    assert path.read_bytes() == real_bytes("n150")


def test_json_ttsys_round_trip_through_files(tmp_path):
    write_system_desc(read_system_desc(real_path("n300-llmbox")), tmp_path / "a.json")
    write_system_desc(read_system_desc(tmp_path / "a.json"), tmp_path / "b.ttsys")
    assert (tmp_path / "b.ttsys").read_bytes() == real_bytes("n300-llmbox")


def test_mlir_envelope_options(tmp_path):
    path = tmp_path / "d.mlir"
    write_system_desc(default_system_desc(), path)
    root = read_system_desc(
        path, schema_hash="c7d92e92e8", version="0.0.3758", ttmlir_git_hash="1" * 40
    )
    assert root.version == Version(0, 0, 3758) and root.ttmlir_git_hash == "1" * 40
    assert root.schema_hash.startswith("7f252e8a")


def test_schema_hash_override_on_write(tmp_path):
    path = tmp_path / "x.json"
    write_system_desc(board_preset("n150"), path, schema_hash="head")
    assert read_system_desc(path).schema_hash == HEAD_SCHEMA_HASH


def test_bare_system_desc_is_wrapped(tmp_path):
    write_system_desc(board_preset("p150").system_desc, tmp_path / "p.ttsys")
    assert read_system_desc(tmp_path / "p.ttsys").schema_hash == HEAD_SCHEMA_HASH


def test_unknown_extension():
    with pytest.raises(
        SystemDescError,
        match=r"unknown descriptor extension '\.txt'; use .ttsys, "
        ".json, .mlir",
    ):
        file_format("desc.txt")
    assert file_format("A.TTSYS") == "ttsys"


def test_mlir_errors_name_the_file(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text("#system_desc = #ttcore.system_desc<[{role = host}]>\n")
    with pytest.raises(SystemDescError, match=r"bad\.mlir:1:49: expected ','"):
        read_system_desc(path)


def test_binary_garbage_in_text_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(SystemDescError, match="not UTF-8 text"):
        read_system_desc(path)


def test_quasar_cannot_be_written_as_mlir(tmp_path):
    with pytest.raises(SystemDescError, match="rule 25"):
        write_system_desc(default_system_desc("quasar"), tmp_path / "q.mlir")
    assert not (tmp_path / "q.mlir").exists()
