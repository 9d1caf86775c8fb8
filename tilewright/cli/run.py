"""``tilewright run prog.py [args]``: run a TT-Lang program on the virtual device.

Options are checked before the program starts, so a bad option never costs a run: the
trace and perf-report files' folders must exist, ``--board`` and ``--system-desc``
exclude each other, the descriptor passes the same check as ``tilewright sysdesc
check``, and an option of ``tilewright run`` written after the program is refused with
the command line that means it (everything after the program is the program's; ``--``
passes such a word on).  ``--stats``, ``--perf-report`` and the trace carry the modelled
device time (``docs/performance-model.md``); ``--dry-run`` keeps it and skips the
numeric payload.

``--compiler ttlang`` compiles the program's operations with the real TT-Lang compiler
(in its Python 3.12 environment, ``cli/ttlang_env``); ``--compare`` runs the program
through both compilers and compares what it reads back (``cli/compare``).
"""

from __future__ import annotations

import math
import os
import signal
import sys

import click

from tilewright.cli import signals, ttlang_env
from tilewright.cli.runner import run_program
from tilewright.cli.ttlang_run import run_with_real_compiler
from tilewright.device import session
from tilewright.device.engine import DEFAULT_WATCHDOG_SECONDS
from tilewright.device.perf.report import write_csv
from tilewright.device.requirements import check_runnable
from tilewright.device.trace import Tracer
from tilewright.errors import TilewrightError
from tilewright.lazy import lazy_import
from tilewright.target import read_system_desc
from tilewright.target.presets import board_names

# Process isolation loads the native engine: only `--isolate` runs need it here.
isolate_module = lazy_import("tilewright.native.isolate")
# Worker processes load Ray: only `--workers` / `--ray-address` runs need it.
distributed = lazy_import("tilewright.distributed")
# ttnn (and with it the device) loads when a program runs, not when the command line starts.
readback = lazy_import("tilewright.ttnn.readback")
compare_module = lazy_import("tilewright.cli.compare")

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
    type=click.Choice(board_names()),
    default=None,
    help="Board preset the program's devices are built from (default n150; multi-chip "
    "programs: galaxy). Every preset `tilewright sysdesc default --board` knows.",
)
@click.option(
    "--num-devices",
    "num_devices",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Show the program N chips of the system (a mesh of N chips; tt-lang-sim's flag): "
    "what ttnn.GetNumAvailableDevices() returns and ttnn.open_mesh_device() opens.",
)
@click.option(
    "--compiler",
    type=click.Choice(["tilewright", "ttlang"]),
    default="tilewright",
    show_default=True,
    help="Which TT-Lang compiler compiles the program's operations: Tilewright's own, or "
    "the real TT-Lang compiler (tt-lang, set up once by `tilewright setup-ttlang`).",
)
@click.option(
    "--compare",
    is_flag=True,
    help="Run the program with both compilers and compare, bit for bit, every tensor it "
    "reads back (ttnn.to_torch); differences are listed per tensor.",
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
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Run mesh chips' launches in N worker processes on this machine (a local Ray; "
    "needs `pip install 'tilewright[distributed]'`). A summary of where launches ran goes "
    "to stderr at the end.",
)
@click.option(
    "--ray-address",
    "ray_address",
    default=None,
    metavar="ADDR",
    help="Join the Ray cluster at ADDR for the worker processes (with --workers N: N "
    "workers, default 1).",
)
@click.option("--isolate-channel", "isolate_channel", default=None, hidden=True)
@click.option("--record", "record_path", default=None, hidden=True)
@click.pass_context
def run(
    ctx,
    program,
    args,
    trace_path,
    stats,
    perf_report,
    dry_run,
    board,
    num_devices,
    compiler,
    compare,
    system_desc,
    watchdog,
    isolate,
    engine,
    workers,
    ray_address,
    isolate_channel,
    record_path,
):
    """Run PROGRAM (a Python file using `import ttl` / `import ttnn`) with ARGS."""
    args = program_args(ctx, list(args))
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
    if compare:
        if compiler != "tilewright" or isolate or trace_path:
            raise click.UsageError(
                "--compare runs the program with both compilers; drop --compiler, --isolate "
                "and --trace"
            )
        try:
            sys.exit(
                compare_module.compare_compilers(
                    program,
                    args,
                    forwarded_options(ctx, ("compare",)),
                    # --engine chooses how Tilewright's own compiler's kernels run
                    forwarded_options(ctx, ("compare", "engine")),
                )
            )
        except TilewrightError as err:
            raise click.ClickException(f"{err.message}\nhint: {err.hint}") from None
    if compiler == "ttlang":
        if not ttlang_env.in_real_compiler():
            try:
                sys.exit(ttlang_env.run_in_env(["run", *forwarded_options(ctx), program, *args]))
            except TilewrightError as err:  # no environment yet: say how to make it
                raise click.ClickException(f"{err.message}\nhint: {err.hint}") from None
        if isolate:
            raise click.UsageError("--isolate is not available with --compiler ttlang")
        if engine == "python":
            raise click.UsageError(
                "--engine python interprets Tilewright's own compiler's kernels; the real "
                "compiler's kernels are C++ and run on the native engine (drop --engine)"
            )
    if isolate:
        # the child runs the program: every option given here but --isolate itself
        with signals.sigterm_as_interrupt():  # passed on to the child as SIGTERM
            status = isolate_module.run_isolated(
                program,
                list(args),
                forwarded_options(ctx, ("isolate",)),
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
        perf_report=perf_report,
        dry_run=dry_run,
        num_devices=num_devices,
    )
    if record_path:
        readback.start()
    pool = None
    if workers is not None or ray_address is not None:
        try:
            pool = distributed.start(workers or 1, ray_address)
        except TilewrightError as err:
            raise click.ClickException(f"{err.message}\nhint: {err.hint}") from None
    try:
        with signals.sigterm_as_interrupt():  # a report, the trace and no compiler left running
            if compiler == "ttlang":
                status, _rejected = run_with_real_compiler(program, list(args))
            else:
                status = run_program(program, list(args))
    finally:
        if pool is not None:
            click.echo(distributed.report(), err=True)
            distributed.stop()
    if record_path:
        readback.save(record_path)
    if trace_path:
        _write_trace(trace_path)
    if perf_report:
        _write_perf_report(perf_report)
    if stats:
        click.echo(session.format_stats(), err=True)
    sys.exit(status)


def program_args(ctx: click.Context, args: list[str]) -> list[str]:
    """The program's arguments: a ``tilewright`` option among them is refused with the command
    line that means it; ``--`` passes the rest on as they are (and is dropped)."""
    own = {o for p in ctx.command.params if isinstance(p, click.Option) for o in p.opts}
    own.discard("--help")
    for i, word in enumerate(args):
        if word == "--":
            return args[:i] + args[i + 1 :]
        name = word.split("=", 1)[0]
        if name in own:
            value = (
                [args[i + 1]]
                if "=" not in word and not _is_flag(ctx, name) and i + 1 < len(args)
                else []
            )
            program = ctx.params.get("program", "PROGRAM")
            rest = args[:i] + args[i + 1 + len(value) :]
            fixed = " ".join(
                [ctx.command_path, *forwarded_options(ctx), word, *value, program, *rest]
            )
            raise click.UsageError(
                f"{name} after the program is an option of `{ctx.command_path}`: options go "
                f"before the program (what follows it is the program's own arguments).\n"
                f"  {fixed}\n"
                f"To give the program an argument {name}, write `--` before it: "
                f"{ctx.command_path} {program} -- {word}",
                ctx=ctx,
            )
    return args


def _is_flag(ctx: click.Context, name: str) -> bool:
    for p in ctx.command.params:
        if isinstance(p, click.Option) and name in p.opts:
            return bool(p.is_flag)
    return False


def forwarded_options(ctx: click.Context, drop: tuple[str, ...] = ()) -> list[str]:
    """The options given to this command, as a command line for a child ``tilewright run``."""
    out: list[str] = []
    for p in ctx.command.params:
        if not isinstance(p, click.Option) or p.name in drop or p.name == "isolate_channel":
            continue
        if ctx.get_parameter_source(p.name) != click.core.ParameterSource.COMMANDLINE:
            continue
        value = ctx.params[p.name]
        if p.is_flag:
            if value:
                out.append(p.opts[0])
        else:
            out += [p.opts[0], str(value)]
    return out
