"""``tilewright emit prog.py -o DIR``: run a program and write the C++ of its compiled operations.

The program runs as under ``tilewright run --engine native`` (every operation is
compiled; one that does not compile is the error, with its line).  Each distinct
compiled operation call is written to ``DIR/<operation>/`` (``DIR/<operation>-2/`` ...
for further distinct calls): one ``.cpp`` per kernel, ``program.json`` (the host
description) and ``run.py`` (a ttnn ``generic_op`` program that reruns it); see
``tilewright.compiler.backend.host``.
"""

from __future__ import annotations

import os
import sys

import click

from tilewright.cli.runner import run_program
from tilewright.device import session
from tilewright.lazy import lazy_import

# The compiler loads when the command runs, not when the command line starts.
backend = lazy_import("tilewright.compiler.backend.engine")
build = lazy_import("tilewright.compiler.backend.build")
host = lazy_import("tilewright.compiler.backend.host")

__all__ = ["emit"]


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(file_okay=False),
    default=None,
    help="Directory to write the C++ and host descriptions into (before or after PROGRAM).",
)
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def emit(output: str | None, program: str, args: tuple[str, ...]) -> None:
    """Run PROGRAM compiled and write each operation's tt-metal C++ and host program to OUTPUT."""
    output, rest = _output_after_program(output, list(args))
    session.reset(engine="native")
    seen: dict[tuple[str, ...], str] = {}
    names: dict[str, int] = {}
    pending: list[tuple[str, str, object]] = []  # (operation, folder, compiled) until launched

    def observe(record, compiled, built) -> None:
        key = tuple(build.ir_key(k) for k in compiled.kernels)
        if key in seen:
            return
        count = names.get(record.name, 0) + 1
        names[record.name] = count
        folder = record.name if count == 1 else f"{record.name}-{count}"
        seen[key] = folder
        host.write_operation(os.path.join(output, folder), record, compiled, built)
        pending.append((record.name, folder, compiled))

    def launched(name: str) -> None:  # the results the emitted run.py checks
        if pending and pending[0][0] == name:
            _, folder, compiled = pending.pop(0)
            host.write_results(os.path.join(output, folder), compiled)

    backend.COMPILE_OBSERVERS.append(observe)
    session.LAUNCH_OBSERVERS.append(launched)
    try:
        status = run_program(program, rest)
    finally:
        backend.COMPILE_OBSERVERS.remove(observe)
        session.LAUNCH_OBSERVERS.remove(launched)
    sys.stdout.flush()
    for folder in seen.values():
        click.echo(f"emitted {os.path.join(output, folder)}", err=True)
    sys.exit(status)


def _output_after_program(output: str | None, args: list[str]) -> tuple[str, list[str]]:
    """``tilewright emit prog.py -o DIR`` as well as ``emit -o DIR prog.py``: the first ``-o`` /
    ``--output`` among the arguments before ``--`` is emit's; the rest are the program's."""
    end = args.index("--") if "--" in args else len(args)
    for i, word in enumerate(args[:end]):
        value: str | None = None
        if word in ("-o", "--output") and i + 1 < end:
            value, taken = args[i + 1], 2
        elif word.startswith("--output="):
            value, taken = word.split("=", 1)[1], 1
        if value is not None and output is None:
            return value, args[:i] + args[i + taken :]
    if output is None:
        raise click.UsageError("Missing option '-o' / '--output' (the directory to write into).")
    return output, args
