"""``tilewright setup-ttlang``: make the real TT-Lang compiler's Python 3.12 environment.

What it installs and where: :mod:`tilewright.cli.ttlang_env`.  Run once per machine;
again after an upgrade changes what the environment holds (it says when).
"""

from __future__ import annotations

from pathlib import Path

import click

from tilewright.cli import ttlang_env
from tilewright.errors import TilewrightError

__all__ = ["setup_ttlang"]


@click.command("setup-ttlang")
@click.option(
    "--env",
    "env_path",
    type=click.Path(file_okay=False),
    default=None,
    help="Where to make it (default $TILEWRIGHT_TTLANG_ENV or ~/.cache/tilewright/ttlang-py312).",
)
@click.option(
    "--python",
    "python",
    default=None,
    help="The Python 3.12 interpreter to use (default: $TILEWRIGHT_PYTHON312, python3.12, pyenv).",
)
@click.option(
    "--check", "only_check", is_flag=True, help="Only say whether it is ready (exit 1 if not)."
)
def setup_ttlang(env_path, python, only_check):
    """Make the environment the real TT-Lang compiler (tt-lang) runs in."""
    path = Path(env_path).expanduser() if env_path else None
    if only_check:
        env = ttlang_env.find(path)
        where = path or ttlang_env.default_path()
        if env is None:
            raise click.ClickException(f"no current tt-lang environment at {where}")
        click.echo(f"tt-lang environment ready: {env.path}")
        return
    try:
        ttlang_env.setup(path, python=python, echo=lambda line: click.echo(line, err=True))
    except TilewrightError as err:
        hint = f"\nhint: {err.hint}" if err.hint else ""
        raise click.ClickException(f"{err.message}{hint}") from None
