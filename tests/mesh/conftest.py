"""Fixtures for mesh tests: open meshes with a fabric, clean up what a test leaves open."""

from __future__ import annotations

import contextlib

import pytest
import torch

from tilewright import ttnn
from tilewright.device import session
from tilewright.ttnn import mesh_device


@pytest.fixture(autouse=True)
def _clean_session():
    """Every test starts with the fabric disabled and no mesh open, and leaves it so."""
    session.OPTIONS.fabric = ttnn.FabricConfig.DISABLED
    yield
    for mesh in list(mesh_device._OPEN_MESHES):
        ttnn.close_mesh_device(mesh)
    session.OPTIONS.fabric = ttnn.FabricConfig.DISABLED


@contextlib.contextmanager
def opened(shape, fabric=ttnn.FabricConfig.FABRIC_1D, **kwargs):
    """A mesh device of ``shape`` (``board=`` etc. pass through) with ``fabric``."""
    ttnn.set_fabric_config(fabric)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), **kwargs)
    try:
        yield mesh
    finally:
        ttnn.close_mesh_device(mesh)
        ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)


def bf16(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (2 * torch.rand(*shape, generator=g) - 1).to(torch.bfloat16)


def distribute(mesh, values, mapper=None, dtype=ttnn.bfloat16):
    return ttnn.from_torch(
        values, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=mapper
    )
