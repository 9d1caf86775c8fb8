"""Launches another process runs: the device layer's side of ``tilewright.distributed``.

A chip whose launches a worker process runs has ``device.remote`` set (a
:class:`RemoteChip`, made by the worker pool).  ``CommandQueue.enqueue_program`` asks it
first: :meth:`RemoteChip.submit` ships the program to the chip's worker and returns a
:class:`RemoteLaunch` at once, or None when the program must run here (the reason is
counted, and reported at the end of the run: never a silent choice).

Nothing reads device memory while a chip's worker may be writing it: a submitted launch
is waited for before its caller goes on, except inside :func:`launch_batch` -- the SPMD
loop of one mesh call (``ttnn/spmd.py``), whose per-chip launches are independent -- which
waits for all of them, in chip order, before it ends.  So the chips of one mesh call run
at the same time in their workers, and everything else keeps the one-process order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from tilewright.device.engine import LaunchResult, RawStats, RunStats, stats_from_raw

# A Device and a Program, not imported: device.py names this module's RemoteChip, and the
# import graph stays acyclic (tests/test_layers.py).
Device = Any
Program = Any

__all__ = ["MESH_HOOKS", "RemoteChip", "RemoteLaunch", "batched", "launch_batch", "wait_for"]


class RemoteChip(Protocol):
    """What a worker pool attaches to a device it runs launches for."""

    def submit(self, device: Device, program: Program, place_word: str) -> RemoteLaunch | None:
        """Ship the launch of ``program`` to the chip's worker (None: run it here)."""

    def note_local(self, reason: str) -> None:
        """A launch involving this chip runs in the driver, for ``reason``."""

    def release(self, device: Device) -> None:
        """The driver closes the chip: the worker lets its replica go."""

    def run_workload(
        self, mesh: Any, workload: Any, items: list, place_word: str
    ) -> LaunchResult | None:
        """Run ``workload`` (``items``: (mesh coordinate, program) in chip order) in the
        workers holding the mesh's chips, finished when it returns; None: it runs in the
        driver (the reason counted)."""


MESH_HOOKS: list[Callable[[object], None]] = []
"""Called with every root mesh device as it opens (the worker pool places its chips)."""


class RemoteLaunch(LaunchResult):
    """A launch a worker runs: its statistics and makespan when it has finished.

    ``wait()`` returns once the worker has finished the launch and raises what the launch
    raised there (the error object itself, notes included).  Reading ``makespan`` or
    ``stats`` waits too.
    """

    __slots__ = ("device", "_fetch", "_outcome")

    def __init__(
        self, device: Device, fetch: Callable[[], tuple[RawStats, int]], dispatch_ns: int
    ) -> None:
        self._stats = []
        self._pending = None
        self._raw = None
        self.dispatch_ns = dispatch_ns
        self.recorded = False
        self.device = device
        self._fetch: Callable[[], tuple[RawStats, int]] | None = fetch
        self._outcome: tuple[RawStats, int] | BaseException | None = None

    def wait(self) -> None:
        if self._fetch is not None:
            fetch, self._fetch = self._fetch, None
            try:
                self._outcome = fetch()
            except BaseException as exc:  # kept: every later wait raises it again
                self._outcome = exc
        outcome = self._outcome
        if isinstance(outcome, BaseException):
            raise outcome
        assert outcome is not None

    @property
    def stats(self) -> list[RunStats]:
        self.wait()
        if self._raw is None:  # built from the worker's raw form when first read
            outcome = self._outcome
            assert isinstance(outcome, tuple)
            self._raw = outcome[0]
            self._stats = stats_from_raw(outcome[0])
        return self._stats

    @property
    def makespan(self) -> int:  # type: ignore[override]
        self.wait()
        outcome = self._outcome
        assert isinstance(outcome, tuple)
        return outcome[1]


_BATCH: list[list[RemoteLaunch]] = []  # the open launch batches, innermost last


@contextmanager
def launch_batch() -> Iterator[list[RemoteLaunch]]:
    """Let the remote launches submitted inside run together; the caller waits for them
    (:func:`wait_for`) before the block ends.  Outside a batch a launch is waited for at
    once.  An error leaving the block waits for every launch still running first."""
    batch: list[RemoteLaunch] = []
    _BATCH.append(batch)
    try:
        yield batch
    finally:
        _BATCH.remove(batch)
        for launch in batch:  # nothing of the call may still run when it returns
            try:
                launch.wait()
            except BaseException:  # noqa: S110 - reported by wait_for, or by the error leaving
                pass


def batched(launch: RemoteLaunch) -> RemoteLaunch:
    """``launch``, added to the innermost open batch, or waited for now if none is open."""
    if _BATCH:
        _BATCH[-1].append(launch)
    else:
        launch.wait()
    return launch


def wait_for(batch: list[RemoteLaunch], on_error: Callable[[BaseException, Device], None]) -> None:
    """Wait for every launch of ``batch``, then raise the first error in submission order
    (``on_error`` notes it first, e.g. with its chip), as a one-process run would have."""
    first: BaseException | None = None
    for launch in batch:
        try:
            launch.wait()
        except BaseException as exc:
            if first is None:
                on_error(exc, launch.device)
                first = exc
    batch.clear()
    if first is not None:
        raise first
