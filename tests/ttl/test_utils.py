"""``ttl.utils``: work splitting, matmul blocking and correctness checks."""

from __future__ import annotations

import pytest
import torch

from tilewright import ttnn
from tilewright.ttl.utils.block_allocation import (
    get_large_matmul_params,
    get_number_of_nodes_from_ranges,
    split_work_to_nodes,
)
from tilewright.ttl.utils.correctness import (
    assert_allclose,
    assert_pcc,
    assert_with_ulp,
    comp_pcc,
    ulp,
)


@pytest.mark.parametrize(
    "ranges, count",
    [
        ([], 0),
        ([((0,), (4,))], 5),
        ([((0, 0), (3, 7))], 32),
        ([((2, 3), (2, 3))], 1),
        ([((0, 0), (3, 7)), ((4, 0), (4, 3))], 36),
        ([((0, 4), (0, 7)), ((1, 0), (2, 7)), ((3, 0), (3, 2))], 23),
        ([((0, 0, 0), (0, 2, 4))], 15),
    ],
)
def test_nodes_in_ranges(ranges, count):
    assert get_number_of_nodes_from_ranges(ranges) == count


@pytest.mark.parametrize(
    "grid, units, row_wise",
    [((8, 8), 100, True), ((8, 8), 100, False), ((8, 8), 64, True), ((8, 8), 10, True),
     ((13, 10), 200, False), ((3, 12), 40, False), ((2, 3), 10, True), ((7, 9), 100, True)],
)  # fmt: skip
def test_split_work_agrees_with_ttnn(grid, units, row_wise):
    rows, cols = grid
    nodes, g1, g2, w1, w2 = split_work_to_nodes(grid, units, row_wise)
    ref = ttnn.split_work_to_cores(ttnn.CoreCoord(cols, rows), units, row_wise)
    assert (nodes, w1, w2) == (ref[0], ref[4], ref[5])
    assert get_number_of_nodes_from_ranges(g1) == ref[2].num_cores()
    assert get_number_of_nodes_from_ranges(g2) == ref[3].num_cores()
    assert (
        get_number_of_nodes_from_ranges(g1) * w1 + get_number_of_nodes_from_ranges(g2) * w2 == units
    )
    # the same nodes, group by group, in (row, column) coordinates
    for ours, theirs in ((g1, ref[2]), (g2, ref[3])):
        covered = {
            (r, c)
            for (r0, c0), (r1, c1) in ours
            for r in range(r0, r1 + 1)
            for c in range(c0, c1 + 1)
        }
        assert covered == {(core.y, core.x) for core in theirs.cores()}


def test_split_work_ranges_are_partial_full_partial_lines():
    # 40 units over 3 rows x 12 columns, column-wise: 4 nodes take 2 units, 32 take 1
    assert split_work_to_nodes((3, 12), 40, False) == (
        36,
        [((0, 0), (2, 0)), ((0, 1), (0, 1))],
        [((1, 1), (2, 1)), ((0, 2), (2, 11))],
        2,
        1,
    )
    assert split_work_to_nodes((8, 8), 0, True) == (0, [], [], 0, 0)


@pytest.mark.parametrize(
    "ny, nx, mt, nt, k, expected",
    [
        (8, 8, 1, 1, 8, (1, 1, 1, 1)),
        (8, 8, 7, 7, 8, (7, 1, 7, 1)),
        (8, 8, 13, 13, 4, (13, 13, 1, 1)),
        (8, 8, 16, 16, 8, (16, 2, 4, 2)),
        (8, 8, 21, 42, 8, (7, 6, 7, 1)),
        (8, 8, 64, 64, 8, (8, 8, 4, 2)),
        (8, 8, 77, 77, 4, (11, 11, 1, 1)),
        (8, 8, 256, 256, 1, (0, 0, 0, 0)),
        (13, 10, 40, 65, 8, (5, 13, 5, 1)),
        (13, 10, 64, 256, 1, (8, 32, 4, 2)),
        (13, 10, 128, 256, 1, (0, 0, 0, 0)),
    ],
)
def test_large_matmul_params(ny, nx, mt, nt, k, expected):
    p = get_large_matmul_params(mt, nt, ny, nx, k)
    assert (p.block_h, p.block_w, p.subblock_h, p.subblock_w) == expected
    if p.block_h:
        assert mt % p.block_h == 0 and nt % p.block_w == 0
        assert mt // p.block_h <= ny and nt // p.block_w <= nx
        assert 2 * k * p.block_h + 2 * k * p.block_w + p.block_h * p.block_w <= 400


def test_ulp_is_measured_in_the_results_type():
    assert ulp(torch.tensor([1.0]).double().numpy(), "bfloat16")[0] == 2.0**-7
    assert ulp(torch.tensor([1.0]).double().numpy(), "float32")[0] == 2.0**-23
    golden = torch.linspace(-4, 4, 1024, dtype=torch.float32)
    result = golden.to(torch.bfloat16)
    assert_with_ulp(golden, result, ulp_threshold=1)  # rounding to bf16: at most 1 ULP
    off = result.clone()
    off[5] = off[5] + 0.5
    with pytest.raises(AssertionError, match=r"at \(5,\)"):
        assert_with_ulp(golden, off, ulp_threshold=10)


def test_ulp_nonfinite_values_must_match():
    a = torch.tensor([1.0, float("nan"), float("inf")])
    assert_with_ulp(a, a.clone())
    with pytest.raises(AssertionError, match="non-finite values differ"):
        assert_with_ulp(a, torch.tensor([1.0, 2.0, float("inf")]))
    assert_with_ulp(a, torch.tensor([1.0, 2.0, float("inf")]), allow_nonfinite=True)


def test_allclose_and_pcc():
    a = torch.rand(64, 64)
    assert_allclose(a, a + 1e-9)
    with pytest.raises(AssertionError, match="1 of 4096 elements differ"):
        b = a.clone()
        b[3, 4] += 1
        assert_allclose(a, b)
    assert comp_pcc(a, a) == (True, 1.0)
    assert comp_pcc(torch.ones(8), torch.ones(8)) == (True, 1.0)
    assert comp_pcc(torch.ones(8), torch.arange(8.0))[1] == 0.0
    assert assert_pcc(a, 2 * a + 1, threshold=0.999) > 0.999
    with pytest.raises(AssertionError, match="PCC .* is below 0.99"):
        assert_pcc(a, torch.rand(64, 64))
    with pytest.raises(AssertionError, match="shapes differ"):
        assert_pcc(a, a[:10])


def test_correctness_reads_ttnn_tensors():
    dev = ttnn.open_device(device_id=0)
    try:
        t = ttnn.from_torch(
            torch.rand(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev
        )
        assert_with_ulp(ttnn.to_torch(t), t, ulp_threshold=0)
    finally:
        ttnn.close_device(dev)
