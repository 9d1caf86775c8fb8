"""Every math op of the compute kernel API through both kernel APIs, on the same bytes.

The op registry (``device/ops``) has one numpy implementation per op, which the Python
kernel API applies; the native runtime has the C++ one.  Each case below is one sequence
of compute-API calls, written once as data and rendered both as C++ (one native kernel
with a switch over the case) and as Python kernel-API calls; both run on the same input
tiles (random float32 values with NaN, infinities, signed zeros) with fp32 DST (no bf16
rounding to hide differences) and their output bits are compared.

Exceptions (bounded, from the registry's own rows): the transcendental SFPU functions
without an SFPU program (``sfpu_algorithms``; those are bit for bit here), which the runtime
evaluates in double and rounds once while numpy's float32 loops are
within ~2.5 ulps of that -- each row's ``ulps`` (``SfpuForm.ulps``) is the bound checked
here.  Everything else is bit for bit.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import pytest

from tilewright.device import kernel_api as k
from tilewright.device.coords import CoreCoord
from tilewright.device.formats import DataFormat, TILE_32x32, decode_block, encode_block
from tilewright.device.kernel_api import (
    BroadcastType,
    EltwiseBinaryReuseDestType,
    EltwiseBinaryType,
    PoolType,
    ReduceDim,
)
from tilewright.device.ops.tile_ops import FPU_BINARY, SFPU_BINARY, SFPU_OPS
from tilewright.device.program import (
    CircularBufferConfig,
    ComputeConfig,
    MathFidelity,
    Program,
    ReaderDataMovementConfig,
    WriterDataMovementConfig,
)
from tilewright.native.kernels import NativeKernel


def bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


@dataclass(frozen=True)
class Call:
    """One compute-API call: its name, runtime arguments and template arguments (enum members:
    ``reduce_tile<PoolType::MAX, ReduceDim::REDUCE_ROW>`` in C++, trailing arguments in Python)."""

    fn: str
    args: tuple = ()
    template: tuple = ()

    def cpp(self) -> str:
        t = (
            f"<{', '.join(f'{type(v).__name__}::{v.name}' for v in self.template)}>"
            if self.template
            else ""
        )
        return f"{self.fn}{t}({', '.join(_cpp_value(a) for a in self.args)});"

    def python(self) -> None:
        getattr(k, self.fn)(*self.args, *self.template)


def _cpp_value(a) -> str:
    if isinstance(a, float):
        return f"{a!r}f"
    if isinstance(a, IntEnum):
        return f"{type(a).__name__}::{a.name}"
    return f"{int(a)}u"


COPY_A = Call("copy_tile", (0, 0, 0))
COPY_B = Call("copy_tile", (1, 0, 1))
F_SAMPLES = (0.75, -0.4, 2.0)
I_SAMPLES = {"power_iterative": 3, "round": 1}


def _sfpu_case(name: str) -> tuple[Call, ...]:
    op = SFPU_OPS[name]
    if op.template:  # typecast_tile<IN, OUT>(idst): float32 to bfloat16
        formats = (DataFormat.Float32, DataFormat.Float16_b)
        return (COPY_A, Call(op.init, (), formats), Call(op.function, (0,), formats))
    params = [
        bits(F_SAMPLES[i]) if kind == "f" else I_SAMPLES.get(name, 2)
        for i, kind in enumerate(op.params)
    ]
    return (COPY_A, Call(op.init), Call(op.function, (0, *params)))


def _cases() -> dict[str, tuple[tuple[Call, ...], int]]:
    """Case name -> (calls, ulps allowed)."""
    cases: dict[str, tuple[tuple[Call, ...], int]] = {}
    for name, op in SFPU_OPS.items():
        cases[f"sfpu:{name}"] = (_sfpu_case(name), op.ulps)
    for op in SFPU_BINARY.values():
        calls = (COPY_A, COPY_B, Call(f"{op.name}_init"), Call(op.name, (0, 1, 0)))
        cases[f"sfpu_binary:{op.op}"] = (calls, 0)
    for op in FPU_BINARY.values():
        cases[f"fpu:{op.op}"] = ((Call(f"{op.op}_tiles", (0, 1, 0, 0, 0)),), 0)
        for kind in ("rows", "cols", "scalar"):
            calls = (Call(f"{op.op}_tiles_bcast_{kind}", (0, 1, 0, 0, 0)),)
            cases[f"fpu:{op.op}_bcast_{kind}"] = (calls, 0)
        elw = {"add": EltwiseBinaryType.ELWADD, "sub": EltwiseBinaryType.ELWSUB}.get(
            op.op, EltwiseBinaryType.ELWMUL
        )
        for reuse in (
            EltwiseBinaryReuseDestType.DEST_TO_SRCA,
            EltwiseBinaryReuseDestType.DEST_TO_SRCB,
        ):
            calls = (
                Call("copy_tile", (1, 0, 0)),
                Call("binary_dest_reuse_tiles", (0, 0, 0), (elw, reuse)),
            )
            cases[f"fpu:{op.op}_reuse_{reuse.name.lower()}"] = (calls, 0)
    for transpose in (0, 1):
        cases[f"matmul:transpose={transpose}"] = (
            (
                Call("mm_init_short", (0, 1, transpose)),
                Call("matmul_tiles", (0, 1, 0, 0, 0, transpose)),
            ),
            0,
        )
    cases["matmul_block"] = (
        (
            Call("mm_block_init_short", (0, 1, 0, 1, 1, 1)),
            Call("matmul_block", (0, 1, 0, 0, 0, 0, 1, 1, 1)),
        ),
        0,
    )
    for pool in (PoolType.SUM, PoolType.MAX):
        for dim in ReduceDim:
            calls = (COPY_A, Call("reduce_tile", (0, 1, 0, 0, 0), (pool, dim)))
            cases[f"reduce:{pool.name}:{dim.name}"] = (calls, 0)
    cases["transpose_wh_tile"] = ((Call("transpose_wh_tile", (0, 0, 0)),), 0)
    cases["transpose_wh_dest"] = ((COPY_A, Call("transpose_wh_dest", (0,))), 0)
    cases["copy_tile:transpose"] = ((Call("copy_tile_to_dst_init_short", (0, 1)), COPY_A), 0)
    for kind in (BroadcastType.ROW, BroadcastType.COL, BroadcastType.SCALAR):
        cases[f"unary_bcast:{kind.name}"] = ((Call("unary_bcast", (0, 0, 0), (kind,)),), 0)
    cases["fill_tile"] = ((Call("fill_tile", (0, -1.25)),), 0)
    return cases


CASES = _cases()


def _source(cases=None) -> str:
    """One native kernel running case ``get_arg_val(0)`` of ``cases`` (default: CASES)."""
    cases = CASES if cases is None else cases
    lines = [
        "#include <cstdint>",
        '#include "api/compute/compute_kernel_api.h"',
        '#include "api/compute/eltwise_binary_sfpu.h"',
        '#include "api/compute/eltwise_unary/fill.h"',
        "void kernel_main() {",
        "    const uint32_t which = get_arg_val<uint32_t>(0);",
        "    cb_wait_front(0, 1);",
        "    cb_wait_front(1, 1);",
        "    cb_reserve_back(16, 1);",
        "    tile_regs_acquire();",
        "    switch (which) {",
    ]
    for i, (calls, _ulps) in enumerate(cases.values()):
        lines.append(f"        case {i}: {' '.join(c.cpp() for c in calls)} break;")
    lines += [
        "        default: break;",
        "    }",
        "    tile_regs_commit();",
        "    tile_regs_wait();",
        "    pack_tile(0, 16);",
        "    tile_regs_release();",
        "    cb_push_back(16, 1);",
        "    cb_pop_front(0, 1);",
        "    cb_pop_front(1, 1);",
        "}",
    ]
    return "\n".join(lines) + "\n"


SOURCE = _source()


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    a = (rng.standard_normal(1024) * 2).astype(np.float32)
    a[:8] = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0]
    a[8:12] = [np.nan, np.inf, -np.inf, 0.999]
    b = (rng.standard_normal(1024) * 1.5).astype(np.float32)
    b[:4] = [1.0, -0.0, 0.0, 2.0]  # [0, 0] is the scaler / broadcast scalar
    b[12:14] = [np.nan, np.inf]
    return a.reshape(32, 32), b.reshape(32, 32)


def _run(
    device,
    compute,
    args,
    fp32_dest: bool = True,
    fidelity: MathFidelity = MathFidelity.HiFi4,
    inputs: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    core = CoreCoord(0, 0)
    program = Program("differential")
    fp32 = DataFormat.Float32
    for index in (0, 1, 16):
        program.create_circular_buffer(
            core, CircularBufferConfig(4096, {index: fp32}).set_page_size(index, 4096)
        )
    data = [encode_block(x, fp32, TILE_32x32) for x in (inputs or _inputs())]
    out: list[np.ndarray] = []

    def reader():
        for cb, tile in ((0, data[0]), (1, data[1])):
            k.cb_reserve_back(cb, 1)
            k.write_l1(k.get_write_ptr(cb), tile)
            k.cb_push_back(cb, 1)

    def writer():
        k.cb_wait_front(16, 1)
        out.append(k.read_l1(k.get_read_ptr(16), 4096))
        k.cb_pop_front(16, 1)

    program.create_kernel(reader, core, ReaderDataMovementConfig())
    kernel = program.create_kernel(
        compute,
        core,
        ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=fp32_dest),
        name="ops",
    )
    if args is not None:
        program.set_runtime_args(kernel, core, args)
    program.create_kernel(writer, core, WriterDataMovementConfig())
    device.command_queue.enqueue_program(program)
    return decode_block(out[0], fp32, TILE_32x32, 1, 1)


def _python_kernel(calls):
    def kernel():
        k.cb_wait_front(0, 1)
        k.cb_wait_front(1, 1)
        k.cb_reserve_back(16, 1)
        k.tile_regs_acquire()
        for call in calls:
            call.python()
        k.tile_regs_commit()
        k.tile_regs_wait()
        k.pack_tile(0, 16)
        k.tile_regs_release()
        k.cb_push_back(16, 1)
        k.cb_pop_front(0, 1)
        k.cb_pop_front(1, 1)

    return kernel


def test_every_op_of_the_registry_has_a_case():
    """A new SFPU / FPU op of the table is compared without editing this file."""
    names = {n.split(":")[1] for n in CASES if n.startswith("sfpu:")}
    assert names == set(SFPU_OPS)
    assert {n.split(":")[1] for n in CASES if n.startswith("sfpu_binary:")} == set(SFPU_BINARY)


@pytest.mark.parametrize("fp32_dest", [True, False], ids=["dst-fp32", "dst-bf16"])
@pytest.mark.parametrize("case", list(CASES))
def test_both_kernel_apis_compute_the_same_bits(device, case, fp32_dest):
    """Both DST modes: fp32, and bf16 ("float16_b") rounded on every DST write (issue 23)."""
    calls, ulps = CASES[case]
    index = list(CASES).index(case)
    native = _run(device, NativeKernel(source=SOURCE, name="ops"), [index], fp32_dest)
    python = _run(device, _python_kernel(calls), None, fp32_dest)
    assert np.array_equal(np.isnan(native), np.isnan(python)), case
    ok = ~np.isnan(native)
    a, b = native.view(np.int32)[ok].astype(np.int64), python.view(np.int32)[ok].astype(np.int64)
    diff = np.abs(a - b)
    assert int(diff.max(initial=0)) <= ulps, (case, int(diff.max()), ulps)
