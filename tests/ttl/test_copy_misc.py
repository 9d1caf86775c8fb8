"""Copies and the smaller language pieces: GroupTransfer, raw element access, read_index,
static_range, row-major DFBs, block-float stores, debug print."""

import numpy as np
import pytest
import torch

from tests.ttl.conftest import bf16
from tilewright import ttl, ttnn
from tilewright.errors import DFBContractError, KernelError


def test_group_transfer_waits_every_copy(to_dev):
    @ttl.operation(grid=(1, 1))
    def grouped(a, out):
        d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        e = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            with d.reserve() as x, e.reserve() as y:
                group = ttl.GroupTransfer()
                group.add(ttl.copy(a[0, 0], x))
                group.add(ttl.copy(a[0, 1], y))
                group.wait_all()
                with pytest.raises(DFBContractError, match="after wait_all"):
                    group.add(group)  # anything after wait_all is rejected

        @ttl.datamovement()
        def writer():
            with d.wait() as x, e.wait() as y:
                ttl.copy(x, out[0, 1]).wait()
                ttl.copy(y, out[0, 0]).wait()

    x = bf16(32, 64)
    out = to_dev(torch.zeros(32, 64))
    grouped(to_dev(x), out)
    got = ttnn.to_torch(out)
    assert torch.equal(got[:, :32], x[:, 32:]) and torch.equal(got[:, 32:], x[:, :32])


def test_raw_element_access_and_read_index(device):
    seen = {}

    @ttl.operation(grid=(1, 1))
    def scalar(a, out):
        d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
        o = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def dm():
            with d.reserve() as blk:
                ttl.copy(a[0, 0], blk).wait()
                seen["v"] = ttl.raw_element_read(blk, 3, 5)
                seen["i"] = ttl.read_index(blk, 3, 5)
            with o.reserve() as ob:
                with pytest.raises(KernelError, match="outside 0..31"):
                    ttl.raw_element_write(ob, 32, 0, 1.0)
                ttl.raw_element_write(ob, 0, 0, 2.5)
                ttl.raw_element_write(ob, 31, 31, -1.0)
                ttl.copy(ob, out[0, 0]).wait()

    x = torch.zeros(32, 32)
    x[3, 5] = 7.75
    kw = dict(dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    out = ttnn.from_torch(torch.zeros(32, 32), **kw)
    scalar(ttnn.from_torch(x, **kw), out)
    assert seen == {"v": 7.75, "i": 7}
    got = ttnn.to_torch(out)
    assert got[0, 0] == 2.5 and got[31, 31] == -1.0


def test_static_range_requires_compile_time_ints():
    assert list(ttl.static_range(1, 7, 2)) == [1, 3, 5]
    with pytest.raises(KernelError, match="compile-time ints"):
        ttl.static_range(1.5)


def test_signpost_name_is_validated():
    with pytest.raises(KernelError, match=r"\[A-Za-z0-9_-\]"):
        ttl.signpost("bad name!")


def test_row_major_dfb_copies_elements(device):
    @ttl.operation(grid=(1, 1))
    def rows(a, out):
        d = ttl.make_dataflow_buffer_like(a, shape=(2, 8), block_count=2)

        @ttl.datamovement()
        def reader():
            with d.reserve() as blk:
                ttl.copy(a[4:6, 8:16], blk).wait()

        @ttl.compute()
        def double():
            pass

        @ttl.datamovement()
        def writer():
            with d.wait() as blk:
                ttl.copy(blk, out[0:2, 0:8]).wait()

    x = torch.arange(16 * 24, dtype=torch.float32).reshape(16, 24)
    kw = dict(dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    out = ttnn.from_torch(torch.zeros(16, 24), **kw)
    rows(ttnn.from_torch(x, **kw), out)
    got = ttnn.to_torch(out)
    assert torch.equal(got[0:2, 0:8], x[4:6, 8:16])
    assert torch.count_nonzero(got[2:]) == 0


@pytest.mark.parametrize("dtype", [ttnn.bfloat8_b, ttnn.bfloat4_b])
def test_store_into_a_block_float_dfb_is_the_exact_packer(device, dtype):
    @ttl.operation(grid=(1, 1))
    def scale(a, out):
        d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=1)
        o = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=1)

        @ttl.datamovement()
        def reader():
            with d.reserve() as blk:
                ttl.copy(a[0:1, 0:2], blk).wait()

        @ttl.compute()
        def compute():
            with d.wait() as x, o.reserve() as y:
                y.store(x * 3.0)

        @ttl.datamovement()
        def writer():
            with o.wait() as y:
                ttl.copy(y, out[0:1, 0:2]).wait()

    x = torch.randn(32, 64)
    a = ttnn.from_torch(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    out = ttnn.from_torch(torch.zeros(32, 64), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)
    scale(a, out)
    want = ttnn.from_torch(x * 3.0, dtype=dtype, layout=ttnn.TILE_LAYOUT)
    assert np.array_equal(out.host_pages(), want.host_pages())  # bit-exact block-float bytes


def test_debug_print_inside_kernels(device, capsys):
    @ttl.operation(grid=(1, 1))
    def printer(a):
        d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def dm():
            print("count", 3, d)
            print(a, num_pages=1, label="input")
            with d.reserve() as blk:
                ttl.copy(a[0, 0], blk).wait()

        @ttl.compute()
        def c():
            with d.wait() as blk:
                print("tile", blk, thread="math")
                with pytest.raises(KernelError, match="num_pages"):
                    print(blk, num_pages=2)
                blk.store(blk) if False else None
                _ = blk + blk

    printer(
        ttnn.from_torch(
            torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
        )
    )
    out = capsys.readouterr().out
    assert "[node (0, 0) dm] count 3 DFB d: index 0, shape (1, 1)" in out
    assert "[node (0, 0) dm] input: tensor [32, 32] bfloat16: 1 of 1 pages" in out
    assert "[node (0, 0) c] tile block 'blk' (waited from DFB 'd')" in out
