"""`tilewright sysdesc query`: the virtual device's descriptor."""

from click.testing import CliRunner

from tilewright.cli.main import cli
from tilewright.target import board_preset, decode_ttsys


def test_query_prints_the_default_board():
    result = CliRunner().invoke(cli, ["sysdesc", "query", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert '"Wormhole_b0"' in result.output and '"num_cbs": 64' in result.output


def test_query_saves_a_descriptor_equal_to_the_board(tmp_path):
    out = tmp_path / "p150.ttsys"
    result = CliRunner().invoke(cli, ["sysdesc", "query", "--board", "p150", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "blackhole" in result.output
    assert decode_ttsys(out.read_bytes()).system_desc == board_preset("p150").system_desc


def test_query_of_an_unknown_board_fails_in_one_line():
    result = CliRunner().invoke(cli, ["sysdesc", "query", "--board", "n9000"])
    assert result.exit_code != 0
    assert "Traceback" not in result.output and "n9000" in result.output
