"""Mesh devices: the default system, opening and closing, sub-meshes, chips, L1 placement."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tilewright import ttnn
from tilewright.device import session
from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet
from tilewright.device.program import Program
from tilewright.device.topology import MeshError
from tilewright.errors import DeviceError

from .conftest import opened


def test_without_flags_multi_device_requests_see_the_galaxy():
    assert ttnn.GetNumAvailableDevices() == ttnn.get_num_devices() == 32
    assert ttnn.get_device_ids() == list(range(32)) and ttnn.GetNumPCIeDevices() == 32
    mesh = ttnn.open_mesh_device()
    try:
        assert tuple(mesh.shape) == (4, 8) and mesh.get_num_devices() == 32
        assert mesh.get_device_ids() == list(range(32))
        assert mesh.compute_with_storage_grid_size() == ttnn.CoreCoord(8, 8)
    finally:
        ttnn.close_mesh_device(mesh)
    # open_device(device_id > 0) is a chip of the same system; device 0 alone is the n150.
    dev = ttnn.open_device(device_id=17)
    try:
        assert dev.system_desc.num_chips == 32
    finally:
        ttnn.close_device(dev)
    dev = ttnn.open_device(device_id=0)
    try:
        assert dev.system_desc.num_chips == 1
    finally:
        ttnn.close_device(dev)


def test_board_and_system_desc_choose_the_system(tmp_path):
    assert ttnn.GetNumAvailableDevices(board="n300") == 2
    assert ttnn.GetNumPCIeDevices(board="t3k") == 4 and ttnn.get_pcie_device_ids(board="t3k") == [
        0,
        1,
        2,
        3,
    ]
    session.OPTIONS.board = "t3k"  # what `tilewright run --board t3k` sets
    try:
        assert ttnn.GetNumAvailableDevices() == 8
        mesh = ttnn.open_mesh_device()
        assert tuple(mesh.shape) == (2, 4)
        ttnn.close_mesh_device(mesh)
    finally:
        session.OPTIONS.board = None
    from tilewright.target import board_preset, write_system_desc

    path = tmp_path / "p300.ttsys"
    write_system_desc(board_preset("p300"), str(path))
    with ttnn.create_mesh_device(system_desc=str(path)) as mesh:
        assert tuple(mesh.shape) == (1, 2) and mesh.arch().name == "BLACKHOLE"


def test_shapes_offsets_and_submeshes():
    with opened((2, 4), board="t3k") as mesh:
        assert mesh.device_at(ttnn.MeshCoordinate(1, 2)) is mesh.get_devices()[6]
        assert mesh.get_device(mesh.get_device_ids()[3]) is mesh.get_devices()[3]
        sub = mesh.create_submesh(ttnn.MeshShape(1, 2), ttnn.MeshCoordinate(1, 2))
        assert sub.get_devices() == mesh.get_devices()[6:8] and sub.fabric is mesh.fabric
        halves = mesh.create_submeshes(ttnn.MeshShape(1, 4))
        assert [h.get_devices() for h in halves] == [mesh.get_devices()[:4], mesh.get_devices()[4:]]
        assert len(mesh.get_submeshes()) == 3
    assert sub.closed and mesh.closed
    with opened((1, 8), board="t3k") as line:
        assert line.get_num_devices() == 8
    with opened((1, 2), board="t3k", offset=ttnn.MeshCoordinate(1, 1)) as pair:
        assert pair.get_num_devices() == 2


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda m: m.create_submesh(ttnn.MeshShape(2, 2), ttnn.MeshCoordinate(0, 3)),
            r"sub-mesh 2x2 at offset \(0, 3\) reaches outside this 2x4 mesh",
        ),
        (lambda m: m.create_submesh(ttnn.MeshShape(3, 1)), "sub-mesh 3x1 at offset"),
        (lambda m: m.create_submeshes(ttnn.MeshShape(1, 3)), "does not tile this 2x4 mesh"),
        (lambda m: m.device_at(ttnn.MeshCoordinate(2, 0)), "outside this 2x4 mesh"),
        (lambda m: m.get_device(99), "device 99 is not part of this mesh"),
    ],
)
def test_submesh_errors(call, message):
    with opened((2, 4), board="t3k") as mesh:
        with pytest.raises(MeshError, match=message):
            call(mesh)


@pytest.mark.parametrize(
    ("shape", "kwargs", "message"),
    [
        ((4, 4), {"board": "t3k"}, "mesh shape 4x4 needs 16 chips but t3k has 8"),
        ((1, 3), {"board": "n300"}, "needs 3 chips but n300 has 2"),
        ((2, 2), {"board": "t3k", "offset": ttnn.MeshCoordinate(1, 0)}, "reaches outside"),
        ((1, 2), {"board": "t3k", "physical_device_ids": [0, 0]}, "distinct chips"),
    ],
)
def test_bad_mesh_requests(shape, kwargs, message):
    with pytest.raises(MeshError, match=message):
        ttnn.open_mesh_device(ttnn.MeshShape(*shape), **kwargs)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 2), r"MeshShape\(0, 2\): both sizes must be at least 1"),
        ((1, 2, 3), "takes one or two integers"),
        (("2", 4), "takes one or two integers"),
    ],
)
def test_bad_mesh_shapes(args, message):
    with pytest.raises(MeshError, match=message):
        ttnn.MeshShape(*args)


def test_a_chip_is_open_once():
    with opened((1, 2), board="n300"):
        with pytest.raises(DeviceError, match=r"device 1 is already open \(in a 1x2 mesh device\)"):
            ttnn.open_device(device_id=1, board="n300")
    dev = ttnn.open_device(device_id=0, board="n300")
    try:
        with pytest.raises(
            MeshError, match=r"device 0 is already open \(opened with open_device\)"
        ):
            ttnn.open_mesh_device(ttnn.MeshShape(1, 2), board="n300")
    finally:
        ttnn.close_device(dev)


def test_closing_a_chip_of_a_mesh_closes_the_mesh():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), board="n300")
    ttnn.close_device(mesh.get_devices()[0])  # what the runner's clean-up does
    assert mesh.closed and all(d.closed for d in mesh.get_devices())
    with pytest.raises(MeshError, match="the mesh device is closed"):
        mesh.create_submesh(ttnn.MeshShape(1, 1))


def test_chips_share_one_engine_and_name_their_chip():
    with opened((1, 2), board="n300") as mesh:
        a, b = mesh.get_devices()
        assert a.engine is b.engine is mesh.engine
        assert a.place_prefix == "chip 0 " and b.mesh is mesh


def test_native_kernels_run_on_every_chip_of_a_galaxy(capsys):
    """32 chips x 64 cores of L1 (> 2 GiB) fit, and native code runs on the last chips too:
    each chip's core sees its own L1 through the identity window (raw pointers)."""
    kernel = Path(__file__).resolve().parents[1] / "native" / "kernels" / "add_ints.cpp"
    mesh = ttnn.open_mesh_device()
    try:
        assert mesh.get_num_devices() == 32
        for chip in (mesh.get_devices()[-1], mesh.get_devices()[17]):
            kw = dict(dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=chip)
            a = ttnn.from_torch(torch.tensor([[chip.device_id]], dtype=torch.int32), **kw)
            b = ttnn.from_torch(torch.tensor([[1000]], dtype=torch.int32), **kw)
            out = ttnn.from_torch(torch.tensor([[0]], dtype=torch.int32), **kw)
            l1 = [
                ttnn.from_torch(
                    torch.zeros(1, 1, dtype=torch.int32),
                    memory_config=ttnn.L1_MEMORY_CONFIG,
                    **kw,
                )
                for _ in range(3)
            ]
            core = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(0, 0))])
            rt = ttnn.RuntimeArgs()
            rt[0][0] = [t.buffer_address() for t in (a, b, out, *l1)]
            desc = ttnn.KernelDescriptor(
                kernel_source=str(kernel),
                core_ranges=core,
                runtime_args=rt,
                config=ttnn.ReaderConfigDescriptor(),
            )
            ttnn.generic_op([a, b, *l1, out], ttnn.ProgramDescriptor(kernels=[desc]))
            assert ttnn.to_torch(out).item() == chip.device_id + 1000
            text = capsys.readouterr().out
            assert f"{chip.device_id}:(0, 0):NC: Adding integers" in text
    finally:
        ttnn.close_mesh_device(mesh)


def test_workload_rules():
    with opened((1, 2), board="n300") as mesh:
        workload = ttnn.MeshWorkload("w")
        with pytest.raises(MeshError, match="w has no programs"):
            mesh.enqueue_mesh_workload(workload)
        workload.add_program(ttnn.MeshCoordinateRange(mesh.shape), Program("p"))
        assert len(workload.programs) == 2
        with pytest.raises(
            MeshError, match=r"w: two programs for mesh coordinate MeshCoordinate\(0, 1\)"
        ):
            workload.add_program(ttnn.MeshCoordinate(0, 1), Program("q"))
        with pytest.raises(MeshError, match="is empty"):
            ttnn.MeshCoordinateRange(ttnn.MeshCoordinate(0, 1), ttnn.MeshCoordinate(0, 0))
