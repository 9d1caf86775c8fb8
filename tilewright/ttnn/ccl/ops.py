"""ttnn's collective operations on mesh tensors: all_gather, reduce_scatter, all_reduce.

Each runs as one mesh workload per phase: a program per chip (``gather`` / ``reduce``)
whose kernels move the data over the fabric.  Arguments follow ttnn (``cluster_axis``,
``topology``, ``memory_config``, ``output_tensor``; ``num_links``, ``subdevice_id`` and the
tuning knobs are accepted and have no effect).  On a 2-D mesh without ``cluster_axis``:

* ``all_gather`` gathers along the rows (axis 1), then along the columns (axis 0), so the
  result is the concatenation of all chips' tensors in row-major mesh order;
* ``reduce_scatter`` reduces along the columns (axis 0), then the rows (axis 1), so chip
  (r, c) holds part ``r * cols + c`` of the sum;
* ``all_reduce`` reduces along the rows, then the columns.

``all_reduce`` is a reduce-scatter followed by an all-gather along the innermost
dimension whose pages split evenly over the chips; when none does, every chip gathers
all chips' tensors and sums them in chip order, ``((x_0 + x_1) + ...) + x_{N-1}``.
Either way every chip ends with the same bits.  Reductions take float tensors
(bfloat16, float32, bfloat8_b, bfloat4_b).
"""

from __future__ import annotations

from tilewright.device.mesh import MeshWorkload
from tilewright.device.topology import MeshError
from tilewright.ttnn.ccl.gather import gather_programs
from tilewright.ttnn.ccl.plan import (
    allocate_like,
    check_input,
    groups_of,
    page_dim,
    resolve_topology,
)
from tilewright.ttnn.ccl.reduce import local_sum_programs, reduce_scatter_programs
from tilewright.ttnn.mesh_tensor import MeshTensor
from tilewright.ttnn.types import DRAM_MEMORY_CONFIG, is_float

__all__ = ["all_gather", "reduce_scatter", "all_reduce"]


def _two_phases(tensor: MeshTensor, cluster_axis) -> bool:
    rows, cols = tensor.mesh.shape
    return cluster_axis is None and rows > 1 and cols > 1


def _check_output(output_tensor, tensor: MeshTensor, shape, op: str):
    if output_tensor is None:
        return None
    ok = (
        isinstance(output_tensor, MeshTensor)
        and output_tensor.mesh is tensor.mesh
        and tuple(output_tensor.shape) == tuple(shape)
        and output_tensor.dtype == tensor.dtype
        and output_tensor.layout == tensor.layout
    )
    if not ok:
        raise MeshError(
            f"{op}: output_tensor must be a {list(shape)} {tensor.dtype.name} {tensor.layout.name} "
            f"mesh tensor on the input's mesh, got {output_tensor!r}"
        )
    return output_tensor.shards


def _gather_axis(tensor: MeshTensor, dim: int, axis, memory_config, topology, output_tensor=None):
    op = "all_gather"
    mesh = tensor.mesh
    d = page_dim(tensor, dim, op)
    groups = [resolve_topology(mesh, devs, topology, op) for devs in groups_of(mesh, axis, op)]
    n = groups[0].size
    shape = list(tensor.shape)
    shape[d] *= n
    index = {id(dev): k for k, dev in enumerate(mesh.devices)}
    outputs = _check_output(output_tensor, tensor, shape, op) or [
        allocate_like(tensor, tuple(shape), dev, memory_config) for dev in mesh.devices
    ]
    workload = MeshWorkload(f"all_gather dim {dim}")
    for group in groups:
        ks = [index[id(dev)] for dev in group.devices]
        programs = gather_programs(
            group, [tensor.shards[k] for k in ks], [outputs[k] for k in ks], d, workload.name
        )
        for k, program in zip(ks, programs):
            workload.add_program(mesh.coordinate_of(mesh.devices[k]), program)
    mesh.enqueue_mesh_workload(workload)
    return MeshTensor(outputs, mesh)


def _reduce_axis(
    tensor: MeshTensor,
    dim: int,
    axis,
    memory_config,
    topology,
    intermediate_config,
    output_tensor=None,
):
    op = "reduce_scatter"
    mesh = tensor.mesh
    if not is_float(tensor.dtype):
        raise MeshError(
            f"{op}: {tensor.dtype.name.lower()} tensors are not supported; reductions take float tensors"
        )
    groups = [resolve_topology(mesh, devs, topology, op) for devs in groups_of(mesh, axis, op)]
    n = groups[0].size
    d = page_dim(tensor, dim, op, split=n)
    shape = list(tensor.shape)
    shape[d] //= n
    index = {id(dev): k for k, dev in enumerate(mesh.devices)}
    outputs = _check_output(output_tensor, tensor, shape, op) or [
        allocate_like(tensor, tuple(shape), dev, memory_config) for dev in mesh.devices
    ]
    workload = MeshWorkload(f"reduce_scatter dim {dim}")
    mids = []
    try:
        for group in groups:
            ks = [index[id(dev)] for dev in group.devices]
            ins = [tensor.shards[k] for k in ks]
            outs = [outputs[k] for k in ks]
            if n == 1:
                programs = gather_programs(group, ins, outs, d, workload.name)  # a copy
            else:
                middle = [
                    allocate_like(
                        tensor, tuple(tensor.shape), dev, intermediate_config or DRAM_MEMORY_CONFIG
                    )
                    for dev in group.devices
                ]
                mids += middle
                programs = reduce_scatter_programs(group, ins, middle, outs, d, workload.name)
            for k, program in zip(ks, programs):
                workload.add_program(mesh.coordinate_of(mesh.devices[k]), program)
        mesh.enqueue_mesh_workload(workload)
    finally:
        for t in mids:
            t.deallocate()
    return MeshTensor(outputs, mesh)


def all_gather(
    input_tensor,
    dim: int,
    *,
    cluster_axis=None,
    memory_config=None,
    output_tensor=None,
    subdevice_id=None,
    sub_core_grids=None,
    num_links=None,
    topology=None,
    **_tuning,
) -> MeshTensor:
    """Every chip gets the concatenation along ``dim`` of the chips' tensors (ttnn.all_gather)."""
    tensor = check_input(input_tensor, "all_gather")
    if _two_phases(tensor, cluster_axis):
        if output_tensor is not None:
            raise MeshError("all_gather: output_tensor needs a cluster_axis on a 2-D mesh")
        rows_done = _gather_axis(tensor, dim, 1, memory_config, topology)
        try:
            return _gather_axis(rows_done, dim, 0, memory_config, topology)
        finally:
            rows_done.deallocate()
    return _gather_axis(tensor, dim, cluster_axis, memory_config, topology, output_tensor)


def reduce_scatter(
    input_tensor,
    dim: int,
    *,
    cluster_axis=None,
    subdevice_id=None,
    memory_config=None,
    intermediate_memory_config=None,
    output_tensor=None,
    num_links=None,
    topology=None,
    **_tuning,
) -> MeshTensor:
    """Chip k gets part k along ``dim`` of the sum of the chips' tensors (ttnn.reduce_scatter)."""
    tensor = check_input(input_tensor, "reduce_scatter")
    if _two_phases(tensor, cluster_axis):
        if output_tensor is not None:
            raise MeshError("reduce_scatter: output_tensor needs a cluster_axis on a 2-D mesh")
        cols_done = _reduce_axis(
            tensor, dim, 0, memory_config, topology, intermediate_memory_config
        )
        try:
            return _reduce_axis(
                cols_done, dim, 1, memory_config, topology, intermediate_memory_config
            )
        finally:
            cols_done.deallocate()
    return _reduce_axis(
        tensor,
        dim,
        cluster_axis,
        memory_config,
        topology,
        intermediate_memory_config,
        output_tensor,
    )


def scatter_dim(tensor: MeshTensor, parts: int) -> int | None:
    """The dimension all_reduce scatters along: the innermost whose pages split into ``parts``."""
    grid = tensor.page_grid()
    for d in reversed(range(len(grid))):
        if grid[d] % parts == 0:
            return d
    return None


def _all_reduce_axis(tensor: MeshTensor, axis, memory_config, topology) -> MeshTensor:
    mesh = tensor.mesh
    n = len(groups_of(mesh, axis, "all_reduce")[0])
    dim = scatter_dim(tensor, n)
    if dim is not None:
        parts = _reduce_axis(tensor, dim, axis, None, topology, None)
        try:
            return _gather_axis(parts, dim, axis, memory_config, topology)
        finally:
            parts.deallocate()
    stacked = _gather_axis(tensor, 0, axis, None, topology)  # every chip: all tensors
    try:
        outputs = [
            allocate_like(tensor, tuple(tensor.shape), dev, memory_config) for dev in mesh.devices
        ]
        workload = MeshWorkload("all_reduce local sum")
        programs = local_sum_programs(mesh.devices, stacked.shards, outputs, 0, n, workload.name)
        for dev, program in zip(mesh.devices, programs):
            workload.add_program(mesh.coordinate_of(dev), program)
        mesh.enqueue_mesh_workload(workload)
        return MeshTensor(outputs, mesh)
    finally:
        stacked.deallocate()


def all_reduce(
    input_tensor,
    *,
    cluster_axis=None,
    subdevice_id=None,
    memory_config=None,
    num_links=None,
    topology=None,
    compute_kernel_config=None,
    **_tuning,
) -> MeshTensor:
    """Every chip gets the sum of the chips' tensors (ttnn.all_reduce)."""
    tensor = check_input(input_tensor, "all_reduce")
    if not is_float(tensor.dtype):
        raise MeshError(
            f"all_reduce: {tensor.dtype.name.lower()} tensors are not supported; reductions take float tensors"
        )
    if _two_phases(tensor, cluster_axis):
        rows_done = _all_reduce_axis(tensor, 1, None, topology)
        try:
            return _all_reduce_axis(rows_done, 0, memory_config, topology)
        finally:
            rows_done.deallocate()
    return _all_reduce_axis(tensor, cluster_axis, memory_config, topology)
