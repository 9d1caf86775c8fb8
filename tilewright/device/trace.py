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
"""

from __future__ import annotations

import json

from tilewright.device.perf.dispatch import program_dispatch_ns

__all__ = ["Tracer"]


class Tracer:
    """Collects trace events of every launch on a device."""

    def __init__(self) -> None:
        self.events: list[tuple] = []  # (ph, pid, tid, name, ts, dur, args)
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
        key = (run.place, f"{run.name} ({run.slot})")
        track = self._tracks.get(key)
        if track is None:
            device = run.core.device
            if device.mesh is not None:
                process = f"chip {device.device_id} (mesh {_mesh_coord(device)})"
                self._sort.setdefault(process, device.device_id)
                thread = f"{run.place.removeprefix(device.place_prefix)} {key[1]}"
            else:
                process, thread = run.place, key[1]
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
        self.launches += 1
        self._launch_name = getattr(program, "name", "program")
        if runs:
            arch = runs[0].core.device.perf.arch
            self.clock_mhz = self.clock_mhz or arch.clock_mhz
            if self._step is None:  # the program's dispatch comes before its kernels
                self.base += program_dispatch_ns(arch, program) * self.clock_mhz // 1000
        for run in runs:
            run.clock = 0
            self._track(run)

    def end_launch(self, makespan: int) -> None:
        self.events.append(
            ("i", 0, 0, f"end of {self._launch_name}", self.base + makespan, 0, None)
        )
        if self._step is not None:
            self._step = (self._step[0], max(self._step[1], makespan))
        else:
            self.base += makespan

    def span(self, run, name: str, start: int, end: int, args: dict | None = None) -> None:
        pid, tid = self._track(run)
        self.events.append(("X", pid, tid, name, self.base + start, max(0, end - start), args))

    def instant(self, run, name: str, args: dict | None = None) -> None:
        pid, tid = self._track(run)
        self.events.append(("i", pid, tid, name, self.base + run.clock, 0, args))

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
        for ph, pid, tid, name, ts, dur, args in self.events:
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
