"""docs/multi-device.md's example program runs as written under `tilewright run`."""

from __future__ import annotations

import pathlib
import re

from click.testing import CliRunner

from tilewright.cli.main import cli
from tilewright.device import session

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "multi-device.md"


def test_the_example_runs(tmp_path):
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)
    path = tmp_path / "multi_device_example.py"
    path.write_text(code)
    result = CliRunner().invoke(cli, ["run", str(path)])
    session.reset()
    assert result.exit_code == 0, result.output
    assert "tensor(" in result.output
