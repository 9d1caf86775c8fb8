"""Tensor distribution over a mesh: mesh mappers and composers, device tensors.

A *mesh mapper* splits one host tensor into a tensor per chip; a *mesh composer* joins
the chips' tensors back into one (``ttnn/ttnn/distributed/distributed.py``):

* ``ReplicateTensorToMesh(mesh)``: every chip gets the whole tensor;
* ``ShardTensorToMesh(mesh, dim)``: the tensor splits along ``dim`` into one piece per chip,
  row-major over the mesh;
* ``ShardTensor2dMesh(mesh, mesh_shape, dims=(d0, d1))``: mesh rows split ``dims[0]``, mesh
  columns split ``dims[1]``; ``None`` replicates along that mesh axis;
* ``ConcatMeshToTensor(mesh, dim)`` / ``ConcatMesh2dToTensor(mesh, mesh_shape, dims)``: the
  inverse joins (2-D: along ``dims[1]`` within a row, then the rows along ``dims[0]``).

``create_mesh_mapper`` / ``create_mesh_composer`` with ``MeshMapperConfig`` (placements
``PlacementReplicate()`` / ``PlacementShard(dim)`` per mesh axis) and ``MeshComposerConfig``
are the newer spellings of the same.  The pieces of one tensor share one shape (ttnn's
distributed tensors have one spec), so a dimension must split evenly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tilewright.device.topology import MeshError, MeshShape
from tilewright.errors import DeviceError
from tilewright.ttnn import convert, readback
from tilewright.ttnn.convert import check_not_empty, dtype_arg, layout_arg, place_on_device
from tilewright.ttnn.convert import from_torch as _single_from_torch
from tilewright.ttnn.located import at_user_call
from tilewright.ttnn.mesh_tensor import MeshTensor, is_mesh_device
from tilewright.ttnn.tensor import Tensor, _tile_shape
from tilewright.ttnn.types import DRAM_MEMORY_CONFIG, DataType, Layout

__all__ = [
    "TensorToMesh",
    "MeshToTensor",
    "ReplicateTensorToMesh",
    "ShardTensorToMesh",
    "ShardTensor2dMesh",
    "ConcatMeshToTensor",
    "ConcatMesh2dToTensor",
    "PlacementReplicate",
    "PlacementShard",
    "MeshMapperConfig",
    "MeshComposerConfig",
    "create_mesh_mapper",
    "create_mesh_composer",
    "replicate_tensor_to_mesh_mapper",
    "shard_tensor_to_mesh_mapper",
    "concat_mesh_to_tensor_composer",
    "distribute_tensor",
    "aggregate_tensor",
    "get_device_tensors",
    "aggregate_as_tensor",
    "from_torch",
    "from_numpy",
    "to_torch",
    "to_device",
]


@dataclass(frozen=True)
class PlacementReplicate:
    """Replicate along one mesh axis."""


@dataclass(frozen=True)
class PlacementShard:
    """Split tensor dimension ``dim`` along one mesh axis."""

    dim: int


Placement = PlacementReplicate | PlacementShard


class MeshMapperConfig:
    """Placements per mesh axis (rows, columns), and optionally the mesh shape they assume."""

    def __init__(self, placements: Sequence[Placement], mesh_shape_override=None) -> None:
        self.placements = tuple(placements)
        for p in self.placements:
            if not isinstance(p, (PlacementReplicate, PlacementShard)):
                raise MeshError(
                    f"MeshMapperConfig placements are PlacementReplicate() or PlacementShard(dim), "
                    f"got {p!r}"
                )
        self.mesh_shape = None if mesh_shape_override is None else MeshShape(mesh_shape_override)


class MeshComposerConfig:
    """The tensor dimension each mesh axis joins along (rows, columns)."""

    def __init__(self, dims: Sequence[int], mesh_shape_override=None) -> None:
        self.dims = tuple(int(d) for d in dims)
        self.mesh_shape = None if mesh_shape_override is None else MeshShape(mesh_shape_override)


def _mesh_of(mesh_device, what: str):
    if not is_mesh_device(mesh_device):
        raise MeshError(
            f"{what} takes a mesh device (ttnn.open_mesh_device), got {type(mesh_device).__name__}"
        )
    return mesh_device


def _axes_for(mesh_device, count: int, what: str) -> tuple[int, int]:
    """A 1-D placement list covers the devices as one line (rows x columns flattened)."""
    rows, cols = mesh_device.shape
    if count == 1:
        return 1, rows * cols
    if count == 2:
        return rows, cols
    raise MeshError(f"{what}: give one placement per mesh axis (1 or 2), got {count}")


def _normalize_dim(dim: int, rank: int, what: str) -> int:
    if not -rank <= dim < rank:
        raise MeshError(f"{what}: dim {dim} is out of range for a rank-{rank} tensor")
    return dim % rank


class TensorToMesh:
    """A mesh mapper: splits a host tensor (numpy values) into one value array per chip."""

    def __init__(self, mesh_device, placements: Sequence[Placement], mesh_shape, what: str) -> None:
        self.mesh_device = _mesh_of(mesh_device, what)
        self.what = what
        self.placements = tuple(placements)
        rows, cols = _axes_for(mesh_device, len(self.placements), what)
        self.grid = (rows, cols) if len(self.placements) == 2 else (1, rows * cols)
        if mesh_shape is not None and tuple(MeshShape(mesh_shape)) != tuple(mesh_device.shape):
            r, c = MeshShape(mesh_shape)
            raise MeshError(
                f"{what}: mesh_shape {r}x{c} does not match the {mesh_device.shape.rows}x"
                f"{mesh_device.shape.cols} mesh device"
            )

    def map(self, values: np.ndarray) -> list[np.ndarray]:
        """The value array of every chip, row-major over the mesh."""
        rows, cols = self.grid
        by_row: Placement
        by_col: Placement
        if len(self.placements) == 1:
            by_row, by_col = PlacementReplicate(), self.placements[0]
        else:
            by_row, by_col = self.placements
        out: list[np.ndarray] = []
        for row_piece in self._split(values, by_row, rows, 0):
            out.extend(self._split(row_piece, by_col, cols, 1))
        return out

    def _split(
        self, v: np.ndarray, placement: Placement, count: int, axis: int
    ) -> list[np.ndarray]:
        if isinstance(placement, PlacementReplicate) or count == 1:
            return [v] * count
        dim = _normalize_dim(placement.dim, v.ndim, self.what)
        size = v.shape[dim]
        if size % count:
            raise MeshError(
                f"{self.what}: tensor dimension {placement.dim} of size {size} does not split into "
                f"{count} equal pieces (mesh axis {axis} has {count} devices)",
                hint="the device tensors of a mesh tensor share one shape; pad the tensor",
            )
        return list(np.split(v, count, axis=dim))


class MeshToTensor:
    """A mesh composer: joins the chips' value arrays into one."""

    def __init__(self, mesh_device, dims: Sequence[int], mesh_shape, what: str) -> None:
        self.mesh_device = _mesh_of(mesh_device, what)
        self.what = what
        self.dims = tuple(dims)
        if len(self.dims) == 2 and self.dims[0] == self.dims[1]:
            raise MeshError(f"{what}: dims {self.dims} must name two different tensor dimensions")
        if mesh_shape is not None and tuple(MeshShape(mesh_shape)) != tuple(mesh_device.shape):
            r, c = MeshShape(mesh_shape)
            raise MeshError(
                f"{what}: mesh_shape {r}x{c} does not match the {mesh_device.shape.rows}x"
                f"{mesh_device.shape.cols} mesh device"
            )

    def compose(self, values: list[np.ndarray], mesh_shape: MeshShape) -> np.ndarray:
        rank = values[0].ndim
        if len(self.dims) == 1:
            return np.concatenate(values, axis=_normalize_dim(self.dims[0], rank, self.what))
        d0 = _normalize_dim(self.dims[0], rank, self.what)
        d1 = _normalize_dim(self.dims[1], rank, self.what)
        cols = mesh_shape.cols
        rows = [
            np.concatenate(values[r * cols : (r + 1) * cols], axis=d1)
            for r in range(mesh_shape.rows)
        ]
        return np.concatenate(rows, axis=d0)


def ReplicateTensorToMesh(mesh_device) -> TensorToMesh:  # noqa: N802
    """Every chip gets the whole tensor."""
    return TensorToMesh(mesh_device, (PlacementReplicate(),), None, "ReplicateTensorToMesh")


def ShardTensorToMesh(mesh_device, dim: int) -> TensorToMesh:  # noqa: N802
    """The tensor splits along ``dim``, one piece per chip in row-major mesh order."""
    return TensorToMesh(mesh_device, (PlacementShard(int(dim)),), None, "ShardTensorToMesh")


def ShardTensor2dMesh(mesh_device, mesh_shape, dims) -> TensorToMesh:  # noqa: N802
    """Mesh rows split ``dims[0]`` and mesh columns ``dims[1]`` (``None``: replicate)."""
    if len(tuple(dims)) != 2:
        raise MeshError(f"ShardTensor2dMesh: dims takes two entries (rows, columns), got {dims}")
    placements = tuple(PlacementReplicate() if d is None else PlacementShard(int(d)) for d in dims)
    return TensorToMesh(mesh_device, placements, mesh_shape, "ShardTensor2dMesh")


def ConcatMeshToTensor(mesh_device, dim: int) -> MeshToTensor:  # noqa: N802
    """Join the chips' tensors along ``dim`` in row-major mesh order."""
    return MeshToTensor(mesh_device, (int(dim),), None, "ConcatMeshToTensor")


def ConcatMesh2dToTensor(mesh_device, mesh_shape, dims) -> MeshToTensor:  # noqa: N802
    """Join each mesh row along ``dims[1]``, then the rows along ``dims[0]``."""
    if len(tuple(dims)) != 2 or any(d is None for d in dims):
        raise MeshError(f"ConcatMesh2dToTensor: dims takes two tensor dimensions, got {dims}")
    return MeshToTensor(
        mesh_device, tuple(int(d) for d in dims), mesh_shape, "ConcatMesh2dToTensor"
    )


def create_mesh_mapper(mesh_device, config: MeshMapperConfig) -> TensorToMesh:
    return TensorToMesh(mesh_device, config.placements, config.mesh_shape, "create_mesh_mapper")


def create_mesh_composer(mesh_device, config: MeshComposerConfig) -> MeshToTensor:
    return MeshToTensor(mesh_device, config.dims, config.mesh_shape, "create_mesh_composer")


def replicate_tensor_to_mesh_mapper(mesh_device) -> TensorToMesh:
    return ReplicateTensorToMesh(mesh_device)


def shard_tensor_to_mesh_mapper(mesh_device, dim: int) -> TensorToMesh:
    return ShardTensorToMesh(mesh_device, dim)


def concat_mesh_to_tensor_composer(mesh_device, dim: int) -> MeshToTensor:
    return ConcatMeshToTensor(mesh_device, dim)


# -- mesh tensors <-> host ------------------------------------------------------------------------


def distribute_tensor(tensor, mapper: TensorToMesh, device=None):
    """``ttnn.distribute_tensor``: a host tensor split by ``mapper`` (placed on ``device``)."""

    if not isinstance(tensor, Tensor):
        raise MeshError(f"distribute_tensor takes a ttnn tensor, got {type(tensor).__name__}")
    return from_torch(
        tensor.to_numpy(),
        dtype=tensor.dtype,
        layout=tensor.layout,
        tile=tensor.tile_shape,
        device=device,
        mesh_mapper=mapper,
    )


def aggregate_tensor(tensor, composer: MeshToTensor):
    """``ttnn.aggregate_tensor``: one host tensor joined by ``composer``."""

    if not isinstance(tensor, MeshTensor):
        raise MeshError("aggregate_tensor takes a mesh tensor")
    values = composer.compose([t.to_numpy() for t in tensor.shards], tensor.mesh_shape)
    return from_torch(values, dtype=tensor.dtype, layout=tensor.layout, tile=tensor.tile_shape)


def get_device_tensors(tensor) -> list[Tensor]:
    """The per-chip tensors of a mesh tensor, row-major over the mesh."""
    if isinstance(tensor, MeshTensor):
        return list(tensor.shards)
    if isinstance(tensor, Tensor):
        return [tensor]
    raise MeshError(f"get_device_tensors takes a ttnn tensor, got {type(tensor).__name__}")


def aggregate_as_tensor(tensors: Sequence[Tensor]) -> MeshTensor:
    """A mesh tensor of single-device tensors, one per chip of their mesh (in mesh order)."""
    tensors = list(tensors)
    if not tensors:
        raise MeshError("aggregate_as_tensor needs at least one tensor")
    devices = [t.device() for t in tensors]
    if all(d is None for d in devices):
        return MeshTensor(tensors, None, MeshShape(1, len(tensors)))
    mesh = getattr(devices[0], "mesh", None)
    if mesh is None or any(d is None or d.mesh is not mesh for d in devices):
        raise MeshError(
            "aggregate_as_tensor: the tensors must all be on chips of one mesh device, or all on "
            "the host"
        )
    for sub in [mesh, *_all_submeshes(mesh)]:
        if sub.devices == devices:
            return MeshTensor(tensors, sub)
    raise MeshError(
        f"aggregate_as_tensor: devices {[d.device_id for d in devices]} are not the chips of an "
        "open mesh device in mesh order"
    )


def _all_submeshes(mesh):
    for sub in mesh.submeshes:
        yield sub
        yield from _all_submeshes(sub)


# -- from_torch / to_torch / to_device on meshes ----------------------------------------------------


def mesh_from_torch(
    values: np.ndarray, dtype, layout, tile, pad_value, device, memory_config, mesh_mapper
) -> MeshTensor:
    """``from_torch`` with a mesh mapper or onto a mesh device: one tensor per chip."""

    if device is not None and not is_mesh_device(device):
        raise MeshError(
            f"from_torch(mesh_mapper=...) places the pieces on a mesh device, but device is "
            f"{type(device).__name__} {getattr(device, 'device_id', '')}".rstrip(),
            hint="open the chips with ttnn.open_mesh_device",
        )
    mapper = mesh_mapper if mesh_mapper is not None else ReplicateTensorToMesh(device)
    if not isinstance(mapper, TensorToMesh):
        raise MeshError(
            f"mesh_mapper must be a mesh mapper (ttnn.ShardTensorToMesh, ...), got "
            f"{type(mapper).__name__}"
        )
    shape = mapper.mesh_device.shape
    if device is not None and tuple(device.shape) != tuple(shape):
        raise MeshError(
            f"{mapper.what} was made for a {shape.rows}x{shape.cols} mesh, but the tensor goes to "
            f"a {device.shape.rows}x{device.shape.cols} mesh device"
        )
    hosts: dict[int, Tensor] = {}  # one encoding per distinct piece (replicas share it)
    shards = []
    for k, piece in enumerate(mapper.map(values)):
        host = hosts.get(id(piece))
        if host is None:
            host = hosts[id(piece)] = from_torch(
                np.ascontiguousarray(piece),
                dtype=dtype,
                layout=layout,
                tile=tile,
                pad_value=pad_value,
            )
        if device is None:
            shards.append(host)
        else:
            shards.append(
                place_on_device(host, device.devices[k], memory_config or DRAM_MEMORY_CONFIG)
            )
    return MeshTensor(shards, device, shape)


def mesh_values(tensor, mesh_composer) -> np.ndarray:
    """``to_torch``'s values of a mesh tensor, joined by ``mesh_composer``."""
    if not isinstance(tensor, MeshTensor):
        raise MeshError(
            "to_torch(mesh_composer=...) joins the device tensors of a mesh tensor; this tensor is "
            "on one device (drop mesh_composer)"
        )
    if mesh_composer is None:
        return tensor.to_numpy()  # one device tensor, or the composer-needed error
    if not isinstance(mesh_composer, MeshToTensor):
        raise MeshError(
            f"mesh_composer must be a mesh composer (ttnn.ConcatMeshToTensor, ...), got "
            f"{type(mesh_composer).__name__}"
        )
    composer_shape = mesh_composer.mesh_device.shape
    if tuple(composer_shape) != tuple(tensor.mesh_shape):
        raise MeshError(
            f"{mesh_composer.what} was made for a {composer_shape.rows}x{composer_shape.cols} mesh, "
            f"but the tensor is on a {tensor.mesh_shape.rows}x{tensor.mesh_shape.cols} mesh"
        )
    return mesh_composer.compose([t.to_numpy() for t in tensor.shards], tensor.mesh_shape)


def mesh_to_device(tensor, device, memory_config) -> MeshTensor:
    """``to_device`` of a host mesh tensor, or of a host tensor onto a mesh (replicated)."""

    if not isinstance(tensor, MeshTensor):
        return mesh_from_torch(
            tensor.to_numpy(),
            tensor.dtype,
            tensor.layout,
            tensor.tile_shape,
            None,
            device,
            memory_config,
            None,
        )
    if not is_mesh_device(device):
        raise MeshError("a mesh tensor goes to a mesh device (ttnn.open_mesh_device)")
    if tuple(device.shape) != tuple(tensor.mesh_shape):
        raise MeshError(
            f"a {tensor.mesh_shape.rows}x{tensor.mesh_shape.cols} mesh tensor cannot go to a "
            f"{device.shape.rows}x{device.shape.cols} mesh device"
        )
    shards = [to_device(t, chip, memory_config) for t, chip in zip(tensor.shards, device.devices)]
    return MeshTensor(shards, device)


# -- the mesh-aware ttnn entry points (single-device work goes to ttnn.convert) -------------------


@at_user_call
def from_torch(
    tensor,
    dtype: DataType | None = None,
    *,
    tile=None,
    pad_value=None,
    layout: Layout | None = None,
    device=None,
    mesh_mapper=None,
    **kwargs,
) -> Tensor:
    """``ttnn.from_torch``: with ``mesh_mapper`` or a mesh ``device``, a mesh tensor."""
    if mesh_mapper is None and not is_mesh_device(device):
        return _single_from_torch(
            tensor, dtype, tile=tile, pad_value=pad_value, layout=layout, device=device, **kwargs
        )
    values, default = convert.host_values(tensor)
    check_not_empty("ttnn.from_torch", values.shape)
    return mesh_from_torch(
        values,
        dtype_arg("ttnn.from_torch", dtype) if dtype is not None else default,
        layout_arg("ttnn.from_torch", layout) if layout is not None else Layout.ROW_MAJOR,
        _tile_shape(tile),
        pad_value,
        device,
        kwargs.get("memory_config"),
        mesh_mapper,
    )


from_numpy = from_torch


@at_user_call
def to_torch(tensor: Tensor, dtype=None, *, torch_rank=None, mesh_composer=None, **_ignored):
    """``ttnn.to_torch``: a mesh tensor is joined by ``mesh_composer`` first."""
    if mesh_composer is not None or isinstance(tensor, MeshTensor):
        values = mesh_values(tensor, mesh_composer)
    elif isinstance(tensor, Tensor):
        values = tensor.to_numpy()
    else:
        raise DeviceError(f"ttnn.to_torch takes a ttnn tensor, got {type(tensor).__name__}")
    return readback.note(convert.values_to_torch(values, tensor, dtype, torch_rank))


@at_user_call
def to_device(tensor: Tensor, device, memory_config=None, **_ignored) -> Tensor:
    """``ttnn.to_device``: onto a mesh device, one tensor per chip."""
    if isinstance(tensor, MeshTensor) or is_mesh_device(device):
        return mesh_to_device(tensor, device, memory_config)
    return convert.to_device(tensor, device, memory_config)
