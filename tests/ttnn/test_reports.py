"""``ttnn._ttnn.reports``: device info (the CB budget tt-lang's compiler reads) and buffer pages."""

from __future__ import annotations

import pytest
import torch

from tilewright import ttnn
from tilewright.errors import DeviceError


@pytest.fixture
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def test_reports_live_where_the_compiler_looks():
    assert ttnn._ttnn.reports is ttnn.reports
    assert callable(ttnn._ttnn.reports.get_device_info)
    assert callable(ttnn._ttnn.reports.get_buffer_pages)


def test_device_info_cb_limit_is_the_region_cbs_share_with_l1_buffers(device):
    info = ttnn._ttnn.reports.get_device_info(device)
    assert info.cb_limit == device.l1_size - device.l1_small_size - device.l1_unreserved_base
    assert (info.num_x_cores, info.num_y_cores) == (device.grid_x, device.grid_y)
    assert info.worker_l1_size == device.l1_size
    assert info.l1_num_banks == device.grid_x * device.grid_y
    assert info.address_at_first_l1_cb_buffer == device.l1_unreserved_base
    assert info.num_storage_cores == 0
    assert info.total_l1_memory == info.num_compute_cores * device.l1_size


def test_buffer_pages_list_every_page_of_every_l1_buffer(device):
    assert ttnn._ttnn.reports.get_buffer_pages(device) == []
    dram = ttnn.from_torch(torch.zeros(64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                           device=device)  # fmt: skip
    l1 = ttnn.from_torch(
        torch.zeros(64, 96),
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )
    pages = ttnn._ttnn.reports.get_buffer_pages(device)
    assert len(pages) == 6  # the L1 tensor's 2 x 3 tiles; DRAM buffers are not listed
    assert {p.buffer_type for p in pages} == {ttnn.BufferType.L1}
    assert [p.page_index for p in pages] == list(range(6))
    assert {p.page_size for p in pages} == {2048}
    assert {p.address for p in pages} == {l1.buffer_address()}
    # interleaved: page i on bank i (a core per bank, row-major)
    assert [(p.core_x, p.core_y) for p in pages[:2]] == [(0, 0), (1, 0)]
    buffers = ttnn._ttnn.reports.get_buffers(device)
    assert {b.buffer_type for b in buffers} == {ttnn.BufferType.DRAM, ttnn.BufferType.L1}
    ttnn.deallocate(l1)
    assert ttnn._ttnn.reports.get_buffer_pages(device) == []
    assert len(ttnn._ttnn.reports.get_buffers(device)) == 1
    del dram


def test_reports_on_a_mesh_device_cover_its_chips():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), board="n300")
    try:
        ttnn.from_torch(
            torch.zeros(32, 64),
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            device=mesh,
            memory_config=ttnn.L1_MEMORY_CONFIG,
            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1),
        )
        pages = ttnn._ttnn.reports.get_buffer_pages(mesh)
        assert sorted({p.device_id for p in pages}) == mesh.get_device_ids()
        info = ttnn._ttnn.reports.get_device_info(mesh)
        chip = mesh.get_devices()[0]
        assert info.cb_limit == chip.l1_size - chip.l1_small_size - chip.l1_unreserved_base
    finally:
        ttnn.close_mesh_device(mesh)


def test_a_report_of_something_else_is_an_error():
    with pytest.raises(DeviceError, match="is not a device"):
        ttnn._ttnn.reports.get_device_info("device 0")


@pytest.mark.parametrize(
    "value, text",
    [
        (ttnn.bfloat16, "DataType.BFLOAT16"),
        (ttnn.bfloat8_b, "DataType.BFLOAT8_B"),
        (ttnn.TILE_LAYOUT, "Layout.TILE"),
        (ttnn.ROW_MAJOR_LAYOUT, "Layout.ROW_MAJOR"),
        (ttnn.BufferType.DRAM, "BufferType.DRAM"),
        (ttnn.BufferType.L1, "BufferType.L1"),
        (ttnn.TensorMemoryLayout.INTERLEAVED, "TensorMemoryLayout.INTERLEAVED"),
        (ttnn.MathFidelity.HiFi4, "MathFidelity.HiFi4"),
        (ttnn.UnpackToDestMode.UnpackToDestFp32, "UnpackToDestMode.UnpackToDestFp32"),
    ],
)
def test_enums_print_as_ttnn_prints_them(value, text):
    # tt-lang's compiler reads these: "TILE" in str(layout), "L1" in str(buffer_type)
    assert str(value) == text and f"{value}" == text
    assert repr(value) == f"<{text}: {int(value)}>"


def test_memory_config_queries(device):
    t = ttnn.from_torch(torch.zeros(32, 32), layout=ttnn.TILE_LAYOUT, device=device)
    assert ttnn.is_sharded(t) is False
    assert ttnn.get_memory_config(t) == ttnn.DRAM_MEMORY_CONFIG
    spec = ttnn.create_sharded_memory_config(
        (64, 64), ttnn.CoreGrid(y=2, x=1), ttnn.ShardStrategy.HEIGHT
    )
    s = ttnn.from_torch(torch.zeros(64, 64), layout=ttnn.TILE_LAYOUT, device=device,
                        memory_config=spec)  # fmt: skip
    assert ttnn.is_sharded(s) is True
    assert ttnn.get_memory_config(s) is s.memory_config()
    with pytest.raises(DeviceError, match="ttnn.is_sharded takes a ttnn tensor"):
        ttnn.is_sharded(torch.zeros(2))
