"""Traces of device runs in the Chrome / Perfetto JSON format.

One track per (node, kernel).  On a single device ``pid`` is the node (core) and
``tid`` the kernel.  On the chips of a mesh device every chip is one process (a
process group in Perfetto, named ``chip N (mesh (r, c))`` and sorted by device id) and
every (node, kernel) a thread in it.  Events are tuples recorded during the run and
formatted afterwards; timestamps are the kernels' modelled clocks (device/perf: cycles of
the chip's AI clock, shown in microseconds of modelled device time), so the same program
gives the same trace.  Launches are laid end to end with each program's modelled
dispatch before it, except the per-chip launches of one SPMD step
(``begin_step``/``end_step``), which start together, as the chips run in parallel.

The file lists a launch's events track by track (each track's in the order they were
recorded), not in the order the schedule recorded them across tracks: a chip's own
events are the same whichever process runs it, the interleaving of chips is not.  A
launch run in a worker process (``tilewright.distributed``) is recorded there by a
:class:`Recorder` and replayed here (:meth:`Tracer.replay`) where one process would have
recorded it, so ``--trace`` with ``--workers`` writes the one-process file.
"""

from __future__ import annotations

import json

from tilewright.device.perf.dispatch import program_dispatch_ns

__all__ = ["Tracer", "Recorder", "Recorded"]

Recorded = tuple
"""What a :class:`Recorder` took of a launch: ((place, kernel label, device id) per run,
[(ph, run index, name, start, duration, args)])."""


def _label(run) -> str:
    return f"{run.name} ({run.slot})"


class Tracer:
    """Collects trace events of every launch on a device."""

    def __init__(self) -> None:
        self.events: list[tuple] = []  # (ph, pid, tid, name, ts, dur, args, launch)
        self.base = 0
        self.launches = 0
        self._tracks: dict[tuple[str, str], tuple[int, int]] = {}
        self._pids: dict[str, int] = {}
        self._names: dict[tuple[int, int], str] = {}  # track -> thread name
        self._sort: dict[str, int] = {}  # process -> sort index (chips by device id)
        self._threads: dict[int, int] = {}  # pid -> threads so far
        self._launch_name = ""
        self._step: tuple[int, int] | None = None  # (base, longest launch) of an SPMD step
        self.clock_mhz = 0  # the AI clock of the first traced device (cycles -> time)

    def _track(self, run) -> tuple[int, int]:
        return self._track_of(run.place, _label(run), run.core.device)

    def _track_of(self, place: str, label: str, device) -> tuple[int, int]:
        key = (place, label)
        track = self._tracks.get(key)
        if track is None:
            if device.mesh is not None:
                process = f"chip {device.device_id} (mesh {_mesh_coord(device)})"
                self._sort.setdefault(process, device.device_id)
                thread = f"{place.removeprefix(device.place_prefix)} {label}"
            else:
                process, thread = place, label
            pid = self._pids.setdefault(process, len(self._pids))
            tid = self._threads.get(pid, 0)
            self._threads[pid] = tid + 1
            track = self._tracks[key] = (pid, tid)
            self._names[track] = thread
        return track

    def begin_step(self) -> None:
        """Start an SPMD step: the next launches (one per chip) start at the same time."""
        self._step = (self.base, 0)

    def end_step(self) -> None:
        """End an SPMD step: later launches start after its longest launch."""
        if self._step is not None:
            base, longest = self._step
            self.base = base + longest
            self._step = None

    def begin_launch(self, program, runs) -> None:
        self._begin(program, runs[0].core.device.perf.arch if runs else None)
        for run in runs:
            run.clock = 0
            self._track(run)

    def _begin(self, program, arch) -> None:
        self.launches += 1
        self._launch_name = getattr(program, "name", "program")
        if arch is not None:
            self.clock_mhz = self.clock_mhz or arch.clock_mhz
            if self._step is None:  # the program's dispatch comes before its kernels
                self.base += program_dispatch_ns(arch, program) * self.clock_mhz // 1000

    def replay(self, program, arch, recorded: Recorded, device_of, makespan: int | None) -> None:
        """A launch a worker recorded, as if it had run here: ``device_of`` maps a device
        id to this process's chip; ``makespan`` None for a launch that raised (no end)."""
        keys, events = recorded
        self._begin(program, arch if keys else None)
        tracks = [self._track_of(place, label, device_of(dev)) for place, label, dev in keys]
        launch = self.launches
        for ph, index, name, start, dur, args in events:
            pid, tid = tracks[index]
            self.events.append((ph, pid, tid, name, self.base + start, dur, args, launch))
        if makespan is not None:
            self.end_launch(makespan)

    def end_launch(self, makespan: int) -> None:
        self.events.append(
            ("i", 0, 0, f"end of {self._launch_name}", self.base + makespan, 0, None, self.launches)
        )
        if self._step is not None:
            self._step = (self._step[0], max(self._step[1], makespan))
        else:
            self.base += makespan

    def span(self, run, name: str, start: int, end: int, args: dict | None = None) -> None:
        pid, tid = self._track(run)
        self.events.append(
            ("X", pid, tid, name, self.base + start, max(0, end - start), args, self.launches)
        )

    def instant(self, run, name: str, args: dict | None = None) -> None:
        pid, tid = self._track(run)
        self.events.append(("i", pid, tid, name, self.base + run.clock, 0, args, self.launches))

    def to_chrome(self) -> dict:
        out = []
        for process, pid in self._pids.items():
            out.append({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": process}})
            if process in self._sort:
                out.append(
                    {
                        "ph": "M",
                        "pid": pid,
                        "name": "process_sort_index",
                        "args": {"sort_index": self._sort[process]},
                    }
                )
        for track in self._tracks.values():
            pid, tid = track
            out.append(
                {
                    "ph": "M",
                    "pid": pid,
                    "tid": tid,
                    "name": "thread_name",
                    "args": {"name": self._names[track]},
                }
            )
        per_us = float(self.clock_mhz or 1000)
        # launch by launch, track by track (module docstring); sorted() is stable
        for ph, pid, tid, name, ts, dur, args, _launch in sorted(
            self.events, key=lambda e: (e[7], e[1], e[2])
        ):
            ev = {"ph": ph, "pid": pid, "tid": tid, "name": name, "ts": ts / per_us}
            if ph == "X":
                ev["dur"] = dur / per_us
            else:
                ev["s"] = "g" if pid == 0 and tid == 0 and name.startswith("end of") else "t"
            if args:
                ev["args"] = args
            out.append(ev)
        return {
            "traceEvents": out,
            "displayTimeUnit": "ns",
            "otherData": {
                "clock": f"modelled device time (AI clock {int(per_us)} MHz)",
            },
        }

    def write(self, path) -> None:
        with open(path, "w") as f:
            json.dump(self.to_chrome(), f, indent=None, separators=(",", ":"))


def _mesh_coord(device) -> str:
    coord = device.mesh.coordinate_of(device)
    return f"({coord.row}, {coord.col})"


class Recorder:
    """A worker's tracer: records a launch's events against its runs, for the driver's
    :meth:`Tracer.replay` (times relative to the launch's start)."""

    def __init__(self) -> None:
        self._index: dict[int, int] = {}
        self._keys: list[tuple[str, str, int]] = []
        self._events: list[tuple] = []

    def begin_launch(self, program, runs) -> None:
        for run in runs:
            run.clock = 0
            self._index[id(run)] = len(self._keys)
            self._keys.append((run.place, _label(run), run.core.device.device_id))

    def end_launch(self, makespan: int) -> None:
        """Nothing to record: the launch's makespan goes back with its result."""

    def span(self, run, name: str, start: int, end: int, args: dict | None = None) -> None:
        self._events.append(("X", self._index[id(run)], name, start, max(0, end - start), args))

    def instant(self, run, name: str, args: dict | None = None) -> None:
        self._events.append(("i", self._index[id(run)], name, run.clock, 0, args))

    def take(self) -> Recorded:
        """What was recorded (and a fresh start)."""
        out = (self._keys, self._events)
        self._index, self._keys, self._events = {}, [], []
        return out
