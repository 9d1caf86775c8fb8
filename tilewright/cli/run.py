"""``tilewright run prog.py [args]``: run a TT-Lang program on the virtual device.

Options are checked before the program starts, so a bad option never costs a run: the
trace file's folder must exist, ``--board`` and ``--system-desc`` exclude each other,
and the descriptor passes the same check as ``tilewright sysdesc check``.
"""

from __future__ import annotations

import math
import os
import signal
import sys

import click

from tilewright.cli import signals
from tilewright.cli.runner import run_program
from tilewright.device import session
from tilewright.device.engine import DEFAULT_WATCHDOG_SECONDS
from tilewright.device.requirements import check_runnable
from tilewright.device.trace import Tracer
from tilewright.errors import TilewrightError
from tilewright.lazy import lazy_import
from tilewright.target import BOARD_PRESETS, read_system_desc

# Process isolation loads the native engine: only `--isolate` runs need it here.
isolate_module = lazy_import("tilewright.native.isolate")

__all__ = ["run"]


def _check_trace_path(path: str) -> None:
    """The trace is written after the run: refuse a path that cannot be written now."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise click.BadParameter(
            f"{path!r}: folder {folder!r} does not exist (create it first; the trace is "
            "written when the program ends)",
            param_hint="--trace",
        )
    if os.path.isdir(path):
        raise click.BadParameter(f"{path!r} is a folder; give a file name", param_hint="--trace")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise click.BadParameter(f"{path!r}: not writable", param_hint="--trace")


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


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--trace",
    "trace_path",
    type=click.Path(dir_okay=False),
    help="Write a Chrome/Perfetto trace (one track per node x kernel) to this JSON file.",
)
@click.option("--stats", is_flag=True, help="Print per-kernel operation counts and blocked time.")
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
    program, args, trace_path, stats, board, system_desc, watchdog, isolate, engine, isolate_channel
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
    descriptor = _load_system_desc(system_desc) if system_desc else None
    if isolate:
        forwarded = [
            *(["--trace", trace_path] if trace_path else []),
            *(["--stats"] if stats else []),
            *(["--board", board] if board else []),
            *(["--system-desc", system_desc] if system_desc else []),
            "--watchdog",
            str(watchdog),
            "--engine",
            engine,
        ]
        with signals.sigterm_as_interrupt():  # passed on to the child as SIGTERM
            status = isolate_module.run_isolated(
                program,
                list(args),
                forwarded,
                lambda: signal.SIGTERM if signals.terminated() else signal.SIGINT,
            )
        sys.exit(status)
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
    )
    with signals.sigterm_as_interrupt():  # a report, the trace and no compiler left running
        status = run_program(program, list(args))
    if trace_path:
        _write_trace(trace_path)
    if stats:
        click.echo(session.format_stats(), err=True)
    sys.exit(status)
