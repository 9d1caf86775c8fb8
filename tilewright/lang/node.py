"""Operation setup: what the operation body declares for one node.

Calling an operation evaluates its body once per node of the grid, inside a
``NodeSetup``: ``ttl.node()`` gives that node, DFB factories create the node's
DFBs (bound to its core, physical indices in declaration order), kernel
decorators register the node's kernel functions (closures over the node's DFBs),
and pipes, pipe nets and semaphores are recorded.  The program builder checks
that every node declared the same things (setup is deterministic) and turns the
declarations into a device ``Program``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from tilewright.device.engine import ACTIVE
from tilewright.errors import InterfaceError, SourceLoc, user_location

if TYPE_CHECKING:
    from tilewright.device.device import Core, Device
    from tilewright.device.engine import KernelRun
    from tilewright.lang.dfb import DataflowBuffer
    from tilewright.lang.extern.plan import ExternPlan

__all__ = [
    "DeclaredSemaphore",
    "KernelDecl",
    "NodeSetup",
    "OperationInfo",
    "SETUP_STACK",
    "current_setup",
]


class OperationInfo(Protocol):
    """What the language needs of the operation being set up (the compiler's ``Operation``)."""

    @property
    def name(self) -> str: ...

    @property
    def extern_plan(self) -> ExternPlan | None:
        """The validated external calls the kernels may evaluate (None: the body makes none)."""

    def declared_name(self, file: str, line: int) -> str | None:
        """The variable a simple assignment at ``file:line`` of the body binds (names DFBs)."""


class DeclaredSemaphore(Protocol):
    """A ``ttl.Semaphore`` as the program builder sees it: an initial value to bind an id to,
    and where it was declared."""

    initial: int
    loc: SourceLoc | None

    def bind(self, sem_id: int, address: int) -> None: ...


@dataclass(slots=True)
class KernelDecl:
    """A kernel function declared by ``@ttl.compute()`` / ``@ttl.datamovement()``."""

    name: str
    kind: str  # "compute" | "data_movement"
    fn: Callable[[], object]
    selector: object
    loc: SourceLoc | None


@dataclass(slots=True)
class NodeSetup:
    """Declarations of one node's evaluation of the operation body."""

    op: OperationInfo
    node: tuple[int, int]
    grid: tuple[int, ...]
    device: Device
    core: Core
    dfbs: list[DataflowBuffer] = field(default_factory=list)
    kernels: list[KernelDecl] = field(default_factory=list)
    pipenets: list[object] = field(default_factory=list)  # ttl.PipeNet, in declaration order
    semaphores: list[DeclaredSemaphore] = field(default_factory=list)

    def describe_holdings(self, run: KernelRun) -> list[str]:
        """The blocks ``run`` holds on this node, with their states (for deadlock reports)."""
        out = []
        for dfb in self.dfbs:
            for block in dfb.held_blocks():
                if block.run is run:
                    out.append(f"holds {block.describe()} in state {block.state.name}")
        return out


class _SetupStack(threading.local):
    """The setups being evaluated, innermost last; one stack per thread (threads may run
    operations at once, each on its own device)."""

    def __init__(self) -> None:
        self.items: list[NodeSetup] = []

    def append(self, setup: NodeSetup) -> None:
        self.items.append(setup)

    def pop(self) -> NodeSetup:
        return self.items.pop()

    def __getitem__(self, index: int) -> NodeSetup:
        return self.items[index]

    def __len__(self) -> int:
        return len(self.items)


SETUP_STACK = _SetupStack()


def current_setup(what: str) -> NodeSetup:
    """The setup being evaluated; an error naming ``what`` outside an operation body."""
    if not SETUP_STACK:
        where = "inside a kernel" if ACTIVE.run is not None else "outside an operation"
        raise InterfaceError(
            f"{what} declares operation resources: call it in the body of an @ttl.operation "
            f"(its setup), not {where}",
            loc=user_location(),
        )
    return SETUP_STACK[-1]
