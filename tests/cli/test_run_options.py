"""`tilewright run` options as documented: every board preset, --num-devices, options of
`tilewright run` written after the program, `--`, and the checks of --compiler / --compare."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from tilewright.cli.main import cli
from tilewright.target.presets import board_names, board_preset

COUNT = textwrap.dedent(
    """
    import sys
    import ttnn

    print("devices", ttnn.GetNumAvailableDevices(), "argv", sys.argv[1:])
    """
)


@pytest.fixture
def prog(tmp_path):
    def write(source: str = COUNT):
        path = tmp_path / "prog.py"
        path.write_text(source)
        return str(path)

    return write


def run(*args):
    return CliRunner().invoke(cli, ["run", *args], prog_name="tilewright")


@pytest.mark.parametrize("board", board_names())
def test_every_board_preset_sysdesc_knows_is_accepted(prog, board):
    result = run("--board", board, prog())
    assert result.exit_code == 0, result.output
    chips = len(board_preset(board).system_desc.chip_desc_indices)
    assert f"devices {chips} " in result.output


def test_the_presets_docs_name_are_accepted(prog):
    for board in ("galaxy", "t3k", "loudbox", "quietbox", "p300"):
        assert board in board_names()
        assert run("--board", board, prog()).exit_code == 0


def test_num_devices_shows_that_many_chips(prog):
    result = run("--num-devices", "3", prog())
    assert result.exit_code == 0, result.output
    assert "devices 3 " in result.output


MESH = textwrap.dedent(
    """
    import ttnn

    mesh = ttnn.open_mesh_device()
    print("mesh", tuple(mesh.shape), "ids", ttnn.get_device_ids())
    ttnn.close_mesh_device(mesh)
    try:
        ttnn.open_mesh_device(ttnn.MeshShape(1, 4))
    except Exception as exc:
        print("refused:", exc)
    """
)


def test_num_devices_sets_the_default_mesh_and_refuses_more_chips(prog):
    result = run("--num-devices", "2", prog(MESH))
    assert result.exit_code == 0, result.output
    assert "mesh (1, 2)" in result.output
    assert (
        "refused:" in result.output
        and "not one of the 2 devices --num-devices shows" in result.output
    )


def test_num_devices_more_than_the_board_has_is_an_error(prog):
    result = run("--board", "n300", "--num-devices", "4", prog())
    assert result.exit_code == 1
    assert "--num-devices 4: n300 has 2 chips" in result.output


@pytest.mark.parametrize(
    "after, fixed",
    [
        (["--num-devices", "2"], "tilewright run --num-devices 2 {prog}"),
        (["--stats"], "tilewright run --stats {prog}"),
        (["--board=n300"], "tilewright run --board=n300 {prog}"),
        (["--compiler", "ttlang", "x"], "tilewright run --compiler ttlang {prog} x"),
    ],
)
def test_an_option_of_run_after_the_program_is_refused_with_the_fix(prog, after, fixed):
    path = prog()
    result = run(path, *after)
    assert result.exit_code == 2
    name = after[0].split("=")[0]
    assert f"{name} after the program is an option of `tilewright run`" in result.output
    assert fixed.format(prog=path) in result.output
    assert f"tilewright run {path} -- {after[0]}" in result.output


def test_double_dash_passes_the_rest_to_the_program(prog):
    result = run(prog(), "--", "--num-devices", "2", "--stats")
    assert result.exit_code == 0, result.output
    assert "argv ['--num-devices', '2', '--stats']" in result.output


def test_arguments_that_are_not_tilewright_options_pass_through(prog):
    result = run(prog(), "--size", "4", "-v")
    assert result.exit_code == 0, result.output
    assert "argv ['--size', '4', '-v']" in result.output


def test_compare_takes_neither_compiler_nor_trace(prog, tmp_path):
    result = run("--compare", "--compiler", "ttlang", prog())
    assert result.exit_code == 2 and "drop --compiler, --isolate and --trace" in result.output
    result = run("--compare", "--trace", str(tmp_path / "t.json"), prog())
    assert result.exit_code == 2


def test_the_real_compiler_without_its_environment_names_the_setup_command(
    prog, tmp_path, monkeypatch
):
    monkeypatch.setenv("TILEWRIGHT_TTLANG_ENV", str(tmp_path / "no-env"))
    for args in (["run", "--compiler", "ttlang"], ["run", "--compare"], ["check"]):
        result = CliRunner().invoke(cli, [*args, prog()], prog_name="tilewright")
        assert result.exit_code == 1, result.output
        assert (
            "the real TT-Lang compiler (tt-lang==1.1.1, Python 3.12) is not set up" in result.output
        )
        assert "tilewright setup-ttlang" in result.output
