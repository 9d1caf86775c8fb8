"""A launch as data: what crosses from the driver to the worker that runs a chip.

A program crosses in two parts:

* its *structure* -- kernels (native kernels are source text, see ``NativeKernel.
  __getstate__``), their cores and configurations, circular buffers, semaphore ids --
  pickled once per distinct structure: the worker keeps the program it unpickled under
  the blob's digest, so a warm call (same structure, new tensor addresses) reuses the
  worker's program object and with it the worker's launch plan;
* its *arguments* -- every kernel's runtime args and the semaphores' initial values,
  sent with every launch.

Python kernels cross only when marked :func:`~tilewright.device.program.portable`
(self-contained closures: the collectives' page movers), pickled by value.  A buffer --
one a circular buffer is allocated over (``set_globally_allocated_address``), one a
portable kernel reads -- crosses as a :class:`BufferRef` and becomes a replica buffer of
the worker's chip: the same fields over the same bytes, which are in shared memory
already; a chip crosses as a :class:`DeviceRef`, the worker's replica of it.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from collections.abc import Callable
from dataclasses import dataclass, replace

from ray import cloudpickle

from tilewright.device.buffer import Buffer
from tilewright.device.coords import CoreCoord
from tilewright.device.device import Device
from tilewright.device.program import Program, is_portable

__all__ = [
    "BufferRef",
    "DeviceRef",
    "LaunchArgs",
    "ineligible",
    "waits_of",
    "structure_of",
    "args_of",
    "load",
    "apply",
]


@dataclass(frozen=True, slots=True)
class BufferRef:
    """A driver's buffer as it crosses: its fields but its device's objects (the device,
    the allocator, the shard cores as core indices).  The worker binds it to a replica
    :class:`Buffer` of its chip over the same bytes, which it never allocates or frees."""

    device_id: int
    fields: tuple[tuple[str, object], ...]
    shard_core_indices: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class DeviceRef:
    """A driver's chip as it crosses: the worker's replica of it."""

    device_id: int


_NOT_SENT = frozenset({"device", "_allocator", "_shard_cores"})


def _buffer_ref(buffer: Buffer) -> BufferRef:
    fields = tuple(sorted((k, v) for k, v in vars(buffer).items() if k not in _NOT_SENT))
    cores = tuple(c.index for c in buffer.shard_cores) if buffer.shard is not None else ()
    return BufferRef(buffer.device.device_id, fields, cores)


def _bind_buffer(ref: BufferRef, device) -> Buffer:
    replica = object.__new__(Buffer)
    vars(replica).update(ref.fields)
    replica.device = device
    replica._allocator = None  # the driver allocates and frees; a replica only reads and writes
    if ref.shard_core_indices:
        replica._shard_cores = [device.cores[i] for i in ref.shard_core_indices]
    return replica


@dataclass(frozen=True, slots=True)
class LaunchArgs:
    """The per-launch values of a program: runtime args and semaphore initial values."""

    runtime_args: tuple[tuple[tuple[tuple[int, int], tuple[int, ...]], ...], ...]
    common_runtime_args: tuple[tuple[int, ...], ...]
    semaphore_values: tuple[int, ...]


def ineligible(program: Program, *, in_workload: bool = False) -> str | None:
    """Why ``program`` cannot run in a worker (None: it can), in a few words.

    ``portable`` Python kernels run in workers only as part of a mesh workload: a launch
    of one chip alone may send fabric packets too, and only a split run exchanges them."""
    for k in program.kernels:
        entry = k.entry
        if getattr(entry, "native_kernel", False):
            continue
        if not is_portable(entry):
            return "program with Python kernels"
        if not in_workload:
            return "program with Python kernels, launched alone (not in a mesh workload)"
        if getattr(entry, "contracts", None):
            return "program with external C++ calls"
    return None


class _Pickler(cloudpickle.CloudPickler):
    """Pickles a program: Python kernels (``portable`` ones: closures) by value, the
    driver's buffers and chips by reference (:class:`BufferRef`, :class:`DeviceRef`)."""

    def persistent_id(self, obj):  # noqa: ANN001 - pickle's hook
        if isinstance(obj, Buffer):
            return _buffer_ref(obj)
        if isinstance(obj, Device):
            return DeviceRef(obj.device_id)
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, chip: Callable[[int], Device]) -> None:
        super().__init__(io.BytesIO(data))
        self.chip = chip
        self.bound: dict[BufferRef, Buffer] = {}

    def persistent_load(self, pid):  # noqa: ANN001 - pickle's hook
        if isinstance(pid, BufferRef):
            buffer = self.bound.get(pid)
            if buffer is None:
                buffer = self.bound[pid] = _bind_buffer(pid, self.chip(pid.device_id))
            return buffer
        if isinstance(pid, DeviceRef):
            return self.chip(pid.device_id)
        raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")


def waits_of(launch) -> dict[int, tuple]:
    """Per core index, the DFBs of the running operation's node setups as their waits are
    described (``lang.dfb.DfbWaits``); ``launch`` is ``lang.state.CURRENT`` (None: no
    operation, e.g. a ttnn ``generic_op``)."""
    if launch is None:
        return {}
    return {i: tuple(d.waits_as() for d in s.dfbs) for i, s in launch.setups.items()}


def structure_of(program: Program, waits: dict[int, tuple] | None = None) -> tuple[bytes, str]:
    """The program without its per-launch values, with the DFB waits of its operation's
    nodes (:func:`waits_of`), pickled; and the blob's digest."""
    plain = Program(program.name)
    plain.kernels = [replace(k, runtime_args={}, common_runtime_args=[]) for k in program.kernels]
    plain.circular_buffers = list(program.circular_buffers)
    plain.semaphores = [replace(s, initial_value=0) for s in program.semaphores]
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump((plain, waits or {}))
    blob = out.getvalue()
    return blob, hashlib.blake2b(blob, digest_size=16).hexdigest()


def args_of(program: Program) -> LaunchArgs:
    return LaunchArgs(
        tuple(
            tuple(((c.x, c.y), tuple(v)) for c, v in k.runtime_args.items())
            for k in program.kernels
        ),
        tuple(tuple(k.common_runtime_args) for k in program.kernels),
        tuple(s.initial_value for s in program.semaphores),
    )


def load(blob: bytes, chip: Callable[[int], Device]) -> tuple[Program, dict[int, tuple]]:
    """A structure blob as a program of the worker's replicas (``chip``: device id to
    replica), and its waits."""
    return _Unpickler(blob, chip).load()


def apply(program: Program, args: LaunchArgs) -> None:
    """Write one launch's values into the worker's program (in place: its launch plan
    stays valid, as a warm call's rebind keeps the driver's)."""
    for k, rta, common in zip(
        program.kernels, args.runtime_args, args.common_runtime_args, strict=True
    ):
        k.runtime_args = {CoreCoord(x, y): list(v) for (x, y), v in rta}
        k.common_runtime_args = list(common)
    for s, value in zip(program.semaphores, args.semaphore_values, strict=True):
        s.initial_value = value
