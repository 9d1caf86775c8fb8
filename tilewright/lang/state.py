"""Per-launch state of the TT-Lang runtime: the operation that is running and its tracer.

One operation runs at a time (its launch completes before the call returns), so a
module-level record is enough and gives kernels O(1) access.
"""

from __future__ import annotations

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


CURRENT: OpLaunch | None = None
TRACER: Tracer | None = None
LAST_GRID: tuple[int, ...] | None = None
"""The grid of the last launched operation: host-side ``ttl.grid_size()`` (as tt-lang's
simulator, which keeps the last operation's grid after it ran)."""


def current_launch() -> OpLaunch | None:
    return CURRENT
