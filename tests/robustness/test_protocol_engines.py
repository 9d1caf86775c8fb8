"""Protocol breaks of a raw function are errors on every engine (defect tests of issue 26).

A raw IR function that pushes more pages than it reserved, packs a tile outside its
reservation or pops more than it waited for ran silently on some engines (the Python
engine and ``auto`` gave half the output garbage; ``pack_tile`` outside the reservation
swapped output tiles everywhere).  The checks are the kernel APIs' (branch ``kapi``) and
the TT-Lang rules' (branch ``rules``); these tests are their minimal programs on every
engine.
"""

from __future__ import annotations

import pytest
import torch

from tilewright import ttl, ttnn
from tilewright.device import session
from tilewright.errors import TilewrightError

raw = ttl.raw
ENGINES = ("python", "auto", "native")


@ttl.raw.ir
def push_two_of_one(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    raw.dfb_wait(src, 1)
    raw.dfb_reserve(dst, 1)
    raw.tile_regs_acquire()
    raw.copy_tile(src, 0, 0)
    raw.tile_regs_commit()
    raw.tile_regs_wait()
    raw.pack_tile(0, dst, 0)
    raw.tile_regs_release()
    raw.dfb_push(dst, 2)  # one page reserved, two pushed
    raw.dfb_pop(src, 1)


@ttl.raw.ir
def pack_outside(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    raw.dfb_wait(src, 1)
    raw.dfb_reserve(dst, 1)
    raw.tile_regs_acquire()
    raw.copy_tile(src, 0, 0)
    raw.tile_regs_commit()
    raw.tile_regs_wait()
    raw.pack_tile(0, dst, 1)  # slot 1 of a one-page reservation
    raw.tile_regs_release()
    raw.dfb_push(dst, 1)
    raw.dfb_pop(src, 1)


@ttl.raw.ir
def pop_two_of_one(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    raw.dfb_wait(src, 1)
    raw.dfb_reserve(dst, 1)
    raw.tile_regs_acquire()
    raw.copy_tile(src, 0, 0)
    raw.tile_regs_commit()
    raw.tile_regs_wait()
    raw.pack_tile(0, dst, 0)
    raw.tile_regs_release()
    raw.dfb_push(dst, 1)
    raw.dfb_pop(src, 2)  # one page waited for, two popped


FUNCTIONS = {"push 2 of 1 reserved": push_two_of_one, "pack outside the reservation": pack_outside,
             "pop 2 of 1 waited": pop_two_of_one}  # fmt: skip


def make(fn):
    @ttl.operation(grid=(1, 1))
    def op(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
        in_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        ttl.raw.call(fn, in_dfb, out_dfb, kernel=ttl.KernelKind.COMPUTE)
        with in_dfb.reserve() as a_blk:
            ttl.copy(a[0:1, 0:1], a_blk).wait()
        with out_dfb.wait() as o_blk:
            ttl.copy(o_blk, out[0:1, 0:1]).wait()

    return op


def _run(op, engine: str) -> None:
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = engine
    device = ttnn.open_device(device_id=0)
    try:
        kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        op(ttnn.from_torch(torch.rand(32, 32), **kw), ttnn.from_torch(torch.zeros(32, 32), **kw))
    finally:
        ttnn.close_device(device)
        session.OPTIONS.engine = saved


PARAMS = [pytest.param(name, engine) for name in FUNCTIONS for engine in ENGINES]


@pytest.mark.parametrize(("name", "engine"), PARAMS)
def test_a_protocol_break_is_an_error_on_every_engine(name, engine, native_cache):
    with pytest.raises(TilewrightError):
        _run(make(FUNCTIONS[name]), engine)
