"""Small TT-Lang programs the robustness tests share (kept tiny: each runs many times)."""

from __future__ import annotations

import textwrap

from tilewright import ttl, ttnn


@ttl.operation(grid=(2, 2))
def add_2x2(a: ttnn.Tensor, b: ttnn.Tensor, out: ttnn.Tensor) -> None:
    """out = a + b, one tile per node; node (0, 0)'s compute kernel prints once."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        x, y = ttl.node(dims=2)
        with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
            ttl.copy(a[y, x], ab).wait()
            ttl.copy(b[y, x], bb).wait()

    @ttl.compute()
    def compute():
        x, y = ttl.node(dims=2)
        with a_dfb.wait() as ab, b_dfb.wait() as bb, o_dfb.reserve() as ob:
            ob.store(ab + bb)
        if x == 0 and y == 0:
            print("kernel says hi")

    @ttl.datamovement()
    def writer():
        x, y = ttl.node(dims=2)
        with o_dfb.wait() as ob:
            ttl.copy(ob, out[y, x]).wait()


SPIN = textwrap.dedent(
    """\
    import sys
    import torch
    import ttl
    import ttnn


    @ttl.operation(grid=(1, 1))
    def spin(a, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            with a_dfb.reserve() as blk:
                ttl.copy(a[0, 0], blk).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as blk:
                n = 0
                while True:  # SPIN LINE
                    n += 1

        @ttl.datamovement()
        def writer():
            pass


    device = ttnn.open_device(device_id=0)
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    a = ttnn.from_torch(torch.zeros(32, 32), **kw)
    out = ttnn.from_torch(torch.zeros(32, 32), **kw)
    print("ready", flush=True)
    spin(a, out)
    """
)
"""A program whose compute kernel never yields (line of ``while True`` marked SPIN LINE)."""

SPIN_LINE = next(i for i, line in enumerate(SPIN.splitlines(), 1) if "SPIN LINE" in line)
