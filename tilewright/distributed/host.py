"""The worker process: replicas of its host group's chips, and the launches it runs on them.

A replica is a :class:`~tilewright.device.device.Device` built from the same system
descriptor as the driver's chip, whose L1 and DRAM are the driver's (mapped through
``/proc/<driver pid>/fd``, ``device/memory.py``): a kernel's writes here are the driver's
tensors.  The replica has its own engine, circular-buffer and semaphore state and launch
plans; the driver keeps the allocators, so each launch brings where the driver's lowest
L1 buffer starts (the circular-buffer clash check reads it).

Runs in a Ray actor (``pool.py``); plain Python otherwise, so the tests can also drive it
in-process.
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from tilewright.device.device import Device
from tilewright.device.engine import EngineOptions
from tilewright.device.launch import LAUNCH_CACHE, launch_program
from tilewright.device.memory import SharedMemoryRef
from tilewright.distributed import wire
from tilewright.errors import TilewrightError
from tilewright.lang import state
from tilewright.lang.state import OpLaunch

if TYPE_CHECKING:
    from tilewright.lang.node import NodeSetup

__all__ = ["ChipSpec", "ChipHost", "Outcome"]

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


Outcome = tuple  # ("ok", raw stats, makespan, stdout) | ("error", exc, stdout) | ("missing",)


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

    def pid(self) -> int:
        return os.getpid()

    def add_chip(self, spec: ChipSpec) -> None:
        """Take a chip (its replica is built on its first launch); a chip of that id taken
        before (a mesh closed and opened again) is dropped first: its memory is gone."""
        self.drop_chip(spec.device_id)
        self._specs[spec.device_id] = spec

    def drop_chip(self, device_id: int) -> None:
        """Let a chip go (the driver closed it): unmap its memory, forget its programs."""
        self._specs.pop(device_id, None)
        self._floors.pop(device_id, None)
        self._programs.pop(device_id, None)
        device = self._devices.pop(device_id, None)
        if device is not None:
            device.close()

    def run(
        self,
        device_id: int,
        digest: str,
        blob: bytes | None,
        args: wire.LaunchArgs,
        l1_lowest: int | None,
        place_word: str,
    ) -> Outcome:
        """Launch a program on the replica of chip ``device_id``; ("missing",) when the
        structure ``digest`` names is not kept here and ``blob`` was not sent."""
        device = self._device(device_id)
        kept = self._programs.setdefault(device_id, OrderedDict())
        program = kept.get(digest)
        if program is None:
            if blob is None:
                return ("missing",)
            loaded, waits = wire.load(blob, device)
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
        loaded, launch = program
        wire.apply(loaded, args)
        self._floors[device_id].lowest = l1_lowest
        prev, state.CURRENT = state.CURRENT, launch  # what compiled kernels' waits read
        # Kernels' debug prints (DPRINT, TT-Lang print) go back with the outcome: the driver
        # prints them when it waits for the launch, in chip order, as one process would.
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                result = launch_program(device, loaded, place_word=place_word)
            # The statistics go back raw (labels, counters, the run table's bytes) and are
            # built in the driver only if read there: building them here cost 10% of a call.
            return ("ok", result.raw_stats(), result.makespan, out.getvalue())
        except TilewrightError as exc:
            return ("error", exc, out.getvalue())
        finally:
            state.CURRENT = prev

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
            floor = self._floors[device_id] = _DriverL1()
            device.l1_allocator = floor  # type: ignore[assignment]
            self._devices[spec.device_id] = device
        return device

    def close(self) -> None:
        for device in self._devices.values():
            device.close()
        self._devices.clear()
        self._floors.clear()
        self._programs.clear()
