"""What every collective decides before it builds programs: groups, topology, pages, L1.

* **Groups.** ``cluster_axis=1`` runs one collective per mesh row (its chips in column
  order), ``cluster_axis=0`` one per column; ``None`` on a line-shaped mesh is that line
  (a 2-D mesh is handled by the operation in two phases).
* **Topology.** ``Ring`` needs a ``FABRIC_1D_RING`` fabric and an Ethernet link between
  the group's ends; ``Linear`` works on any enabled fabric; ``None`` picks ``Ring`` when
  both hold, else ``Linear`` (ttnn picks from the fabric too).
* **Pages.** Tensors are TILE layout, interleaved (DRAM or L1).  A tensor dimension maps
  to a page-grid dimension (tiles for the last two, elements for batch dimensions); a
  *slot* is the set of a larger tensor's pages whose index along that dimension falls in
  one of N equal parts -- the place of shard k in an all-gather output, or chunk k of a
  reduce-scatter input -- listed in the smaller tensor's page order.
* **L1.** Kernels stream *pieces* of at most ``PIECE_BYTES`` (a whole number of pages
  that divides the slot, so circular buffers wrap exactly); each collective reserves its
  landing, staging and circular-buffer regions at one fixed L1 address on every chip, so
  a sender knows where its neighbour's landing slots are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tilewright.device.buffer import Buffer, BufferType
from tilewright.device.fabric import FabricConfig, Topology
from tilewright.device.topology import MeshError
from tilewright.ttnn.mesh_tensor import MeshTensor
from tilewright.ttnn.tensor import Tensor
from tilewright.ttnn.types import Layout, MemoryConfig, TensorMemoryLayout

__all__ = [
    "PIECE_BYTES",
    "LANDING_SLOTS",
    "Group",
    "groups_of",
    "resolve_topology",
    "check_input",
    "page_dim",
    "slot_pages",
    "piece_pages",
    "Regions",
    "allocate_like",
]

PIECE_BYTES = 256 * 1024
"""Largest piece a kernel moves at once (all-gather); reduce-scatter uses a quarter."""
LANDING_SLOTS = 2
"""Landing slots per receiving core: a sender runs this many pieces ahead of credits."""


@dataclass(frozen=True)
class Group:
    """The chips of one collective, in line order, and how they are connected."""

    devices: tuple
    ring: bool

    @property
    def size(self) -> int:
        return len(self.devices)


def groups_of(mesh, cluster_axis: int | None, op: str) -> list[tuple]:
    """Device tuples of the collectives along ``cluster_axis`` (``None``: a line mesh)."""
    rows, cols = mesh.shape
    if cluster_axis not in (None, 0, 1):
        raise MeshError(
            f"{op}: cluster_axis must be 0 (mesh columns), 1 (mesh rows) or None, got {cluster_axis!r}"
        )
    axis = cluster_axis
    if axis is None:
        if rows > 1 and cols > 1:  # pragma: no cover - the operations split 2-D meshes first
            raise MeshError(f"{op}: a {rows}x{cols} mesh needs a cluster_axis")
        axis = 0 if cols == 1 else 1
    grid = [mesh.devices[r * cols : (r + 1) * cols] for r in range(rows)]
    if axis == 1:
        return [tuple(row) for row in grid]
    return [tuple(grid[r][c] for r in range(rows)) for c in range(cols)]


def resolve_topology(mesh, devices: tuple, topology, op: str) -> Group:
    """The group's topology: checks the fabric and, for a ring, the closing link."""
    config = mesh.fabric.config
    if config == FabricConfig.DISABLED and len(devices) > 1:
        raise MeshError(
            f"{op}: the chips of the mesh exchange data over the fabric, which is disabled",
            hint="call ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D) (or FABRIC_1D_RING for "
            "rings) before ttnn.open_mesh_device",
        )
    ends_linked = len(devices) > 1 and mesh.system.linked(
        devices[0].device_id, devices[-1].device_id
    )
    ring_fabric = config == FabricConfig.FABRIC_1D_RING
    if topology is None:
        return Group(devices, ring_fabric and ends_linked and len(devices) > 2)
    topo = Topology(topology)
    if topo == Topology.Linear:
        return Group(devices, False)
    if topo != Topology.Ring:
        raise MeshError(
            f"{op}: topology {topo.name} is not supported; use Topology.Ring or Topology.Linear"
        )
    if not ring_fabric:
        raise MeshError(
            f"{op}: Topology.Ring needs the fabric configured as FABRIC_1D_RING (it is {config.name})",
            hint="ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D_RING) before opening the mesh, "
            "or use Topology.Linear",
        )
    if len(devices) > 2 and not ends_linked:
        raise MeshError(
            f"{op}: Topology.Ring needs an Ethernet link between chip {devices[0].device_id} and "
            f"chip {devices[-1].device_id}, the ends of the line; the system has none",
            hint="use Topology.Linear",
        )
    return Group(devices, len(devices) > 2)


def check_input(tensor, op: str) -> MeshTensor:
    """The mesh tensor a collective takes: TILE layout, interleaved, on a mesh device."""
    if not isinstance(tensor, Tensor):
        raise MeshError(f"{op}: input_tensor must be a ttnn tensor, got {type(tensor).__name__}")
    if not isinstance(tensor, MeshTensor) or tensor.mesh is None:
        raise MeshError(
            f"{op} takes a tensor distributed over a mesh device "
            "(ttnn.from_torch(..., device=mesh, mesh_mapper=...)); this one is on "
            + ("the host" if tensor.device() is None else f"device {tensor.device().device_id}")
        )
    if tensor.layout != Layout.TILE:
        raise MeshError(
            f"{op}: {tensor.layout.name} tensors are not supported; Tilewright's collectives move "
            "whole tiles (convert with ttnn.to_layout(t, ttnn.TILE_LAYOUT))"
        )
    config = tensor.memory_config()
    if config is None or config.memory_layout != TensorMemoryLayout.INTERLEAVED:
        raise MeshError(
            f"{op}: sharded tensors are not supported; use an interleaved memory config"
        )
    if len(tensor.shape) < 2:
        raise MeshError(f"{op}: the tensor needs rank 2 or more, got shape {list(tensor.shape)}")
    return tensor


def page_dim(tensor: Tensor, dim: int, op: str, *, split: int = 1) -> int:
    """The normalised tensor dimension ``dim``: whole pages, in ``split`` equal parts."""
    rank = len(tensor.shape)
    if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
        raise MeshError(f"{op}: dim {dim!r} is out of range for a rank-{rank} tensor")
    d = dim % rank
    if d >= rank - 2:
        tile = tensor.tile_shape.height if d == rank - 2 else tensor.tile_shape.width
        size = tensor.shape[d]
        if size % tile:
            raise MeshError(
                f"{op}: dimension {dim} has {size} elements, not a whole number of {tile}-element "
                "tiles; the padding inside the last tile would be gathered or reduced as data",
                hint="pad the tensor to whole tiles",
            )
    if tensor.page_grid()[d] % split:
        raise MeshError(
            f"{op}: dimension {dim} has {tensor.page_grid()[d]} "
            f"{'tiles' if d >= rank - 2 else 'elements'}, which do not split into {split} equal "
            "parts (one per chip)"
        )
    return d


def slot_pages(small_grid: tuple[int, ...], d: int, k: int, parts: int) -> np.ndarray:
    """Page ids, in the larger tensor (``small_grid`` with ``parts`` times the extent along
    ``d``), of part ``k``, listed in the smaller tensor's page order."""
    big = list(small_grid)
    big[d] *= parts
    index = list(np.indices(small_grid).reshape(len(small_grid), -1))
    index[d] = index[d] + k * small_grid[d]
    return np.ravel_multi_index(tuple(index), tuple(big)).astype(np.int64)


def piece_pages(slot: int, page_size: int, budget: int) -> int:
    """Pages per piece: the largest divisor of ``slot`` within ``budget`` bytes (at least 1)."""
    cap = max(1, budget // page_size)
    return max(d for d in range(1, min(slot, cap) + 1) if slot % d == 0)


class Regions:
    """Fixed L1 regions a collective reserves on every chip, from one common base."""

    def __init__(self, devices) -> None:
        align = max(d.l1_alignment for d in devices)
        self.align = max(align, 32)
        self.base = max(d.l1_unreserved_base for d in devices)
        self.base = -(-self.base // self.align) * self.align
        self.top = self.base
        self.limit = min(d.l1_size - d.l1_small_size for d in devices)

    def take(self, size: int) -> int:
        addr = self.top
        self.top = -(-(addr + size) // self.align) * self.align
        if self.top > self.limit:
            raise MeshError(
                f"the collective's L1 buffers ({self.top - self.base} B from {self.base:#x}) do not "
                f"fit below {self.limit:#x}, the end of the L1 kernels may use"
            )
        return addr


def allocate_like(
    template: Tensor, shape: tuple[int, ...], device, memory_config: MemoryConfig | None
) -> Tensor:
    """A device tensor of ``shape`` like ``template`` (dtype, layout, tile) whose pages the
    collective's kernels will all write (so nothing is encoded or written here)."""
    config = memory_config or template.memory_config()
    if config is None or config.memory_layout != TensorMemoryLayout.INTERLEAVED:
        raise MeshError("collectives write interleaved outputs; memory_config must be interleaved")
    if config.buffer_type not in (BufferType.DRAM, BufferType.L1):
        raise MeshError(f"collective outputs live in DRAM or L1, not {config.buffer_type.name}")
    out = Tensor(None, shape, template.dtype, template.layout, template.tile_shape)
    pages = math.prod(out.page_grid())
    page_size = (
        template.shards[0].page_size if isinstance(template, MeshTensor) else template.page_size
    )
    buf = Buffer(
        device, pages * page_size, page_size, config.buffer_type, TensorMemoryLayout.INTERLEAVED
    )
    return Tensor(
        None,
        shape,
        template.dtype,
        template.layout,
        template.tile_shape,
        buffer=buf,
        memory_config=config,
    )
