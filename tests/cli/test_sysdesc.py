"""``tilewright sysdesc``: default, read, check, convert."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tilewright.cli.main import cli
from tilewright.target import board_preset, read_system_desc

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "ttsys"
N300 = DATA_DIR / "n300_system_desc.ttsys"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["sysdesc", *map(str, args)])
    assert "Traceback" not in result.output + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", [[], ["default"], ["read"], ["check"], ["convert"]])
def test_help_on_every_subcommand(command):
    code, out, _ = run(*command, "--help")
    assert code == 0 and "Usage:" in out


@pytest.mark.parametrize("suffix", [".ttsys", ".json", ".mlir"])
def test_default_writes_each_format(tmp_path, suffix):
    out = tmp_path / f"wh{suffix}"
    code, stdout, _ = run("default", "--arch", "wormhole_b0", "-o", out)
    assert code == 0 and stdout.startswith(f"wrote {out}: 1 chip(s) wormhole_b0")
    assert read_system_desc(out).get_chip_desc(0).num_cbs == 32


def test_default_chips_and_mesh(tmp_path):
    run("default", "--arch", "blackhole", "--chips", "4", "-o", tmp_path / "a.ttsys")
    assert read_system_desc(tmp_path / "a.ttsys").system_desc.num_chips == 4
    run("default", "--arch", "blackhole", "--mesh-shape", "2x3", "-o", tmp_path / "b.json")
    assert read_system_desc(tmp_path / "b.json").system_desc.num_chips == 6


def test_default_board_reproduces_the_real_file(tmp_path):
    out = tmp_path / "n300.ttsys"
    code, _, _ = run("default", "--board", "n300", "-o", out)
    assert code == 0 and out.read_bytes() == N300.read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--board", "p150", "--arch", "wormhole_b0"], "board p150 is blackhole, not wormhole_b0"),
        (["--board", "n150", "--chips", "2"], "--board fixes the chips"),
        (["--arch", "quasar", "--chips", "1"], None),
    ],
)
def test_default_option_conflicts(tmp_path, args, message):
    code, _, err = run("default", *args, "-o", tmp_path / "x.ttsys")
    if message is None:
        assert code == 0
    else:
        assert code == 1 and message in err and len(err.strip().splitlines()) == 1


def test_default_quasar_to_mlir_fails_cleanly(tmp_path):
    code, _, err = run("default", "--arch", "quasar", "-o", tmp_path / "q.mlir")
    assert code == 1 and "chip_descs is empty" in err and len(err.strip().splitlines()) == 1


def test_read_formats():
    code, out, _ = run("read", N300)
    assert code == 0 and "2 chip(s) wormhole_b0, version 0.0.3758, tt-mlir c7d92e92e8" in out
    assert "dram_unreserved_end" in out and "1073162048" in out and "1073170688" in out
    code, out, _ = run("read", N300, "--format", "json")
    assert json.loads(out)["system_desc"]["chip_capabilities"] == ["HostMMIO", 0]
    code, out, _ = run("read", N300, "--format", "mlir")
    assert out.startswith("#system_desc = #ttcore.system_desc<")


def test_check_ok():
    code, out, _err = run("check", N300)
    assert code == 0 and out.startswith(f"OK {N300}: 2 chip(s)") and "0 warning(s)" in out


def test_check_reports_warnings(tmp_path):
    out = tmp_path / "ring.mlir"
    run("default", "--arch", "blackhole", "--chips", "2", "-o", out)
    code, stdout, err = run("check", out)
    assert code == 0 and "1 warning(s)" in stdout and "[rule 14]" in err


def test_check_is_what_run_accepts_and_compiler_only_is_tt_mlir(tmp_path):
    # tt-mlir's Wormhole default is a compile-only mock: `run` refuses it, so `check` does,
    # saying why and how; --compiler-only checks tt-mlir's rules alone.
    out = tmp_path / "wh.ttsys"
    code, stdout, err = run("default", "--arch", "wormhole_b0", "-o", out)
    assert code == 0 and "note:" in err and "is for compiling only" in err and "--board n150" in err
    code, _stdout, err = run("check", out)
    assert code == 1 and "[rule 27]" in err and "kernel-config region" in err
    assert "--board n150" in err and "--compiler-only" in err
    code, stdout, _err = run("check", "--compiler-only", out)
    assert code == 0 and stdout.startswith(f"OK {out}")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("garbage.ttsys", b"\x00" * 40, "[rule 1] size prefix says 0 bytes follow"),
        ("short.ttsys", N300.read_bytes()[:300], "[rule 1]"),
        ("notjson.json", b"{", "not JSON"),
        ("bad.mlir", b"#ttcore.system_desc<", "1:21: expected '[' to open the CPUDesc list"),
        ("desc.txt", b"whatever", "unknown descriptor extension '.txt'"),
    ],
)
def test_check_fails_with_one_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = run("check", path)
    assert code == 1 and message in err
    assert len(err.strip().splitlines()) == 1 and "OK" not in out


def test_check_missing_file(tmp_path):
    code, _, err = run("check", tmp_path / "nothere.ttsys")
    assert code == 1 and "No such file" in err and len(err.strip().splitlines()) == 1


def test_check_semantic_error(tmp_path):
    import dataclasses

    from tilewright.target import write_system_desc

    root = board_preset("n300")
    bad = dataclasses.replace(
        root, system_desc=dataclasses.replace(root.system_desc, chip_desc_indices=(0, 7))
    )
    write_system_desc(bad, tmp_path / "bad.ttsys")
    code, _, err = run("check", tmp_path / "bad.ttsys")
    assert code == 1 and "[rule 9]" in err


def test_check_strict_and_schema_hash():
    assert run("check", N300, "--schema-hash", "head")[0] == 0  # mismatch is a warning
    code, _, err = run("check", N300, "--schema-hash", "head", "--strict")
    assert code == 1 and "differs from the targeted" in err


def test_convert_ttsys_json_ttsys_identical(tmp_path):
    run("convert", N300, "-o", tmp_path / "a.json")
    code, _, _ = run("convert", tmp_path / "a.json", "-o", tmp_path / "b.ttsys")
    assert code == 0 and (tmp_path / "b.ttsys").read_bytes() == N300.read_bytes()


def test_convert_ttsys_mlir_ttsys_equal_system_desc(tmp_path):
    run("convert", N300, "-o", tmp_path / "a.mlir")
    code, _, _ = run(
        "convert",
        tmp_path / "a.mlir",
        "-o",
        tmp_path / "b.ttsys",
        "--schema-hash",
        "c7d92e92e8",
        "--version",
        "0.0.3758",
        "--git-hash",
        "464a5f341908d5a3f790e697be5ffa6fd3fb6f32",
    )
    assert code == 0
    # With the original envelope given back, even the bytes match.
    assert (tmp_path / "b.ttsys").read_bytes() == N300.read_bytes()
    run("convert", tmp_path / "a.mlir", "-o", tmp_path / "c.ttsys")
    again = read_system_desc(tmp_path / "c.ttsys")
    assert again.system_desc == board_preset("n300").system_desc
    assert again.schema_hash.startswith("92f6a8a8")  # HEAD by default


def test_convert_envelope_overrides(tmp_path):
    code, _, _ = run(
        "convert",
        N300,
        "-o",
        tmp_path / "h.json",
        "--schema-hash",
        "head",
        "--product",
        "tilewright",
    )
    root = read_system_desc(tmp_path / "h.json")
    assert (
        code == 0
        and root.schema_hash.startswith("92f6")
        and root.product_identifier == "tilewright"
    )


def test_convert_bad_output_extension(tmp_path):
    code, _, err = run("convert", N300, "-o", tmp_path / "x.bin")
    assert code == 1 and "unknown descriptor extension '.bin'" in err
