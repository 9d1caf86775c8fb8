"""The legacy alias table (reference A.12) and its adapters."""

from __future__ import annotations

import numpy as np
import pytest

from tilewright.device.ops import LEGACY_ALIASES, REGISTRY, OpShapeError, get_op

RNG = np.random.default_rng(7)

EXPECTED = {
    "math.where": "where",
    "math.mask": "mask",
    "math.mask_posinf": "mask_posinf",
    "math.squeeze": "squeeze",
    "math.unsqueeze": "unsqueeze",
    "math.transpose": "transpose",
    "math.broadcast": "broadcast",
    "math.fill": "fill",
    "math.reduce_sum": "reduce_sum",
    "math.reduce_max": "reduce_max",
}


def rand(*shape: int) -> np.ndarray:
    return RNG.uniform(-2, 2, size=shape).astype(np.float32)


def test_table_contents():
    assert {k: v.op for k, v in LEGACY_ALIASES.items()} == EXPECTED
    for key, alias in LEGACY_ALIASES.items():
        assert key == alias.legacy and alias.op in REGISTRY and alias.signature
        spec = REGISTRY[alias.op]
        if alias.legacy != spec.qualified_name:
            assert alias.legacy in spec.aliases
    renames = {k for k, v in LEGACY_ALIASES.items() if v.is_rename}
    assert renames == {
        "math.where",
        "math.mask",
        "math.mask_posinf",
        "math.squeeze",
        "math.unsqueeze",
    }


def test_renames_call_the_current_impl():
    cond = np.floor(RNG.uniform(0, 2, size=(32, 32))).astype(np.float32)
    a, b = rand(32, 32), rand(32, 32)
    np.testing.assert_array_equal(get_op("math.where").impl(cond, a, b), np.where(cond == 1, a, b))


def test_broadcast_with_output_block_shape():
    x = rand(64, 32)
    new = get_op("broadcast").impl(x, dims=[-1], shape=(2, 3))
    old = LEGACY_ALIASES["math.broadcast"].adapter(x, (2, 3), dims=[-1])
    np.testing.assert_array_equal(old, new)


def test_fill_with_output_block_shape():
    old = LEGACY_ALIASES["math.fill"].adapter((2, 1), 3.0)
    np.testing.assert_array_equal(old, get_op("fill").impl(3.0, (2, 1)))


def test_transpose_with_optional_output_block():
    x = rand(32, 64)
    adapter = LEGACY_ALIASES["math.transpose"].adapter
    np.testing.assert_array_equal(adapter(x), x.T)
    np.testing.assert_array_equal(adapter(x, (2, 1)), x.T)
    with pytest.raises(OpShapeError, match="output block has shape"):
        adapter(x, (1, 2))


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_max"])
def test_reduce_scaler_multiplies_the_result(name):
    x = rand(64, 96)
    adapter = LEGACY_ALIASES[f"math.{name}"].adapter
    new = get_op(name).impl(x, dims=[-1], shape=(2, 1))
    np.testing.assert_allclose(adapter(x, 0.5, dims=[-1]), new * np.float32(0.5), rtol=1e-7)
    scaler_block = np.full((32, 32), 2.0, np.float32)  # a filled scaler tile, as 1.1.1 programs use
    np.testing.assert_allclose(adapter(x, scaler_block, [-1], (2, 1)), new * 2, rtol=1e-7)
    with pytest.raises(OpShapeError, match=r"output block has shape \(2, 3\)"):
        adapter(x, 1.0, [-1], (2, 3))


def test_reduce_scaler_tile_is_elementwise():
    x = np.ones((32, 64), np.float32)
    scaler = np.zeros((32, 32), np.float32)
    scaler[:, 0] = np.arange(32)  # only column 0 matters after a dims=[-1] reduce
    got = LEGACY_ALIASES["math.reduce_sum"].adapter(x, scaler, [-1])
    np.testing.assert_array_equal(got[:, 0], 64 * np.arange(32))
    assert not got[:, 1:].any()
