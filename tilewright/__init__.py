"""Tilewright: the Tenstorrent kernel-programming stack on a virtual device.

``from tilewright import ttl, ttnn`` gives the TT-Lang language and the
ttnn-compatible tensor front end.  Submodules are imported lazily so that
``import tilewright`` (and the CLI) start fast.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"
__all__ = ["ttl", "ttnn", "__version__"]


def __getattr__(name: str):
    if name in ("ttl", "ttnn", "target", "device", "compiler"):
        return importlib.import_module(f"tilewright.{name}")
    raise AttributeError(f"module 'tilewright' has no attribute {name!r}")
