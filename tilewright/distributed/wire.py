"""A launch as data: what crosses from the driver to the worker that runs a chip.

A program crosses in two parts:

* its *structure* -- kernels (native kernels are source text, see ``NativeKernel.
  __getstate__``), their cores and configurations, circular buffers, semaphore ids --
  pickled once per distinct structure: the worker keeps the program it unpickled under
  the blob's digest, so a warm call (same structure, new tensor addresses) reuses the
  worker's program object and with it the worker's launch plan;
* its *arguments* -- every kernel's runtime args and the semaphores' initial values,
  sent with every launch.

An L1 buffer a circular buffer is allocated over (``set_globally_allocated_address``)
crosses as a :class:`BufferRef`: what the launch set-up reads of it (type, address,
bytes per core, the cores holding its shards).  Its bytes are in the shared L1 already.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from dataclasses import dataclass, replace

from tilewright.device.buffer import Buffer
from tilewright.device.coords import CoreCoord
from tilewright.device.program import Program

__all__ = [
    "BufferRef",
    "LaunchArgs",
    "ineligible",
    "waits_of",
    "structure_of",
    "args_of",
    "load",
    "apply",
]


@dataclass(frozen=True, slots=True)
class BufferType:
    """The buffer type's name, which is all the set-up asks of it."""

    name: str


@dataclass(frozen=True, slots=True)
class BufferRef:
    """What a launch's set-up reads of an L1 buffer a circular buffer aliases."""

    buffer_type: BufferType
    address: int
    size_per_bank: int
    sharded: bool
    shard_core_indices: tuple[int, ...]

    @property
    def shard(self) -> object | None:
        return True if self.sharded else None


class BoundBufferRef:
    """A :class:`BufferRef` on a worker's replica chip (its shard cores are the replica's)."""

    __slots__ = ("buffer_type", "address", "size_per_bank", "shard", "shard_cores")

    def __init__(self, ref: BufferRef, device) -> None:
        self.buffer_type = ref.buffer_type
        self.address = ref.address
        self.size_per_bank = ref.size_per_bank
        self.shard = ref.shard
        self.shard_cores = [device.cores[i] for i in ref.shard_core_indices]


@dataclass(frozen=True, slots=True)
class LaunchArgs:
    """The per-launch values of a program: runtime args and semaphore initial values."""

    runtime_args: tuple[tuple[tuple[tuple[int, int], tuple[int, ...]], ...], ...]
    common_runtime_args: tuple[tuple[int, ...], ...]
    semaphore_values: tuple[int, ...]


def ineligible(program: Program) -> str | None:
    """Why ``program`` cannot run in a worker (None: it can), in a few words."""
    for k in program.kernels:
        entry = k.entry
        if not getattr(entry, "native_kernel", False):
            return "program with Python kernels"
        if getattr(entry, "contracts", None):
            return "program with external C++ calls"
    return None


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj):  # noqa: ANN001 - pickle's hook
        if isinstance(obj, Buffer):
            cores = tuple(c.index for c in obj.shard_cores) if obj.shard is not None else ()
            return BufferRef(
                BufferType(obj.buffer_type.name),
                obj.address,
                obj.size_per_bank,
                obj.shard is not None,
                cores,
            )
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, device) -> None:
        super().__init__(io.BytesIO(data))
        self.device = device

    def persistent_load(self, pid):  # noqa: ANN001 - pickle's hook
        if isinstance(pid, BufferRef):
            return BoundBufferRef(pid, self.device)
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


def load(blob: bytes, device) -> tuple[Program, dict[int, tuple]]:
    """A structure blob as a program of the worker's replica ``device``, and its waits."""
    return _Unpickler(blob, device).load()


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
