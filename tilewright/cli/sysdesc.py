"""``tilewright sysdesc`` (placeholder group; filled in by the target layer work)."""

import click


@click.group()
def sysdesc() -> None:
    """Read, write, check and convert tt-mlir system descriptors."""
