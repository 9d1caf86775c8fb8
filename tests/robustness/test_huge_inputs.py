"""Tensors too large for where they are to live are refused before any host allocation.

Before, ``ttnn.rand((2**20, 2**20), device=...)`` (8 TiB of float64 samples) died in
numpy with ``MemoryError`` and a ROW_MAJOR ``ones`` of a 2^40-element row encoded the
row on the host first; now each is an ``OutOfMemoryError`` at the user's line naming the
shape and the memory (the device's DRAM or L1, or the host's).
"""

from __future__ import annotations

import inspect

import pytest

from tilewright import ttnn
from tilewright.errors import OutOfMemoryError

HUGE = (1 << 20, 1 << 20)


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


CASES = {
    "rand beyond DRAM": lambda d: ttnn.rand(HUGE, device=d),  # CASE
    "randn beyond DRAM": lambda d: ttnn.randn((1 << 40,), device=d, layout=ttnn.ROW_MAJOR_LAYOUT),  # CASE
    "rand beyond the host": lambda d: ttnn.rand(HUGE),  # CASE
    "zeros beyond DRAM": lambda d: ttnn.zeros(HUGE, device=d),  # CASE
    "ones row beyond L1": lambda d: ttnn.ones((32, 1 << 40), device=d, memory_config=ttnn.L1_MEMORY_CONFIG),  # CASE
    "full beyond DRAM": lambda d: ttnn.full((1 << 16,) * 3, 1.0, device=d, layout=ttnn.TILE_LAYOUT),  # CASE
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_a_huge_tensor_is_an_out_of_memory_error_at_the_line(device, name):
    with pytest.raises(OutOfMemoryError) as info:
        CASES[name](device)
    lines, start = inspect.getsourcelines(
        inspect.getmodule(test_a_huge_tensor_is_an_out_of_memory_error_at_the_line)
    )
    assert info.value.loc is not None and info.value.loc.file == __file__
    assert "# CASE" in lines[info.value.loc.line - 1]
    assert "shape [" in info.value.message
