"""ttnn operation behaviour: placement, output_tensor, broadcasting, scalars, activations,
matmul numerics, dtype rules and one test per rejection rule."""

import inspect

import numpy as np
import pytest
import torch

from tilewright import ttnn
from tilewright.device.ops import OpFormatError, OpParamError, OpShapeError
from tilewright.errors import DeviceError


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def rand(shape, seed=0, lo=-2.0, hi=2.0):
    return torch.from_numpy(
        np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)
    )


def bf16(x):
    return x.to(torch.bfloat16).float()


def on(device, x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=None):
    return ttnn.from_torch(
        x, dtype=dtype, layout=layout, device=device, memory_config=memory_config
    )


# --- placement and format preservation -----------------------------------------------------------


def test_result_keeps_dtype_layout_and_l1_placement(device):
    a = on(device, rand((3, 64, 64)), ttnn.float32, ttnn.ROW_MAJOR_LAYOUT, ttnn.L1_MEMORY_CONFIG)
    out = ttnn.exp(a)
    assert (out.dtype, out.layout, out.device()) == (ttnn.float32, ttnn.ROW_MAJOR_LAYOUT, device)
    assert out.memory_config() == ttnn.L1_MEMORY_CONFIG


def test_dtype_and_memory_config_overrides(device):
    a = on(device, rand((64, 64)))
    out = ttnn.add(a, a, dtype=ttnn.float32, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert out.dtype == ttnn.float32 and out.memory_config() == ttnn.L1_MEMORY_CONFIG
    assert torch.equal(ttnn.to_torch(out), 2 * bf16(rand((64, 64))))


def test_sharded_config_kept_for_same_shape_and_dropped_for_reductions(device):
    x = rand((256, 128))
    mc = ttnn.create_sharded_memory_config(
        x.shape, ttnn.CoreGrid(y=2, x=4), ttnn.ShardStrategy.HEIGHT
    )
    a = on(device, x, memory_config=mc)
    assert ttnn.relu(a).memory_config() == mc
    reduced = ttnn.sum(a, dim=-1, keepdim=True)
    assert reduced.memory_config() == ttnn.MemoryConfig(
        ttnn.TensorMemoryLayout.INTERLEAVED, ttnn.BufferType.L1
    )
    torch.testing.assert_close(ttnn.to_torch(reduced).float(), bf16(bf16(x).sum(-1, keepdim=True)))


def test_host_operands_give_host_results():
    a = ttnn.from_torch(rand((4, 8)), layout=ttnn.ROW_MAJOR_LAYOUT)
    out = ttnn.multiply(a, 3)
    assert out.device() is None and out.memory_config() is None


def test_rank_below_two_tile_results_are_row_major_and_block_floats_widen(device):
    a = on(device, rand((1, 64)), ttnn.bfloat8_b)
    out = ttnn.squeeze(a, 0)
    assert list(out.shape) == [64]
    assert (out.layout, out.dtype) == (ttnn.ROW_MAJOR_LAYOUT, ttnn.float32)
    assert torch.equal(ttnn.to_torch(out), ttnn.to_torch(a)[0])


# --- output_tensor --------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["device", "host"])
def test_output_tensor_is_written_in_place(device, where):
    dev = device if where == "device" else None
    a = ttnn.from_torch(rand((2, 40, 70)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
    out = ttnn.from_torch(
        torch.zeros(2, 40, 70), dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=dev
    )
    address = out.buffer_address() if dev else None
    result = ttnn.subtract(a, 1.0, output_tensor=out)
    assert result is out and out.dtype == ttnn.float32
    assert torch.equal(ttnn.to_torch(out), bf16(rand((2, 40, 70))) - 1.0)
    if dev:
        assert out.buffer_address() == address
    ttnn.relu(a, output_tensor=out)
    assert torch.equal(ttnn.to_torch(out), torch.relu(bf16(rand((2, 40, 70)))))


@pytest.mark.parametrize("layout, strategy", [(ttnn.TILE_LAYOUT, ttnn.ShardStrategy.HEIGHT),
                                              (ttnn.ROW_MAJOR_LAYOUT, ttnn.ShardStrategy.WIDTH)])  # fmt: skip
def test_output_tensor_can_be_sharded(device, layout, strategy):
    x = rand((256, 128))
    mc = ttnn.create_sharded_memory_config(x.shape, ttnn.CoreGrid(y=1, x=4), strategy)
    out = ttnn.from_torch(torch.zeros(256, 128), dtype=ttnn.bfloat16, layout=layout, device=device,
                          memory_config=mc)  # fmt: skip
    assert ttnn.add(on(device, x), 1.0, output_tensor=out) is out
    assert out.memory_config() == mc
    assert torch.equal(ttnn.to_torch(out).float(), bf16(bf16(x) + 1.0))


def test_matmul_optional_output_tensor(device):
    a, b = on(device, rand((64, 32), 1)), on(device, rand((32, 96), 2))
    out = ttnn.zeros((64, 96), ttnn.bfloat16, ttnn.TILE_LAYOUT, device)
    assert ttnn.matmul(a, b, optional_output_tensor=out) is out
    torch.testing.assert_close(
        ttnn.to_torch(out).float(), bf16(ttnn.to_torch(a).float() @ ttnn.to_torch(b).float())
    )


def test_output_tensor_shape_must_match(device):
    a = on(device, rand((32, 32)))
    with pytest.raises(OpShapeError, match=r"ttnn\.add: output_tensor has shape \[32, 64\]"):
        ttnn.add(a, a, output_tensor=on(device, torch.zeros(32, 64)))


def test_output_tensor_dtype_conflict(device):
    a = on(device, rand((32, 32)))
    with pytest.raises(OpFormatError, match="dtype=float32 conflicts"):
        ttnn.add(a, a, dtype=ttnn.float32, output_tensor=on(device, torch.zeros(32, 32)))


def test_output_tensor_must_be_on_the_operands_device(device):
    a = on(device, rand((32, 32)))
    with pytest.raises(DeviceError, match="output_tensor on the host"):
        ttnn.exp(a, output_tensor=ttnn.from_torch(torch.zeros(32, 32)))


# --- broadcasting and scalars ------------------------------------------------------------------------


def test_five_dimensional_broadcasting(device):
    x, y = rand((2, 1, 3, 32, 1), 1), rand((4, 1, 1, 64), 2)
    out = ttnn.multiply(on(device, x), on(device, y))
    assert list(out.shape) == [2, 4, 3, 32, 64]
    assert torch.equal(ttnn.to_torch(out), (x.bfloat16() * y.bfloat16()))


def test_shapes_that_do_not_broadcast(device):
    with pytest.raises(
        OpShapeError, match=r"ttnn\.add: shapes \[32, 64\] and \[32, 32\] do not broadcast"
    ):
        ttnn.add(on(device, torch.zeros(32, 64)), on(device, torch.zeros(32, 32)))


def test_scalar_operands_and_reflected_methods(device):
    x = rand((32, 64))
    a, ref = on(device, x), bf16(x)
    assert torch.equal(ttnn.to_torch(a + 1.5).float(), bf16(ref + 1.5))
    assert torch.equal(ttnn.to_torch(1.5 + a).float(), bf16(ref + 1.5))
    assert torch.equal(ttnn.to_torch(3 - a).float(), bf16(3 - ref))
    assert torch.equal(ttnn.to_torch(2 * a).float(), bf16(2 * ref))
    assert torch.equal(ttnn.to_torch(a / 4).float(), bf16(ref / 4))
    assert torch.equal(ttnn.to_torch(1 / a).float(), bf16(1 / ref))
    assert torch.equal(ttnn.to_torch(-a).float(), -ref)
    assert list(a.reshape(64, 32).shape) == [64, 32] == list(a.reshape((64, 32)).shape)


def test_scalar_must_be_a_number(device):
    with pytest.raises(
        OpParamError, match=r"ttnn\.add: input_tensor_b must be a ttnn.Tensor or a number"
    ):
        ttnn.add(on(device, torch.zeros(32, 32)), "1")


def test_first_operand_must_be_a_tensor():
    with pytest.raises(
        OpParamError, match=r"ttnn\.exp: input_tensor must be a ttnn.Tensor, got Tensor"
    ):
        ttnn.exp(torch.zeros(3))


# --- activations ------------------------------------------------------------------------------------


class UnaryOpType:  # stands in for ttnn.UnaryOpType members (matched by .name)
    def __init__(self, name):
        self.name = name


def test_activations_are_fused_before_the_single_rounding(device):
    x, y = rand((64, 64), 1), rand((64, 64), 2)
    a, b = on(device, x), on(device, y)
    out = ttnn.add(a, b, activations=["relu", UnaryOpType("EXP")])
    expected = torch.exp(torch.relu(bf16(x) + bf16(y))).bfloat16()
    torch.testing.assert_close(ttnn.to_torch(out), expected, rtol=2**-7, atol=0)
    golden = ttnn.get_golden_function(ttnn.add)(
        bf16(x).bfloat16(), bf16(y).bfloat16(), activations=["relu", "exp"]
    )
    torch.testing.assert_close(ttnn.to_torch(out), golden, rtol=2**-7, atol=0)


def test_unknown_activation(device):
    a = on(device, torch.zeros(32, 32))
    with pytest.raises(OpParamError, match=r"ttnn\.multiply: unknown activation 'swish'"):
        ttnn.multiply(a, a, activations=["swish"])
    with pytest.raises(OpParamError, match=r"ttnn\.matmul: unknown activation 'add'"):
        ttnn.matmul(a, a, activation="add")


def test_unknown_keyword(device):
    with pytest.raises(
        OpParamError,
        match=r"ttnn\.relu\(\) got an unexpected keyword argument 'fast_and_approximate_mode'",
    ):
        ttnn.relu(on(device, torch.zeros(32, 32)), fast_and_approximate_mode=True)


# --- matmul ------------------------------------------------------------------------------------------


def test_matmul_bf16_products_are_exact_and_accumulate_in_float32(device):
    rng = np.random.default_rng(3)
    # bf16 values with 8 significant bits: products have 16 bits, exact in float32
    x = torch.from_numpy(rng.integers(-255, 256, size=(64, 512)).astype(np.float32) / 256)
    y = torch.from_numpy(rng.integers(-255, 256, size=(512, 96)).astype(np.float32) / 128)
    out = ttnn.matmul(on(device, x), on(device, y), dtype=ttnn.float32)
    exact = (x.double() @ y.double()).float()  # every partial sum is exact in float32 too
    assert torch.equal(ttnn.to_torch(out), exact)


@pytest.mark.parametrize("ta, tb", [(False, True), (True, False), (True, True)])
def test_matmul_transposes(device, ta, tb):
    x, y = rand((2, 64, 32), 1), rand((32, 96), 2)
    a = x.transpose(-1, -2) if ta else x
    b = y.transpose(-1, -2) if tb else y
    out = ttnn.matmul(
        on(device, a), on(device, b), transpose_a=ta, transpose_b=tb, dtype=ttnn.float32
    )
    torch.testing.assert_close(ttnn.to_torch(out), bf16(x) @ bf16(y), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "sa, sb",
    [((64,), (64, 32)), ((2, 32, 64), (64,)), ((64,), (64,)), ((3, 1, 32, 64), (2, 64, 32))],
)
def test_matmul_shapes_follow_torch(sa, sb):
    a = ttnn.from_torch(rand(sa, 1), dtype=ttnn.float32)
    b = ttnn.from_torch(rand(sb, 2), dtype=ttnn.float32)
    expected = rand(sa, 1) @ rand(sb, 2)
    out = ttnn.matmul(a, b)
    assert tuple(out.shape) == tuple(expected.shape)
    torch.testing.assert_close(
        ttnn.to_torch(out).reshape(expected.shape), expected, rtol=1e-5, atol=1e-5
    )


def test_matmul_inner_dims_must_agree(device):
    with pytest.raises(
        OpShapeError, match=r"ttnn\.matmul: shapes \[32, 64\] and \[32, 32\] do not conform"
    ):
        ttnn.matmul(on(device, torch.zeros(32, 64)), on(device, torch.zeros(32, 32)))


def test_matmul_activation_and_output_tile(device):
    a, b = on(device, rand((64, 64), 1)), on(device, rand((64, 64), 2))
    out = ttnn.matmul(a, b, activation="relu", output_tile=ttnn.Tile((16, 32)))
    assert out.tile.tile_shape == (16, 32)
    expected = torch.relu(bf16(rand((64, 64), 1)) @ bf16(rand((64, 64), 2)))
    torch.testing.assert_close(ttnn.to_torch(out).float(), bf16(expected), rtol=2**-7, atol=1e-3)


@pytest.mark.parametrize("bias_shape", [(1, 48), (48,)])
def test_linear_bias(device, bias_shape):
    x, w, bias = rand((2, 64, 32), 1), rand((32, 48), 2), rand(bias_shape, 3)
    layout = ttnn.TILE_LAYOUT if len(bias_shape) == 2 else ttnn.ROW_MAJOR_LAYOUT
    bt = ttnn.from_torch(bias, dtype=ttnn.bfloat16, layout=layout, device=device)
    out = ttnn.linear(on(device, x), on(device, w), bias=bt, activation="gelu")
    expected = torch.nn.functional.gelu(bf16(x) @ bf16(w) + bf16(bias))
    torch.testing.assert_close(ttnn.to_torch(out).float(), bf16(expected), rtol=2**-7, atol=1e-3)


def test_linear_bias_must_broadcast(device):
    x, w = on(device, torch.zeros(32, 32)), on(device, torch.zeros(32, 64))
    with pytest.raises(OpShapeError, match=r"ttnn\.linear: bias of shape \[1, 32\]"):
        ttnn.linear(x, w, bias=on(device, torch.zeros(1, 32)))


# --- dtype rules -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, a, b, expected", [
    (ttnn.int32, 2**31 - 1, 1, -(2**31)),
    (ttnn.uint8, 255, 1, 0),
    (ttnn.uint16, 0, -1, 65535),
])  # fmt: skip
def test_integer_arithmetic_wraps_to_the_dtype_width(dtype, a, b, expected):
    t = ttnn.from_torch(torch.full((1, 4), a, dtype=torch.int64), dtype=dtype)
    out = ttnn.add(t, b)
    assert out.dtype == dtype
    assert ttnn.to_torch(out).tolist() == [[expected] * 4]


def test_integer_comparisons_give_integer_ones_and_zeros():
    t = ttnn.from_torch(torch.tensor([[1, 5, 3]], dtype=torch.int32))
    assert ttnn.to_torch(ttnn.gt(t, 2)).tolist() == [[0, 1, 1]]


def test_float_comparisons_give_bf16_ones_and_zeros(device):
    t = on(device, torch.tensor([[1.0, 5.0, 3.0]]))
    out = ttnn.lt(t, 3.0)
    assert out.dtype == ttnn.bfloat16
    assert ttnn.to_torch(out).tolist() == [[1.0, 0.0, 0.0]]


def test_mixing_float_and_integer_operands(device):
    f = on(device, torch.zeros(32, 32))
    i = on(device, torch.zeros(32, 32, dtype=torch.int32), dtype=ttnn.int32)
    with pytest.raises(
        OpFormatError,
        match=r"ttnn\.add: operands mix float and integer dtypes \(input_tensor_a: bfloat16, input_tensor_b: int32\)",
    ):
        ttnn.add(f, i)


def test_float_scalar_with_integer_tensor():
    t = ttnn.from_torch(torch.zeros(2, 2, dtype=torch.int32))
    with pytest.raises(
        OpFormatError, match=r"ttnn\.multiply: input_tensor_b=0\.5 is not an integer"
    ):
        ttnn.multiply(t, 0.5)


def test_non_integer_result_cannot_be_stored_as_integer(device):
    with pytest.raises(OpFormatError, match=r"ttnn\.divide: the result has non-integer values"):
        ttnn.divide(on(device, torch.ones(32, 32)), 3.0, dtype=ttnn.int32)


def test_unsupported_integer_operation_names_op_and_dtype():
    t = ttnn.from_torch(torch.ones(2, 2, dtype=torch.int32), dtype=ttnn.uint16)
    with pytest.raises(
        OpFormatError, match=r"ttnn\.sqrt does not support uint16 tensors \(input_tensor\)"
    ) as info:
        ttnn.sqrt(t)
    assert "typecast" in info.value.hint


def test_operands_on_different_places(device):
    with pytest.raises(
        DeviceError,
        match=r"ttnn\.add: tensors must be on one device \(input_tensor_a on device 0, input_tensor_b on the host\)",
    ):
        ttnn.add(on(device, torch.zeros(32, 32)), ttnn.from_torch(torch.zeros(32, 32)))


def test_memory_config_needs_device_operands():
    with pytest.raises(
        OpParamError, match=r"ttnn\.exp: memory_config is given but the operands are host tensors"
    ):
        ttnn.exp(ttnn.from_torch(torch.zeros(2, 2)), memory_config=ttnn.L1_MEMORY_CONFIG)


# --- other elementwise -------------------------------------------------------------------------------


def test_where_with_scalars_and_nonzero_condition(device):
    cond = on(device, torch.tensor([[0.0, 2.0, -1.0]]))
    out = ttnn.where(cond, 1.0, on(device, torch.tensor([[5.0, 6.0, 7.0]])))
    assert ttnn.to_torch(out).tolist() == [[5.0, 1.0, 1.0]]


def test_clamp_with_tensor_bound_and_one_side(device):
    x = on(device, torch.tensor([[-3.0, 0.5, 3.0]]))
    hi = on(device, torch.tensor([[1.0, 0.0, 2.0]]))
    assert ttnn.to_torch(ttnn.clamp(x, max=hi)).tolist() == [[-3.0, 0.0, 2.0]]
    assert ttnn.to_torch(ttnn.clamp(x, min=0.0)).tolist() == [[0.0, 0.5, 3.0]]
    with pytest.raises(OpParamError, match=r"ttnn\.clamp: min and max cannot both be None"):
        ttnn.clamp(x)


# --- reductions and shapes -------------------------------------------------------------------------


def test_reduction_dims(device):
    x = rand((2, 3, 32, 64))
    a = on(device, x, ttnn.float32)
    out = ttnn.sum(a, dim=[-1, 1], keepdim=True)
    assert list(out.shape) == [2, 1, 32, 1]
    torch.testing.assert_close(
        ttnn.to_torch(out), x.sum(dim=(1, 3), keepdim=True), rtol=1e-5, atol=1e-5
    )
    assert list(ttnn.max(a, dim=0).shape) == [3, 32, 64]


@pytest.mark.parametrize(
    "dim, message",
    [
        (4, r"dim=4 is out of range for a rank-4 tensor"),
        ([1, -3], r"dim=\[1, -3\] names a dimension twice"),
        ("x", r"dim must be an int"),
    ],
)
def test_reduction_dim_errors(device, dim, message):
    with pytest.raises((OpShapeError, OpParamError), match=rf"ttnn\.mean: {message}"):
        ttnn.mean(on(device, torch.zeros(1, 2, 32, 32)), dim=dim)


def test_softmax_rows_sum_to_one(device):
    out = ttnn.softmax(on(device, rand((4, 32, 100), lo=-20, hi=20), ttnn.float32), dim=-1)
    torch.testing.assert_close(ttnn.to_torch(out).sum(-1), torch.ones(4, 32))


def test_shape_errors(device):
    a = on(device, torch.zeros(2, 32, 64))
    with pytest.raises(OpShapeError, match=r"ttnn\.reshape: cannot reshape \[2, 32, 64\]"):
        ttnn.reshape(a, (3, -1))
    assert list(ttnn.reshape(a, (-1, 64)).shape) == [64, 64]
    with pytest.raises(OpShapeError, match=r"ttnn\.permute: dims \[0, 0, 1\] is not a permutation"):
        ttnn.permute(a, (0, 0, 1))
    with pytest.raises(OpShapeError, match=r"ttnn\.repeat: repetition_vector \[2\]"):
        ttnn.repeat(a, (2,))
    with pytest.raises(OpShapeError, match=r"ttnn\.concat: tensors\[1\] has shape \[2, 32, 32\]"):
        ttnn.concat([a, on(device, torch.zeros(2, 32, 32))], dim=1)
    with pytest.raises(OpFormatError, match=r"ttnn\.concat: tensors\[1\] is float32 TILE"):
        ttnn.concat([a, on(device, torch.zeros(2, 32, 64), ttnn.float32)], dim=0)


def test_squeeze_keeps_dims_that_are_not_one(device):
    a = on(device, torch.zeros(1, 3, 1, 32))
    assert list(ttnn.squeeze(a, [0, 1]).shape) == [3, 1, 32]
    assert list(ttnn.squeeze(a).shape) == [3, 32]
    assert list(ttnn.unsqueeze(a, -1).shape) == [1, 3, 1, 32, 1]


def test_errors_point_at_the_users_call(device):
    a, b = on(device, torch.zeros(32, 64)), on(device, torch.zeros(32, 32))
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(OpShapeError) as info:
        a + b  # through Tensor.__add__ (tilewright code): the location is still this line
    assert (info.value.loc.file, info.value.loc.line) == (__file__, line)
    assert str(info.value).startswith(f"{__file__}:{line}: error: ttnn.add: shapes [32, 64]")
    assert "a + b" in str(info.value)  # the caret excerpt
