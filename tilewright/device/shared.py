"""Device and engine state shared between Python kernels and native (C++) kernels.

Both kinds of kernels act on the same circular buffers, semaphores and wait lists, so
their state lives in plain memory with a fixed C layout, described once here as
``ctypes`` structures:

* :class:`WaitList` -- a FIFO of kernel runs (indices into the run table, linked
  through :attr:`RunState.next`): the waiters of one CB end or one semaphore word;
* :class:`CBState` -- one circular-buffer interface (tt-metal ``LocalCBInterface``:
  16-bit counters, read / write pointers as L1 addresses, the two wait lists);
* :class:`WatchEntry` / :class:`CoreState` -- per core: NoC coordinates and the L1
  words kernels wait on (semaphores);
* :class:`RunState` -- per kernel run: what it waits for, its clock and statistics,
  where a native kernel blocked (C++ file and line);
* :class:`EngineHeader` -- the ready ring and counters of one launch;
* :class:`DeviceInfo` -- what native code needs to reach a device's memory.

Python views them with ``ctypes`` (a field access is ~40 ns); the native runtime
includes ``twrt_layout.h``, which :func:`c_header` generates from these classes, so
both sides agree by construction.  Python-only programs never load native code: the
structures are ordinary memory.
"""

from __future__ import annotations

import ctypes

from tilewright.device.api_messages import WATCH_FULL
from tilewright.device.perf.state import NocPerf, PerfRun

__all__ = [
    "WaitList",
    "CBState",
    "WatchEntry",
    "CoreState",
    "RunState",
    "EngineHeader",
    "RunSpec",
    "DeviceInfo",
    "DeviceShared",
    "RunKind",
    "RunPhase",
    "WaitKind",
    "MAX_WATCH",
    "MAX_DRAM_BANKS",
    "NOC_GRID",
    "NO_RUN",
    "c_header",
]

NO_RUN = -1
"""The empty link of a wait list."""
MAX_WATCH = 32
"""Distinct L1 words waited on at one time, per core."""
MAX_DRAM_BANKS = 32
NOC_GRID = 64
"""NoC coordinates are 6-bit: the (x, y) -> core table is 64 x 64."""


class RunKind:
    PYTHON = 0
    NATIVE = 1


class RunPhase:
    READY = 0
    RUNNING = 1
    BLOCKED = 2
    DONE = 3
    FAILED = 4


class WaitKind:
    """What a blocked run waits for (``RunState.wait_kind``), for deadlock reports."""

    NONE = 0
    CB_RESERVE = 1  # wait_obj = cb index, wait_a = pages
    CB_WAIT = 2
    SEM_EQ = 3  # wait_obj = local L1 address, wait_a = value
    SEM_GE = 4
    PYTHON = 5  # a Python waitable (RunState says nothing more)
    HOSTED = 6  # an external call blocked inside native code (see wait_kind of the call)


class WaitList(ctypes.Structure):
    """Head and tail of a FIFO of run indices (``NO_RUN`` when empty)."""

    _fields_ = [("head", ctypes.c_int32), ("tail", ctypes.c_int32)]


class CBState(ctypes.Structure):
    """One circular-buffer interface of one core (the C++ runtime's ``tw_CBState``)."""

    _fields_ = [
        ("configured", ctypes.c_uint32),
        ("fifo_addr", ctypes.c_uint32),
        ("fifo_size", ctypes.c_uint32),
        ("fifo_limit", ctypes.c_uint32),
        ("num_pages", ctypes.c_uint32),
        ("page_size", ctypes.c_uint32),
        ("received", ctypes.c_uint32),  # 16-bit counter (masked on use)
        ("acked", ctypes.c_uint32),
        ("wr_ptr", ctypes.c_uint32),
        ("rd_ptr", ctypes.c_uint32),
        ("pack_counter", ctypes.c_uint32),
        ("format_code", ctypes.c_uint32),  # tt::DataFormat value, 0xFF: none
        ("tile_h", ctypes.c_uint32),
        ("tile_w", ctypes.c_uint32),
        ("tile_faces", ctypes.c_uint32),
        ("tile_bytes", ctypes.c_uint32),  # unpack tile size (get_tile_size)
        # The pages the kernel API's own cb_reserve_back / cb_wait_front calls opened and
        # the pushes / pops have not closed yet (device/cb.py: the protocol checks).
        ("reserved", ctypes.c_uint32),
        ("waited", ctypes.c_uint32),
        ("front_waiters", WaitList),  # cb_wait_front
        ("back_waiters", WaitList),  # cb_reserve_back
    ]


class WatchEntry(ctypes.Structure):
    """An L1 word some kernel waits on; any write into it wakes the list."""

    _fields_ = [("addr", ctypes.c_uint32), ("active", ctypes.c_uint32), ("waiters", WaitList)]


class CoreState(ctypes.Structure):
    _fields_ = [
        ("noc_x", ctypes.c_uint32),
        ("noc_y", ctypes.c_uint32),
        ("logical_x", ctypes.c_uint32),
        ("logical_y", ctypes.c_uint32),
        ("n_watch", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
        ("watch", WatchEntry * MAX_WATCH),
    ]


class RunState(ctypes.Structure):
    """One kernel run of a launch (Python or native)."""

    _fields_ = [
        ("kind", ctypes.c_int32),
        ("phase", ctypes.c_int32),
        ("core", ctypes.c_int32),
        ("next", ctypes.c_int32),
        ("wait_kind", ctypes.c_int32),
        ("wait_obj", ctypes.c_int32),
        ("wait_a", ctypes.c_int64),
        ("clock", ctypes.c_uint64),
        ("blocked", ctypes.c_uint64),
        ("wait_start", ctypes.c_uint64),
        ("waits", ctypes.c_uint64),
        ("ops", ctypes.c_uint64),
        ("src_file", ctypes.c_void_p),  # const char* of the C++ call that blocked
        ("src_line", ctypes.c_int32),
        ("woken", ctypes.c_int32),  # set by a native wake of a Python run
        ("perf", PerfRun),  # the device-time model's state of this run (device/perf)
    ]


class EngineHeader(ctypes.Structure):
    """Counters of one launch and the ready ring's indices."""

    _fields_ = [
        ("n_runs", ctypes.c_int32),
        ("live", ctypes.c_int32),
        ("spins", ctypes.c_int32),
        ("poll_limit", ctypes.c_int32),
        ("ring_mask", ctypes.c_uint32),
        ("ring_head", ctypes.c_uint32),
        ("ring_tail", ctypes.c_uint32),
        ("trace", ctypes.c_int32),
        # 1 while this launch's thread waits for another thread's native code (the
        # runtime runs native code in one thread at a time); read by the watchdog.
        ("lock_wait", ctypes.c_int32),
        ("runs", ctypes.c_void_p),  # RunState[n_runs]
        ("ring", ctypes.c_void_p),  # int32[ring_mask + 1]
    ]


class RunSpec(ctypes.Structure):
    """One native kernel run of a launch as the native driver describes it to the runtime
    (``twrt_runs_new`` creates a launch's runs from an array of these in one call)."""

    _fields_ = [
        ("index", ctypes.c_int32),  # the run's index in the launch's run table
        ("core", ctypes.c_int32),
        ("rta_addr", ctypes.c_uint32),
        ("n_rta", ctypes.c_uint32),
        ("crta_addr", ctypes.c_uint32),
        ("n_crta", ctypes.c_uint32),
        ("cta", ctypes.c_void_p),  # const uint32_t[n_cta], kept alive by the driver
        ("n_cta", ctypes.c_uint32),
        ("noc", ctypes.c_uint32),
        ("compute", ctypes.c_int32),  # 1: the four compute fields below apply
        ("fp32_dest_acc", ctypes.c_int32),
        ("dst_full_sync", ctypes.c_int32),
        ("approx", ctypes.c_int32),
        ("fidelity", ctypes.c_int32),
        ("dst_tiles", ctypes.c_int32),  # DST tiles of one acquire (kernel_api.compute.dst_tiles)
        ("dst_physical", ctypes.c_int32),  # the descriptor's DST size (allocated)
        ("pad", ctypes.c_int32),
        ("entry", ctypes.c_void_p),  # int32_t (*)(const int64_t*, int64_t*)
    ]


class DeviceInfo(ctypes.Structure):
    """What native code needs to reach one device's memory and state."""

    _fields_ = [
        ("serial", ctypes.c_uint64),  # unique per device opened in this process (never reused)
        ("chip", ctypes.c_int32),
        ("num_cores", ctypes.c_int32),
        ("num_cbs", ctypes.c_int32),
        ("l1_size", ctypes.c_uint32),
        ("l1_slot", ctypes.c_uint64),  # bytes between two cores' L1 in the arena
        ("l1_base", ctypes.c_void_p),  # the arena's permanent mapping
        ("l1_fd", ctypes.c_int32),  # memfd of the arena (-1: no identity window)
        ("l1_alignment", ctypes.c_uint32),
        ("dram_alignment", ctypes.c_uint32),
        ("num_dram", ctypes.c_int32),
        ("dram_size", ctypes.c_uint64),
        ("dram", ctypes.c_void_p * MAX_DRAM_BANKS),  # channel mappings (NULL until mapped)
        ("dram_noc_y", ctypes.c_int32),
        ("sem_base", ctypes.c_uint32),
        ("cbs", ctypes.c_void_p),  # CBState[num_cores * num_cbs]
        ("cores", ctypes.c_void_p),  # CoreState[num_cores]
        ("noc_map", ctypes.c_int16 * (NOC_GRID * NOC_GRID)),  # (y*64+x) -> core, -2-bank, -1
        ("perf", ctypes.c_void_p),  # NocPerf of the device (device/perf/state.py)
    ]


class DeviceShared:
    """The shared state of one device: CB interfaces and watch lists of every core."""

    __slots__ = ("num_cores", "num_cbs", "cbs", "cores", "info", "_core_views")

    def __init__(self, num_cores: int, num_cbs: int) -> None:
        self.num_cores = num_cores
        self.num_cbs = num_cbs
        self.cbs = (CBState * (num_cores * num_cbs))()
        self.cores = (CoreState * num_cores)()
        self.info = DeviceInfo()  # filled by the native runtime when it first runs here
        self.info.num_cores, self.info.num_cbs = num_cores, num_cbs
        self.info.cbs = ctypes.addressof(self.cbs)
        self.info.cores = ctypes.addressof(self.cores)
        for core in self.cores:
            for entry in core.watch:
                entry.waiters.head = entry.waiters.tail = NO_RUN
        # One view per core, made once: iterating the array makes a view per core each time.
        self._core_views = list(self.cores)

    def cb_offset(self, core: int, index: int) -> int:
        """Byte offset of CB ``index`` of core ``core`` in :attr:`cbs`."""
        return (core * self.num_cbs + index) * ctypes.sizeof(CBState)

    def core_state(self, core: int) -> CoreState:
        return self.cores[core]

    def watch(self, core: int, addr: int) -> WaitList:
        """The wait list of the L1 word ``addr`` of ``core`` (an entry is taken if needed)."""
        state = self.cores[core]
        free = None
        for entry in state.watch:
            if entry.active:
                if entry.addr == addr:
                    return entry.waiters
            elif free is None:
                free = entry
        if free is None:
            raise WATCH_FULL(count=MAX_WATCH)
        free.addr, free.active = addr, 1
        free.waiters.head = free.waiters.tail = NO_RUN
        state.n_watch += 1
        return free.waiters

    def reset(self) -> None:
        """After a launch: no CB configured, no word watched."""
        ctypes.memset(self.cbs, 0, ctypes.sizeof(self.cbs))
        for core in self._core_views:
            if not core.n_watch:  # n_watch counts the active entries (here and in the runtime)
                continue
            core.n_watch = 0
            for entry in core.watch:
                entry.active = 0
                entry.waiters.head = entry.waiters.tail = NO_RUN


# -- the C header ------------------------------------------------------------------------------

_C_TYPES = {
    ctypes.c_int16: "int16_t",
    ctypes.c_int32: "int32_t",
    ctypes.c_uint32: "uint32_t",
    ctypes.c_int64: "int64_t",
    ctypes.c_uint64: "uint64_t",
    ctypes.c_void_p: "void*",
}

_STRUCTS = (
    WaitList,
    CBState,
    WatchEntry,
    CoreState,
    PerfRun,
    RunState,
    EngineHeader,
    RunSpec,
    DeviceInfo,
    NocPerf,
)
_ENUMS = {"RunKind": RunKind, "RunPhase": RunPhase, "WaitKind": WaitKind}


def _c_field(name: str, ctype) -> str:
    if isinstance(ctype, type) and issubclass(ctype, ctypes.Array):
        return f"{_c_field(name, ctype._type_).rstrip(';')}[{ctype._length_}];"
    if isinstance(ctype, type) and issubclass(ctype, ctypes.Structure):
        return f"tw_{ctype.__name__} {name};"
    return f"{_C_TYPES[ctype]} {name};"


def c_header() -> str:
    """``twrt_layout.h``: these structures and constants for the native runtime."""
    lines = [
        "// Generated from tilewright/device/shared.py -- do not edit.",
        "#pragma once",
        "#include <cstddef>",
        "#include <cstdint>",
        "",
        f"#define TW_NO_RUN {NO_RUN}",
        f"#define TW_MAX_WATCH {MAX_WATCH}",
        f"#define TW_MAX_DRAM_BANKS {MAX_DRAM_BANKS}",
        f"#define TW_NOC_GRID {NOC_GRID}",
    ]
    for enum_name, cls in _ENUMS.items():
        lines.append(f"enum tw_{enum_name} : int32_t {{")
        for key, value in vars(cls).items():
            if key.isupper():
                lines.append(f"    TW_{enum_name.upper()}_{key} = {value},")
        lines.append("};")
    for struct in _STRUCTS:
        lines.append(f"struct tw_{struct.__name__} {{")
        for field in struct._fields_:
            lines.append(f"    {_c_field(field[0], field[1])}")
        lines.append("};")
        lines.append(
            f"static_assert(sizeof(tw_{struct.__name__}) == {ctypes.sizeof(struct)}, "
            f'"tw_{struct.__name__} layout");'
        )
        for field in struct._fields_:
            name = field[0]
            offset = getattr(struct, name).offset
            lines.append(
                f"static_assert(offsetof(tw_{struct.__name__}, {name}) == {offset}, "
                f'"tw_{struct.__name__}.{name}");'
            )
    return "\n".join(lines) + "\n"
