"""The process-wide run session: options set by the runner and what launches collect.

``tilewright run --trace/--stats`` fills ``OPTIONS`` once; devices read it when they
open (one options object, never environment lookups deep in logic).  Every launch
appends its statistics (and trace events) to ``OPTIONS.launches`` when asked to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilewright.device.engine import EngineOptions

__all__ = ["RunOptions", "OPTIONS", "engine_options"]


@dataclass(slots=True)
class RunOptions:
    trace: bool = False
    stats: bool = False
    launches: list = field(default_factory=list)


OPTIONS = RunOptions()


def engine_options() -> EngineOptions:
    return EngineOptions(trace=OPTIONS.trace)
