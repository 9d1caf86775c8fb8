"""Deferred imports, the one mechanism: a module named at the top, imported on first use.

``host = lazy_import("tilewright.compiler.backend.host")`` at module level binds a
stand-in for the module.  The first attribute read imports it (``importlib``); every
read is forwarded to the real module, so a value the module rebinds later
(``session.OPTIONS``) reads as it is now and a test's ``monkeypatch`` is seen, as with
an import inside the function that reads it.

Use it for a module that is costly and rarely needed where it is named: the command
line loads the compiler only for the commands that compile, the pytest plugin loads
ttnn only when it is active, and torch (an optional dependency, :data:`torch`) loads
when a conversion or a golden first needs it.  Never use it to hide an import cycle:
move the shared piece down a layer instead (docs/architecture.md).

``tests/test_layers.py`` reads every call as an import edge of the module that makes it,
at its line, so the layer order and the cycle check see deferred imports too; a call
must sit at module level and name the module with a string literal.  This module sits
in the bottom layer with ``errors``: the standard library and ``errors`` only.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from tilewright.errors import TilewrightError

__all__ = ["LazyModule", "lazy_import", "loaded", "torch"]


class LazyModule:
    """A module imported on its first attribute read; every read goes to the real module."""

    __slots__ = ("_lazy_name", "_lazy_missing", "_lazy_module")

    def __init__(self, name: str, missing: str | None = None) -> None:
        object.__setattr__(self, "_lazy_name", name)
        object.__setattr__(self, "_lazy_missing", missing)
        object.__setattr__(self, "_lazy_module", None)

    def _load(self) -> ModuleType:
        module = self._lazy_module
        if module is None:
            try:
                module = importlib.import_module(self._lazy_name)
            except ModuleNotFoundError as exc:
                # Only the module itself missing is the optional dependency; a module it
                # imports missing is that module's own error.
                top = self._lazy_name.partition(".")[0]
                if self._lazy_missing is None or exc.name not in (self._lazy_name, top):
                    raise
                raise TilewrightError(self._lazy_missing, rule="optional-dependency") from exc
            object.__setattr__(self, "_lazy_module", module)
        return module

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._load(), attr)

    def __setattr__(self, attr: str, value: object) -> None:
        setattr(self._load(), attr, value)

    def __dir__(self) -> list[str]:
        return dir(self._load())

    def __repr__(self) -> str:
        state = "imported" if self._lazy_module is not None else "not imported yet"
        return f"<lazy module {self._lazy_name!r} ({state})>"


def lazy_import(name: str, *, missing: str | None = None) -> Any:
    """A stand-in for module ``name`` that imports it on first use.

    ``missing``: for an optional dependency, the message of the :class:`TilewrightError`
    raised when the module is not installed (instead of a bare ``ModuleNotFoundError``).
    Typed ``Any``: attribute reads are not checked by mypy.
    """
    return LazyModule(name, missing)


def loaded(stand_in: LazyModule) -> ModuleType:
    """The real module behind ``stand_in``, imported now if it is not yet.

    For a package's module ``__getattr__`` that hands out a submodule on first read
    (``ttl.raw``): the caller gets the module itself, not a stand-in.
    """
    return stand_in._load()


# torch is optional (interop, goldens) and takes a second or more to import.
torch = lazy_import("torch", missing="this needs torch: pip install 'tilewright[torch]'")
"""torch, an optional dependency (interop, goldens): imported when first used."""
