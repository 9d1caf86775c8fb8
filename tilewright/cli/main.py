"""Entry point of the ``tilewright`` command: one click group, subcommands per module."""

from __future__ import annotations

import click

from tilewright import __version__
from tilewright.cli import check, emit, explain, run, runner, setup_ttlang, sysdesc


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tilewright")
def cli() -> None:
    """Tilewright: write, run, check and measure Tenstorrent kernels without hardware."""


def _register() -> None:
    cli.add_command(sysdesc.sysdesc)
    cli.add_command(run.run)
    cli.add_command(check.check)
    cli.add_command(setup_ttlang.setup_ttlang)
    cli.add_command(explain.explain)
    cli.add_command(emit.emit)


_register()


def main() -> None:
    """The ``tilewright`` command as the process's own entry (console script, ``-m``)."""
    runner.PROCESS_ENTRY = True
    cli(prog_name="tilewright")


if __name__ == "__main__":
    main()
