"""A TT-Lang project's conftest, written for tt-lang (test/python/conftest.py style):
`import ttnn` inside the fixtures, a device fixture pair, a seeded RNG."""

import pytest
import torch

collect_ignore = ["helpers.py"]


@pytest.fixture
def ttnn_device():
    import ttnn

    device = ttnn.open_device(device_id=0)
    yield device
    ttnn.close_device(device)


@pytest.fixture(autouse=True)
def seed_rng():
    torch.manual_seed(42)


@pytest.fixture
def device(ttnn_device):
    return ttnn_device
