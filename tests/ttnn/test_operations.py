"""Every registered ttnn operation against its golden function, on the same decoded inputs.

bfloat16 and float32, TILE and ROW_MAJOR, host and device; integer tensors for the
operations that take them (the rest must reject them by name).  Tolerances are
bf16-aware: the operation and its golden both compute in float32 and round once to the
output dtype, so they agree to an ulp or so of that dtype.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import torch

from tilewright import ttnn
from tilewright.device.ops import OpFormatError

SHAPE = (2, 40, 70)


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


# --- inputs -------------------------------------------------------------------------------------


def uniform(lo: float, hi: float, shape=SHAPE) -> Callable[[np.random.Generator], torch.Tensor]:
    return lambda rng: torch.from_numpy(rng.uniform(lo, hi, size=shape).astype(np.float32))


def away_from_zero(shape=SHAPE) -> Callable[[np.random.Generator], torch.Tensor]:
    def make(rng):
        magnitude = rng.uniform(0.25, 4.0, size=shape)
        return torch.from_numpy(
            (magnitude * rng.choice([-1.0, 1.0], size=shape)).astype(np.float32)
        )

    return make


def grid(values, shape=SHAPE) -> Callable[[np.random.Generator], torch.Tensor]:
    """Values drawn from a small set, so comparisons and logic see ties and zeros."""
    return lambda rng: torch.from_numpy(rng.choice(np.asarray(values, np.float32), size=shape))


DEFAULT = uniform(-3.0, 3.0)
HALVES = grid(np.arange(-4, 5) / 2)
LOGIC = grid([-1.0, 0.0, 0.0, 2.0])


@dataclass(frozen=True)
class Case:
    """How to call one operation: positional inputs (tensors made by generators, or values),
    keyword arguments (generators allowed), tolerance class."""

    inputs: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    accumulates: bool = False  # sums many terms: a looser absolute tolerance


UNARY_DOMAINS = {
    "log": uniform(0.1, 4.0),
    "sqrt": uniform(0.1, 4.0),
    "rsqrt": uniform(0.1, 4.0),
    "reciprocal": away_from_zero(),
    "tan": uniform(-1.2, 1.2),
    "relu6": uniform(-3.0, 9.0),
    "logical_not": LOGIC,
}
UNARY = ["exp", "log", "sqrt", "rsqrt", "reciprocal", "square", "abs", "neg", "sign", "floor", "ceil",
         "sin", "cos", "tan", "tanh", "relu", "relu6", "gelu", "sigmoid", "silu", "logical_not"]  # fmt: skip
BINARY_DOMAINS = {
    "divide": (DEFAULT, away_from_zero()),
    **{c: (HALVES, HALVES) for c in ("eq", "ne", "lt", "gt", "le", "ge", "maximum", "minimum")},
    "logical_and": (LOGIC, LOGIC),
    "logical_or": (LOGIC, LOGIC),
}
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "eq", "ne", "lt", "gt", "le",
          "ge", "logical_and", "logical_or"]  # fmt: skip


CASES: dict[str, Case] = {
    **{name: Case((UNARY_DOMAINS.get(name, DEFAULT),)) for name in UNARY},
    **{name: Case(BINARY_DOMAINS.get(name, (DEFAULT, DEFAULT))) for name in BINARY},
    "where": Case((grid([0.0, 1.0, 2.0]), DEFAULT, DEFAULT)),
    "clamp": Case((DEFAULT,), {"min": -1.0, "max": 2.0}),
    "isclose": Case((HALVES, HALVES), {"rtol": 1e-3, "atol": 1e-3}),
    "matmul": Case((uniform(-1, 1, (2, 40, 70)), uniform(-1, 1, (70, 50))), accumulates=True),
    "linear": Case((uniform(-1, 1, (2, 40, 70)), uniform(-1, 1, (70, 50))),
                   {"bias": uniform(-1, 1, (1, 50))}, accumulates=True),
    "sum": Case((DEFAULT,), {"dim": -1}, accumulates=True),
    "mean": Case((DEFAULT,), {"dim": [0, 2], "keepdim": True}, accumulates=True),
    "max": Case((DEFAULT,), {"dim": 1}),
    "min": Case((DEFAULT,), {"dim": None}),
    "softmax": Case((DEFAULT,), {"dim": -1}, accumulates=True),
    "reshape": Case((DEFAULT, (80, 70))),
    "squeeze": Case((uniform(-3, 3, (2, 1, 40, 70)), 1)),
    "unsqueeze": Case((DEFAULT, 0)),
    "repeat": Case((DEFAULT, (1, 2, 1))),
    "transpose": Case((DEFAULT, 0, 2)),
    "permute": Case((DEFAULT, (2, 0, 1))),
    "concat": Case(([DEFAULT, DEFAULT], 1)),
}  # fmt: skip

INT_OPS = {
    "square", "abs", "neg", "sign", "relu", "logical_not", "add", "subtract", "multiply", "maximum",
    "minimum", "eq", "ne", "lt", "gt", "le", "ge", "logical_and", "logical_or", "where", "clamp",
    "sum", "max", "min", "reshape", "squeeze", "unsqueeze", "repeat", "transpose", "permute", "concat",
}  # fmt: skip
"""Operations that accept integer tensors; every other one must reject them."""

PLACEMENTS = {
    "host": {},
    "dram": {"memory_config": ttnn.DRAM_MEMORY_CONFIG},
    "l1": {"memory_config": ttnn.L1_MEMORY_CONFIG},
}


def _realise(value, rng, make_int: bool):
    if callable(value):
        tensor = value(rng)
        if make_int:
            return torch.from_numpy(rng.integers(-5, 6, size=tuple(tensor.shape)).astype(np.int32))
        return tensor
    if isinstance(value, list):
        return [_realise(v, rng, make_int) for v in value]
    return value


def _to_ttnn(value, **kw):
    if isinstance(value, torch.Tensor):
        layout = kw["layout"] if value.dim() >= 2 else ttnn.ROW_MAJOR_LAYOUT
        return ttnn.from_torch(value, **{**kw, "layout": layout})
    if isinstance(value, list):
        return [_to_ttnn(v, **kw) for v in value]
    return value


def _decoded(value):
    if isinstance(value, ttnn.Tensor):
        return ttnn.to_torch(value)
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    return value


def run_case(name: str, dtype, layout, device, memory_config, make_int=False, seed=0):
    """(operation result, golden result, first ttnn input)."""
    case = CASES[name]
    rng = np.random.default_rng(seed)
    args = [_realise(v, rng, make_int) for v in case.inputs]
    kwargs = {k: _realise(v, rng, make_int) for k, v in case.kwargs.items()}
    kw = {"dtype": dtype, "layout": layout}
    if device is not None:
        kw.update(device=device, memory_config=memory_config)
    t_args = [_to_ttnn(a, **kw) for a in args]
    t_kwargs = {k: _to_ttnn(v, **kw) for k, v in kwargs.items()}
    op = getattr(ttnn, name)
    out = op(*t_args, **t_kwargs)
    golden = ttnn.get_golden_function(op)(
        *_decoded(t_args), **{k: _decoded(v) for k, v in t_kwargs.items()}
    )
    first = t_args[0][0] if isinstance(t_args[0], list) else t_args[0]
    return out, golden, first


def values_of(out: ttnn.Tensor) -> torch.Tensor:
    """ttnn.to_torch, reshaped: to_torch turns a rank-0 tensor into shape [1] (np.ascontiguousarray)."""
    return ttnn.to_torch(out).reshape(tuple(out.shape))


def assert_matches(out: ttnn.Tensor, golden: torch.Tensor, dtype, accumulates: bool) -> None:
    assert tuple(out.shape) == tuple(golden.shape)
    actual = values_of(out)
    if dtype == ttnn.bfloat16:
        rtol, atol = 2.0**-7, (1e-3 if accumulates else 1e-5)
    else:
        rtol, atol = 1e-5, (1e-4 if accumulates else 1e-6)
    torch.testing.assert_close(
        actual.double(), golden.double(), rtol=rtol, atol=atol, equal_nan=True
    )


def expected_layout(layout, rank: int):
    return ttnn.ROW_MAJOR_LAYOUT if rank < 2 else layout


# --- every operation vs its golden ------------------------------------------------------------------


def test_every_registered_operation_has_a_case():
    registered = {op.python_fully_qualified_name for op in ttnn.query_registered_operations()}
    assert registered == {f"ttnn.{name}" for name in CASES}


@pytest.mark.parametrize("where", sorted(PLACEMENTS))
@pytest.mark.parametrize(
    "layout", [ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT], ids=["tile", "row_major"]
)
@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.float32], ids=["bf16", "f32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_operation_matches_golden(device, name, dtype, layout, where):
    dev = None if where == "host" else device
    out, golden, first = run_case(name, dtype, layout, dev, PLACEMENTS[where].get("memory_config"))
    assert_matches(out, golden, dtype, CASES[name].accumulates)
    assert out.dtype == dtype
    assert out.layout == expected_layout(layout, len(out.shape))
    assert out.device() is dev
    if dev is not None:
        assert out.memory_config() == first.memory_config()


@pytest.mark.parametrize("name", sorted(CASES))
def test_block_float_inputs_round_on_store(device, name):
    out, golden, _ = run_case(
        name, ttnn.bfloat8_b, ttnn.TILE_LAYOUT, device, ttnn.DRAM_MEMORY_CONFIG
    )
    rank = len(out.shape)
    assert out.dtype == (ttnn.bfloat8_b if rank >= 2 else ttnn.float32)
    again = ttnn.to_torch(ttnn.from_torch(golden.float(), dtype=out.dtype, layout=out.layout))
    # the golden rounded to the same format; the two may differ by one step of a block
    step = float(golden.float().abs().max()) * 2.0**-6
    torch.testing.assert_close(
        values_of(out).float(),
        again.reshape(golden.shape).float(),
        rtol=0,
        atol=step,
        equal_nan=True,
    )


@pytest.mark.parametrize("placement", ["host-row_major", "device-tile"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_integer_tensors(device, name, placement):
    dev, layout = (
        (None, ttnn.ROW_MAJOR_LAYOUT)
        if placement == "host-row_major"
        else (device, ttnn.TILE_LAYOUT)
    )
    if name not in INT_OPS:
        with pytest.raises(OpFormatError, match=rf"ttnn\.{name} does not support int32"):
            run_case(name, ttnn.int32, layout, dev, ttnn.DRAM_MEMORY_CONFIG, make_int=True)
        return
    out, golden, _ = run_case(name, ttnn.int32, layout, dev, ttnn.DRAM_MEMORY_CONFIG, make_int=True)
    assert out.dtype == ttnn.int32
    assert torch.equal(values_of(out), golden.to(torch.int32))


def test_bf16_add_is_bit_exact_with_torch_bf16(device):
    rng = np.random.default_rng(7)
    x = torch.from_numpy(rng.standard_normal((64, 96)).astype(np.float32)).bfloat16()
    y = torch.from_numpy(rng.standard_normal((64, 96)).astype(np.float32) * 1e-3).bfloat16()
    a = ttnn.from_torch(x, layout=ttnn.TILE_LAYOUT, device=device)
    b = ttnn.from_torch(y, layout=ttnn.TILE_LAYOUT, device=device)
    assert torch.equal(ttnn.to_torch(ttnn.add(a, b)), x + y)
    assert torch.equal(ttnn.to_torch(ttnn.multiply(a, b)), x * y)
