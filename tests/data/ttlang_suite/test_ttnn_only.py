"""A plain ttnn test using the plugin's own `device` fixture would be overridden here by the
suite's conftest; this one opens its own device, as many ttnn tests do."""

import torch
import ttnn


def test_add_on_device():
    device = ttnn.open_device(device_id=0)
    a = ttnn.from_torch(torch.ones(32, 32), layout=ttnn.TILE_LAYOUT, device=device)
    assert torch.equal(ttnn.to_torch(ttnn.add(a, a)).float(), torch.full((32, 32), 2.0))
    # left open on purpose: the plugin closes it when the session ends
