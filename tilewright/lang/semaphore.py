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
from tilewright.device.perf import costs
from tilewright.device.perf import kernel as noc_time
from tilewright.errors import KernelError, user_location
from tilewright.lang.dfb import current_kernel
from tilewright.lang.node import current_setup
from tilewright.lang.rules import sync as rules

if TYPE_CHECKING:
    from tilewright.device.device import Core
    from tilewright.device.engine import KernelRun

__all__ = ["Semaphore", "UnicastRemoteSemaphore", "MulticastRemoteSemaphore"]

_U32 = 1 << 32
_check_value = rules.check_semaphore_value


def _dm_run(what: str) -> KernelRun:
    run = current_kernel(what)
    rules.check_semaphore_kernel(what, run.name, run.kernel_context().kernel.kind == "compute")
    return run


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
        return UnicastRemoteSemaphore(
            self, rules.remote_node(node, self.grid, "Semaphore.get_remote")
        )

    def get_remote_multicast(  # noqa: A002 - range is the spec's name
        self, range: object = None
    ) -> MulticastRemoteSemaphore:
        """The semaphore on every node of ``range`` (default: the whole grid) but the sender."""
        lo, hi = rules.remote_range(range, self.grid, "Semaphore.get_remote_multicast")
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
        cores, local = rules.multicast_set_targets(
            self.sem.device, run.core, self.lo, self.hi, self.sem.bound_address()
        )
        landed = noc_time.multicast(run, run.core, cores, 4, run.kernel_context().noc, False)

        def deliver() -> None:
            for core in cores:
                core.l1_words(local)[0] = v
                core.notify_write(local, local + 4)

        noc_time.wake_at(run, landed, deliver)

    def inc(self, value: int = 1) -> None:
        """Not a multicast operation (spec §Semaphore): an error naming the rule."""
        raise rules.multicast_inc_violation()

    def __repr__(self) -> str:
        return f"<MulticastRemoteSemaphore nodes {self.lo}..{self.hi}>"
