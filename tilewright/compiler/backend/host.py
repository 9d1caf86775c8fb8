"""The host side of a compiled operation call: a JSON description and a ttnn program.

``tilewright emit prog.py -o DIR`` writes, for every distinct compiled operation call,
``DIR/<operation>/``:

* ``<kernel>.cpp`` -- each kernel's C++ (``emit.emit_kernel``) and the headers it
  includes besides the tt-metal API (``ttlang/support.h``, the external calls' headers);
* ``program.json`` -- the host description: grid, tensors (shape, dtype, layout,
  memory), circular buffers (index, format, page size, total size, L1 address),
  semaphores, and per kernel its processor, NoC, compile-time args, runtime-argument
  names and per-core values, and compute configuration;
* ``run.py`` -- a ttnn ``generic_op`` program that builds the same program from
  ``program.json`` and runs it on freshly made tensors (``tilewright run run.py``).

Runtime arguments named ``<tensor>.address`` are the tensors' buffer addresses at run
time; the others are per-node values from the operation body.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from tilewright.compiler.backend.build import INCLUDE_DIR
from tilewright.compiler.backend.emit import emit_kernel
from tilewright.device.formats import TTNN_TO_DATA_FORMAT
from tilewright.device.kernel_api.accessor import tensor_accessor_args

if TYPE_CHECKING:
    from tilewright.compiler.backend.compile import CompiledCall

__all__ = ["host_description", "write_operation", "write_results", "RUNNER"]


def _ttnn_names() -> dict:
    return {fmt: t.name.lower() for t, fmt in TTNN_TO_DATA_FORMAT.items()}


_TTNN_NAME = _ttnn_names()
_FIDELITY = {0: "LoFi", 2: "HiFi2", 3: "HiFi3", 4: "HiFi4"}


def _range(program_range) -> list[list[int]]:
    r = next(iter(program_range))
    return [[r.start.x, r.start.y], [r.end.x, r.end.y]]


def _memory_config(mc) -> dict | None:
    """A memory config as plain data (``run.py`` rebuilds it exactly, shard spec included)."""
    if mc is None:
        return None
    out: dict[str, object] = {
        "memory_layout": mc.memory_layout.name,
        "buffer_type": mc.buffer_type.name,
    }
    spec = mc.shard_spec
    if spec is not None:
        out["shard"] = {
            "grid": [[[r.start.x, r.start.y], [r.end.x, r.end.y]] for r in spec.grid],
            "shape": list(spec.shape),
            "orientation": spec.orientation.name,
        }
    return out


def _copy_header(src: Path, rel: Path, out: Path, written: list[Path], seen: set[Path]) -> None:
    """Copy ``src`` to ``out / rel`` and, recursively, the local headers it includes
    (``#include "x.h"``, found next to it): a build of the copy needs every one."""
    dest = out / rel
    if dest in seen:
        return
    seen.add(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    written.append(dest)
    for match in _LOCAL_INCLUDE.finditer(src.read_text(errors="replace")):
        name = Path(match.group(1))
        found = src.parent / name
        if found.is_file() and not name.is_absolute():
            _copy_header(found, rel.parent / name, out, written, seen)


_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def host_description(record, compiled: CompiledCall, program) -> dict:
    """The program of one compiled call as plain data (``program.json``)."""
    world = compiled.world
    tensors = []
    for info in world.tensors.values():
        t = info.tensor
        buf = t.buffer
        tensors.append(
            {
                "param": info.param,
                "shape": list(t.shape),
                "dtype": t.dtype.name,
                "layout": t.layout.name,
                "memory": buf.buffer_type.name,
                "sharded": buf.shard is not None,
                "memory_config": _memory_config(t.memory_config()),
                "accessor_words": list(tensor_accessor_args(buf)),
            }
        )
    order = {p: i for i, p in enumerate(record.interface.params)}
    tensors.sort(key=lambda t: order.get(t["param"], 0))
    cbs = []
    for cores, cfg in program.circular_buffers:
        for index in cfg.indices():
            fmt = cfg.data_formats[index]
            cbs.append(
                {
                    "index": index,
                    "name": cfg.names.get(index, ""),
                    "data_format": getattr(fmt, "name", str(fmt)),
                    "dtype": _TTNN_NAME.get(fmt, ""),
                    "page_size": cfg.page_sizes[index],
                    "total_size": cfg.total_size,
                    "address": cfg.fixed_address,
                    "cores": _range(cores),
                }
            )
    sems = [
        {"id": s.sem_id, "initial": s.initial_value, "cores": _range(s.cores)}
        for s in program.semaphores
    ]
    kernels = []
    for spec, low in zip(program.kernels, compiled.lowered):
        k = low.kernel
        entry: dict[str, object] = {
            "name": k.name,
            "kind": k.kind,
            "processor": k.slot,
            "source": f"{k.name}.cpp",
            "cores": _range(spec.cores),
            "compile_args": list(k.compile_args),
            "runtime_arg_names": list(k.args),
            "runtime_args": {
                f"{x},{y}": [values[n] for _, values in low.args]
                for n, (x, y) in enumerate(world.nodes)
            },
            "headers": list(k.headers),
            "include_paths": list(k.include_paths),
        }
        if k.kind == "compute":
            entry["compute"] = {
                "math_fidelity": _FIDELITY.get(k.math_fidelity, "HiFi4"),
                "fp32_dest_acc_en": k.fp32_dest_acc,
                "dst_full_sync_en": k.dst_full_sync,
            }
        else:
            entry["noc"] = k.noc
        kernels.append(entry)
    return {
        "operation": record.name,
        "source": record.source.file,
        "grid": list(world.grid),
        "tensors": tensors,
        "circular_buffers": cbs,
        "semaphores": sems,
        "kernels": kernels,
    }


def write_operation(
    directory: str | os.PathLike, record, compiled: CompiledCall, program
) -> list[Path]:
    """Write one compiled call's C++, ``program.json`` and ``run.py`` under ``directory``."""
    out = Path(directory)
    (out / "ttlang").mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    shutil.copyfile(INCLUDE_DIR / "ttlang" / "support.h", out / "ttlang" / "support.h")
    written.append(out / "ttlang" / "support.h")
    seen: set[Path] = set()
    for low in compiled.lowered:
        k = low.kernel
        path = out / f"{k.name}.cpp"
        path.write_text(emit_kernel(k))
        written.append(path)
        for header in k.headers:
            for base in k.include_paths:
                src = Path(base) / header
                if src.is_file():
                    _copy_header(src, Path(header), out, written, seen)
                    break
    desc = host_description(record, compiled, program)
    (out / "program.json").write_text(json.dumps(desc, indent=2) + "\n")
    (out / "run.py").write_text(RUNNER.format(operation=record.name))
    written += [out / "program.json", out / "run.py"]
    np.savez(out / "inputs.npz", **cast(dict[str, Any], _values(compiled)))
    written.append(out / "inputs.npz")
    return written


def _values(compiled: CompiledCall) -> dict[str, np.ndarray]:
    """Every tensor argument's values now (the inputs before the launch, or the results
    after it): float32 for the float types (bf16 widens exactly), their own integers else."""
    out = {}
    for info in compiled.world.tensors.values():
        t = info.tensor.to_torch() if hasattr(info.tensor, "to_torch") else None
        if t is None:  # pragma: no cover - every argument is a ttnn tensor
            continue
        if t.is_floating_point():
            t = t.float()
        out[info.param] = t.numpy()
    return out


def write_results(directory: str | os.PathLike, compiled: CompiledCall) -> Path:
    """Write the call's results (its tensors after the launch) for ``run.py`` to check."""
    path = Path(directory) / "expected.npz"
    np.savez(path, **cast(dict[str, Any], _values(compiled)))
    return path


RUNNER = '''"""Rerun the compiled TT-Lang operation '{operation}' with ttnn.generic_op, and check it.

Generated by `tilewright emit`: the kernels are the .cpp files next to this file, the
host program is program.json, the call's tensors before and after the original launch
are inputs.npz and expected.npz.  Run it with `tilewright run run.py`: it makes the
tensors with the recorded shapes, types, layouts and memory configs (shard specs
included) from the recorded inputs, checks that each gives the compile-time args the
kernels were built for, runs the program and compares every tensor with the recorded
result, bit for bit; it prints "PASS {operation}" or exits with status 1 naming the
tensors that differ.
"""

import json
import os
import sys

import numpy as np
import torch

import ttnn

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "program.json")) as f:
    DESC = json.load(f)


def core_range(cores):
    (x0, y0), (x1, y1) = cores
    return ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(x0, y0), ttnn.CoreCoord(x1, y1))])


def program_descriptor(tensors):
    """The ProgramDescriptor of the operation on ``tensors`` (parameter name -> tensor)."""
    kernels = []
    for k in DESC["kernels"]:
        rt = ttnn.RuntimeArgs()
        for key, values in k["runtime_args"].items():
            x, y = (int(v) for v in key.split(","))
            args = []
            for name, value in zip(k["runtime_arg_names"], values):
                if name.endswith(".address"):
                    value = tensors[name.removesuffix(".address")].buffer_address()
                args.append(value)
            rt[x][y] = args
        if k["kind"] == "compute":
            c = k["compute"]
            config = ttnn.ComputeConfigDescriptor(
                math_fidelity=getattr(ttnn.MathFidelity, c["math_fidelity"]),
                fp32_dest_acc_en=c["fp32_dest_acc_en"],
                dst_full_sync_en=c["dst_full_sync_en"],
            )
        else:
            processor = 0 if k["processor"] == "brisc" else 1  # RISCV_0 (BRISC) / RISCV_1 (NCRISC)
            config = ttnn.DataMovementConfigDescriptor(processor=processor, noc=k["noc"])
        kernels.append(
            ttnn.KernelDescriptor(
                kernel_source=os.path.join(HERE, k["source"]),
                core_ranges=core_range(k["cores"]),
                compile_time_args=k["compile_args"],
                runtime_args=rt,
                config=config,
            )
        )
    cbs = [
        ttnn.CBDescriptor(
            cb["total_size"],
            core_range(cb["cores"]),
            [ttnn.CBFormatDescriptor(cb["index"], getattr(ttnn, cb["dtype"]), cb["page_size"])],
        )
        for cb in DESC["circular_buffers"]
    ]
    semaphores = [
        ttnn.SemaphoreDescriptor(core_ranges=core_range(s["cores"]), initial_value=s["initial"])
        for s in DESC["semaphores"]
    ]
    return ttnn.ProgramDescriptor(kernels=kernels, cbs=cbs, semaphores=semaphores)


def memory_config(mc):
    """The recorded memory config (interleaved or sharded, DRAM or L1)."""
    shard = None
    if mc.get("shard"):
        s = mc["shard"]
        grid = ttnn.CoreRangeSet(
            [ttnn.CoreRange(ttnn.CoreCoord(*lo), ttnn.CoreCoord(*hi)) for lo, hi in s["grid"]]
        )
        shard = ttnn.ShardSpec(grid, s["shape"], getattr(ttnn.ShardOrientation, s["orientation"]))
    return ttnn.MemoryConfig(
        getattr(ttnn.TensorMemoryLayout, mc["memory_layout"]),
        getattr(ttnn.BufferType, mc["buffer_type"]),
        shard,
    )


def make_tensors(device):
    """Each tensor as the original call had it: its values, type, layout and memory."""
    inputs = np.load(os.path.join(HERE, "inputs.npz"))
    out = {{}}
    for t in DESC["tensors"]:
        tensor = ttnn.from_torch(
            torch.from_numpy(inputs[t["param"]]),
            dtype=getattr(ttnn, t["dtype"].lower()),
            layout=getattr(ttnn, t["layout"] + "_LAYOUT"),
            device=device,
            memory_config=memory_config(t["memory_config"]),
        )
        words = ttnn.TensorAccessorArgs(tensor).get_compile_time_args()
        if list(words) != t["accessor_words"]:
            sys.exit(
                f"{{t['param']}}: this device places the tensor differently from the original "
                f"call (accessor words {{list(words)}}, the kernels were built for "
                f"{{t['accessor_words']}}); rerun on the same board"
            )
        out[t["param"]] = tensor
    return out


def check(tensors):
    """Every tensor against the original call's result, bit for bit."""
    expected = np.load(os.path.join(HERE, "expected.npz"))
    wrong = []
    for name, t in tensors.items():
        got = ttnn.to_torch(t)
        got = (got.float() if got.is_floating_point() else got).numpy()
        want = expected[name]
        if got.shape != want.shape or got.tobytes() != want.tobytes():
            wrong.append(name)
    if wrong:
        sys.exit(f"FAIL {operation}: {{', '.join(wrong)}} differ from the original call's result")
    print("PASS {operation}")


if __name__ == "__main__":
    device = ttnn.open_device(device_id=0)
    try:
        tensors = make_tensors(device)
        ttnn.generic_op(list(tensors.values()), program_descriptor(tensors))
        check(tensors)
    finally:
        ttnn.close_device(device)
'''
