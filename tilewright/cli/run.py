"""``tilewright run prog.py [args]``: run a TT-Lang program on the virtual device."""

from __future__ import annotations

import sys

import click

from tilewright.cli.runner import run_program
from tilewright.device import session

__all__ = ["run"]


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
    default=None,
    help="Board preset the program's ttnn.open_device uses (n150, n300, n300-llmbox, p150).",
)
@click.option(
    "--system-desc",
    "system_desc",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="System descriptor (.ttsys, .mlir or .json) the program's devices are built from.",
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
def run(program, args, trace_path, stats, board, system_desc, isolate, engine, isolate_channel):
    """Run PROGRAM (a Python file using `import ttl` / `import ttnn`) with ARGS."""
    if isolate:
        from tilewright.native.isolate import run_isolated

        forwarded = [
            *(["--trace", trace_path] if trace_path else []),
            *(["--stats"] if stats else []),
            *(["--board", board] if board else []),
            *(["--system-desc", system_desc] if system_desc else []),
            "--engine",
            engine,
        ]
        sys.exit(run_isolated(program, list(args), forwarded))
    if isolate_channel:
        from tilewright.native.isolate import attach_child

        attach_child(isolate_channel)
    session.reset(
        trace=trace_path is not None,
        stats=stats,
        board=board,
        system_desc=system_desc,
        engine=engine,
    )
    opts = session.OPTIONS
    status = run_program(program, list(args))
    if trace_path and opts.tracer is not None:
        opts.tracer.write(trace_path)
        click.echo(f"trace: {trace_path}", err=True)
    if stats:
        click.echo(session.format_stats(), err=True)
    sys.exit(status)
