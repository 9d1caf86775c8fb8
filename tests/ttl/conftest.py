import pytest
import torch

from tilewright import ttnn


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


@pytest.fixture
def to_dev(device):
    def make(t, dtype=ttnn.bfloat16):
        return ttnn.from_torch(t, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device,
                               memory_config=ttnn.DRAM_MEMORY_CONFIG)

    return make


def bf16(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (2 * torch.rand(*shape, generator=g) - 1).to(torch.bfloat16)
