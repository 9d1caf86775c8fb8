"""The installed package carries every file the code reads at run time.

The native runtime's sources (``native/runtime/``: built once per machine from the
installed copy), the kernel API headers and the system-descriptor data are not Python
modules, so a wheel has them only if ``pyproject.toml``'s package data names them; an
install without them fails at the first native kernel, far from the cause.
"""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tilewright"


def _patterns() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return config["tool"]["setuptools"]["package-data"]["tilewright"]


def _covered(relative: str, patterns: list[str]) -> bool:
    # setuptools' globs: "**" spans directories, "*" stays within one
    for pattern in patterns:
        if "**" in pattern:
            if fnmatch.fnmatch(relative, pattern.replace("**/", "*")):
                return True
        elif fnmatch.fnmatch(relative, pattern) and relative.count("/") == pattern.count("/"):
            return True
    return False


def test_every_data_file_of_the_package_is_package_data():
    patterns = _patterns()
    data = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    ]
    assert data, "no data files found: the test looks in the wrong place"
    missing = sorted(p for p in data if not _covered(p, patterns))
    assert not missing, f"not in [tool.setuptools.package-data] of pyproject.toml: {missing}"
