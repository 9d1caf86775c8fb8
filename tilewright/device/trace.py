"""Traces of device runs in the Chrome / Perfetto JSON format.

One track per (node, kernel): ``pid`` is the node (core), ``tid`` the kernel.
Events are tuples recorded during the run and formatted afterwards; timestamps are
the kernels' logical clocks (cycles, shown as microseconds at 1 GHz), so the same
program gives the same trace.  Launches are laid end to end.
"""

from __future__ import annotations

import json

__all__ = ["Tracer"]

_CYCLES_PER_US = 1000.0


class Tracer:
    """Collects trace events of every launch on a device."""

    def __init__(self) -> None:
        self.events: list[tuple] = []  # (ph, pid, tid, name, ts, dur, args)
        self.base = 0
        self.launches = 0
        self._tracks: dict[tuple[str, str], tuple[int, int]] = {}
        self._pids: dict[str, int] = {}
        self._launch_name = ""

    def _track(self, run) -> tuple[int, int]:
        key = (run.place, f"{run.name} ({run.slot})")
        track = self._tracks.get(key)
        if track is None:
            pid = self._pids.setdefault(run.place, len(self._pids))
            tid = sum(1 for k in self._tracks if k[0] == run.place)
            track = self._tracks[key] = (pid, tid)
        return track

    def begin_launch(self, program, runs) -> None:
        self.launches += 1
        self._launch_name = getattr(program, "name", "program")
        for run in runs:
            run.clock = 0
            self._track(run)

    def end_launch(self, makespan: int) -> None:
        self.events.append(
            ("i", 0, 0, f"end of {self._launch_name}", self.base + makespan, 0, None)
        )
        self.base += makespan

    def span(self, run, name: str, start: int, end: int, args: dict | None = None) -> None:
        pid, tid = self._track(run)
        self.events.append(("X", pid, tid, name, self.base + start, max(0, end - start), args))

    def instant(self, run, name: str, args: dict | None = None) -> None:
        pid, tid = self._track(run)
        self.events.append(("i", pid, tid, name, self.base + run.clock, 0, args))

    def to_chrome(self) -> dict:
        out = []
        for place, pid in self._pids.items():
            out.append({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": place}})
        for (_place, kernel), (pid, tid) in self._tracks.items():
            out.append(
                {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": kernel}}
            )
        for ph, pid, tid, name, ts, dur, args in self.events:
            ev = {"ph": ph, "pid": pid, "tid": tid, "name": name, "ts": ts / _CYCLES_PER_US}
            if ph == "X":
                ev["dur"] = dur / _CYCLES_PER_US
            else:
                ev["s"] = "g" if pid == 0 and tid == 0 and name.startswith("end of") else "t"
            if args:
                ev["args"] = args
            out.append(ev)
        return {
            "traceEvents": out,
            "displayTimeUnit": "ns",
            "otherData": {"clock": "cycles @ 1 GHz"},
        }

    def write(self, path) -> None:
        with open(path, "w") as f:
            json.dump(self.to_chrome(), f, indent=None, separators=(",", ":"))
