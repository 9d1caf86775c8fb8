"""Kernels and checks written against tt-lang: `import ttl`, `import ttnn`, ttl.utils."""

import pytest
import torch
import ttl

ttnn = pytest.importorskip("ttnn", exc_type=ImportError)

from helpers import to_dram  # noqa: E402
from ttl.utils.correctness import assert_pcc  # noqa: E402


@ttl.operation(grid=(2, 1))
def scaled_add(a, b, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        x, _ = ttl.node(dims=2)
        with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
            ttl.copy(a[0, x], ab).wait()
            ttl.copy(b[0, x], bb).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as ab, b_dfb.wait() as bb, o_dfb.reserve() as ob:
            ob.store(ab + 2 * bb)

    @ttl.datamovement()
    def writer():
        x, _ = ttl.node(dims=2)
        with o_dfb.wait() as ob:
            ttl.copy(ob, out[0, x]).wait()


@pytest.mark.parametrize("shift", [0.0, 1.5])
def test_scaled_add(device, shift):
    a = torch.rand(32, 64) + shift
    b = torch.rand(32, 64)
    out = to_dram(torch.zeros(32, 64), device)
    scaled_add(to_dram(a, device), to_dram(b, device), out)
    assert_pcc(a + 2 * b, ttnn.to_torch(out).float(), threshold=0.999)
    assert ttl.grid_size(dims=2) == (2, 1)  # host side: the last operation's grid


def test_tilewright_diagnostic(device):
    a = to_dram(torch.rand(32, 64), device)
    scaled_add(a, a)  # one tensor short: rejected with a located diagnostic
