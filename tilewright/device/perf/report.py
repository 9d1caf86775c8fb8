"""Per-operation device time: records, the bound, ``--stats`` and tt-metal's op-perf CSV.

Every program launch (and every ttnn operation, modelled as the program it runs) becomes
an :class:`OpRecord`: its device kernel duration -- first kernel start to last kernel end
over all cores, tt-metal's ``DEVICE KERNEL DURATION [ns]`` -- the per-processor durations
(BRISC, NCRISC, TRISC0/1/2: the latest end of that processor's work over the cores), the
per-core spread, the dispatch gap before it (``OP TO OP LATENCY``) and what bounds it:

* ``compute`` -- the busiest unpack / math / pack processor of a core fills the op;
* ``NoC`` / ``DRAM`` -- a data-movement kernel spends the op issuing or waiting for
  transfers (DRAM if the transfers it waits on touch DRAM);
* ``DFB wait`` -- none of these fills the op: kernels mostly wait on each other
  (circular buffers / DFBs, semaphores) -- a pipeline or synchronisation bound;
* ``dispatch`` -- the program's dispatch takes longer than its kernels.

:func:`write_csv` writes tt-metal's ``ops_perf_results`` columns (the v2.1 layout with
``DEVICE ARCH`` and ``AVAILABLE WORKER CORE COUNT``), which the ``tt-perf-report`` tool
(PyPI) reads unmodified.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tilewright.device.perf.arch import ArchPerf

__all__ = [
    "TensorInfo",
    "OpRecord",
    "BOUNDS",
    "classify",
    "from_launch",
    "format_stats",
    "write_csv",
    "CSV_COLUMNS",
]

BOUNDS = ("compute", "NoC", "DRAM", "DFB wait", "dispatch")
_FILL = 0.5
"""A resource bounds an op when it is busy at least this share of the op's time."""


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """One input / output tensor as the op report shows it."""

    padded: tuple[int, int, int, int]  # W, Z, Y, X (the 4-D view, padded)
    logical: tuple[int, int, int, int]
    layout: str  # TILE / ROW_MAJOR
    dtype: str  # BFLOAT16, BFLOAT8_B, ...
    memory: str  # DEV_0_DRAM_INTERLEAVED, DEV_0_L1_HEIGHT_SHARDED, ...


@dataclass(slots=True)
class OpRecord:
    """The modelled device time of one operation on one device."""

    op_code: str
    arch: ArchPerf
    device_id: int = 0
    cores: int = 0
    available_cores: int = 0
    kernel_cycles: int = 0
    processors: dict[str, int] = field(default_factory=dict)  # BRISC.. -> cycles
    per_core: tuple[int, int, int] = (0, 0, 0)  # min, max, avg cycles
    bound: str = "compute"
    busy: dict[str, int] = field(default_factory=dict)  # compute / NoC / DRAM -> cycles
    dispatch_ns: int = 0
    math_fidelity: str = ""
    inputs: list[TensorInfo] = field(default_factory=list)
    outputs: list[TensorInfo] = field(default_factory=list)
    attributes: str = ""
    cb_wait_front: int = 0  # cycles a compute kernel waited for input (max over cores)
    cb_reserve_back: int = 0
    ideal_cycles: int = 0  # compute at peak on every core (PM IDEAL), 0 if unknown
    call: int = 0  # GLOBAL CALL COUNT (set when recorded)
    start_ns: float = 0.0  # modelled start on the device's timeline (set when recorded)

    @property
    def kernel_ns(self) -> float:
        return self.arch.ns(self.kernel_cycles)


def classify(kernel: int, busy: dict[str, int], dispatch_cycles: int, fill: float = _FILL) -> str:
    """The bound of an op of ``kernel`` cycles whose busiest resources took ``busy``: the
    busiest if it fills at least ``fill`` of the op (a model of a program passes 0: its
    components are the pipeline's critical path), else ``DFB wait``."""
    if kernel <= 0 or dispatch_cycles > kernel:
        return "dispatch"
    name, cycles = max(busy.items(), key=lambda kv: (kv[1], -BOUNDS.index(kv[0])))
    return name if cycles >= fill * kernel else "DFB wait"


_SLOT_NAMES = {"brisc": "BRISC", "ncrisc": "NCRISC"}


def from_launch(
    name: str, result, arch: ArchPerf, *, device_id: int = 0, available: int = 0
) -> OpRecord:
    """The record of one simulated launch (``device.engine.LaunchResult``)."""
    procs: dict[str, int] = {}
    per_core: dict[object, int] = {}
    busy = {"compute": 0, "NoC": 0, "DRAM": 0}
    wait_front = reserve = 0
    fidelity = ""
    for s in result.stats:
        per_core[s.place] = max(per_core.get(s.place, 0), s.cycles)
        p = s.perf
        if p is not None and p.compute:
            for key, end in (("TRISC0", p.unpack), ("TRISC1", p.math), ("TRISC2", p.pack)):
                procs[key] = max(procs.get(key, 0), end)
            busy["compute"] = max(busy["compute"], p.busy_unpack, p.busy_math, p.busy_pack)
            wait_front = max(wait_front, p.wait_front)
            reserve = max(reserve, p.wait_reserve)
            fidelity = fidelity or _FIDELITY_NAMES.get(p.fidelity, "")
        else:
            key = _SLOT_NAMES.get(s.slot, s.slot.upper())
            procs[key] = max(procs.get(key, 0), s.cycles)
            if p is not None:
                busy["NoC"] = max(busy["NoC"], p.busy_noc)
                busy["DRAM"] = max(busy["DRAM"], p.busy_dram)
    ends = list(per_core.values()) or [0]
    kernel = result.makespan
    dispatch_cycles = int(result.dispatch_ns * arch.clock_mhz / 1000)
    return OpRecord(
        op_code=name,
        arch=arch,
        device_id=device_id,
        cores=len(per_core),
        available_cores=available,
        kernel_cycles=kernel,
        processors=procs,
        per_core=(min(ends), max(ends), sum(ends) // len(ends)),
        bound=classify(kernel, busy, dispatch_cycles),
        busy=busy,
        dispatch_ns=result.dispatch_ns,
        math_fidelity=fidelity,
        cb_wait_front=wait_front,
        cb_reserve_back=reserve,
    )


_FIDELITY_NAMES = {1: "LoFi", 2: "HiFi2", 3: "HiFi3", 4: "HiFi4"}


def format_stats(records: Sequence[OpRecord]) -> str:
    """The ``--stats`` table of operations: device time and what bounds it."""
    lines = [
        f"{'op':<4} {'operation':<32} {'dev':>3} {'cores':>5} {'cycles':>12} "
        f"{'device ns':>12} {'dispatch ns':>11}  bound"
    ]
    for r in records:
        lines.append(
            f"{r.call:<4} {r.op_code[:32]:<32} {r.device_id:>3} {r.cores:>5} "
            f"{r.kernel_cycles:>12} {r.kernel_ns:>12.0f} {r.dispatch_ns:>11}  {r.bound}"
        )
    if not records:
        lines.append("(no operations)")
    total = sum(r.kernel_ns + r.dispatch_ns for r in records)
    lines.append(f"modelled device time: {total:.0f} ns (kernels and dispatch, in order)")
    return "\n".join(lines)


_TENSOR_FIELDS = (
    "W_PAD[LOGICAL]",
    "Z_PAD[LOGICAL]",
    "Y_PAD[LOGICAL]",
    "X_PAD[LOGICAL]",
    "LAYOUT",
    "DATATYPE",
    "MEMORY",
)
_TENSORS = ("INPUT_0", "INPUT_1", "INPUT_2", "OUTPUT_0")

CSV_COLUMNS: tuple[str, ...] = (
    "OP CODE",
    "OP TYPE",
    "GLOBAL CALL COUNT",
    "DEVICE ID",
    "DEVICE ARCH",
    "ATTRIBUTES",
    "MATH FIDELITY",
    "CORE COUNT",
    "AVAILABLE WORKER CORE COUNT",
    "PARALLELIZATION STRATEGY",
    "HOST START TS",
    "HOST END TS",
    "HOST DURATION [ns]",
    "DEVICE FW START CYCLE",
    "DEVICE FW END CYCLE",
    "OP TO OP LATENCY [ns]",
    "DEVICE FW DURATION [ns]",
    "DEVICE KERNEL DURATION [ns]",
    "DEVICE KERNEL DURATION PER CORE MIN [ns]",
    "DEVICE KERNEL DURATION PER CORE MAX [ns]",
    "DEVICE KERNEL DURATION PER CORE AVG [ns]",
    "DEVICE KERNEL FIRST TO LAST START [ns]",
    "DEVICE BRISC KERNEL DURATION [ns]",
    "DEVICE NCRISC KERNEL DURATION [ns]",
    "DEVICE TRISC0 KERNEL DURATION [ns]",
    "DEVICE TRISC1 KERNEL DURATION [ns]",
    "DEVICE TRISC2 KERNEL DURATION [ns]",
    "DEVICE ERISC KERNEL DURATION [ns]",
    "DEVICE COMPUTE CB WAIT FRONT [ns]",
    "DEVICE COMPUTE CB RESERVE BACK [ns]",
    "INPUTS",
    "OUTPUTS",
    *(f"{t}_{f}" for t in _TENSORS for f in _TENSOR_FIELDS),
    "METAL TRACE ID",
    "METAL TRACE REPLAY SESSION ID",
    "PM IDEAL [ns]",
    "PM COMPUTE [ns]",
    "PM BANDWIDTH [ns]",
    "TILEWRIGHT BOUND",
)


def _ns(r: OpRecord, cycles: int) -> str:
    return f"{r.arch.ns(cycles):.0f}" if cycles else ""


def _row(r: OpRecord) -> dict[str, object]:
    kernel_ns = round(r.arch.ns(r.kernel_cycles))
    fw_start = round(r.start_ns * r.arch.clock_mhz / 1000)
    row: dict[str, object] = {
        "OP CODE": r.op_code,
        "OP TYPE": "tt_dnn_device",
        "GLOBAL CALL COUNT": r.call,
        "DEVICE ID": r.device_id,
        "DEVICE ARCH": r.arch.name,
        "ATTRIBUTES": r.attributes,
        "MATH FIDELITY": r.math_fidelity,
        "CORE COUNT": r.cores,
        "AVAILABLE WORKER CORE COUNT": r.available_cores or r.cores,
        "PARALLELIZATION STRATEGY": "",
        "HOST START TS": round(r.start_ns),
        "HOST END TS": round(r.start_ns) + kernel_ns,
        "HOST DURATION [ns]": kernel_ns,
        "DEVICE FW START CYCLE": fw_start,
        "DEVICE FW END CYCLE": fw_start + r.kernel_cycles,
        "OP TO OP LATENCY [ns]": r.dispatch_ns,
        "DEVICE FW DURATION [ns]": kernel_ns,
        "DEVICE KERNEL DURATION [ns]": kernel_ns,
        "DEVICE KERNEL DURATION PER CORE MIN [ns]": _ns(r, r.per_core[0]),
        "DEVICE KERNEL DURATION PER CORE MAX [ns]": _ns(r, r.per_core[1]),
        "DEVICE KERNEL DURATION PER CORE AVG [ns]": _ns(r, r.per_core[2]),
        "DEVICE KERNEL FIRST TO LAST START [ns]": 0,
        "DEVICE COMPUTE CB WAIT FRONT [ns]": _ns(r, r.cb_wait_front),
        "DEVICE COMPUTE CB RESERVE BACK [ns]": _ns(r, r.cb_reserve_back),
        "INPUTS": len(r.inputs),
        "OUTPUTS": len(r.outputs),
        "PM IDEAL [ns]": _ns(r, r.ideal_cycles),
        "PM COMPUTE [ns]": _ns(r, r.busy.get("compute", 0)),
        "PM BANDWIDTH [ns]": _ns(r, max(r.busy.get("NoC", 0), r.busy.get("DRAM", 0))),
        "TILEWRIGHT BOUND": r.bound,
    }
    for proc in ("BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2", "ERISC"):
        row[f"DEVICE {proc} KERNEL DURATION [ns]"] = _ns(r, r.processors.get(proc, 0))
    for prefix, tensors in (("INPUT", r.inputs), ("OUTPUT", r.outputs)):
        for i, t in enumerate(tensors[:3] if prefix == "INPUT" else tensors[:1]):
            key = f"{prefix}_{i}"
            for dim, padded, logical in zip("WZYX", t.padded, t.logical):
                row[f"{key}_{dim}_PAD[LOGICAL]"] = f"{padded}[{logical}]"
            row[f"{key}_LAYOUT"] = t.layout
            row[f"{key}_DATATYPE"] = t.dtype
            row[f"{key}_MEMORY"] = t.memory
    return row


def write_csv(records: Iterable[OpRecord], path) -> None:
    """tt-metal's ``ops_perf_results`` CSV of ``records``."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(CSV_COLUMNS), restval="")
        w.writeheader()
        for r in records:
            w.writerow(_row(r))
