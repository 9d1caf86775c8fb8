"""all_gather, reduce_scatter and all_reduce: programs on the fabric, bit-exact against the host.

Gathers move bytes, so every chip must hold exactly the concatenation; reductions must
equal the host reference of the same order of additions (``reference``), to the bit.
"""

from __future__ import annotations

import pytest
import torch

from tilewright import ttnn
from tilewright.device.topology import MeshError

from .conftest import bf16, distribute, opened
from .reference import ring_all_reduce, ring_reduce_scatter

RING, LINEAR = ttnn.Topology.Ring, ttnn.Topology.Linear


def shards_of(t) -> list[torch.Tensor]:
    return [ttnn.to_torch(s) for s in ttnn.get_device_tensors(t)]


@pytest.mark.parametrize("topology", [RING, LINEAR, None])
@pytest.mark.parametrize("dim", [0, 2, 3])
def test_all_gather_on_a_ring_of_eight(topology, dim):
    with opened((1, 8), board="t3k", fabric=ttnn.FabricConfig.FABRIC_1D_RING) as mesh:
        x = bf16(8, 1, 64, 96 if dim != 3 else 64, seed=dim)
        chunks = list(x.chunk(8, dim=0))
        pieces = [c if dim == 0 else c.reshape(1, 1, *c.shape[2:]) for c in chunks]
        t = distribute(mesh, x, ttnn.ShardTensorToMesh(mesh, dim=0))
        gathered = ttnn.all_gather(t, dim, topology=topology)
        want = torch.cat(pieces, dim=dim)
        assert tuple(gathered.shape) == tuple(want.shape)
        assert all(torch.equal(s, want) for s in shards_of(gathered))


def test_all_gather_on_a_line_with_a_1d_fabric():
    with opened((1, 4), board="quietbox", fabric=ttnn.FabricConfig.FABRIC_1D) as mesh:
        x = bf16(4, 64, 64, seed=7)
        t = distribute(mesh, x, ttnn.ShardTensorToMesh(mesh, dim=0))
        gathered = ttnn.all_gather(t, 0)  # no ring on a QuietBox line: Linear
        assert all(torch.equal(s, x) for s in shards_of(gathered))


@pytest.mark.parametrize("fabric", [ttnn.FabricConfig.FABRIC_1D, ttnn.FabricConfig.FABRIC_2D])
def test_all_gather_on_a_2d_mesh(fabric):
    with opened((2, 4), board="t3k", fabric=fabric) as mesh:
        x = bf16(8, 64, 32, seed=8)
        t = distribute(mesh, x, ttnn.ShardTensorToMesh(mesh, dim=0))
        chips = x.chunk(8, dim=0)
        rows = ttnn.all_gather(t, 0, cluster_axis=1)
        for k, s in enumerate(shards_of(rows)):
            r = k // 4
            assert torch.equal(s, torch.cat(chips[r * 4 : r * 4 + 4]))
        cols = ttnn.all_gather(t, 2, cluster_axis=0)
        for k, s in enumerate(shards_of(cols)):
            assert torch.equal(s, torch.cat([chips[k % 4], chips[4 + k % 4]], dim=2))
        everything = ttnn.all_gather(t, 0)  # rows, then columns: row-major mesh order
        assert all(torch.equal(s, x) for s in shards_of(everything))


@pytest.mark.parametrize(
    ("topology", "fabric"),
    [
        (RING, ttnn.FabricConfig.FABRIC_1D_RING),
        (LINEAR, ttnn.FabricConfig.FABRIC_1D),
    ],
)
@pytest.mark.parametrize("dim", [3, 2, 0])
def test_reduce_scatter_on_eight_chips(topology, fabric, dim):
    with opened((1, 8), board="t3k", fabric=fabric) as mesh:
        shape = {3: (1, 1, 64, 512), 2: (1, 1, 256, 64), 0: (8, 1, 32, 64)}[dim]
        xs = [bf16(*shape, seed=10 + i) for i in range(8)]
        t = distribute(
            mesh,
            torch.cat(xs, dim=0 if dim != 0 else 1),
            ttnn.ShardTensorToMesh(mesh, 0 if dim != 0 else 1),
        )
        parts = ttnn.reduce_scatter(t, dim, topology=topology)
        want = ring_reduce_scatter(xs, dim)
        got = shards_of(parts)
        assert all(torch.equal(g, w) for g, w in zip(got, want))
        exact = torch.stack(xs).float().sum(0)
        assert torch.allclose(torch.cat(got, dim=dim).float(), exact, atol=0.05)


def test_reduce_scatter_and_all_reduce_on_a_2d_mesh():
    with opened((2, 4), board="t3k", fabric=ttnn.FabricConfig.FABRIC_1D_RING) as mesh:
        xs = [bf16(1, 1, 64, 256, seed=20 + i) for i in range(8)]
        t = distribute(mesh, torch.cat(xs), ttnn.ShardTensorToMesh(mesh, 0))
        grid = [xs[r * 4 : r * 4 + 4] for r in range(2)]
        # cluster_axis=1: each row reduces among its 4 chips.
        rows = shards_of(ttnn.reduce_scatter(t, 3, cluster_axis=1))
        for r in range(2):
            assert all(
                torch.equal(g, w)
                for g, w in zip(rows[r * 4 : r * 4 + 4], ring_reduce_scatter(grid[r], 3))
            )
        # No cluster_axis: the columns first (2 parts), then the rows (4 parts of those).
        after_cols = [ring_reduce_scatter([grid[0][c], grid[1][c]], 3) for c in range(4)]
        both = shards_of(ttnn.reduce_scatter(t, 3))
        for r in range(2):
            want = ring_reduce_scatter([after_cols[c][r] for c in range(4)], 3)
            assert all(torch.equal(g, w) for g, w in zip(both[r * 4 : r * 4 + 4], want))
        # all_reduce without cluster_axis: the rows, then the columns; the same bits everywhere.
        total = shards_of(ttnn.all_reduce(t))
        row_sums = [ring_all_reduce(grid[r]) for r in range(2)]
        want = ring_all_reduce(row_sums)
        assert all(torch.equal(g, want) for g in total)


def test_all_reduce_along_a_cluster_axis():
    with opened((2, 4), board="t3k", fabric=ttnn.FabricConfig.FABRIC_1D) as mesh:
        xs = [bf16(1, 1, 64, 64, seed=30 + i) for i in range(8)]
        t = distribute(mesh, torch.cat(xs), ttnn.ShardTensorToMesh(mesh, 0))
        cols = shards_of(ttnn.all_reduce(t, cluster_axis=0))
        for k, g in enumerate(cols):
            assert torch.equal(g, ring_all_reduce([xs[k % 4], xs[4 + k % 4]]))


def test_collectives_on_the_galaxy():
    with opened((4, 8), fabric=ttnn.FabricConfig.FABRIC_1D_RING) as mesh:
        x = bf16(32, 32, 32, seed=40)
        t = distribute(mesh, x, ttnn.ShardTensorToMesh(mesh, 0))
        rows = shards_of(ttnn.all_gather(t, 0, cluster_axis=1, topology=RING))
        assert torch.equal(rows[9], x[8:16])
        assert all(torch.equal(s, x) for s in shards_of(ttnn.all_gather(t, 0)))


def test_other_formats_move_bit_for_bit():
    with opened((1, 4), board="t3k", fabric=ttnn.FabricConfig.FABRIC_1D) as mesh:
        x = torch.randn(4, 64, 64)
        for dtype in (ttnn.bfloat8_b, ttnn.float32):
            t = distribute(mesh, x, ttnn.ShardTensorToMesh(mesh, 0), dtype=dtype)
            want = ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, 0))
            assert all(torch.equal(s, want) for s in shards_of(ttnn.all_gather(t, 0)))
        y = torch.randn(4, 64, 128)
        f32 = distribute(mesh, y, ttnn.ShardTensorToMesh(mesh, 0), dtype=ttnn.float32)
        parts = shards_of(ttnn.reduce_scatter(f32, 2))
        xs = list(y.chunk(4))
        assert all(torch.equal(g, w) for g, w in zip(parts, ring_reduce_scatter(xs, 2)))


@pytest.mark.parametrize(
    ("fabric", "call", "message"),
    [
        (
            ttnn.FabricConfig.DISABLED,
            lambda t, m: ttnn.all_gather(t, 0),
            "all_gather: the chips of the mesh exchange data over the fabric, which is disabled",
        ),
        (
            ttnn.FabricConfig.FABRIC_1D,
            lambda t, m: ttnn.all_gather(t, 0, topology=RING),
            "Topology.Ring needs the fabric configured as FABRIC_1D_RING",
        ),
        (
            ttnn.FabricConfig.FABRIC_1D,
            lambda t, m: ttnn.all_gather(t, 0, topology=ttnn.Topology.Mesh),
            "topology Mesh is not supported",
        ),
        (
            ttnn.FabricConfig.FABRIC_1D,
            lambda t, m: ttnn.all_gather(t, 5),
            "all_gather: dim 5 is out of range for a rank-3 tensor",
        ),
        (
            ttnn.FabricConfig.FABRIC_1D,
            lambda t, m: ttnn.all_gather(t, 0, cluster_axis=2),
            "cluster_axis must be 0 \\(mesh columns\\), 1 \\(mesh rows\\) or None",
        ),
        (
            ttnn.FabricConfig.FABRIC_1D,
            lambda t, m: ttnn.reduce_scatter(t, 1),
            "reduce_scatter: dimension 1 has 2 tiles, which do not split into 4 equal parts",
        ),
        (
            ttnn.FabricConfig.FABRIC_1D,
            lambda t, m: ttnn.reduce_scatter(ttnn.typecast(t, ttnn.int32), 0),
            "reduce_scatter: int32 tensors are not supported",
        ),
        (
            ttnn.FabricConfig.FABRIC_1D,
            lambda t, m: ttnn.all_gather(ttnn.to_layout(t, ttnn.ROW_MAJOR_LAYOUT), 0),
            "all_gather: ROW_MAJOR tensors are not supported",
        ),
        (
            ttnn.FabricConfig.FABRIC_1D,
            lambda t, m: ttnn.all_gather(ttnn.get_device_tensors(t)[0], 0),
            "all_gather takes a tensor distributed over a mesh device",
        ),
        (
            ttnn.FabricConfig.FABRIC_1D,
            lambda t, m: ttnn.all_gather(t[:, :, :30], 2),
            "dimension 2 has 30 elements, not a whole number of 32-element tiles",
        ),
        (
            ttnn.FabricConfig.FABRIC_1D,
            lambda t, m: ttnn.all_gather(t, 0, output_tensor=t),
            "output_tensor must be a \\[16, 64, 64\\] BFLOAT16 TILE mesh tensor",
        ),
    ],
)
def test_collective_errors(fabric, call, message):
    with opened((1, 4), board="t3k", fabric=fabric) as mesh:
        t = distribute(mesh, torch.zeros(16, 64, 64), ttnn.ShardTensorToMesh(mesh, 0))
        with pytest.raises(MeshError, match=message):
            call(t, mesh)


def test_a_ring_needs_the_closing_link():
    with opened((1, 4), board="quietbox", fabric=ttnn.FabricConfig.FABRIC_1D_RING) as mesh:
        t = distribute(mesh, torch.zeros(4, 32, 32), ttnn.ShardTensorToMesh(mesh, 0))
        with pytest.raises(
            MeshError, match="needs an Ethernet link between chip 0 and chip 3, the ends"
        ):
            ttnn.all_gather(t, 0, topology=RING)
        # Linear reduce-scatter sends the ring's closing transfer back along the line.
        xs = [bf16(1, 32, 128, seed=50 + i) for i in range(4)]
        t = distribute(mesh, torch.cat(xs), ttnn.ShardTensorToMesh(mesh, 0))
        got = shards_of(ttnn.reduce_scatter(t, 2, topology=LINEAR))
        assert all(torch.equal(g, w) for g, w in zip(got, ring_reduce_scatter(xs, 2)))


def _launches(monkeypatch, timer, run):
    """Every launch result of ``run()`` with the collectives' pages timed by ``timer``."""
    from tilewright.device.mesh import MeshDevice
    from tilewright.ttnn.ccl import pages

    results = []
    enqueue = MeshDevice.enqueue_mesh_workload

    def recording(self, workload, **kw):
        results.append(enqueue(self, workload, **kw))
        return results[-1]

    monkeypatch.setattr(MeshDevice, "enqueue_mesh_workload", recording)
    monkeypatch.setattr(pages.noc_pages, "page_timer", lambda: timer)
    out = run()
    return out, [(r.makespan, [(s.place, s.kernel, s.cycles, s.blocked_cycles, s.waits) for s in r.stats])
                 for r in results]  # fmt: skip


def test_native_page_timing_gives_the_python_models_clocks(monkeypatch):
    """The collectives' page transfers timed by the native runtime (native/noc_pages.py)
    and by the Python calendar: the same makespan and the same clock, wait and blocked
    time for every kernel run, on a gather, a reduce-scatter and an all-reduce."""
    from tilewright.native.noc_pages import page_timer

    native = page_timer()
    assert native is not None  # this machine builds the runtime

    def run():
        with opened((2, 4), board="t3k", fabric=ttnn.FabricConfig.FABRIC_1D_RING) as mesh:
            t = distribute(mesh, bf16(8, 1, 64, 256, seed=12), ttnn.ShardTensorToMesh(mesh, 0))
            outs = [ttnn.all_gather(t, 0), ttnn.reduce_scatter(t, 3), ttnn.all_reduce(t)]
            return [shards_of(o) for o in outs]

    got_py, launches_py = _launches(monkeypatch, None, run)
    got_native, launches_native = _launches(monkeypatch, native, run)
    assert len(launches_py) >= 3 and launches_native == launches_py
    assert all(torch.equal(a, b) for x, y in zip(got_py, got_native) for a, b in zip(x, y))
