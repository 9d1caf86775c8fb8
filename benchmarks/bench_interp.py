"""The kernel-IR interpreter (issue 13): raw IR run by the Python engine.

A raw-style loop on one core -- reader (64 pages through an accessor), compute (64 x
wait / copy_tile / mul-by-scalar SFPU / pack / push), writer -- built as kernel IR and run
three ways.  Prints one JSON object (medians over repeats, warm):

* ``interp_ms``: the three IR kernels run by the interpreter (``interp.python_kernel``);
* ``python_api_ms``: the same kernels written by hand against ``device.kernel_api`` (the
  floor for the Python engine: the interpreter calls exactly these functions);
* ``native_ms``: the IR emitted as C++ and run by the native engine (built once, untimed);
* ``interp_over_python_api``: the interpreter's overhead as a ratio to that floor.
"""

from __future__ import annotations

import json
import statistics
import struct
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from tests.kir.interp_harness import (  # noqa: E402
    accessor,
    cb,
    compute_loop,
    reader,
    run_ir,
    tensor,
    writer,
)
from tilewright import ttnn  # noqa: E402
from tilewright.device import kernel_api as ka  # noqa: E402
from tilewright.device.formats import DataFormat  # noqa: E402
from tilewright.device.program import (  # noqa: E402
    CircularBufferConfig,
    ComputeConfig,
    Program,
    ReaderDataMovementConfig,
    WriterDataMovementConfig,
)
from tilewright.kir.ir import const, u32  # noqa: E402

TILES = 64
REPEATS = 7
CORE = ttnn.CoreCoord(0, 0)


def _scale_body(b, i) -> None:
    b.op("cb.wait_front", 0, 1)
    b.op("cb.reserve_back", 16, 1)
    b.op("tile_regs.acquire")
    b.op("copy_tile", 0, u32(0), 0, 0)
    b.op("sfpu", "mul_scalar", 0, (const(2.5),))
    b.op("tile_regs.commit")
    b.op("tile_regs.wait")
    b.op("pack_tile", 0, 16, u32(0))
    b.op("tile_regs.release")
    b.op("cb.push_back", 16, 1)
    b.op("cb.pop_front", 0, 1)


def _python_api(device, a, out) -> None:
    """The same three kernels by hand, through the Python kernel API."""
    program = Program("bench_python_api")
    for index in (0, 16):
        cfg = CircularBufferConfig(2 * 2048, {index: DataFormat.Float16_b})
        program.create_circular_buffer(CORE, cfg.set_page_size(index, 2048))
    cta_a = ka.tensor_accessor_args(a.buffer)
    cta_o = ka.tensor_accessor_args(out.buffer)
    scale = int.from_bytes(struct.pack("<f", 2.5), "little")

    def read() -> None:
        acc = ka.TensorAccessor(ka.TensorAccessorArgs(0), ka.get_arg_val(0), 2048)
        for i in range(TILES):
            ka.cb_reserve_back(0, 1)
            ka.noc_async_read_page(i, acc, ka.get_write_ptr(0))
            ka.noc_async_read_barrier()
            ka.cb_push_back(0, 1)

    def compute() -> None:
        for _ in range(TILES):
            ka.cb_wait_front(0, 1)
            ka.cb_reserve_back(16, 1)
            ka.tile_regs_acquire()
            ka.copy_tile_to_dst_init_short(0, 0)
            ka.copy_tile(0, 0, 0)
            ka.binop_with_scalar_tile_init()
            ka.mul_unary_tile(0, scale)
            ka.tile_regs_commit()
            ka.tile_regs_wait()
            ka.pack_tile(0, 16, 0, True)
            ka.tile_regs_release()
            ka.cb_push_back(16, 1)
            ka.cb_pop_front(0, 1)

    def write() -> None:
        acc = ka.TensorAccessor(ka.TensorAccessorArgs(0), ka.get_arg_val(0), 2048)
        for i in range(TILES):
            ka.cb_wait_front(16, 1)
            ka.noc_async_write_page(i, acc, ka.get_read_ptr(16))
            ka.noc_async_write_barrier()
            ka.cb_pop_front(16, 1)

    r = program.create_kernel(read, CORE, ReaderDataMovementConfig(cta_a))
    program.create_kernel(compute, CORE, ComputeConfig(fp32_dest_acc_en=True))
    w = program.create_kernel(write, CORE, WriterDataMovementConfig(cta_o))
    program.set_runtime_args(r, CORE, [a.buffer_address()])
    program.set_runtime_args(w, CORE, [out.buffer_address()])
    device.command_queue.enqueue_program(program)


def _median_ms(fn) -> float:
    fn()  # warm: builds, caches
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return round(statistics.median(times) * 1e3, 2)


def main() -> None:
    device = ttnn.open_device(device_id=0)
    try:
        a = tensor(device, torch.randn(32, 32 * TILES))
        out = tensor(device, torch.zeros(32, 32 * TILES))
        c0, c16 = cb(0, "in"), cb(16, "out")
        kernels = [
            reader(accessor("a", a, 0, 0), c0, TILES),
            compute_loop("compute", (c0, c16), TILES, _scale_body),
            writer(accessor("out", out, 0, 0), c16, TILES),
        ]
        args = [[a.buffer_address()], [], [out.buffer_address()]]
        interp = _median_ms(lambda: run_ir(device, kernels, args, "python"))
        interp_out = ttnn.to_torch(out).clone()
        python_api = _median_ms(lambda: _python_api(device, a, out))
        assert torch.equal(ttnn.to_torch(out), interp_out), "hand-written kernels disagree"
        native = _median_ms(lambda: run_ir(device, kernels, args, "native"))
        assert torch.equal(ttnn.to_torch(out), interp_out), "native engine disagrees"
    finally:
        ttnn.close_device(device)
    result = {
        "tiles": TILES,
        "interp_ms": interp,
        "python_api_ms": python_api,
        "native_ms": native,
        "interp_over_python_api": round(interp / python_api, 2),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
