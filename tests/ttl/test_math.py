"""Every ttl.math / ttl.block function and block operator, run inside an operation, against torch.

Inputs and DFBs are float32 so that the only rounding is float32's: the result of the
language path (copy → block expression → store → copy) must equal the torch golden of
the op registry to float32 precision.  Semantics of each function are pinned in
tests/device/ops; here the point is that the language binds every name correctly.
"""

import operator

import numpy as np
import pytest
import torch

from tests.device.ops.test_ops_elementwise import CASES
from tilewright import ttl, ttnn
from tilewright.device.ops import REGISTRY, get_op, ops_in

ROWS, COLS = 32, 64  # one block of 1x2 tiles

OPERATORS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
    "mod": operator.mod,
    "floordiv": operator.floordiv,
    "gt": operator.gt,
    "lt": operator.lt,
    "ge": operator.ge,
    "le": operator.le,
    "eq": operator.eq,
    "ne": operator.ne,
}


def language_fn(name, params):
    spec = get_op(name)
    if spec.namespace == "operator":
        op = OPERATORS[name]
        return lambda *blocks: op(*blocks)
    module = ttl.math if spec.namespace == "math" else ttl.block
    fn = getattr(module, name)
    return lambda *blocks: fn(*blocks, **params)


def make_operation(fn, n_inputs):
    @ttl.operation(grid=(1, 1))
    def apply(x0, x1, x2, out):
        dfbs = [ttl.make_dataflow_buffer_like(x0, shape=(1, 2), block_count=1) for _ in range(3)]
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=1)
        inputs = (x0, x1, x2)

        @ttl.datamovement()
        def reader():
            for i in range(n_inputs):
                with dfbs[i].reserve() as blk:
                    ttl.copy(inputs[i][0:1, 0:2], blk).wait()

        @ttl.compute()
        def compute():
            blocks = [dfbs[i].wait() for i in range(n_inputs)]
            with out_dfb.reserve() as o:
                o.store(fn(*blocks))
            for b in blocks:
                b.pop()

        @ttl.datamovement()
        def writer():
            with out_dfb.wait() as o:
                ttl.copy(o, out[0:1, 0:2]).wait()

    return apply


def elementwise_cases():
    for name, cases in sorted(CASES.items()):
        for i, (params, domains) in enumerate(cases):
            yield pytest.param(name, params, domains, id=f"{name}-{i}")


@pytest.mark.parametrize("name, params, domains", list(elementwise_cases()))
def test_elementwise_function_matches_torch(device, name, params, domains):
    spec = get_op(name)
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    xs = [rng.uniform(lo, hi, size=(ROWS, COLS)).astype(np.float32) for lo, hi in domains]
    if name in ("eq", "ne", "ge", "le", "gt", "lt", "mask", "mask_posinf", "where"):
        xs = [np.round(x) for x in xs]
    kw = dict(dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    tensors = [ttnn.from_torch(torch.from_numpy(x), **kw) for x in xs]
    while len(tensors) < 3:
        tensors.append(tensors[0])
    out = ttnn.from_torch(torch.zeros(ROWS, COLS), **kw)
    make_operation(language_fn(name, params), len(xs))(*tensors[:3], out)
    got = ttnn.to_torch(out)
    golden_params = {k: v for k, v in params.items()}
    want = spec.torch_golden(*[torch.from_numpy(x) for x in xs], **golden_params)
    if name == "typecast" and params["dtype"] == "bfloat8_b":
        # The language quantises block floats as a store would (the registry leaves it to the codec).
        want = ttnn.to_torch(
            ttnn.from_torch(torch.from_numpy(xs[0]), dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT)
        )
    torch.testing.assert_close(got, want.float(), rtol=1e-5, atol=3e-6)


def test_every_math_and_block_function_is_bound_and_covered():
    covered = set(CASES) | {
        "reduce_sum",
        "reduce_max",
        "broadcast",
        "transpose",
        "fill",
        "squeeze",
        "unsqueeze",
        "matmul",
    }
    for spec in REGISTRY.values():
        assert spec.name in covered, f"{spec.name} has no language-level test"
    for spec in ops_in("math"):
        assert callable(getattr(ttl.math, spec.name)), spec.name
    for spec in ops_in("block"):
        assert callable(getattr(ttl.block, spec.name)), spec.name


def run_block_fn(device, fn, x, in_shape, out_shape):
    kw = dict(dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    xt = ttnn.from_torch(torch.from_numpy(x), **kw)
    out = ttnn.from_torch(torch.zeros(out_shape[0] * 32, out_shape[1] * 32), **kw)

    @ttl.operation(grid=(1, 1))
    def apply(x0, out):
        a = ttl.make_dataflow_buffer_like(x0, shape=in_shape, block_count=1)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=out_shape, block_count=1)

        @ttl.datamovement()
        def reader():
            with a.reserve() as blk:
                ttl.copy(x0[0 : in_shape[0], 0 : in_shape[1]], blk).wait()

        @ttl.compute()
        def compute():
            with a.wait() as blk, o_dfb.reserve() as o:
                o.store(fn(blk))

        @ttl.datamovement()
        def writer():
            with o_dfb.wait() as o:
                ttl.copy(o, out[0 : out_shape[0], 0 : out_shape[1]]).wait()

    apply(xt, out)
    return ttnn.to_torch(out).numpy()


def test_reduce_sum_rows_leaves_sums_in_column_0(device):
    x = np.random.default_rng(1).uniform(-1, 1, (64, 96)).astype(np.float32)
    got = run_block_fn(
        device, lambda b: ttl.math.reduce_sum(b, dims=[-1], shape=(2, 1)), x, (2, 3), (2, 1)
    )
    np.testing.assert_allclose(got[:, 0], x.sum(axis=1), rtol=1e-5, atol=1e-5)
    assert np.all(got[:, 1:] == 0)


def test_reduce_max_both_dims_gives_one_value(device):
    x = np.random.default_rng(2).uniform(-1, 1, (64, 96)).astype(np.float32)
    got = run_block_fn(
        device, lambda b: ttl.math.reduce_max(b, dims=[-2, -1], shape=(1, 1)), x, (2, 3), (1, 1)
    )
    assert got[0, 0] == x.max() and np.count_nonzero(got) == 1


def test_broadcast_replicates_column_0(device):
    x = np.random.default_rng(3).uniform(-1, 1, (64, 32)).astype(np.float32)
    got = run_block_fn(
        device, lambda b: ttl.block.broadcast(b, dims=[-1], shape=(2, 3)), x, (2, 1), (2, 3)
    )
    np.testing.assert_array_equal(got, np.repeat(x[:, :1], 96, axis=1))


def test_transpose(device):
    x = np.random.default_rng(4).uniform(-1, 1, (64, 96)).astype(np.float32)
    got = run_block_fn(device, lambda b: ttl.block.transpose(b), x, (2, 3), (3, 2))
    np.testing.assert_array_equal(got, x.T)


def test_fill_and_matmul(device):
    x = np.random.default_rng(5).uniform(-1, 1, (64, 64)).astype(np.float32)
    got = run_block_fn(
        device, lambda b: b @ ttl.block.fill(0.5, shape=(2, 2), dtype="float32"), x, (2, 2), (2, 2)
    )
    np.testing.assert_allclose(got, x @ np.full((64, 64), 0.5, np.float32), rtol=1e-5, atol=1e-5)
    got = run_block_fn(device, lambda b: ttl.matmul(b, b, transpose_rhs=True), x, (2, 2), (2, 2))
    np.testing.assert_allclose(got, x @ x.T, rtol=1e-5, atol=1e-5)


def test_squeeze_and_unsqueeze_round_trip(device):
    x = np.random.default_rng(6).uniform(-1, 1, (64, 64)).astype(np.float32)
    got = run_block_fn(
        device,
        lambda b: ttl.block.squeeze(ttl.block.unsqueeze(b, dims=[0]), dims=[0]),
        x,
        (2, 2),
        (2, 2),
    )
    np.testing.assert_array_equal(got, x)


def test_legacy_math_spellings(device):
    x = np.random.default_rng(7).uniform(-1, 1, (64, 32)).astype(np.float32)
    with pytest.warns(DeprecationWarning):
        got = run_block_fn(
            device,
            lambda b: ttl.math.broadcast(b, None, dims=[-1], shape=(2, 2)),
            x,
            (2, 1),
            (2, 2),
        )
    np.testing.assert_array_equal(got, np.repeat(x[:, :1], 64, axis=1))
    x2 = np.random.default_rng(8).uniform(-1, 1, (64, 64)).astype(np.float32)
    with pytest.warns(DeprecationWarning):
        got = run_block_fn(
            device, lambda b: ttl.math.reduce_sum(b, 2.0, dims=[-1]), x2, (2, 2), (2, 1)
        )
    np.testing.assert_allclose(got[:, 0], 2.0 * x2.sum(axis=1), rtol=1e-5, atol=1e-5)
    with pytest.warns(DeprecationWarning):
        got = run_block_fn(device, lambda b: ttl.math.transpose(b), x2, (2, 2), (2, 2))
    np.testing.assert_array_equal(got, x2.T)


def test_typecast_to_block_float_quantises_like_a_store(device):
    x = np.random.default_rng(9).uniform(-1, 1, (32, 64)).astype(np.float32)
    got = run_block_fn(device, lambda b: ttl.math.typecast(b, "bfp8_b"), x, (1, 2), (1, 2))
    t = ttnn.from_torch(torch.from_numpy(x), dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT)
    np.testing.assert_array_equal(got, ttnn.to_torch(t).numpy())
