"""The process-wide run session: options set by the runner and what launches collect.

``tilewright run --trace/--stats/--perf-report/--dry-run`` fills ``OPTIONS`` once; devices
read it when they open (one options object, never environment lookups deep in logic).
Every launch appends its statistics (and trace events) to ``OPTIONS.launches``, and
every operation -- a program launch or a modelled ttnn operation -- its device-time
record (``device/perf/report.py``) to ``OPTIONS.ops``, when asked to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilewright.device.engine import DEFAULT_WATCHDOG_SECONDS, EngineOptions, LaunchResult
from tilewright.device.fabric import FabricConfig
from tilewright.device.perf import report
from tilewright.device.trace import Tracer

__all__ = [
    "RunOptions",
    "OPTIONS",
    "LAUNCH_OBSERVERS",
    "engine_options",
    "tracer_for",
    "record_launch",
    "record_op",
    "recording_ops",
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
    num_devices: int | None = None
    """Chips the program sees of the multi-chip system (``--num-devices``; None: all)."""
    watchdog: float | None = DEFAULT_WATCHDOG_SECONDS
    """Seconds a kernel may run without yielding before a livelock is reported (``--watchdog``)."""
    engine: str = "auto"
    """How TT-Lang operations run: ``auto`` (compiled where possible), ``python``
    (interpreted) or ``native`` (compiled, or an error) -- ``tilewright run --engine``."""
    perf_report: str | None = None
    """Write tt-metal's op-perf CSV of every operation here (``--perf-report``)."""
    dry_run: bool = False
    """Skip the numeric payload, keep protocol, checks and the time model (``--dry-run``)."""
    ops: list[report.OpRecord] = field(default_factory=list)
    """Device-time records of the operations so far (``--stats``, ``--perf-report``)."""
    timeline_ns: float = 0.0
    """Modelled device time so far: where the next operation starts."""


OPTIONS = RunOptions()


def engine_options() -> EngineOptions:
    return EngineOptions(trace=OPTIONS.trace, watchdog=OPTIONS.watchdog, dry_run=OPTIONS.dry_run)


def recording_ops() -> bool:
    """Whether operations' device-time records are kept (``--stats`` or ``--perf-report``)."""
    return OPTIONS.stats or OPTIONS.perf_report is not None


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


def record_launch(name: str, result, device=None) -> None:
    """Keep a launch's statistics for ``--stats`` and its device-time record (once)."""
    if result.recorded:
        return
    result.recorded = True
    if OPTIONS.stats:
        OPTIONS.launches.append(LaunchRecord(name, result))
    for observer in list(LAUNCH_OBSERVERS):
        observer(name)
    if device is not None and recording_ops():
        arch = device.perf.arch
        record_op(
            report.from_launch(
                name,
                result,
                arch,
                device_id=device.device_id,
                available=device.grid_x * device.grid_y,
            )
        )


def record_op(rec: report.OpRecord) -> None:
    """Keep an operation's device-time record: numbered and placed on the timeline."""
    if not recording_ops():
        return
    rec.call = len(OPTIONS.ops) + 1
    OPTIONS.timeline_ns += rec.dispatch_ns
    rec.start_ns = OPTIONS.timeline_ns
    OPTIONS.timeline_ns += rec.kernel_ns
    OPTIONS.ops.append(rec)


def format_stats() -> str:
    """Per operation the modelled device time and its bound, then per kernel its counts,
    cycles and blocked time over every recorded launch."""
    return report.format_stats(OPTIONS.ops) + "\n\n" + _kernel_table()


def _kernel_table() -> str:
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
    perf_report: str | None = None,
    dry_run: bool = False,
    num_devices: int | None = None,
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
    OPTIONS.perf_report = perf_report
    OPTIONS.dry_run = dry_run
    OPTIONS.ops = []
    OPTIONS.timeline_ns = 0.0
    OPTIONS.num_devices = num_devices
