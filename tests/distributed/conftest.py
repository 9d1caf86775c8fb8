"""Worker-process tests run on a local Ray (the `distributed` extra, in the test extra)."""

from __future__ import annotations

import builtins

import pytest

from tilewright import distributed, ttnn
from tilewright.ttnn import mesh_device


@pytest.fixture
def workers():
    """Two local worker processes; stopped (and every mesh closed) after the test.  Ray
    must leave ``print`` alone (its tqdm support replaces it: TT-Lang kernels' prints would
    stop compiling)."""
    original = builtins.print
    pool = distributed.start(workers=2)
    yield pool
    for mesh in list(mesh_device._OPEN_MESHES):
        ttnn.close_mesh_device(mesh)
    distributed.stop()
    assert builtins.print is original
