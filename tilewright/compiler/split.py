"""Splitting unified operation bodies into logical kernels (reference B) -- in progress."""

from tilewright.errors import SplitError


def split_operation(op):
    raise SplitError(f"unified operation '{op.name}': splitting is not implemented yet",
                     loc=op.source.loc(op.source.tree))
