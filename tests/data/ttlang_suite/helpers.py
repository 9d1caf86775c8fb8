"""Helpers the suite's tests import (`from helpers import to_dram`), as tt-lang's test utils."""

import ttnn


def to_dram(t, device):
    return ttnn.from_torch(
        t,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.DRAM_MEMORY_CONFIG,
    )
