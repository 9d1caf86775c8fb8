"""The spec's type aliases for sizes, shapes, indexes, node coordinates and node ranges.

TT-Lang's spec (§Grid, §Node function, §Pipe) names the integer kinds its functions take
and return as ``Annotated`` ints whose metadata runtime type checkers can enforce
(``ttl.Size = Annotated[int, Gt(0)]``), and tt-lang-sim 1.1.6 exports them: programs
annotate with ``ttl.Shape``, ``ttl.NodeCoord``, ``ttl.NodeRange`` and ``ttl.Pipe[ttl.DstT]``.
The metadata classes are the ``annotated-types`` package's spelling (``Gt(0)``, ``Ge(0)``),
defined here so that the language needs no extra dependency.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, TypeVar

__all__ = [
    "Gt",
    "Ge",
    "PositiveInt",
    "NaturalInt",
    "Size",
    "Shape",
    "Index",
    "Count",
    "NodeCoord",
    "NodeRange",
    "DstT",
]


@dataclass(frozen=True, slots=True)
class Gt:
    """``Annotated`` metadata: the value is greater than ``gt``."""

    gt: int


@dataclass(frozen=True, slots=True)
class Ge:
    """``Annotated`` metadata: the value is at least ``ge``."""

    ge: int


PositiveInt = Annotated[int, Gt(0)]
"""A positive integer."""
NaturalInt = Annotated[int, Ge(0)]
"""A non-negative integer."""
Size = PositiveInt
"""A size (``ttl.grid_size(dims=1)``, a DFB's ``block_count``)."""
Shape = Size | tuple[Size, ...]
"""A shape: a ``Size`` in 1-D, else a tuple of them (``ttl.grid_size(dims=2)``, a DFB's shape)."""
Index = NaturalInt
"""An index (non-negative)."""
Count = NaturalInt
"""A count."""
NodeCoord = Index | tuple[Index, ...]
"""Node coordinates: an ``Index`` in 1-D, else a tuple of them (``ttl.node(dims=2)``)."""
NodeRange = tuple[Index | slice, ...]
"""A node range: per dimension an index or a slice (a multicast pipe's destinations)."""
DstT = TypeVar("DstT", NodeCoord, NodeRange)
"""A pipe's destination type, ``ttl.NodeCoord`` (unicast) or ``ttl.NodeRange`` (multicast):
``ttl.Pipe[DstT]``, ``ttl.PipeNet[DstT]``."""
