"""ttnn creation functions, devices, memory configs and work splitting."""

import pytest
import torch

from tilewright import ttnn
from tilewright.errors import DeviceError


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def test_rand_is_uniform_in_range_and_deterministic(device):
    a = ttnn.rand((64, 96), device=device, low=-2, high=3, seed=7)
    b = ttnn.rand((64, 96), device=device, low=-2, high=3, seed=7)
    ta = ttnn.to_torch(a).float()
    assert a.dtype == ttnn.bfloat16 and a.layout == ttnn.TILE_LAYOUT
    assert torch.equal(ta, ttnn.to_torch(b).float())
    assert ta.min() >= -2 and ta.max() <= 3 and ta.std() > 1


def test_randn_zeros_ones_full_empty(device):
    assert abs(ttnn.to_torch(ttnn.randn((128, 128), seed=1)).float().mean()) < 0.1
    assert torch.count_nonzero(ttnn.to_torch(ttnn.zeros((5, 7), device=device))) == 0
    assert torch.all(ttnn.to_torch(ttnn.ones((5, 7), dtype=ttnn.float32)) == 1)
    full = ttnn.full((40, 40), 3.5, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    assert full.padded_shape == [64, 64] and torch.all(ttnn.to_torch(full) == 3.5)
    assert ttnn.empty((3, 3), device=device).shape == [3, 3]
    ints = ttnn.full((4, 4), 9, dtype=ttnn.int32)
    assert ttnn.to_torch(ints).dtype == torch.int32


def test_like_functions_follow_the_reference(device):
    ref = ttnn.rand((32, 64), device=device, dtype=ttnn.float32)
    z = ttnn.zeros_like(ref)
    assert (z.shape, z.dtype, z.layout, z.device()) == (ref.shape, ref.dtype, ref.layout, device)
    assert torch.all(ttnn.to_torch(ttnn.full_like(ref, 2.0)) == 2.0)


def test_tensor_methods_cpu_to_and_layout(device):
    host = ttnn.from_torch(
        torch.arange(64 * 64, dtype=torch.float32).reshape(64, 64), dtype=ttnn.float32
    )
    assert host.storage_type() == ttnn.StorageType.HOST and host.device() is None
    dev = host.to(device, ttnn.L1_MEMORY_CONFIG)
    assert dev.memory_config() == ttnn.L1_MEMORY_CONFIG
    tiled = ttnn.to_layout(dev, ttnn.TILE_LAYOUT)
    assert tiled.layout == ttnn.TILE_LAYOUT
    assert torch.equal(ttnn.to_torch(tiled.cpu()), ttnn.to_torch(host))
    assert torch.equal(ttnn.to_torch(dev[0:2, 3:5]), torch.tensor([[3.0, 4.0], [67.0, 68.0]]))


def test_open_device_rules():
    with pytest.raises(DeviceError, match="does not exist"):
        ttnn.open_device(device_id=3, board="n150")
    d = ttnn.open_device(device_id=1, board="n300")
    try:
        assert d.compute_with_storage_grid_size() == ttnn.CoreCoord(8, 8)
        with pytest.raises(DeviceError, match="already open"):
            ttnn.open_device(device_id=1, board="n300")
    finally:
        ttnn.close_device(d)
    from tilewright.device.device import Device
    from tilewright.target import board_preset

    bh = Device(board_preset("p150").system_desc)
    try:
        assert bh.arch().name == "BLACKHOLE" and bh.dram_alignment == 64
        assert bh.compute_with_storage_grid_size() == ttnn.CoreCoord(11, 10)
    finally:
        bh.close()


def test_split_work_to_cores():
    n, all_cores, g1, g2, u1, u2 = ttnn.split_work_to_cores(ttnn.CoreCoord(4, 2), 13, row_wise=True)
    assert n == 8 and all_cores.num_cores() == 8
    assert g1.num_cores() * u1 + g2.num_cores() * u2 == 13 and u1 == u2 + 1
    crs = ttnn.num_cores_to_corerangeset(5, ttnn.CoreCoord(4, 4), row_wise=True)
    assert crs.num_cores() == 5 and crs.contains(ttnn.CoreCoord(0, 1))


def test_out_of_memory_names_request_and_free_space(device):
    from tilewright.device.buffer import Buffer
    from tilewright.errors import OutOfMemoryError

    with pytest.raises(OutOfMemoryError) as info:
        Buffer(device, 4096 * 64 * 400, 4096, ttnn.BufferType.L1)
    msg = str(info.value)
    assert "out of memory in L1" in msg and "B free, largest free block" in msg
