"""The worker process: replicas of its host group's chips, and the launches it runs on them.

A replica is a :class:`~tilewright.device.device.Device` built from the same system
descriptor as the driver's chip, whose L1 and DRAM are the driver's (mapped through
``/proc/<driver pid>/fd``, ``device/memory.py``): a kernel's writes here are the driver's
tensors.  The replica has its own engine, circular-buffer and semaphore state and launch
plans; the driver keeps the allocators, so each launch brings where the driver's lowest
L1 buffer starts (the circular-buffer clash check reads it).

A worker has a replica of *every* chip of a mesh it serves (built when first used: a
fabric packet is checked against its destination at issue), all on one engine -- the
mesh's shared schedule -- but runs launches only on the chips it was given.

A *split run* is a mesh workload whose chips are in several workers (:class:`SplitRun`):
each worker runs its chips' share on a thread of its own, which waits at every
quiescent point of the schedule (``_BarrierMail``) until the driver has collected every
worker's packets and hands back the ones that land here (over the worker's barrier
channel, ``channel.py``, not through Ray: a barrier is the hot path).

Runs in a Ray actor (``pool.py``); plain Python otherwise, so the tests can also drive it
in-process.
"""

from __future__ import annotations

import contextlib
import io
import os
import queue
import resource
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from tilewright.device.device import Device
from tilewright.device.engine import Engine, EngineOptions, finished
from tilewright.device.fabric import Fabric, FabricMail, Packet, landing_order
from tilewright.device.launch import LAUNCH_CACHE, launch_program, prepare_launch, release_launch
from tilewright.device.memory import SharedMemoryRef
from tilewright.device.trace import Recorder
from tilewright.distributed import channel, wire
from tilewright.distributed.staging import PeerArenas, Staged, Staging
from tilewright.errors import DeadlockError, DeviceError, TilewrightError
from tilewright.lang import state
from tilewright.lang.state import OpLaunch

if TYPE_CHECKING:
    from tilewright.lang.node import NodeSetup

__all__ = ["ChipSpec", "ChipHost", "Outcome", "SplitRun", "GO", "STOP", "ABORT", "RUNNING"]

_PROGRAMS_PER_CHIP = 64  # as Device's launch plans: programs built per call do not pile up


@dataclass(frozen=True, slots=True)
class ChipSpec:
    """How a worker builds its replica of one of the driver's chips."""

    system_desc: object
    chip: int
    device_id: int
    l1_small_size: int
    options: EngineOptions
    memory: SharedMemoryRef
    place_prefix: str
    mesh: int = 0
    """Which of the driver's meshes the chip is part of (its chips share one engine here)."""
    fabric: Fabric | None = None


Outcome = tuple
"""("ok", raw stats, makespan, recorded, stdout) | ("error", exc, recorded, stdout) |
("missing",); recorded: the launch's trace (``trace.Recorder.take``), None unless traced."""


def _taken(recorder: Recorder | None):
    return None if recorder is None else recorder.take()


class _DriverL1:
    """The driver's L1 allocator as a launch's set-up sees it: where its lowest buffer starts."""

    __slots__ = ("lowest",)

    def __init__(self) -> None:
        self.lowest: int | None = None

    def lowest_allocated_address(self) -> int | None:
        return self.lowest


@dataclass(frozen=True, slots=True)
class _Waits:
    """A node setup as a compiled kernel's wait description reads it: its DFBs."""

    dfbs: tuple


class ChipHost:
    """One worker: replicas of the chips it was given, built on their first launch."""

    def __init__(self) -> None:
        self._specs: dict[int, ChipSpec] = {}
        self.busy = 0.0
        self._devices: dict[int, Device] = {}
        self._floors: dict[int, _DriverL1] = {}
        self._programs: dict[int, OrderedDict[str, tuple]] = {}
        self.owned: set[int] = set()
        self._meshes: dict[int, _ReplicaMesh] = {}
        self._split: SplitRun | None = None
        self._channel: channel.WorkerEnd | None = None
        self.staging: Staging | None = None  # made by the first split run
        self.peers = PeerArenas()

    def pid(self) -> int:
        return os.getpid()

    def add_chip(self, spec: ChipSpec, owned: bool = True) -> None:
        """Take a chip (its replica is built when first used); ``owned``: this worker runs
        its launches and lands its packets (else it only checks packets sent to it).  A
        chip of that id taken before (a mesh closed and opened again) is dropped first:
        its memory is gone."""
        self.drop_chip(spec.device_id)
        self._specs[spec.device_id] = spec
        if owned:
            self.owned.add(spec.device_id)

    def drop_chip(self, device_id: int) -> None:
        """Let a chip go (the driver closed it): unmap its memory, forget its programs."""
        self._specs.pop(device_id, None)
        self.owned.discard(device_id)
        self._floors.pop(device_id, None)
        self._programs.pop(device_id, None)
        device = self._devices.pop(device_id, None)
        if device is not None:
            device.close()
        in_use = {spec.mesh for spec in self._specs.values()}
        for key in [k for k in self._meshes if k not in in_use]:
            del self._meshes[key]

    def run(
        self,
        device_id: int,
        digest: str,
        blob: bytes | None,
        args: wire.LaunchArgs,
        l1_lowest: int | None,
        place_word: str,
        trace: bool = False,
    ) -> Outcome:
        """Launch a program on the replica of chip ``device_id``; ("missing",) when the
        structure ``digest`` names is not kept here and ``blob`` was not sent.  ``trace``:
        the launch is recorded, and what was goes back in the outcome (else None)."""
        device = self._device(device_id)
        program = self._program(device_id, digest, blob)
        if program is None:
            return ("missing",)
        loaded, launch = program
        wire.apply(loaded, args)
        self._floors[device_id].lowest = l1_lowest
        prev, state.CURRENT = state.CURRENT, launch  # what compiled kernels' waits read
        # Kernels' debug prints (DPRINT, TT-Lang print) go back with the outcome: the driver
        # prints them when it waits for the launch, in chip order, as one process would.
        out = io.StringIO()
        recorder = device.engine.tracer = Recorder() if trace else None
        try:
            with contextlib.redirect_stdout(out):
                result = launch_program(device, loaded, place_word=place_word, tracer=recorder)
            # The statistics go back raw (labels, counters, the run table's bytes) and are
            # built in the driver only if read there: building them here cost 10% of a call.
            return ("ok", result.raw_stats(), result.makespan, _taken(recorder), out.getvalue())
        except TilewrightError as exc:
            return ("error", exc, _taken(recorder), out.getvalue())
        finally:
            state.CURRENT = prev
            device.engine.tracer = None

    def _program(self, device_id: int, digest: str, blob: bytes | None) -> tuple | None:
        """The worker's program of structure ``digest`` on chip ``device_id`` (loaded from
        ``blob`` if not kept; None if neither)."""
        device = self._device(device_id)
        kept = self._programs.setdefault(device_id, OrderedDict())
        program = kept.get(digest)
        if program is None:
            if blob is None:
                return None
            loaded, waits = wire.load(blob, self._device)
            launch = OpLaunch(
                loaded.name,
                (),
                {
                    i: cast("NodeSetup", _Waits(tuple(w.on(device.cores[i]) for w in dfbs)))
                    for i, dfbs in waits.items()
                },
            )
            program = kept[digest] = (loaded, launch)
            if len(kept) > _PROGRAMS_PER_CHIP:
                kept.popitem(last=False)
        else:
            kept.move_to_end(digest)
        return program

    def run_many(self, jobs: list[tuple]) -> list[Outcome]:
        """:meth:`run` of each job, in order (one call for a batch's launches of this
        worker's chips)."""
        start = time.perf_counter()
        try:
            return [self.run(*job) for job in jobs]
        finally:
            self.busy += time.perf_counter() - start

    def usage(self) -> dict:
        """Seconds spent running launches, CPU seconds and peak RSS of this process."""
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return {
            "launch_plan_hits": LAUNCH_CACHE.hits,
            "launch_plan_misses": LAUNCH_CACHE.misses,
            "busy_seconds": self.busy,
            "cpu_seconds": ru.ru_utime + ru.ru_stime,
            "max_rss_mb": ru.ru_maxrss / 1024,
        }

    def _device(self, device_id: int) -> Device:
        device = self._devices.get(device_id)
        if device is None:
            spec = self._specs[device_id]
            device = Device(
                spec.system_desc,
                chip=spec.chip,
                device_id=spec.device_id,
                l1_small_size=spec.l1_small_size,
                options=spec.options,
                peer=spec.memory,
            )
            device.place_prefix = spec.place_prefix
            mesh = self._meshes.get(spec.mesh)
            if mesh is None:
                mesh = self._meshes[spec.mesh] = _ReplicaMesh(self, spec)
            device.engine = mesh.engine  # the chips of a mesh share one schedule, as there
            device.mesh = mesh
            floor = self._floors[device_id] = _DriverL1()
            device.l1_allocator = floor  # type: ignore[assignment]
            self._devices[spec.device_id] = device
        return device

    # -- split runs ------------------------------------------------------------------------

    def open_channel(self, authkey: bytes) -> str:
        """Listen for the driver's end of this worker's barrier channel; its address."""
        if self._channel is not None:
            self._channel.close()
        self._channel = channel.WorkerEnd(authkey)
        return self._channel.address

    def split_start(
        self, mesh_key: int, jobs: list[tuple], place_word: str, serial: int, trace: bool = False
    ) -> tuple:
        """Prepare this worker's share of split run ``serial`` of a workload on mesh
        ``mesh_key``: ``jobs`` is (device id, digest, blob, args, the driver's lowest L1
        address) per chip, in chip order (none: the share only lands packets).  Returns
        ("prepared",) or ("error", exc, None, stdout); the rest of the run goes over the
        barrier channel (:class:`SplitRun`).  ``trace``: the share is recorded."""
        if self._split is not None:  # pragma: no cover - the driver runs one at a time
            raise DeviceError("a split run is already running in this worker")
        if self._channel is None:  # pragma: no cover - the driver opens it first
            raise DeviceError("a split run without a barrier channel")
        programs = []
        for device_id, digest, blob, args, l1_lowest in jobs:
            program = self._program(device_id, digest, blob)
            if program is None:  # pragma: no cover - a split run always sends the blobs
                raise DeviceError(f"chip {device_id}: the program's structure was not sent")
            loaded, launch = program
            wire.apply(loaded, args)
            self._floors[device_id].lowest = l1_lowest
            programs.append((self._devices[device_id], loaded, launch))
        if self.staging is None:
            self.staging = Staging()
        if mesh_key not in self._meshes:  # a share without chips of its own
            spec = next(s for s in self._specs.values() if s.mesh == mesh_key)
            self._device(spec.device_id)
        mesh = self._meshes[mesh_key]
        split = self._split = SplitRun(
            self,
            mesh,
            self.staging,
            programs,
            place_word,
            self._channel.connection(),
            serial,
            trace,
        )
        event = split.start()
        if event[0] not in RUNNING:
            self._split = None
        return event

    def close(self) -> None:
        for device in self._devices.values():
            device.close()
        self._devices.clear()
        self._floors.clear()
        self._programs.clear()
        self.peers.close()
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        if self.staging is not None:
            self.staging.close()
            self.staging = None


GO, STOP, ABORT = "go", "stop", "abort"
"""Messages of a split run besides a batch of packets: start running, the schedule is
quiescent everywhere with no packet in flight (the end), give up (another share failed)."""
RUNNING = ("round", "prepared")  # the events of a share that has not ended


class _ReplicaMesh:
    """A worker's view of one of the driver's meshes: what the fabric kernel API asks of a
    chip's ``mesh`` (its fabric, its chips by id), and the engine its chips share."""

    def __init__(self, host: ChipHost, spec: ChipSpec) -> None:
        self.host = host
        self.fabric = spec.fabric
        self.engine = Engine(spec.options, name=f"mesh {spec.mesh} (worker {os.getpid()})")
        self.engine.mail = _BarrierMail(host, self)

    def device_by_id(self, device_id: int) -> Device:
        if device_id not in self.host._specs:
            raise DeviceError(f"device {device_id} is not part of this mesh")
        return self.host._device(device_id)


class _BarrierMail(FabricMail):
    """The fabric mail of a worker's mesh engine: at a quiescent point of a split run the
    share waits for the driver's barrier instead of landing its own packets at once
    (module docstring); payloads wait in the worker's staging arena."""

    def __init__(self, host: ChipHost, mesh: _ReplicaMesh) -> None:
        super().__init__(mesh.device_by_id)
        self.host = host

    def stash(self, view):
        split = self.host._split
        if split is None:  # pragma: no cover - portable kernels run here in workloads only
            raise DeviceError("a fabric packet from a launch a worker runs outside a mesh workload")
        return split.staging.put(view)

    def payload(self, data: object, size: int) -> object:
        assert isinstance(data, Staged)
        return np.frombuffer(self.host.peers.read(data, size), dtype=np.uint8)

    def next_batch(self) -> list[Packet]:
        split = self.host._split  # none: a launch alone, which posts no packets (stash)
        return [] if split is None else split.barrier(self)


class SplitRun:
    """One worker's share of a mesh workload, on a thread of its own.

    The thread prepares the share's chips and tells the actor (``start``: "prepared", or
    the error); from then on it talks to the driver over the barrier channel alone: it
    waits for :data:`GO`, runs the engine, and at every quiescent point :meth:`barrier`
    sends ("round", packets for other workers, has local packets) and waits for the next
    message -- a batch (epoch, packets that land here), :data:`STOP` (global quiescence)
    or :data:`ABORT`.  Its last message is its end: ("ok", raw stats, makespan, recorded,
    stdout), ("error", exc, recorded, stdout), ("deadlock", blocked, total, report lines,
    recorded, stdout) or ("aborted",) -- recorded: the share's trace, None unless traced.
    The share's chips are released, and the worker free for the next split run, before
    it is sent.
    """

    def __init__(
        self,
        host: ChipHost,
        mesh: _ReplicaMesh,
        staging: Staging,
        programs,
        place_word,
        conn: channel.Connection,
        serial: int,
        trace: bool,
    ) -> None:
        self.host = host
        self.mesh = mesh
        self.staging = staging
        self.programs = programs
        self.place_word = place_word
        self.conn = conn
        self.serial = serial
        self.started: queue.SimpleQueue[tuple] = queue.SimpleQueue()
        self.on_channel = False  # "prepared" was told: the rest goes over the channel
        self.recorder = Recorder() if trace else None
        self.aborted = False
        self.local: list[Packet] = []  # packets for this worker's own chips, held to the barrier
        self.thread = threading.Thread(target=self._main, name="tilewright split run", daemon=True)

    def start(self) -> tuple:
        self.thread.start()
        return self.started.get()

    def _receive(self) -> object:
        try:
            return channel.receive(self.conn, self.serial)
        except channel.Lost:  # the driver is gone: nobody waits for this run any more
            return ABORT

    def barrier(self, mail: _BarrierMail) -> list[Packet]:
        """A quiescent point with no batch left: wait for the driver; the next batch is what
        it hands back with this worker's own packets of the epoch, in landing order (none:
        the end)."""
        owned = self.host.owned
        outgoing: list[Packet] = []
        local = self.local
        for packet in mail.take():
            (local if packet.dst in owned else outgoing).append(packet)
        channel.send(self.conn, self.serial, ("round", outgoing, bool(local)))
        message = self._receive()
        if message == STOP or message == ABORT:
            self.aborted = message == ABORT
            return []
        epoch, batch = cast("tuple[int, list[Packet]]", message)
        self.staging.begin(epoch)
        self.local = []
        return sorted([*batch, *local], key=landing_order)

    def _main(self) -> None:
        out = io.StringIO()
        prepared: list[Device] = []
        event: tuple = ("aborted",)
        prev = state.CURRENT
        try:
            with contextlib.redirect_stdout(out):
                event = self._run(prepared, out)
        except BaseException as exc:  # noqa: BLE001 - reported to the driver, not lost
            event = ("error", exc, None, out.getvalue())
        finally:
            state.CURRENT = prev
            self.mesh.engine.tracer = None
            for device in prepared:
                release_launch(device)
            if not self.on_channel:
                self.started.put(event)
            else:
                if self.host._split is self:
                    self.host._split = None
                self._tell_end(event)

    def _tell_end(self, event: tuple) -> None:
        """The share's last message; one that does not pickle (an exception carrying
        something of its process) becomes an error saying so -- the driver waits for it."""
        try:
            channel.send(self.conn, self.serial, event)
        except channel.Lost:  # a driver gone has given up
            return
        except Exception as exc:  # noqa: BLE001 - reported instead, never lost
            why = DeviceError(
                f"worker {os.getpid()}: the end of its share ({event[0]}) could not be sent "
                f"to the driver: {exc!r}"
            )
            printed = event[-1] if isinstance(event[-1], str) else ""
            with contextlib.suppress(channel.Lost):
                channel.send(self.conn, self.serial, ("error", why, None, printed))

    def _run(self, prepared: list[Device], out: io.StringIO) -> tuple:
        runs = []
        try:
            for device, program, launch in self.programs:
                state.CURRENT = launch
                runs += prepare_launch(device, program, place_word=self.place_word)
                prepared.append(device)
        except TilewrightError as exc:
            return ("error", exc, None, out.getvalue())
        self.on_channel = True
        self.started.put(("prepared",))
        if self._receive() != GO:
            return ("aborted",)
        self.staging.begin(0)
        if self.programs:  # the operation's DFB waits, as in the driver
            state.CURRENT = self.programs[0][2]
        recorder = self.mesh.engine.tracer = self.recorder
        if recorder is not None:
            recorder.begin_launch(None, runs)
        try:
            result = self.mesh.engine.run(runs)
        except TilewrightError as exc:
            if self.aborted:  # the driver gave up on the run: what it raised is no news
                return ("aborted",)
            if isinstance(exc, DeadlockError) and exc.rule == "deadlock":  # merged in the driver
                blocked = sum(1 for r in runs if not finished(r))
                body = exc.message.partition("\n")[2]
                return ("deadlock", blocked, len(runs), body, _taken(recorder), out.getvalue())
            return ("error", exc, _taken(recorder), out.getvalue())
        if self.aborted:
            return ("aborted",)
        return ("ok", result.raw_stats(), result.makespan, _taken(recorder), out.getvalue())
