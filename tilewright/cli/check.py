"""``tilewright check prog.py [args]``: would the real TT-Lang compiler accept this program?

The program runs with the real compiler (``tt-lang``, in its Python 3.12 environment) on
Tilewright's device, so every operation it calls is compiled by the hardware compiler and
its C++ runs here.  The verdict names what the compiler rejected -- its own message, at the
user's line (``cli/ttlang_run``) -- or says that it accepted every operation the program
called.  The program's own output (and the compiler's, which prints every kernel it
writes) is hidden unless ``--show-output``.

Exit status: 0 accepted and ran to the end; 1 rejected, or the run failed (said which).
"""

from __future__ import annotations

import os
import subprocess
import sys

import click

from tilewright.cli import ttlang_env, ttlang_run
from tilewright.cli.run import _load_system_desc, forwarded_options, program_args
from tilewright.device import session
from tilewright.errors import TilewrightError
from tilewright.target.presets import board_names

__all__ = ["check"]


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option("--board", type=click.Choice(board_names()), default=None, help="Board preset.")
@click.option(
    "--system-desc",
    "system_desc",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="System descriptor the program's devices are built from.",
)
@click.option("--num-devices", "num_devices", type=click.IntRange(min=1), default=None, metavar="N")
@click.option("--show-output", is_flag=True, help="Show the program's and the compiler's output.")
@click.pass_context
def check(ctx, program, args, board, system_desc, num_devices, show_output):
    """Run PROGRAM with the real TT-Lang compiler and report what it rejects."""
    args = program_args(ctx, list(args))
    if not ttlang_env.in_real_compiler():
        try:
            cmd, variables = ttlang_env.command(
                ttlang_env.require(), ["check", *forwarded_options(ctx), program, *args]
            )
        except TilewrightError as err:
            raise click.ClickException(f"{err.message}\nhint: {err.hint}") from None
        out = None if show_output else subprocess.DEVNULL
        sys.exit(subprocess.run(cmd, env=variables, stdout=out).returncode)
    sys.exit(_check_here(program, args, board, system_desc, num_devices, show_output))


def _check_here(program, args, board, system_desc, num_devices, show_output) -> int:
    """The check inside the environment: run, then say what the compiler made of it."""
    descriptor = _load_system_desc(system_desc) if system_desc else None
    session.reset(board=board, system_desc=descriptor, num_devices=num_devices)
    devnull = None
    saved = sys.stdout
    if not show_output:
        devnull = open(os.devnull, "w")  # noqa: SIM115 - closed below
        sys.stdout = devnull
    try:
        status, rejected = ttlang_run.run_with_real_compiler(program, args)
    finally:
        sys.stdout = saved
        if devnull is not None:
            devnull.close()
    version = ttlang_run.compiler_version()
    if rejected is not None:
        click.echo(f"check: {program}: {version} rejects it (above)", err=True)
    elif status == 0:
        click.echo(
            f"check: {program}: {version} accepts every operation the program called; "
            "the program ran to its end",
            err=True,
        )
    else:
        click.echo(
            f"check: {program}: {version} accepted every operation called before the run "
            f"failed (exit status {status}, above)",
            err=True,
        )
    return status
