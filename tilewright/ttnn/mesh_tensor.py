"""Mesh tensors: one ttnn tensor per chip of a mesh, as ttnn's distributed tensors.

A :class:`MeshTensor` is a ``ttnn.Tensor`` whose storage is one tensor per chip (a
*shard*, in row-major mesh order), on the chips of a :class:`MeshDevice` or -- before
``to_device`` -- on the host.  As in ttnn its ``shape``, ``dtype``, ``layout`` and memory
config are the per-chip ones, equal on every chip.  Operations called with mesh tensors
run on every chip with that chip's shard (``spmd``); ``ttnn.to_torch`` needs a mesh
composer to assemble the shards, and ``ttnn.get_device_tensors`` hands them out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tilewright.device.engine import ACTIVE
from tilewright.device.mesh import MeshDevice
from tilewright.device.topology import MeshError, MeshShape
from tilewright.ttnn.tensor import Tensor
from tilewright.ttnn.types import StorageType

__all__ = ["MeshTensor", "is_mesh_device"]


def is_mesh_device(obj: object) -> bool:
    return isinstance(obj, MeshDevice)


class MeshTensor(Tensor):
    """One tensor per chip of a mesh (row-major), all of one shape, dtype and layout."""

    def __init__(self, shards: Sequence[Tensor], mesh, mesh_shape: MeshShape | None = None) -> None:
        shards = list(shards)
        if mesh is not None:
            mesh_shape = mesh.shape
        if mesh_shape is None:
            raise MeshError("a mesh tensor needs a mesh device or a mesh shape")
        if len(shards) != mesh_shape.mesh_size():
            raise MeshError(
                f"a {mesh_shape.rows}x{mesh_shape.cols} mesh tensor needs "
                f"{mesh_shape.mesh_size()} device tensors, got {len(shards)}"
            )
        first = shards[0]
        for i, t in enumerate(shards):
            if isinstance(t, MeshTensor):
                raise MeshError("a mesh tensor's device tensors are single-device tensors")
            spec = (tuple(t.shape), t.dtype, t.layout, t.tile_shape)
            if spec != (tuple(first.shape), first.dtype, first.layout, first.tile_shape):
                raise MeshError(
                    f"device tensor {i} has shape {list(t.shape)}, {t.dtype.name}, "
                    f"{t.layout.name}; device tensor 0 has {list(first.shape)}, "
                    f"{first.dtype.name}, {first.layout.name}: the device tensors of a mesh "
                    "tensor share one spec"
                )
            if mesh is not None and t.device() is not mesh.devices[i]:
                where = "the host" if t.device() is None else f"device {t.device().device_id}"
                raise MeshError(
                    f"device tensor {i} is on {where}, not on device "
                    f"{mesh.devices[i].device_id} (mesh coordinate {divmod(i, mesh_shape.cols)})"
                )
        super().__init__(
            None,
            first.shape,
            first.dtype,
            first.layout,
            first.tile_shape,
            memory_config=first.memory_config(),
        )
        self.shards = shards
        self.mesh = mesh
        self.mesh_shape = mesh_shape

    # -- storage -----------------------------------------------------------------------------

    def device(self):
        return self.mesh

    def storage_type(self) -> StorageType:
        return StorageType.DEVICE if self.mesh is not None else StorageType.HOST

    def is_allocated(self) -> bool:
        return all(t.is_allocated() for t in self.shards)

    @property
    def buffer(self):
        raise MeshError(
            "a mesh tensor has one buffer per chip; take a chip's tensor with "
            "ttnn.get_device_tensors(tensor)"
        )

    def buffer_address(self) -> int:
        """The address of the shards' buffers (equal on every chip, as in lock-step allocation)."""
        addresses = {t.buffer_address() for t in self.shards}
        if len(addresses) != 1:
            raise MeshError(
                f"the device tensors of this mesh tensor live at different addresses "
                f"({sorted(addresses)}); ask each one (ttnn.get_device_tensors)"
            )
        return addresses.pop()

    @property
    def page_size(self) -> int:
        return self.shards[0].page_size

    def _composer_needed(self, what: str):
        return MeshError(
            f"{what} of a mesh tensor: it holds {len(self.shards)} device tensors; assemble them "
            "with a mesh composer (ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, "
            "dim=0))) or take one with ttnn.get_device_tensors(t)"
        )

    def host_pages(self) -> np.ndarray:
        if len(self.shards) == 1:
            return self.shards[0].host_pages()
        raise self._composer_needed("host_pages()")

    def to_numpy(self) -> np.ndarray:
        if len(self.shards) == 1:
            return self.shards[0].to_numpy()
        raise self._composer_needed("to_numpy()")

    def replace_pages(self, pages: np.ndarray) -> None:
        raise self._composer_needed("replace_pages()")

    def map_shards(self, fn: Callable[[Tensor], Tensor]) -> MeshTensor:
        """A mesh tensor of ``fn(shard)`` for every shard (on the same mesh)."""
        return MeshTensor([fn(t) for t in self.shards], self.mesh, self.mesh_shape)

    def cpu(self) -> MeshTensor:
        return MeshTensor([t.cpu() for t in self.shards], None, self.mesh_shape)

    def deallocate(self) -> None:
        for t in self.shards:
            t.deallocate()
        self._deallocated = True

    def __getitem__(self, key):
        if ACTIVE.run is not None:
            raise MeshError(
                "a kernel indexed a mesh tensor; kernels see the chip's own tensor "
                "(call the operation with the mesh tensor: it runs on every chip)"
            )
        return self.map_shards(lambda t: t[key])

    def __repr__(self) -> str:
        rows, cols = self.mesh_shape
        where = "host" if self.mesh is None else f"mesh {self.mesh.get_device_ids()}"
        return (
            f"ttnn.Tensor(shape={list(self.shape)} per device, dtype={self.dtype.name}, "
            f"layout={self.layout.name}, {rows}x{cols} {where})"
        )
