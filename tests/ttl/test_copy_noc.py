"""``ttl.copy`` goes through the device's NoC model, with the checks of ``noc_async_*``:
alignment of source and destination, the bounds of both ranges, the chip."""

import numpy as np
import pytest
import torch

from tests.ttl.conftest import line_of
from tilewright import ttnn
from tilewright.device.transfer import page_transfer
from tilewright.errors import NocError


def test_misaligned_row_major_slice_is_a_noc_error(device, program):
    ns = program(
        """
        from tilewright import ttl

        @ttl.operation(grid=(1, 1))
        def shifted(a, out):
            d = ttl.make_dataflow_buffer_like(a, shape=(1, 8), block_count=1)

            @ttl.datamovement()
            def reader():
                with d.reserve() as blk:
                    ttl.copy(a[0:1, 1:9], blk).wait()  # <- 2 bytes into a 16 B-aligned row

            @ttl.datamovement()
            def writer():
                with d.wait() as blk:
                    pass
        """
    )
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    a = ttnn.from_torch(torch.zeros(1, 64), **kw)
    with pytest.raises(
        NocError, match=r"ttl.copy: source 0x[0-9a-f]+ and destination .* not aligned alike modulo"
    ) as info:
        ns["shifted"](a, ttnn.from_torch(torch.zeros(1, 64), **kw))
    assert info.value.loc is not None and info.value.loc.line == line_of(ns, "# <-")


def test_aligned_row_major_slice_moves_the_bytes(device, program):
    ns = program(
        """
        from tilewright import ttl

        @ttl.operation(grid=(1, 1))
        def middle(a, out):
            d = ttl.make_dataflow_buffer_like(a, shape=(1, 16), block_count=1)

            @ttl.datamovement()
            def reader():
                with d.reserve() as blk:
                    ttl.copy(a[0:1, 16:32], blk).wait()

            @ttl.datamovement()
            def writer():
                with d.wait() as blk:
                    ttl.copy(blk, out[0:1, 0:16]).wait()
        """
    )
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    x = torch.arange(64, dtype=torch.float32).reshape(1, 64)
    out = ttnn.from_torch(torch.zeros(1, 64), **kw)
    ns["middle"](ttnn.from_torch(x, **kw), out)
    got = ttnn.to_torch(out).float()
    assert torch.equal(got[0, :16], x[0, 16:32]) and not got[0, 16:].any()


def test_page_transfer_checks_the_l1_range(device):
    t = ttnn.from_torch(
        torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
    )
    core = device.core(0, 0)
    with pytest.raises(
        NocError, match=r"copy: \[0x[0-9a-f]+, 0x[0-9a-f]+\) is outside the \d+ B L1"
    ):
        page_transfer(core, t.buffer, np.array([0]), device.l1_size - 64, to_l1=True, what="copy")


def test_a_tensor_of_another_device_is_out_of_reach(device):
    other = ttnn.open_device(device_id=1, board="n300")
    try:
        t = ttnn.from_torch(
            torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=other
        )
        core = device.core(0, 0)
        with pytest.raises(
            NocError,
            match=r"copy: (the tensor's buffer targets chip|the tensor is on another device)",
        ):
            page_transfer(
                core, t.buffer, np.array([0]), device.l1_unreserved_base, to_l1=True, what="copy"
            )
    finally:
        ttnn.close_device(other)
