"""Elementwise block ops against their torch goldens, plus the semantics decisions."""

from __future__ import annotations

import math
import warnings
import zlib

import numpy as np
import pytest
import torch

from tilewright.device.ops import REGISTRY, OpKind, get_op
from tilewright.device.ops.special import erf

SHAPE = (2, 64, 96)  # batch 2 of a 2x3-tile block
RTOL, ATOL = 1e-5, 1e-6
SEED_OFFSET = 0

# name -> list of (params, per-operand domains); every elementwise op appears here.
WIDE = (-5.0, 5.0)
POS = (0.05, 20.0)
CASES: dict[str, list[tuple[dict, tuple[tuple[float, float], ...]]]] = {
    "abs": [({}, (WIDE,))],
    "neg": [({}, (WIDE,))],
    "pow": [({"exponent": n}, ((-3.0, 3.0),)) for n in (0, 1, 2, 3, 5)],
    "exp": [
        ({}, ((-20.0, 20.0),)),
        ({"scale": 0.5}, ((-20.0, 20.0),)),
        ({"approx": True, "skip_clamp_check": True, "iterations": 4}, ((-20.0, 20.0),)),
    ],
    "exp2": [({}, ((-20.0, 20.0),))],
    "expm1": [({}, ((-5.0, 5.0),))],
    "log": [({}, (POS,))],
    "logp1": [({}, ((-0.95, 20.0),))],
    "sqrt": [({}, ((0.0, 50.0),))],
    "square": [({}, (WIDE,))],
    "rsqrt": [({}, (POS,))],
    "recip": [({}, (POS,)), ({}, ((-20.0, -0.05),))],
    "rsub": [({"b": 3}, (WIDE,)), ({"b": 0.5}, (WIDE,))],
    "tan": [({}, ((-1.4, 1.4),))],
    "tanh": [({}, (WIDE,))],
    "atan": [({}, ((-20.0, 20.0),))],
    "atanh": [({}, ((-0.95, 0.95),))],
    "sin": [({}, ((-10.0, 10.0),))],
    "asin": [({}, ((-0.999, 0.999),))],
    "asinh": [({}, ((-20.0, 20.0),))],
    "cos": [({}, ((-10.0, 10.0),))],
    "acos": [({}, ((-0.999, 0.999),))],
    "acosh": [({}, ((1.05, 20.0),))],
    "relu": [({}, (WIDE,))],
    "relu_max": [({"upper_limit": 2}, (WIDE,))],
    "relu_min": [({"lower_limit": 1}, (WIDE,))],
    "leaky_relu": [({"slope": 0.01}, (WIDE,))],
    "elu": [({"slope": 1.5}, (WIDE,))],
    "gelu": [({}, ((-8.0, 8.0),))],
    "sigmoid": [({}, ((-30.0, 30.0),))],
    "celu": [({"alpha": 2.0, "alpha_recip": 0.5}, (WIDE,))],
    "silu": [({}, ((-30.0, 30.0),))],
    "prelu": [({"alpha": 0.25}, (WIDE,))],
    "softplus": [
        ({"beta": 1.0, "beta_reciprocal": 1.0, "threshold": 20.0}, ((-30.0, 30.0),)),
        ({"beta": 2.0, "beta_reciprocal": 0.5, "threshold": 5.0}, (WIDE,)),
    ],
    "softsign": [({}, (WIDE,))],
    "hardsigmoid": [({}, (WIDE,))],
    "hardtanh": [({"min": -1.0, "max": 2.0}, (WIDE,))],
    "selu": [({}, (WIDE,)), ({"scale": 2.0, "alpha": 0.5}, (WIDE,))],
    "frac": [({}, ((-50.0, 50.0),))],
    "trunc": [({}, ((-50.0, 50.0),))],
    "round": [({"decimals": d}, ((-50.0, 50.0),)) for d in (0, 1, 2)],
    "floor": [({}, ((-50.0, 50.0),))],
    "ceil": [({}, ((-50.0, 50.0),))],
    "clamp": [({"min": -1.5, "max": 0.5}, (WIDE,))],
    "threshold": [({"threshold": 0.5, "value": -7.0}, (WIDE,))],
    "sign": [({}, (WIDE,))],
    "signbit": [({}, (WIDE,))],
    "typecast": [({"dtype": d}, (WIDE,)) for d in ("bfloat16", "float32", "bfloat8_b")],
    "max": [({}, (WIDE, WIDE))],
    "min": [({}, (WIDE, WIDE))],
    "add": [({}, (WIDE, WIDE))],
    "sub": [({}, (WIDE, WIDE))],
    "mul": [({}, (WIDE, WIDE))],
    "div": [({}, (WIDE, (0.5, 4.0)))],
    "mod": [({}, ((-20.0, 20.0), (0.5, 4.0))), ({}, ((-20.0, 20.0), (-4.0, -0.5)))],
    "floordiv": [({}, ((-20.0, 20.0), (0.5, 4.0))), ({}, ((-20.0, 20.0), (-4.0, -0.5)))],
    "gt": [({}, (WIDE, WIDE))],
    "lt": [({}, (WIDE, WIDE))],
    "ge": [({}, (WIDE, WIDE))],
    "le": [({}, (WIDE, WIDE))],
    "eq": [({}, (WIDE, WIDE))],
    "ne": [({}, (WIDE, WIDE))],
    "mask": [({}, (WIDE, (0.0, 2.0)))],
    "mask_posinf": [({}, (WIDE, (0.0, 2.0)))],
    "where": [({}, ((0.0, 2.0), WIDE, WIDE))],
}
TOLERANCE = {"gelu": (RTOL, 3e-6)}  # torch's float32 erf is off by up to ~1.1e-6 absolute
INTEGER_OPERANDS = {"eq", "ne", "ge", "le", "gt", "lt", "mask", "mask_posinf", "where"}
ELEMENTWISE_KINDS = {OpKind.UNARY, OpKind.BINARY, OpKind.TERNARY, OpKind.TYPECAST}


def _operands(name: str, domains, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for lo, hi in domains:
        x = rng.uniform(lo, hi, size=SHAPE).astype(np.float32)
        if name in INTEGER_OPERANDS:
            x = np.floor(x)  # ties for comparisons; 0/1 (and 2) for masks and conditions
        out.append(x)
    return out


def test_every_elementwise_op_has_a_case():
    elementwise = {n for n, s in REGISTRY.items() if s.kind in ELEMENTWISE_KINDS}
    assert elementwise == set(CASES)


@pytest.mark.parametrize(
    "name,params,domains",
    [(n, p, d) for n, cases in CASES.items() for p, d in cases],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_matches_torch_golden(name, params, domains):
    spec = get_op(name)
    operands = _operands(name, domains, seed=zlib.crc32(name.encode()) + SEED_OFFSET)
    before = [x.copy() for x in operands]
    got = spec.impl(*operands, **params)
    want = spec.torch_golden(*(torch.from_numpy(x) for x in operands), **params).numpy()
    assert got.dtype == np.float32
    assert got.shape == SHAPE
    rtol, atol = TOLERANCE.get(name, (RTOL, ATOL))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    for x, y in zip(operands, before):  # inputs untouched
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "gt", "eq", "mod", "floordiv"])
def test_operators_take_python_scalars_on_either_side(name):
    spec = get_op(name)
    assert spec.accepts_scalar
    x = _operands(name, [(0.5, 4.0)], 1)[0]
    for args in ((x, 2.0), (2.0, x)):
        got = spec.impl(*args)
        want = spec.torch_golden(
            *(torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args)
        )
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want.numpy(), rtol=RTOL, atol=ATOL)


def test_faults_are_silent_and_ieee():
    x = np.array([[-1.0, 0.0, np.inf, np.nan]], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log = get_op("log").impl(x)
        recip = get_op("recip").impl(x)
        sigmoid = get_op("sigmoid").impl(np.array([[-1e4, 1e4]], dtype=np.float32))
    assert np.isnan(log[0, 0]) and log[0, 1] == -np.inf and log[0, 2] == np.inf
    assert recip[0, 1] == np.inf and recip[0, 2] == 0.0
    np.testing.assert_array_equal(sigmoid, [[0.0, 1.0]])


def test_signbit_follows_hardware_not_the_spec_prose():
    x = np.array([[2.0, 0.0, -0.0, -3.0, np.inf, -np.inf]], dtype=np.float32)
    np.testing.assert_array_equal(get_op("signbit").impl(x), [[0, 0, 1, 1, 0, 1]])


def test_threshold_replaces_values_above_threshold():
    x = np.array([[-1.0, 0.5, 0.6, 3.0]], dtype=np.float32)
    got = get_op("threshold").impl(x, threshold=0.5, value=9.0)
    np.testing.assert_array_equal(got, [[-1.0, 0.5, 9.0, 9.0]])


def test_sign_keeps_zero():
    x = np.array([[-2.0, -0.0, 0.0, 5.0]], dtype=np.float32)
    np.testing.assert_array_equal(get_op("sign").impl(x), [[-1.0, 0.0, 0.0, 1.0]])


def test_exp_scale_multiplies_the_input_first():
    x = np.linspace(-4, 4, 64, dtype=np.float32).reshape(2, 32)
    np.testing.assert_allclose(
        get_op("exp").impl(x, scale=0.25), np.exp(x * np.float32(0.25)), rtol=1e-6
    )
    np.testing.assert_array_equal(get_op("exp").impl(x, approx=True), get_op("exp").impl(x))


def test_softplus_and_celu_use_the_given_reciprocal():
    x = np.array([[-1.0, 0.5]], dtype=np.float32)
    np.testing.assert_allclose(
        get_op("softplus").impl(x, beta=2.0, beta_reciprocal=1.0, threshold=20.0),
        np.log1p(np.exp(2 * x)),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        get_op("celu").impl(x, alpha=2.0, alpha_recip=1.0), [[2 * np.expm1(-1.0), 0.5]], rtol=1e-6
    )


def test_softplus_is_linear_above_threshold():
    x = np.array([[1.0, 3.0, 30.0]], dtype=np.float32)
    got = get_op("softplus").impl(x, beta=1.0, beta_reciprocal=1.0, threshold=2.0)
    np.testing.assert_allclose(got, [[np.log1p(np.e), 3.0, 30.0]], rtol=1e-6)


def test_hardsigmoid_is_relu6_of_x_plus_3_over_6():
    x = np.array([[-4.0, -3.0, 0.0, 1.5, 3.0, 4.0]], dtype=np.float32)
    np.testing.assert_allclose(get_op("hardsigmoid").impl(x), [[0, 0, 0.5, 0.75, 1, 1]], rtol=1e-7)


def test_erf_is_accurate_to_double_precision():
    xs = np.linspace(-7, 7, 20001)
    want = np.array([math.erf(v) for v in xs])
    assert np.max(np.abs(erf(xs) - want)) < 1e-13
    assert erf(np.array([np.inf, -np.inf])).tolist() == [1.0, -1.0]
    assert np.isnan(erf(np.array([np.nan])))[0]


def test_typecast_to_bfloat16_rounds_to_nearest_even():
    x = np.array([[1.0 + 2**-8, 1.0 + 3 * 2**-8, 1.0 + 2**-9]], dtype=np.float32)
    got = get_op("typecast").impl(x, dtype="bfloat16")
    np.testing.assert_array_equal(got, [[1.0, 1.0 + 2**-6, 1.0]])


def test_mod_and_floordiv_follow_python():
    a = np.array([[7.0, -7.0, 7.0, -7.0]], dtype=np.float32)
    b = np.array([[2.0, 2.0, -2.0, -2.0]], dtype=np.float32)
    np.testing.assert_array_equal(get_op("mod").impl(a, b), [[1.0, 1.0, -1.0, -1.0]])
    np.testing.assert_array_equal(get_op("floordiv").impl(a, b), [[3.0, -4.0, -4.0, 3.0]])


def test_where_and_mask_compare_with_one():
    cond = np.array([[1.0, 0.0, 2.0, -1.0]], dtype=np.float32)
    t = np.full((1, 4), 5.0, dtype=np.float32)
    f = np.full((1, 4), -5.0, dtype=np.float32)
    np.testing.assert_array_equal(get_op("where").impl(cond, t, f), [[5, -5, -5, -5]])
    np.testing.assert_array_equal(get_op("mask").impl(t, cond), [[0, 5, 5, 5]])
    np.testing.assert_array_equal(get_op("mask_posinf").impl(t, cond), [[np.inf, 5, 5, 5]])
