"""Round-trips through ttnn for every dtype and layout, host and device, interleaved and sharded."""

import numpy as np
import pytest
import torch

from tilewright import ttnn


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


EXACT = {
    ttnn.float32: lambda x: x,
    ttnn.bfloat16: lambda x: x.to(torch.bfloat16).float(),
}


@pytest.mark.parametrize("layout", [ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT])
@pytest.mark.parametrize("dtype", [ttnn.float32, ttnn.bfloat16])
@pytest.mark.parametrize("where", ["host", "dram", "l1"])
def test_float_round_trip(device, dtype, layout, where):
    torch.manual_seed(1)
    x = torch.randn(3, 50, 70)
    kw = {}
    if where != "host":
        kw = dict(
            device=device,
            memory_config=ttnn.DRAM_MEMORY_CONFIG if where == "dram" else ttnn.L1_MEMORY_CONFIG,
        )
    t = ttnn.from_torch(x, dtype=dtype, layout=layout, **kw)
    assert t.shape == [3, 50, 70]
    if layout == ttnn.TILE_LAYOUT:
        assert t.padded_shape == [3, 64, 96]
    y = ttnn.to_torch(t)
    assert torch.equal(y.float(), EXACT[dtype](x))


@pytest.mark.parametrize("dtype", [ttnn.bfloat8_b, ttnn.bfloat4_b])
def test_block_float_round_trip_is_idempotent(device, dtype):
    torch.manual_seed(2)
    x = torch.randn(64, 96)
    t = ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)
    once = ttnn.to_torch(t)
    again = ttnn.to_torch(
        ttnn.from_torch(once, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)
    )
    assert torch.equal(once, again)
    assert (once - x).abs().max() < (0.1 if dtype == ttnn.bfloat8_b else 0.8)


def test_block_float_needs_tile_layout():
    with pytest.raises(Exception, match="TILE"):
        ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat8_b, layout=ttnn.ROW_MAJOR_LAYOUT)


@pytest.mark.parametrize(
    "dtype, torch_dtype, lo, hi",
    [
        (ttnn.int32, torch.int32, -(2**31), 2**31 - 1),
        (ttnn.uint32, torch.int64, 0, 2**32 - 1),
        (ttnn.uint16, torch.int32, 0, 2**16 - 1),
        (ttnn.uint8, torch.uint8, 0, 255),
    ],
)
@pytest.mark.parametrize("layout", [ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT])
def test_integer_round_trip(device, dtype, torch_dtype, lo, hi, layout):
    rng = np.random.default_rng(3)
    x = rng.integers(lo, hi, size=(40, 33), endpoint=True, dtype=np.int64)
    t = ttnn.from_torch(torch.from_numpy(x), dtype=dtype, layout=layout, device=device)
    y = ttnn.to_torch(t)
    assert y.dtype == torch_dtype
    assert np.array_equal(y.numpy().astype(np.int64), x)


@pytest.mark.parametrize(
    "strategy", [ttnn.ShardStrategy.HEIGHT, ttnn.ShardStrategy.WIDTH, ttnn.ShardStrategy.BLOCK]
)
@pytest.mark.parametrize(
    "orientation", [ttnn.ShardOrientation.ROW_MAJOR, ttnn.ShardOrientation.COL_MAJOR]
)
def test_sharded_round_trip(device, strategy, orientation):
    torch.manual_seed(4)
    x = torch.randn(256, 128).to(torch.bfloat16)
    grid = (
        ttnn.CoreGrid(y=2, x=4) if strategy != ttnn.ShardStrategy.BLOCK else ttnn.CoreGrid(y=2, x=2)
    )
    mc = ttnn.create_sharded_memory_config(x.shape, grid, strategy, orientation)
    t = ttnn.from_torch(
        x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device, memory_config=mc
    )
    assert t.is_sharded()
    assert torch.equal(ttnn.to_torch(t), x)
    t.deallocate()


def test_interleaved_dram_pages_follow_tt_metal_address_formula(device):
    x = torch.arange(32 * 32 * 30, dtype=torch.float32).reshape(32, 960)
    t = ttnn.from_torch(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    buf = t.buffer
    assert buf.num_pages == 30 and buf.page_size == 4096
    for page in (0, 11, 12, 29):
        bank, addr = buf.page_location(page)
        assert bank == page % 12
        assert addr == buf.address + (page // 12) * buf.aligned_page_size
        raw = device.dram.channel(bank)[addr : addr + 4096].view(np.float32)
        # first element of tile `page` is x[0, 32 * page]
        assert raw[0] == x[0, 32 * page]


def test_deallocate_frees_and_reuses(device):
    before = device.dram_allocator.free_bytes()
    t = ttnn.from_torch(
        torch.zeros(64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
    )
    addr = t.buffer_address()
    assert device.dram_allocator.free_bytes() < before
    t.deallocate()
    assert device.dram_allocator.free_bytes() == before
    t2 = ttnn.from_torch(
        torch.zeros(64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
    )
    assert t2.buffer_address() == addr


@pytest.mark.parametrize("sharded", [False, True])
def test_buffer_page_gather_scatter(device, sharded):
    x = torch.randn(128, 128).to(torch.bfloat16)
    mc = (
        ttnn.create_sharded_memory_config(
            (128, 128), ttnn.CoreGrid(y=2, x=2), ttnn.ShardStrategy.BLOCK
        )
        if sharded
        else ttnn.DRAM_MEMORY_CONFIG
    )
    t = ttnn.from_torch(
        x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device, memory_config=mc
    )
    buf = t.buffer
    all_pages = buf.read()
    ids = np.array([15, 0, 5, 10, 3])
    assert np.array_equal(buf.read_pages(ids), all_pages[ids])
    buf.write_pages(ids[::-1], all_pages[ids])  # permute 5 pages
    after = buf.read()
    assert np.array_equal(after[ids[::-1]], all_pages[ids])
    t.deallocate()
