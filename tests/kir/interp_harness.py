"""Differential runs of kernel IR: the same kernels compiled (native engine) and interpreted.

``run_ir`` builds one device Program on core (0, 0) from verified IR kernels -- their
circular buffers, accessors' compile-time args, runtime args and semaphores -- installs each
kernel either as the native kernel the emitter builds (``native_kernel``) or as the Python
kernel the IR interpreter runs (``python_kernel``), and runs it.  Tests run both and compare
the output tensors bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from tilewright import ttnn
from tilewright.compiler.backend.build import native_kernel
from tilewright.device.coords import CoreRange, CoreRangeSet
from tilewright.device.formats import DataFormat
from tilewright.device.kernel_api.accessor import tensor_accessor_args
from tilewright.device.program import (
    CircularBufferConfig,
    ComputeConfig,
    Program,
    ReaderDataMovementConfig,
    WriterDataMovementConfig,
)
from tilewright.kir.builder import Builder
from tilewright.kir.interp import python_kernel
from tilewright.kir.ir import (
    KIND_COMPUTE,
    KIND_DM,
    AccessorDecl,
    Cast,
    CBDecl,
    Intrinsic,
    Kernel,
    Ty,
    Var,
    u32,
)

CORE = ttnn.CoreCoord(0, 0)
PAGE = {"Float16_b": 2048, "Float32": 4096}
ENGINES = ("native", "python")


def cb(index: int, name: str, pages: int = 2, fmt: str = "Float16_b") -> CBDecl:
    return CBDecl(index, name, fmt, PAGE[fmt], pages, 1)


def tensor(device, data: torch.Tensor, dtype=None):
    return ttnn.from_torch(
        data,
        dtype=dtype or ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.DRAM_MEMORY_CONFIG,
    )


def accessor(name: str, t, cta: int, addr_arg: int) -> AccessorDecl:
    words = tuple(tensor_accessor_args(t.buffer))
    pages = t.buffer.size // t.buffer.page_size
    return AccessorDecl(name, name, cta, words, addr_arg, t.buffer.page_size, (pages,))


def write_ptr(index: int) -> Intrinsic:
    return Intrinsic("write_ptr", (u32(index),), Ty.U32)


def read_ptr(index: int) -> Intrinsic:
    return Intrinsic("read_ptr", (u32(index),), Ty.U32)


def reader(acc: AccessorDecl, cbd: CBDecl, tiles: int, *, name: str = "reader") -> Kernel:
    """Tiles 0..tiles-1 of ``acc`` into ``cbd``, one page at a time (runtime arg 0: address)."""
    b = Builder(name, KIND_DM, slot="ncrisc", cbs=(cbd,), accessors=(acc,), args=("a.address",))
    i = b.local("i", Ty.I64)
    with b.for_(i, 0, tiles):
        b.op("cb.reserve_back", cbd.index, 1)
        b.op("noc.read_page", acc.name, Cast(i, Ty.U32), write_ptr(cbd.index))
        b.op("noc.read_barrier")
        b.op("cb.push_back", cbd.index, 1)
    return b.kernel()


def writer(acc: AccessorDecl, cbd: CBDecl, tiles: int, *, name: str = "writer") -> Kernel:
    b = Builder(name, KIND_DM, slot="brisc", cbs=(cbd,), accessors=(acc,), args=("out.address",))
    i = b.local("i", Ty.I64)
    with b.for_(i, 0, tiles):
        b.op("cb.wait_front", cbd.index, 1)
        b.op("noc.write_page", acc.name, Cast(i, Ty.U32), read_ptr(cbd.index))
        b.op("noc.write_barrier")
        b.op("cb.pop_front", cbd.index, 1)
    return b.kernel()


def compute_loop(
    name: str,
    cbs: Sequence[CBDecl],
    tiles: int,
    body: Callable[[Builder, Var], None],
    *,
    dst_tiles: int = 4,
    fp32: bool = True,
) -> Kernel:
    """A compute kernel running ``body(b, i)`` for i in range(tiles)."""
    b = Builder(name, KIND_COMPUTE, slot="trisc", cbs=tuple(cbs), dst_tiles=dst_tiles)
    i = b.local("i", Ty.I64)
    with b.for_(i, 0, tiles):
        body(b, i)
    k = b.kernel()
    if not fp32:
        from dataclasses import replace

        k = replace(k, fp32_dest_acc=False)
    return k


def run_ir(
    device,
    kernels: Sequence[Kernel],
    args: Sequence[Sequence[int] | dict],
    engine: str,
    *,
    semaphores: Sequence[int] = (),
    cores: Sequence = (CORE,),
) -> None:
    """Run ``kernels`` on ``cores`` (default (0, 0)): compiled (``engine="native"``) or
    interpreted.  ``args[k]`` is kernel k's runtime args, or a dict core -> args."""
    program = Program(f"interp_{engine}")
    span = CoreRangeSet([CoreRange(c, c) for c in cores])
    cbs = {c.index: c for k in kernels for c in k.cbs}
    for c in cbs.values():
        cfg = CircularBufferConfig(c.num_pages * c.page_size, {c.index: DataFormat[c.data_format]})
        program.create_circular_buffer(span, cfg.set_page_size(c.index, c.page_size))
    for value in semaphores:
        program.create_semaphore(span, value)
    for k, values in zip(kernels, args):
        entry = native_kernel(k) if engine == "native" else python_kernel(k)
        if k.kind == KIND_COMPUTE:
            config = ComputeConfig(fp32_dest_acc_en=k.fp32_dest_acc)
        elif k.slot == "brisc":
            config = WriterDataMovementConfig(k.compile_args)
        else:
            config = ReaderDataMovementConfig(k.compile_args)
        handle = program.create_kernel(entry, span, config, name=k.name)
        for core in cores:
            program.set_runtime_args(
                handle, core, list(values[core] if isinstance(values, dict) else values)
            )
    device.command_queue.enqueue_program(program)


def bits(t) -> torch.Tensor:
    """The tensor's values as integers (NaN-safe exact comparison)."""
    host = ttnn.to_torch(t)
    return host.view(torch.int16) if host.dtype == torch.bfloat16 else host.view(torch.int32)


def page_words(t) -> list[int]:
    """The 32-bit words of a one-tile float32 tensor in page (tile) order."""
    import numpy as np

    from tilewright.device.formats import encode_block

    host = ttnn.to_torch(t).float().numpy()
    return encode_block(host, DataFormat.Float32).view(np.uint32).tolist()


def f32_tensor(device, rows: int = 32, cols: int = 32):
    return tensor(device, torch.zeros(rows, cols), dtype=ttnn.float32)
