"""``tilewright run prog.py [args]``: run a TT-Lang program on the virtual device.

Options are checked before the program starts, so a bad option never costs a run: the
trace and perf-report files' folders must exist, ``--board`` and ``--system-desc``
exclude each other, and the descriptor passes the same check as ``tilewright sysdesc
check``.  ``--stats``, ``--perf-report`` and the trace carry the modelled device time
(``docs/performance-model.md``); ``--dry-run`` keeps it and skips the numeric payload.
"""

from __future__ import annotations

import math
import os
import sys

import click

from tilewright.cli.runner import run_program
from tilewright.device import session
from tilewright.device.engine import DEFAULT_WATCHDOG_SECONDS
from tilewright.device.perf.report import write_csv
from tilewright.device.requirements import check_runnable
from tilewright.device.trace import Tracer
from tilewright.errors import TilewrightError
from tilewright.lazy import lazy_import
from tilewright.target import BOARD_PRESETS, read_system_desc

# Process isolation loads the native engine: only `--isolate` runs need it here.
isolate_module = lazy_import("tilewright.native.isolate")

__all__ = ["run"]


def _check_trace_path(path: str, option: str = "--trace") -> None:
    """The file is written after the run: refuse a path that cannot be written now."""
    what = "trace" if option == "--trace" else "report"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise click.BadParameter(
            f"{path!r}: folder {folder!r} does not exist (create it first; the {what} is "
            "written when the program ends)",
            param_hint=option,
        )
    if os.path.isdir(path):
        raise click.BadParameter(f"{path!r} is a folder; give a file name", param_hint=option)
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise click.BadParameter(f"{path!r}: not writable", param_hint=option)


def _load_system_desc(path: str):
    """Read and check ``--system-desc`` before the program runs (what `sysdesc check` does)."""
    try:
        root = read_system_desc(path)
        check_runnable(root)
    except TilewrightError as err:
        hint = f"\nhint: {err.hint}" if err.hint else ""
        raise click.ClickException(f"--system-desc {path}: {err.message}{hint}") from None
    return root


def _write_trace(path: str) -> None:
    tracer = session.OPTIONS.tracer
    empty = tracer is None
    try:
        (tracer or Tracer()).write(path)
    except OSError as err:
        raise click.ClickException(
            f"cannot write the trace {path}: {err.strerror or err}"
        ) from None
    note = " (empty: the program launched no operation)" if empty else ""
    click.echo(f"trace: {path}{note}", err=True)


def _write_perf_report(path: str) -> None:

    try:
        write_csv(session.OPTIONS.ops, path)
    except OSError as err:
        raise click.ClickException(
            f"cannot write the perf report {path}: {err.strerror or err}"
        ) from None
    n = len(session.OPTIONS.ops)
    click.echo(f"perf report: {path} ({n} operation{'s' if n != 1 else ''})", err=True)


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--trace",
    "trace_path",
    type=click.Path(dir_okay=False),
    help="Write a Chrome/Perfetto trace (one track per node x kernel) to this JSON file.",
)
@click.option(
    "--stats",
    is_flag=True,
    help="Print per operation the modelled device time (cycles, ns) and its bound, then "
    "per-kernel counts and blocked time.",
)
@click.option(
    "--perf-report",
    "perf_report",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE.csv",
    help="Write tt-metal's device-profiler op report (ops_perf_results columns) of the "
    "modelled device time; `tt-perf-report FILE.csv` reads it.",
)
@click.option(
    "--dry-run",
    "dry_run",
    is_flag=True,
    help="Keep the protocol, block states, deadlock detection and the time model; skip the "
    "numeric payload (results are meaningless, times are kept).",
)
@click.option(
    "--board",
    type=click.Choice(tuple(BOARD_PRESETS)),
    default=None,
    help="Board preset the program's ttnn.open_device uses (default n150).",
)
@click.option(
    "--system-desc",
    "system_desc",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="System descriptor (.ttsys, .mlir or .json) the program's devices are built from "
    "(checked first, as `tilewright sysdesc check` does).",
)
@click.option(
    "--watchdog",
    type=click.FloatRange(min=0),
    default=DEFAULT_WATCHDOG_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="Report a livelock when a kernel runs this long without reaching a "
    "synchronisation point (0: off).",
)
@click.option(
    "--isolate",
    is_flag=True,
    help="Run the simulation in a child process: a crashing external C++ function is reported "
    "with its call site instead of killing tilewright.",
)
@click.option(
    "--engine",
    type=click.Choice(["auto", "python", "native"]),
    default="auto",
    show_default=True,
    help="How TT-Lang operations run: compiled to C++ where possible (auto), interpreted "
    "(python), or compiled with an error for what does not compile (native).",
)
@click.option("--isolate-channel", "isolate_channel", default=None, hidden=True)
def run(
    program,
    args,
    trace_path,
    stats,
    perf_report,
    dry_run,
    board,
    system_desc,
    watchdog,
    isolate,
    engine,
    isolate_channel,
):
    """Run PROGRAM (a Python file using `import ttl` / `import ttnn`) with ARGS."""
    if not math.isfinite(watchdog):  # FloatRange lets nan and inf through
        raise click.BadParameter(
            f"{watchdog} is not a number of seconds (0 turns the watchdog off)",
            param_hint="--watchdog",
        )
    if board is not None and system_desc is not None:
        raise click.UsageError(
            "--board and --system-desc both choose the system the devices are built from; "
            "give one (a board preset is a system descriptor: `tilewright sysdesc default "
            "--board NAME -o FILE`)"
        )
    if trace_path:
        _check_trace_path(trace_path)
    if perf_report:
        _check_trace_path(perf_report, "--perf-report")
    descriptor = _load_system_desc(system_desc) if system_desc else None
    if isolate:
        forwarded = [
            *(["--trace", trace_path] if trace_path else []),
            *(["--stats"] if stats else []),
            *(["--perf-report", perf_report] if perf_report else []),
            *(["--dry-run"] if dry_run else []),
            *(["--board", board] if board else []),
            *(["--system-desc", system_desc] if system_desc else []),
            "--watchdog",
            str(watchdog),
            "--engine",
            engine,
        ]
        sys.exit(isolate_module.run_isolated(program, list(args), forwarded))
    if isolate_channel:
        try:
            isolate_module.attach_child(isolate_channel)
        except ValueError as exc:  # an internal option: only run_isolated passes it
            raise click.BadParameter(str(exc), param_hint="--isolate-channel") from None
    session.reset(
        trace=trace_path is not None,
        stats=stats,
        board=board,
        system_desc=descriptor,
        watchdog=watchdog or None,
        engine=engine,
        perf_report=perf_report,
        dry_run=dry_run,
    )
    status = run_program(program, list(args))
    if trace_path:
        _write_trace(trace_path)
    if perf_report:
        _write_perf_report(perf_report)
    if stats:
        click.echo(session.format_stats(), err=True)
    sys.exit(status)
