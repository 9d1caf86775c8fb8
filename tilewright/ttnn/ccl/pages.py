"""What collective kernels do to memory: move tensor pages to and from L1, add pieces.

Kernels move whole pieces -- many pages -- per call, vectorised per DRAM bank, and time
them as one NoC transfer per page followed by a barrier (``device/perf``; the pages timed
in native code where the runtime is available, ``native/noc_pages.py``); the reduction decodes two pieces, adds them in float32 and encodes
the sum in the tensor's format (rounding once per addition, as the packer does when the
compute kernel packs each partial sum).
"""

from __future__ import annotations

import numpy as np

from tilewright.device.engine import ACTIVE, current_run
from tilewright.device.formats import decode_tiles, encode_tiles, tile_size_bytes
from tilewright.device.ops import get_op
from tilewright.device.perf import costs
from tilewright.device.perf import kernel as noc_time
from tilewright.errors import KernelError
from tilewright.lazy import lazy_import

# The native package brings its build with it: loaded by the first collective that moves
# pages, not by `import ttnn` (tests/test_startup.py).
noc_pages = lazy_import("tilewright.native.noc_pages")

__all__ = ["page_spans", "pages_to_l1", "l1_to_pages", "l1_copy", "add_pieces"]

_ADD = get_op("add").impl


def _span(run, name: str, start: int, args: dict) -> None:
    engine = ACTIVE.engine
    if engine is not None and engine.tracer is not None:
        engine.tracer.span(run, name, start, run.clock, args)


def _own(run, buf, what: str) -> None:
    if buf.device is not run.core.device:
        raise KernelError(
            f"{what}: the buffer is on chip {buf.device.device_id}, this kernel on chip "
            f"{run.core.device.device_id}; a NoC transaction stays on its chip"
        )


def page_spans(ids: np.ndarray, piece: int) -> tuple:
    """``ids`` cut into pieces of ``piece`` pages; a piece of consecutive ids is a ``range``
    (which buffers copy with one strided slice per bank)."""
    spans: list[range | np.ndarray] = []
    for start in range(0, len(ids), piece):
        part = ids[start : start + piece]
        first = int(part[0])
        if int(part[-1]) - first == len(part) - 1 and np.array_equal(
            part, np.arange(first, first + len(part))
        ):
            spans.append(range(first, first + len(part)))
        else:
            spans.append(part)
    return tuple(spans)


def pages_to_l1(buf, ids, addr: int) -> int:
    """Read pages ``ids`` (array or range) of a buffer into this core's L1 at ``addr``; the
    bytes moved."""
    run = current_run()
    _own(run, buf, "read pages")
    count = len(ids)
    n = count * buf.page_size
    core = run.core
    buf.read_pages(ids, out=core.l1[addr : addr + n].reshape(count, buf.page_size))
    core.notify_write(addr, addr + n)
    start = run.clock
    _time_pages(run, buf, ids, to_l1=True)
    _span(run, "read pages", start, {"pages": int(len(ids)), "bytes": int(n)})
    return n


def l1_to_pages(buf, ids, addr: int) -> None:
    """Write this core's L1 at ``addr`` into pages ``ids`` of a buffer."""
    run = current_run()
    _own(run, buf, "write pages")
    n = len(ids) * buf.page_size
    buf.write_pages(ids, run.core.l1[addr : addr + n].reshape(len(ids), buf.page_size))
    start = run.clock
    _time_pages(run, buf, ids, to_l1=False)
    _span(run, "write pages", start, {"pages": int(len(ids)), "bytes": int(n)})


def l1_copy(src: int, dst: int, size: int) -> None:
    """Copy within this core's L1 (a local NoC transfer)."""
    run = current_run()
    l1 = run.core.l1
    l1[dst : dst + size] = l1[src : src + size]
    run.core.notify_write(dst, dst + size)
    noc = run.kernel_context().noc
    noc_time.write(run, run.core, run.core, size, noc)
    noc_time.barrier(run, run.core, noc)


def add_pieces(a: int, b: int, out: int, pages: int, fmt, tile, dram_alignment: int) -> None:
    """``out = a + b`` over ``pages`` tiles in this core's L1 (a compute kernel's work)."""
    run = current_run()
    l1 = run.core.l1
    n = pages * tile_size_bytes(fmt, tile, dram_alignment=dram_alignment)
    if max(a, b, out) + n > l1.size:
        raise KernelError(f"add_pieces: {pages} tiles at {max(a, b, out):#x} pass the end of L1")
    x = decode_tiles(l1[a : a + n], fmt, tile, dram_alignment=dram_alignment)
    y = decode_tiles(l1[b : b + n], fmt, tile, dram_alignment=dram_alignment)
    total = _ADD(x, y)
    l1[out : out + n] = encode_tiles(total, fmt, tile, dram_alignment=dram_alignment).reshape(-1)
    run.core.notify_write(out, out + n)
    # unpack both pieces, add on the FPU, pack the sum (one tile at a time, back to back)
    arch = run.core.device.perf.arch
    unpack = costs.unpack_cycles(2 * n, arch.unpack_pair_bytes)
    pack = costs.pack_cycles(n, arch.pack_bytes)
    run.clock += max(unpack, costs.eltwise_cycles(False, 1, pages), pack)
    run.stats_ops += 1


def _time_pages(run, buf, ids, *, to_l1: bool) -> None:
    """One NoC read / write per page, then the barrier the kernel's next step needs."""
    owners = buf.page_owner_codes(np.asarray(ids, dtype=np.int64))
    noc = run.kernel_context().noc
    timer = noc_pages.page_timer()
    noc_time.pages(run, run.core, owners, buf.page_size, noc, write=not to_l1, timer=timer)
    noc_time.barrier(run, run.core, noc)
