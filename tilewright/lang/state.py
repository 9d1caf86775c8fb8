"""Per-launch state of the TT-Lang runtime: the operation that is running and its tracer.

An operation's launch completes before its call returns, so one record per *thread*
is enough and gives kernels O(1) access.  ``state.CURRENT`` and ``state.TRACER`` read
and write the calling thread's values (the module's class gives them thread-local
properties), so operations launched from several threads at once, each on its own
device, never see each other's launch.
"""

from __future__ import annotations

import sys
import threading
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tilewright.device.trace import Tracer
    from tilewright.lang.node import NodeSetup

__all__ = ["OpLaunch", "CURRENT", "TRACER", "LAST_GRID", "current_launch"]


@dataclass(slots=True)
class OpLaunch:
    """The operation being run: its name, grid (columns, rows, ...) and per-node setups."""

    name: str
    grid: tuple[int, ...]
    setups: dict[int, NodeSetup] = field(default_factory=dict)  # core index -> NodeSetup
    channels: dict = field(default_factory=dict)  # (net key, pipe index, dst node) -> pipe channel


class _PerThread(threading.local):
    current: OpLaunch | None = None
    tracer: Tracer | None = None


_LOCAL = _PerThread()

CURRENT: OpLaunch | None
TRACER: Tracer | None


class _StateModule(types.ModuleType):
    """This module, with ``CURRENT`` / ``TRACER`` backed by the calling thread's record."""

    @property
    def CURRENT(self) -> OpLaunch | None:  # noqa: N802 - the module attribute's name
        return _LOCAL.current

    @CURRENT.setter
    def CURRENT(self, launch: OpLaunch | None) -> None:  # noqa: N802
        _LOCAL.current = launch

    @property
    def TRACER(self) -> Tracer | None:  # noqa: N802
        return _LOCAL.tracer

    @TRACER.setter
    def TRACER(self, tracer: Tracer | None) -> None:  # noqa: N802
        _LOCAL.tracer = tracer


sys.modules[__name__].__class__ = _StateModule
LAST_GRID: tuple[int, ...] | None = None
"""The grid of the last launched operation: host-side ``ttl.grid_size()`` (as tt-lang's
simulator, which keeps the last operation's grid after it ran)."""


def current_launch() -> OpLaunch | None:
    return _LOCAL.current
