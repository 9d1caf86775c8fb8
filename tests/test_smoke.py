from click.testing import CliRunner

import tilewright
from tilewright.cli.main import cli


def test_version_and_help():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "Tilewright" in result.output
    assert tilewright.__version__
