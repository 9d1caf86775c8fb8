"""Device time of ttnn operations: each modelled as the tt-metal program it runs.

ttnn operations compute their values on the host (numpy, ``ttnn/operations``); what the
card would spend on them comes from here, with the numbers of ``device/perf``:

* ``ttnn.matmul`` / ``ttnn.linear`` -- the matmul program tt-metal selects or the one the
  ``program_config`` names (:mod:`.matmul`);
* elementwise operations -- tt-metal's eltwise programs: the output's tiles split over
  the grid, each core reading its input tiles from DRAM / L1, unpacking, computing (FPU
  add / sub / mul, SFPU for the rest), packing and writing, the three kernels pipelined;
* reductions and softmax -- the same with the reduce engine (softmax: max, exp, sum and
  scale passes over each row);
* data movement (concat, permute / transpose, repeat) -- a read and a write of every
  page over the NoC;
* views (reshape, squeeze, unsqueeze) take no device time.

Collectives and ``generic_op`` launch real device programs, timed by the simulation
itself.  :func:`record` turns an operation call into the op report's record.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tilewright.device import session
from tilewright.device.kernel_api.compute import dst_tiles
from tilewright.device.perf import costs
from tilewright.device.perf.arch import ArchPerf
from tilewright.device.perf.dispatch import dispatch_ns
from tilewright.device.perf.report import OpRecord, TensorInfo, classify
from tilewright.device.program import ComputeConfig
from tilewright.ttnn import program_config as pc
from tilewright.ttnn.device_time import matmul as mm
from tilewright.ttnn.tensor import Tensor

__all__ = ["record", "tensor_info", "check_matmul_config", "MODELS"]

Model = Callable[[str, tuple, dict, Any], OpRecord | None]


def tensor_info(t: Tensor) -> TensorInfo:
    shape = tuple(t.shape)
    padded = tuple(t.padded_shape)
    four = (1, 1, 1, 1)
    logical = (four + shape)[-4:] if len(shape) <= 4 else (math.prod(shape[:-3]), *shape[-3:])
    pad4 = (four + padded)[-4:] if len(padded) <= 4 else (math.prod(padded[:-3]), *padded[-3:])
    mc = t.memory_config()
    dev = t.device()
    where = "HOST" if mc is None else f"{mc.buffer_type.name}_{mc.memory_layout.name}"
    device_id = dev.device_id if dev is not None else 0
    return TensorInfo(pad4, logical, t.layout.name, t.dtype.name, f"DEV_{device_id}_{where}")


def _tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _tiles(t: Tensor) -> int:
    shape = tuple(t.padded_shape)
    if not shape:
        return 1
    rows = math.prod(shape[:-1]) if len(shape) > 1 else 1
    return max(1, -(-rows // 32) * -(-shape[-1] // 32))


def _page_bytes(t: Tensor) -> int:
    try:
        return t.page_size
    except Exception:  # a host tensor: its tile size in its format
        return 2048


def _in_dram(t: Tensor) -> bool:
    mc = t.memory_config()
    return mc is None or mc.buffer_type.name == "DRAM"


def _device_of(tensors: list[Tensor]):
    for t in tensors:
        dev = t.device()
        if dev is not None and hasattr(dev, "perf"):
            return dev
    return None


def _record(
    name: str, dev, cores: int, cycles: int, busy: dict, n_dm: int, n_compute: int, **kw
) -> OpRecord:
    arch: ArchPerf = dev.perf.arch
    dispatch = dispatch_ns(arch, n_dm, n_compute)
    bound = classify(cycles, busy, int(dispatch * arch.clock_mhz / 1000), fill=0.0)
    return OpRecord(
        op_code=name,
        arch=arch,
        device_id=dev.device_id,
        cores=cores,
        available_cores=dev.grid_x * dev.grid_y,
        kernel_cycles=cycles,
        bound=bound,
        busy=busy,
        dispatch_ns=dispatch,
        **kw,
    )


# -- matmul ---------------------------------------------------------------------------------------


def _fidelity(config: Any) -> tuple[int, bool, bool, str]:
    """(phases, fp32_dest_acc, packer_l1_acc, name) of a compute kernel config (tt-metal's
    defaults: LoFi, no fp32 accumulation, no L1 accumulation)."""
    fidelity = getattr(config, "math_fidelity", pc.WormholeComputeKernelConfig().math_fidelity)
    phases = costs.fidelity_phases(int(fidelity))
    name = {1: "LoFi", 2: "HiFi2", 3: "HiFi3", 4: "HiFi4"}[phases]
    return (
        phases,
        bool(getattr(config, "fp32_dest_acc_en", False)),
        bool(getattr(config, "packer_l1_acc", False)),
        name,
    )


def check_matmul_config(
    op: str, a: Tensor, b: Tensor, program_config: Any, compute_kernel_config: Any,
    transpose_a: bool, transpose_b: bool,
) -> None:  # fmt: skip
    """tt-metal's checks of ``program_config`` for ``a @ b`` (nothing without one)."""
    if program_config is None:
        return
    dev = _device_of([a, b])
    sa, sb = list(a.padded_shape), list(b.padded_shape)
    if transpose_a and len(sa) >= 2:
        sa[-1], sa[-2] = sa[-2], sa[-1]
    if transpose_b and len(sb) >= 2:
        sb[-1], sb[-2] = sb[-2], sb[-1]
    sa = [1, *sa] if len(sa) == 1 else sa
    sb = [*sb, 1] if len(sb) == 1 else sb
    grid = (dev.grid_x, dev.grid_y) if dev is not None else (64, 64)
    pc.check_program_config(
        op,
        program_config,
        m_tiles=(math.prod(sa[:-2]) or 1) * -(-sa[-2] // 32),
        k_tiles=-(-sa[-1] // 32),
        n_tiles=-(-sb[-1] // 32),
        fp32_dest_acc=_fidelity(compute_kernel_config)[1],
        dst_tiles=_dst_tiles(dev, compute_kernel_config),
        device_grid=grid,
    )


def _dst_tiles(dev: Any, config: Any) -> int:
    """DST tiles of one acquire under ``config``: the kernel API's rule (the target's)."""
    physical = dev.capacity.dst_physical_tiles if dev is not None else 16
    compute = ComputeConfig(
        fp32_dest_acc_en=bool(getattr(config, "fp32_dest_acc_en", False)),
        dst_full_sync_en=bool(getattr(config, "dst_full_sync_en", False)),
    )
    return dst_tiles(physical, compute)


def _matmul(op: str, args: tuple, kwargs: dict, result: Any) -> OpRecord | None:
    names = ("input_tensor_a", "input_tensor_b", "bias")
    given = dict(zip(names, args))
    given.update({k: v for k, v in kwargs.items() if k in names})
    a, b = given.get("input_tensor_a"), given.get("input_tensor_b")
    out = _tensors(result)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or not out:
        return None
    dev = _device_of([a, b])
    if dev is None:
        return None
    sa, sb = list(a.padded_shape), list(b.padded_shape)
    if kwargs.get("transpose_a") and len(sa) >= 2:
        sa[-1], sa[-2] = sa[-2], sa[-1]
    if kwargs.get("transpose_b") and len(sb) >= 2:
        sb[-1], sb[-2] = sb[-2], sb[-1]
    sa = [1, *sa] if len(sa) == 1 else sa
    sb = [*sb, 1] if len(sb) == 1 else sb
    mt, kt, nt = -(-sa[-2] // 32), -(-sa[-1] // 32), -(-sb[-1] // 32)
    batch_a, batch_b = math.prod(sa[:-2]) or 1, math.prod(sb[:-2]) or 1
    phases, fp32, l1_acc, fidelity = _fidelity(kwargs.get("compute_kernel_config"))
    config = kwargs.get("program_config")
    grid = (dev.grid_x, dev.grid_y)
    core_grid = kwargs.get("core_grid")
    if core_grid is not None:
        grid = (min(grid[0], int(core_grid.x)), min(grid[1], int(core_grid.y)))
    tile_bytes = (_page_bytes(a), _page_bytes(b), _page_bytes(out[0]))
    prog = mm.select_program(
        m_tiles=mt, k_tiles=kt, n_tiles=nt, batch_a=batch_a, batch_b=batch_b, grid=grid,
        tile_bytes=tile_bytes, fp32=fp32, config=config,
    )  # fmt: skip
    arch = dev.perf.arch
    t = mm.program_time(
        arch, prog, k_tiles=kt, tile_bytes=tile_bytes, fidelity=phases, fp32=fp32,
        l1_acc=l1_acc, in_dram=(_in_dram(a), _in_dram(b), _in_dram(out[0])),
        banks=dev.num_dram_channels,
    )  # fmt: skip
    busy = {"compute": t.compute, "NoC": t.noc, "DRAM": t.dram}
    inputs = [tensor_info(x) for x in (a, b, given.get("bias")) if isinstance(x, Tensor)]
    return _record(
        "MatmulDeviceOperation", dev, prog.cores, t.total, busy, 2, 1,
        processors={"BRISC": t.total, "NCRISC": t.total, "TRISC0": t.total, "TRISC1": t.total, "TRISC2": t.total},
        per_core=(t.total, t.total, t.total), math_fidelity=fidelity, inputs=inputs,
        outputs=[tensor_info(out[0])], attributes=prog.attributes(), ideal_cycles=t.ideal,
    )  # fmt: skip


# -- the eltwise / reduce / data-movement family --------------------------------------------------

_SFPU = {
    "neg": "negative", "reciprocal": "recip", "relu6": "relu_max", "logical_not": "signbit",
    "divide": "div_unary", "isclose": "binary", "where": "binary", "eq": "binary",
    "ne": "binary", "lt": "binary", "le": "binary", "gt": "binary", "ge": "binary",
    "logical_and": "binary", "logical_or": "binary", "maximum": "binary", "minimum": "binary",
}  # fmt: skip
_FPU = {"add": False, "subtract": False, "multiply": True}
_REDUCE = {"sum": False, "mean": False, "max": True, "min": True}
_MOVES = {
    "concat": "ConcatDeviceOperation", "permute": "PermuteDeviceOperation",
    "transpose": "TransposeDeviceOperation", "repeat": "RepeatDeviceOperation",
}  # fmt: skip
_VIEWS = frozenset({"reshape", "squeeze", "unsqueeze"})


def _per_core(
    arch: ArchPerf,
    tiles_in: list[tuple[int, int, bool]],
    tiles_out: tuple[int, int, bool],
    compute: int,
    cores: int,
    banks: int,
) -> tuple[int, dict[str, int]]:
    """Cycles of a pipelined reader / compute / writer program over ``cores`` cores:
    ``tiles_in`` and ``tiles_out`` are (tiles, bytes per tile, in DRAM), ``compute`` the
    compute kernel's cycles per output tile."""
    n_out, b_out, out_dram = tiles_out
    per_core = -(-n_out // cores)
    rnum, rden = arch.read_rate
    dnum, dden = arch.dram_core_rate
    read = 0
    total_dram = 0
    for n, nbytes, dram in tiles_in:
        share = -(-n // cores)
        num, den = (dnum, dden) if dram else (rnum, rden)
        read += share * (arch.issue_read + -(-nbytes * den // num))
        total_dram += n * nbytes if dram else 0
    wnum, wden = (dnum, dden) if out_dram else arch.write_rate
    write = per_core * (arch.issue_write + -(-b_out * wden // wnum))
    total_dram += n_out * b_out if out_dram else 0
    bnum, bden = arch.dram_bank_rate
    chip = -(-total_dram * bden // (bnum * banks))
    body = max(read, per_core * compute, write, chip)
    latency = arch.base_read + arch.dram_latency + arch.base_write + 20 * arch.hop
    busy = {"compute": per_core * compute, "NoC": max(read, write) if not total_dram else 0,
            "DRAM": max(read, write, chip) if total_dram else 0}  # fmt: skip
    return body + latency, busy


def _family(op: str, args: tuple, kwargs: dict, result: Any) -> OpRecord | None:
    short = op.removeprefix("ttnn.")
    if short in _VIEWS:
        return None
    ins = _tensors(args) + _tensors([v for k, v in kwargs.items() if k != "output_tensor"])
    outs = _tensors(result)
    dev = _device_of(ins + outs)
    if dev is None or not outs:
        return None
    arch = dev.perf.arch
    out = outs[0]
    cores = max(1, min(dev.grid_x * dev.grid_y, _tiles(out)))
    p_out = _page_bytes(out)
    tiles_in = [(_tiles(t), _page_bytes(t), _in_dram(t)) for t in ins]
    tiles_out = (_tiles(out), p_out, _in_dram(out))
    n_dm, n_compute = 2, 1
    if short in _MOVES:
        name, compute, n_compute = _MOVES[short], 0, 0
    elif short in _REDUCE or short == "softmax":
        tiles_in_total = sum(n for n, _, _ in tiles_in)
        per_out = max(1, tiles_in_total // max(1, _tiles(out)))
        unpack = costs.unpack_cycles(per_out * tiles_in[0][1], arch.unpack_bytes) if tiles_in else 0
        math_c = per_out * costs.reduce_cycles(_REDUCE.get(short, True), 1)
        if short == "softmax":  # max, exp, sum and scale passes over each row
            name = "SoftmaxDeviceOperation"
            math_c = 2 * math_c + costs.sfpu_cycles("exp") + costs.eltwise_cycles(True, 1)
            unpack *= 3
        else:
            name = "ReduceDeviceOperation"
        compute = max(unpack, math_c, costs.pack_cycles(p_out, arch.pack_bytes))
    else:
        operands = [b for _, b, _ in tiles_in]
        if short in _FPU and len(operands) >= 2:
            name = "BinaryNgDeviceOperation"
            unpack = costs.unpack_cycles(sum(operands[:2]), arch.unpack_pair_bytes)
            math_c = costs.eltwise_cycles(_FPU[short], 1)
        else:
            name = "BinaryNgDeviceOperation" if len(operands) >= 2 else "UnaryDeviceOperation"
            unpack = costs.unpack_cycles(sum(operands) or p_out, arch.unpack_bytes)
            math_c = costs.DATACOPY_TILE * max(1, len(operands)) + costs.sfpu_cycles(
                _SFPU.get(short, short)
            )
        compute = max(unpack, math_c, costs.pack_cycles(p_out, arch.pack_bytes))
    cycles, busy = _per_core(arch, tiles_in, tiles_out, compute, cores, dev.num_dram_channels)
    return _record(
        name, dev, cores, cycles, busy, n_dm, n_compute,
        processors={"BRISC": cycles, "NCRISC": cycles, **({"TRISC0": cycles, "TRISC1": cycles, "TRISC2": cycles} if n_compute else {})},
        per_core=(cycles, cycles, cycles), inputs=[tensor_info(t) for t in ins[:3]],
        outputs=[tensor_info(out)],
    )  # fmt: skip


MODELS: dict[str, Model] = {"ttnn.matmul": _matmul, "ttnn.linear": _matmul}


def record(op: str, args: tuple, kwargs: dict, result: Any) -> None:
    """Record the device time of one ttnn operation call (``--stats``, ``--perf-report``)."""

    rec = MODELS.get(op, _family)(op, args, kwargs, result)
    if rec is not None:
        session.record_op(rec)
