"""``tilewright.lazy``: the one deferred-import mechanism (a module imported on first use)."""

from __future__ import annotations

import sys

import pytest

from tilewright.errors import TilewrightError
from tilewright.lazy import lazy_import, loaded


@pytest.fixture
def tmp_module(tmp_path, monkeypatch):
    """Write ``name.py`` with ``source`` on a fresh sys.path entry; forget it afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written: list[str] = []

    def write(name: str, source: str) -> str:
        (tmp_path / f"{name}.py").write_text(source)
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def test_imported_on_first_read_and_every_read_forwarded(tmp_module) -> None:
    name = tmp_module(
        "tw_lazy_probe", "VALUE = 1\ndef rebind(v):\n    global VALUE\n    VALUE = v\n"
    )
    stand_in = lazy_import(name)
    assert name not in sys.modules
    assert "not imported yet" in repr(stand_in)
    assert stand_in.VALUE == 1
    assert name in sys.modules
    stand_in.rebind(5)  # a global the module rebinds reads as it is now
    assert stand_in.VALUE == 5
    stand_in.VALUE = 7  # writes go to the module (monkeypatching through the stand-in)
    assert sys.modules[name].VALUE == 7
    assert "VALUE" in dir(stand_in)


def test_a_missing_optional_dependency_is_a_tilewright_error() -> None:
    stand_in = lazy_import("tw_no_such_module", missing="this needs tw_no_such_module")
    with pytest.raises(TilewrightError, match="this needs tw_no_such_module") as info:
        stand_in.anything  # noqa: B018
    assert info.value.rule == "optional-dependency"


def test_a_module_that_fails_inside_is_its_own_error(tmp_module) -> None:
    name = tmp_module("tw_lazy_broken", "import tw_missing_inner_dependency\n")
    stand_in = lazy_import(name, missing="never shown: the module itself exists")
    with pytest.raises(ModuleNotFoundError, match="tw_missing_inner_dependency"):
        stand_in.anything  # noqa: B018


def test_without_missing_the_import_error_is_raised() -> None:
    with pytest.raises(ModuleNotFoundError):
        lazy_import("tw_no_such_module").anything  # noqa: B018


def test_loaded_gives_the_module_itself(tmp_module) -> None:
    name = tmp_module("tw_lazy_loaded", "VALUE = 3\n")
    stand_in = lazy_import(name)
    assert name not in sys.modules
    module = loaded(stand_in)
    assert module is sys.modules[name] and module.VALUE == 3
    assert loaded(stand_in) is module
