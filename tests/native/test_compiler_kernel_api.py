"""What the TT-Lang compiler's kernels need beyond the documented kernel API: the profiler
header (zones as trace spans), get_tensor_accessor_args_cta_offset, the firmware names of
data-movement kernels, tt-mlir's semaphore helpers; and generic_op with mesh tensors
(SPMD and MeshProgramDescriptor), UnpackToDestMode."""

from __future__ import annotations

import pytest
import torch

from tilewright import ttnn
from tilewright.device import session
from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet
from tilewright.errors import DescriptorError

ONE_CORE = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(0, 0))])

# Copies tile 0 of tensor 0 into tile 0 of tensor 1, as the TT-Lang compiler's kernels address
# their tensors: accessor args laid end to end after the CB indices, base address as a common
# runtime arg; checks the firmware names on the way.
COPY_KERNEL = r"""
#include "tools/profiler/kernel_profiler.hpp"
void kernel_main() {
    DeviceZoneScopedN("copy-tile");
    constexpr uint32_t cb = get_compile_time_arg_val(0);
    auto in_args = TensorAccessorArgs<tensor_accessor::detail::get_tensor_accessor_args_cta_offset<0, 1>(), 0>();
    auto out_args = TensorAccessorArgs<tensor_accessor::detail::get_tensor_accessor_args_cta_offset<1, 1>(), 1>();
    TensorAccessor in = TensorAccessor(in_args, get_common_arg_val<uint32_t>(0), 2048);
    TensorAccessor out = TensorAccessor(out_args, get_common_arg_val<uint32_t>(1), 2048);
    cb_reserve_back(cb, 1);
    uint32_t l1 = get_write_ptr(cb);
    {
        DeviceZoneScopedN("read");
        noc_async_read_tile(0, in, l1);
        noc_async_read_barrier();
    }
    noc_async_write_tile(0, out, l1);
    noc_async_write_barrier();
    DeviceTimestampedData("written", 7);
    if (NOC_MULTICAST_ADDR(1, 2, 3, 4, 0x100) != get_noc_multicast_addr(1, 2, 3, 4, 0x100))
        twrt_fail(1, "NOC_MULTICAST_ADDR differs from get_noc_multicast_addr", TW_HERE);
    if (worker_logical_col_to_virtual_col[get_absolute_logical_x()] != my_x[0] ||
        worker_logical_row_to_virtual_row[get_absolute_logical_y()] != my_y[0])
        twrt_fail(1, "the logical-to-virtual tables disagree with my_x / my_y", TW_HERE);
    if (DYNAMIC_NOC_X(1, 5) != 5 || DYNAMIC_NOC_Y(0, 6) != 6)
        twrt_fail(1, "DYNAMIC_NOC_X/Y changed a coordinate", TW_HERE);
    invalidate_l1_cache();
    volatile uint32_t* sem = reinterpret_cast<volatile uint32_t*>(get_semaphore(0));
    noc_semaphore_set(sem, 3);
    experimental::semaphore_wait(sem, 3);
    experimental::semaphore_wait_min(sem, 2);
}
"""


def program(src, dst):
    args = ttnn.TensorAccessorArgs(src).get_compile_time_args()
    args += ttnn.TensorAccessorArgs(dst).get_compile_time_args()
    kernel = ttnn.KernelDescriptor(
        kernel_source=COPY_KERNEL,
        core_ranges=ONE_CORE,
        compile_time_args=[0, *args],
        common_runtime_args=[src.buffer_address(), dst.buffer_address()],
        config=ttnn.ReaderConfigDescriptor(),
    )
    cb = ttnn.CBDescriptor(2048, ONE_CORE, [ttnn.CBFormatDescriptor(0, ttnn.bfloat16, 2048)])
    sem = ttnn.SemaphoreDescriptor(0, core_ranges=ONE_CORE, initial_value=0)
    return ttnn.ProgramDescriptor(kernels=[kernel], cbs=[cb], semaphores=[sem])


def tile(device, value, **kw):
    return ttnn.from_torch(
        torch.full((32, 32), float(value)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
        device=device, **kw,
    )  # fmt: skip


def test_a_compiler_style_kernel_runs_and_its_zones_are_trace_spans():
    session.reset(trace=True)
    dev = ttnn.open_device(device_id=0)
    try:
        src, dst = tile(dev, 3), tile(dev, 0, memory_config=ttnn.L1_MEMORY_CONFIG)
        ttnn.generic_op([src, dst], program(src, dst))
        assert torch.equal(ttnn.to_torch(dst), torch.full((32, 32), 3.0).to(torch.bfloat16))
    finally:
        ttnn.close_device(dev)
    events = session.OPTIONS.tracer.events
    spans = {e[3]: e for e in events if e[0] == "X" and e[3].startswith("zone ")}
    assert set(spans) == {"zone copy-tile", "zone read"}
    outer, inner = spans["zone copy-tile"], spans["zone read"]
    assert outer[4] <= inner[4] and inner[4] + inner[5] <= outer[4] + outer[5]  # nested in time
    marks = [e for e in events if e[0] == "i" and e[3] == "zone written"]
    assert len(marks) == 1 and marks[0][6] == {"data": 7}


def test_generic_op_runs_a_program_descriptor_on_every_chip_of_a_mesh():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), board="n300")
    try:
        host = torch.cat([torch.full((32, 32), 1.0), torch.full((32, 32), 2.0)], dim=1)
        shard = ttnn.ShardTensorToMesh(mesh, dim=1)

        def on_mesh(t):
            return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                                   mesh_mapper=shard)  # fmt: skip

        src, dst = on_mesh(host), on_mesh(torch.zeros_like(host))
        ttnn.generic_op([src, dst], program(src, dst))
        got = ttnn.to_torch(dst, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=1))
        assert torch.equal(got, host.to(torch.bfloat16))

        # a MeshProgramDescriptor: only the chips of its ranges run
        dst2 = on_mesh(torch.zeros_like(host))
        first = ttnn.MeshCoordinateRange(ttnn.MeshCoordinate(0, 0), ttnn.MeshCoordinate(0, 0))
        desc = ttnn.MeshProgramDescriptor({first: program(src, dst2)})
        assert first in desc and len(desc) == 1
        ttnn.generic_op([src, dst2], desc)
        got = ttnn.to_torch(dst2, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=1))
        assert torch.equal(got[:, :32], host[:, :32].to(torch.bfloat16))
        assert torch.equal(got[:, 32:], torch.zeros(32, 32).to(torch.bfloat16))
    finally:
        ttnn.close_mesh_device(mesh)


def test_mesh_and_single_device_tensors_do_not_mix_in_generic_op():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), board="n300")
    try:
        src = ttnn.from_torch(torch.zeros(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                              device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1))  # fmt: skip
        one = ttnn.get_device_tensors(src)[0]
        with pytest.raises(DescriptorError, match="tensors must all be on one device"):
            ttnn.generic_op([src, one], ttnn.ProgramDescriptor())
    finally:
        ttnn.close_mesh_device(mesh)


def test_mesh_program_descriptor_takes_ranges_and_program_descriptors():
    with pytest.raises(DescriptorError, match="keys are ttnn.MeshCoordinateRange"):
        ttnn.MeshProgramDescriptor({(0, 0): ttnn.ProgramDescriptor()})
    rng = ttnn.MeshCoordinateRange(ttnn.MeshCoordinate(0, 0))
    with pytest.raises(DescriptorError, match="values are ttnn.ProgramDescriptor"):
        ttnn.MeshProgramDescriptor({rng: "program"})


def test_unpack_to_dest_mode_entries_are_checked():
    dev = ttnn.open_device(device_id=0)
    try:
        cfg = ttnn.ComputeConfigDescriptor()
        cfg.unpack_to_dest_mode.append(ttnn.UnpackToDestMode.UnpackToDestFp32)
        cfg.unpack_to_dest_mode.append(1)
        k = ttnn.KernelDescriptor(kernel_source="void kernel_main() {}\n", core_ranges=ONE_CORE,
                                  config=cfg)  # fmt: skip
        out = tile(dev, 0)
        with pytest.raises(
            DescriptorError, match=r"unpack_to_dest_mode\[1\] is 1, not a ttnn.UnpackToDestMode"
        ):
            ttnn.generic_op([out, out], ttnn.ProgramDescriptor(kernels=[k]))
    finally:
        ttnn.close_device(dev)
