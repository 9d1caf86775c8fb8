"""The process-wide run session: options set by the runner and what launches collect.

``tilewright run --trace/--stats`` fills ``OPTIONS`` once; devices read it when they
open (one options object, never environment lookups deep in logic).  Every launch
appends its statistics (and trace events) to ``OPTIONS.launches`` when asked to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilewright.device.engine import DEFAULT_WATCHDOG_SECONDS, EngineOptions, LaunchResult
from tilewright.device.fabric import FabricConfig
from tilewright.device.trace import Tracer

__all__ = [
    "RunOptions",
    "OPTIONS",
    "LAUNCH_OBSERVERS",
    "engine_options",
    "tracer_for",
    "record_launch",
    "LaunchRecord",
]


@dataclass(slots=True)
class LaunchRecord:
    name: str
    result: LaunchResult


@dataclass(slots=True)
class RunOptions:
    trace: bool = False
    stats: bool = False
    launches: list[LaunchRecord] = field(default_factory=list)
    tracer: Tracer | None = None
    board: str | None = None
    """Board preset ``ttnn.open_device`` uses when given no descriptor (``--board``)."""
    system_desc: object = None
    """A descriptor path or object ``ttnn.open_device`` uses when given none (``--system-desc``)."""
    fabric: FabricConfig = FabricConfig.DISABLED
    """The fabric of mesh devices opened from now on (``ttnn.set_fabric_config``)."""
    watchdog: float | None = DEFAULT_WATCHDOG_SECONDS
    """Seconds a kernel may run without yielding before a livelock is reported (``--watchdog``)."""
    engine: str = "auto"
    """How TT-Lang operations run: ``auto`` (compiled where possible), ``python``
    (interpreted) or ``native`` (compiled, or an error) -- ``tilewright run --engine``."""


OPTIONS = RunOptions()


def engine_options() -> EngineOptions:
    return EngineOptions(trace=OPTIONS.trace, watchdog=OPTIONS.watchdog)


def tracer_for(device):
    """The session tracer, attached to ``device`` (None unless tracing)."""
    if not OPTIONS.trace:
        return None
    if OPTIONS.tracer is None:
        OPTIONS.tracer = Tracer()
    device.engine.tracer = OPTIONS.tracer
    device.command_queue.tracer = OPTIONS.tracer
    return OPTIONS.tracer


LAUNCH_OBSERVERS: list = []
"""Callables ``observer(name)`` run after each operation's launch (``tilewright emit``
records the results its ``run.py`` checks)."""


def record_launch(name: str, result) -> None:
    """Keep a launch's statistics for ``--stats``; tell the launch observers."""
    if OPTIONS.stats:
        OPTIONS.launches.append(LaunchRecord(name, result))
    for observer in list(LAUNCH_OBSERVERS):
        observer(name)


def format_stats() -> str:
    """A table of per-kernel counts and blocked time over every recorded launch."""
    lines = [
        "launch                       place                    kernel            slot     ops  waits"
        "   cycles  blocked"
    ]
    for rec in OPTIONS.launches:
        for s in rec.result.stats:
            lines.append(
                f"{rec.name[:28]:<28} {s.place[:24]:<24} {s.kernel[:17]:<17} {s.slot:<7} "
                f"{s.ops:>5} {s.waits:>6} {s.cycles:>8} {s.blocked_cycles:>8}"
            )
    if len(lines) == 1:
        lines.append("(no launches)")
    return "\n".join(lines)


def reset(
    *,
    trace: bool = False,
    stats: bool = False,
    board: str | None = None,
    system_desc=None,
    watchdog: float | None = DEFAULT_WATCHDOG_SECONDS,
    engine: str = "auto",
) -> None:
    """Start a new session (what `tilewright run` does before running a program)."""
    OPTIONS.watchdog = watchdog
    OPTIONS.trace = trace
    OPTIONS.stats = stats
    OPTIONS.board = board
    OPTIONS.system_desc = system_desc
    OPTIONS.launches = []
    OPTIONS.tracer = None
    OPTIONS.fabric = FabricConfig.DISABLED
    OPTIONS.engine = engine
