"""``ttl.Semaphore``: per-node 32-bit semaphores with tt-metal semantics (spec §Semaphore).

A semaphore is declared in the operation body (its setup); every node of the
grid has its own 32-bit value in L1 (a program semaphore: same id and address on
every node, initialised at launch).  Data-movement kernels ``set`` it, wait for a
value (``wait_eq``, ``wait_ge``), and change other nodes' values through
``get_remote(node)`` (``set``, ``inc`` — a NoC atomic increment) or
``get_remote_multicast(range=None)`` (``set`` on every node of the range).  As
tt-metal's ``noc_semaphore_set_multicast``, a multicast reaches every node of the
range *except the sender*; a range holding only the sender is an error.  Using the
value-changing or waiting calls on a compute kernel is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tilewright.device.kernel_api.dataflow import wait_word
from tilewright.device.noc import noc_multicast_addr
from tilewright.device.perf import costs
from tilewright.device.perf import kernel as noc_time
from tilewright.device.transfer import multicast_targets
from tilewright.errors import InterfaceError, KernelError, NocError, user_location
from tilewright.lang.dfb import current_kernel
from tilewright.lang.node import current_setup

if TYPE_CHECKING:
    from tilewright.device.device import Core
    from tilewright.device.engine import KernelRun

__all__ = ["Semaphore", "UnicastRemoteSemaphore", "MulticastRemoteSemaphore"]

_U32 = 1 << 32


def _check_value(v, what: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < _U32:
        raise KernelError(f"{what}: semaphore values are 32-bit unsigned ints, got {v!r}")
    return v


def _dm_run(what: str) -> KernelRun:
    run = current_kernel(what)
    if run.kernel_context().kernel.kind == "compute":
        raise KernelError(
            f"{what} changes or waits on a semaphore, which runs on data-movement kernels "
            f"(spec §Semaphore); '{run.name}' is a compute kernel"
        )
    return run


def _node_xy(node, grid, what: str) -> tuple[int, int]:
    if isinstance(node, int) and not isinstance(node, bool):
        xy = (node, 0)
    elif (
        isinstance(node, (tuple, list))
        and 1 <= len(node) <= 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in node)
    ):
        xy = (node[0], node[1] if len(node) > 1 else 0)
    else:
        raise InterfaceError(
            f"{what}: expected a node coordinate, got {node!r}", loc=user_location()
        )
    if not (0 <= xy[0] < grid[0] and 0 <= xy[1] < grid[1]):
        raise InterfaceError(
            f"{what}: node {xy} is outside the {grid[0]}x{grid[1]} grid", loc=user_location()
        )
    return xy


def _range_xy(rng, grid, what: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """((x0, y0), (x1, y1)) inclusive corners of a node range given with ints and slices."""
    if rng is None:
        return (0, 0), (grid[0] - 1, grid[1] - 1)
    if not isinstance(rng, (tuple, list)):
        rng = (rng,)
    lo, hi = [], []
    for i, v in enumerate(rng):
        if isinstance(v, slice):
            if not (
                isinstance(v.start, int) and isinstance(v.stop, int) and v.start < v.stop
            ) or v.step not in (None, 1):
                raise InterfaceError(
                    f"{what}: slice {i} needs int start < stop and step 1", loc=user_location()
                )
            lo.append(v.start)
            hi.append(v.stop - 1)
        elif isinstance(v, int) and not isinstance(v, bool):
            lo.append(v)
            hi.append(v)
        else:
            raise InterfaceError(
                f"{what}: range component {i} must be an int or a slice, got {v!r}",
                loc=user_location(),
            )
    if len(lo) == 1:
        lo.append(0)
        hi.append(0)
    if len(lo) != 2:
        raise InterfaceError(f"{what}: node ranges have 1 or 2 dimensions", loc=user_location())
    for a, b, n in ((lo[0], hi[0], grid[0]), (lo[1], hi[1], grid[1])):
        if not (0 <= a and b < n):
            raise InterfaceError(
                f"{what}: range {tuple(rng)} leaves the {grid[0]}x{grid[1]} grid",
                loc=user_location(),
            )
    return (lo[0], lo[1]), (hi[0], hi[1])


class Semaphore:
    """A per-node 32-bit semaphore, declared in the operation body."""

    def __init__(self, initial: int = 0) -> None:
        setup = current_setup("ttl.Semaphore")
        self.loc = user_location()  # where capacity errors point (too many semaphores)
        self.initial = _check_value(initial, "ttl.Semaphore(initial)")
        self.core = setup.core
        self.grid = setup.grid
        self.device = setup.device
        self.sem_id: int | None = None
        self.address: int | None = None
        setup.semaphores.append(self)

    def bind(self, sem_id: int, address: int) -> None:
        self.sem_id, self.address = sem_id, address

    def bound_address(self) -> int:
        """The L1 address, bound when the operation's program is built."""
        if self.address is None:
            raise KernelError(
                f"{self!r} has no L1 address yet: it is bound when the operation's program is built"
            )
        return self.address

    def _local(self, what: str) -> KernelRun:
        run = _dm_run(what)
        if run.core is not self.core:  # pragma: no cover - closures are per node
            raise KernelError(f"{what}: this semaphore belongs to node {self.core.logical}")
        run.clock += costs.SEMAPHORE_OP
        run.stats_ops += 1
        return run

    def set(self, value: int) -> None:
        """Set this node's value."""
        self._local("ttl.Semaphore.set")
        v = _check_value(value, "ttl.Semaphore.set")
        addr = self.bound_address()
        self.core.l1_words(addr)[0] = v
        self.core.notify_write(addr, addr + 4)

    def wait_eq(self, value: int) -> None:
        """Block until this node's value equals ``value``."""
        self._local("ttl.Semaphore.wait_eq")
        wait_word(
            self.core, self.bound_address(), "eq", _check_value(value, "ttl.Semaphore.wait_eq")
        )

    def wait_ge(self, value: int) -> None:
        """Block until this node's value is at least ``value``."""
        self._local("ttl.Semaphore.wait_ge")
        wait_word(
            self.core, self.bound_address(), "ge", _check_value(value, "ttl.Semaphore.wait_ge")
        )

    def value(self) -> int:
        """This node's current value (a debugging aid)."""
        return int(self.core.l1_words(self.bound_address())[0])

    def get_remote(self, node: int | Sequence[int]) -> UnicastRemoteSemaphore:
        """The same semaphore on another node (``set`` / ``inc`` over the NoC)."""
        return UnicastRemoteSemaphore(self, _node_xy(node, self.grid, "Semaphore.get_remote"))

    def get_remote_multicast(  # noqa: A002 - range is the spec's name
        self, range: object = None
    ) -> MulticastRemoteSemaphore:
        """The semaphore on every node of ``range`` (default: the whole grid) but the sender."""
        lo, hi = _range_xy(range, self.grid, "Semaphore.get_remote_multicast")
        return MulticastRemoteSemaphore(self, lo, hi)

    def __repr__(self) -> str:
        return f"<ttl.Semaphore id={self.sem_id} on node {self.core.logical}>"


class UnicastRemoteSemaphore:
    """A semaphore on one (possibly remote) node: ``set`` and ``inc``."""

    def __init__(self, sem: Semaphore, node: tuple[int, int]) -> None:
        self.sem = sem
        self.node = node

    def _target(self) -> Core:
        return self.sem.device.core(*self.node)

    def set(self, value: int) -> None:
        run = _dm_run("UnicastRemoteSemaphore.set")
        v = _check_value(value, "UnicastRemoteSemaphore.set")
        core = self._target()
        addr = self.sem.bound_address()
        core.l1_words(addr)[0] = v
        landed = noc_time.write(run, run.core, core, 4, run.kernel_context().noc)
        noc_time.wake_at(run, landed, lambda: core.notify_write(addr, addr + 4))

    def inc(self, value: int = 1) -> None:
        """Atomic 32-bit add (wrapping) on the target node's value."""
        run = _dm_run("UnicastRemoteSemaphore.inc")
        v = _check_value(value, "UnicastRemoteSemaphore.inc")
        core = self._target()
        addr = self.sem.bound_address()
        word = core.l1_words(addr)
        word[0] = (int(word[0]) + v) % _U32
        landed = noc_time.write(run, run.core, core, 4, run.kernel_context().noc)
        noc_time.wake_at(run, landed, lambda: core.notify_write(addr, addr + 4))

    def __repr__(self) -> str:
        return f"<UnicastRemoteSemaphore node {self.node}>"


class MulticastRemoteSemaphore:
    """A semaphore on every node of a rectangle but the sender: ``set`` only."""

    def __init__(self, sem: Semaphore, lo: tuple[int, int], hi: tuple[int, int]) -> None:
        self.sem = sem
        self.lo = lo
        self.hi = hi

    def set(self, value: int) -> None:
        run = _dm_run("MulticastRemoteSemaphore.set")
        v = _check_value(value, "MulticastRemoteSemaphore.set")
        device = self.sem.device
        a, b = device.core(*self.lo), device.core(*self.hi)
        mcast = noc_multicast_addr(a.noc_x, a.noc_y, b.noc_x, b.noc_y, self.sem.bound_address())
        try:
            cores, local = multicast_targets(
                device, run.core, mcast, False, "MulticastRemoteSemaphore.set"
            )
        except NocError as exc:
            raise KernelError(
                f"MulticastRemoteSemaphore.set on node {run.core.logical}: {exc.message} "
                "(a semaphore multicast reaches every node of the range except the sender)"
            ) from None
        landed = noc_time.multicast(run, run.core, cores, 4, run.kernel_context().noc, False)

        def deliver() -> None:
            for core in cores:
                core.l1_words(local)[0] = v
                core.notify_write(local, local + 4)

        noc_time.wake_at(run, landed, deliver)

    def __repr__(self) -> str:
        return f"<MulticastRemoteSemaphore nodes {self.lo}..{self.hi}>"
