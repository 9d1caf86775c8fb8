"""Test programs of the device-time model, each as Python kernels with a C++ twin (cpp/).

``mm`` is a 1 x N row of cores computing ``exp(a @ b)`` for one output tile per core:
the sender core reads in0 from DRAM and multicasts it (linked) to the row after the
receivers signal ready; every core reads its in1 tiles from DRAM; the compute kernel
runs K tile matmuls (HiFi2, fp32 accumulation) and an SFPU exp; the writer writes the
tile back -- CBs, semaphores, unicast and multicast NoC traffic, DRAM, the compute
pipeline: what the two engines must time identically.
"""

from __future__ import annotations

from pathlib import Path

from tilewright import ttnn
from tilewright.device.formats import DataFormat
from tilewright.device.kernel_api import (
    TensorAccessor,
    TensorAccessorArgs,
    cb_pop_front,
    cb_push_back,
    cb_reserve_back,
    cb_wait_front,
    exp_tile,
    exp_tile_init,
    get_arg_val,
    get_noc_addr,
    get_noc_multicast_addr,
    get_read_ptr,
    get_semaphore,
    get_write_ptr,
    matmul_tiles,
    mm_init,
    noc_async_read_barrier,
    noc_async_read_tile,
    noc_async_write_barrier,
    noc_async_write_multicast,
    noc_async_write_tile,
    noc_semaphore_inc,
    noc_semaphore_set,
    noc_semaphore_set_multicast,
    noc_semaphore_wait,
    pack_tile,
    tile_regs_acquire,
    tile_regs_commit,
    tile_regs_release,
    tile_regs_wait,
)
from tilewright.device.kernel_api.accessor import tensor_accessor_args
from tilewright.device.program import (
    CircularBufferConfig,
    ComputeConfig,
    MathFidelity,
    Program,
    ReaderDataMovementConfig,
    WriterDataMovementConfig,
)

CPP = Path(__file__).resolve().parent / "cpp"


def mm_reader():
    a_addr, b_addr, kt, col, ncols, sx, sy, x0, y0, x1, y1, n_recv, is_sender = (
        get_arg_val(i) for i in range(13)
    )
    args_a = TensorAccessorArgs(0)
    args_b = TensorAccessorArgs(args_a.next_compile_time_args_offset())
    a = TensorAccessor(args_a, a_addr, 2048)
    b = TensorAccessor(args_b, b_addr, 2048)
    ready, valid = get_semaphore(0), get_semaphore(1)
    for k in range(kt):
        cb_reserve_back(1, 1)
        noc_async_read_tile(k * ncols + col, b, get_write_ptr(1))
        cb_reserve_back(0, 1)
        dst = get_write_ptr(0)
        if is_sender:
            noc_async_read_tile(k, a, dst)
            noc_async_read_barrier()
            noc_semaphore_wait(ready, n_recv)
            noc_semaphore_set(ready, 0)
            noc_async_write_multicast(
                dst, get_noc_multicast_addr(x0, y0, x1, y1, dst), 2048, n_recv, True
            )
            noc_semaphore_set(valid, 1)
            noc_semaphore_set_multicast(
                valid, get_noc_multicast_addr(x0, y0, x1, y1, valid), n_recv
            )
            noc_async_write_barrier()
        else:
            noc_semaphore_set(valid, 0)
            noc_semaphore_inc(get_noc_addr(sx, sy, ready), 1)
            noc_semaphore_wait(valid, 1)
            noc_async_read_barrier()
        cb_push_back(1, 1)
        cb_push_back(0, 1)


def mm_compute():
    kt = get_arg_val(0)
    mm_init(0, 1, 16)
    tile_regs_acquire()
    for _ in range(kt):
        cb_wait_front(0, 1)
        cb_wait_front(1, 1)
        matmul_tiles(0, 1, 0, 0, 0)
        cb_pop_front(0, 1)
        cb_pop_front(1, 1)
    exp_tile_init()
    exp_tile(0)
    tile_regs_commit()
    cb_reserve_back(16, 1)
    tile_regs_wait()
    pack_tile(0, 16)
    tile_regs_release()
    cb_push_back(16, 1)


def mm_writer():
    out_addr, col = get_arg_val(0), get_arg_val(1)
    out = TensorAccessor(TensorAccessorArgs(0), out_addr, 2048)
    cb_wait_front(16, 1)
    noc_async_write_tile(col, out, get_read_ptr(16))
    noc_async_write_barrier()
    cb_pop_front(16, 1)


def mm_program(device, a, b, out, *, native: bool, ncols: int, kt: int) -> Program:
    """``out[0, c] = exp(a[0, :] @ b[:, c])`` on cores (0..ncols-1, 0), Python or C++ kernels."""
    from tilewright.native.kernels import NativeKernel

    def entry(fn, name: str):
        return NativeKernel(CPP / f"{name}.cpp") if native else fn

    program = Program("mm_mcast")
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(ncols - 1, 0))])
    for index in (0, 1, 16):
        cfg = CircularBufferConfig(2 * 2048, {index: DataFormat.Float16_b}).set_page_size(
            index, 2048
        )
        program.create_circular_buffer(cores, cfg)
    program.create_semaphore(cores, 0)
    program.create_semaphore(cores, 0)
    cta = tensor_accessor_args(a.buffer) + tensor_accessor_args(b.buffer)
    r = program.create_kernel(entry(mm_reader, "mm_reader"), cores, ReaderDataMovementConfig(cta))
    c = program.create_kernel(
        entry(mm_compute, "mm_compute"),
        cores,
        ComputeConfig(math_fidelity=MathFidelity.HiFi2, fp32_dest_acc_en=True),
    )
    w = program.create_kernel(
        entry(mm_writer, "mm_writer"),
        cores,
        WriterDataMovementConfig(tensor_accessor_args(out.buffer)),
    )
    sender = device.worker_core_from_logical_core(ttnn.CoreCoord(0, 0))
    lo = device.worker_core_from_logical_core(ttnn.CoreCoord(1, 0))
    hi = device.worker_core_from_logical_core(ttnn.CoreCoord(ncols - 1, 0))
    for col in range(ncols):
        core = ttnn.CoreCoord(col, 0)
        program.set_runtime_args(
            r,
            core,
            [
                a.buffer_address(),
                b.buffer_address(),
                kt,
                col,
                ncols,
                sender.x,
                sender.y,
                lo.x,
                lo.y,
                hi.x,
                hi.y,
                ncols - 1,
                int(col == 0),
            ],
        )
        program.set_runtime_args(c, core, [kt])
        program.set_runtime_args(w, core, [out.buffer_address(), col])
    return program
