"""Registry consistency, lookups, shape rules and parameter binding."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tilewright.device.ops import (
    LEGACY_ALIASES,
    REGISTRY,
    OpFormatError,
    OpKind,
    OpParamError,
    OpShapeError,
    OpSpec,
    UnknownOpError,
    bind_params,
    check_formats,
    get_op,
    ops_in,
    resolve,
    result_shape,
)
from tilewright.device.ops.spec import ALL_FORMATS, NAMESPACES
from tilewright.errors import TilewrightError

SPEC_MATH = [
    "max",
    "min",
    "abs",
    "neg",
    "pow",
    "exp",
    "exp2",
    "expm1",
    "log",
    "logp1",
    "sqrt",
    "square",
    "rsqrt",
    "recip",
    "rsub",
    "tan",
    "tanh",
    "atan",
    "atanh",
    "sin",
    "asin",
    "asinh",
    "cos",
    "acos",
    "acosh",
    "relu",
    "relu_max",
    "relu_min",
    "leaky_relu",
    "elu",
    "gelu",
    "sigmoid",
    "celu",
    "silu",
    "prelu",
    "softplus",
    "softsign",
    "hardsigmoid",
    "hardtanh",
    "selu",
    "frac",
    "trunc",
    "round",
    "floor",
    "ceil",
    "clamp",
    "threshold",
    "sign",
    "signbit",
    "reduce_sum",
    "reduce_max",
    "typecast",
]
SPEC_BLOCK = [
    "broadcast",
    "transpose",
    "fill",
    "mask",
    "mask_posinf",
    "where",
    "squeeze",
    "unsqueeze",
]
OPERATORS = [
    "add",
    "sub",
    "mul",
    "div",
    "matmul",
    "gt",
    "lt",
    "ge",
    "le",
    "eq",
    "ne",
    "mod",
    "floordiv",
]
COMPILER = [
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "relu",
    "floor",
    "recip",
    "min",
    "max",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "matmul",
    "reduce_sum",
    "reduce_max",
    "broadcast",
    "fill",
    "transpose",
    "expm1",
    "exp2",
    "ceil",
    "sign",
    "gelu",
    "silu",
    "hardsigmoid",
    "square",
    "softsign",
    "signbit",
    "frac",
    "trunc",
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "abs",
    "gt",
    "lt",
    "eq",
    "ne",
    "typecast",
]


# --- consistency ------------------------------------------------------------------------------


def test_names_namespaces_and_spec_lists():
    assert all(name == spec.name for name, spec in REGISTRY.items())
    assert {s.name for s in ops_in("math")} == set(SPEC_MATH)
    assert {s.name for s in ops_in("block")} == set(SPEC_BLOCK)
    assert {s.name for s in ops_in("operator")} == set(OPERATORS)
    assert sum(len(ops_in(ns)) for ns in NAMESPACES) == len(REGISTRY)
    qualified = [s.qualified_name for s in REGISTRY.values()]
    assert len(qualified) == len(set(qualified))


def test_compiler_support_matches_the_reference_status_list():
    assert {n for n, s in REGISTRY.items() if s.compiler_supported} == set(COMPILER)


def test_every_op_is_complete():
    dunders = [s.dunder for s in REGISTRY.values() if s.dunder]
    assert len(dunders) == len(set(dunders))
    for spec in REGISTRY.values():
        assert isinstance(spec, OpSpec) and callable(spec.impl)
        assert spec.doc and spec.placement == "compute"
        assert spec.formats <= ALL_FORMATS and spec.formats
        assert spec.torch_golden is not None or spec.golden_note, spec.name
        names = [p.name for p in spec.params]
        assert len(names) == len(set(names)), spec.name
        if spec.accepts_scalar:
            assert spec.kind is OpKind.BINARY and spec.namespace == "operator"


def test_spec_is_frozen_and_slotted():
    spec = get_op("exp")
    with pytest.raises(AttributeError):
        spec.name = "other"  # type: ignore[misc]
    assert not hasattr(spec, "__dict__")


def test_signature_text():
    assert get_op("clamp").signature() == "clamp(x, min, max)"
    assert get_op("exp").signature() == (
        "exp(x, *, approx=False, scale=None, skip_clamp_check=False, iterations=8)"
    )
    assert get_op("where").signature() == "where(x, y, z)"


# --- lookups ----------------------------------------------------------------------------------


def test_get_op_accepts_names_qualified_names_and_legacy_spellings():
    assert get_op("exp") is get_op("math.exp") is REGISTRY["exp"]
    assert get_op("math.where") is get_op("block.where") is REGISTRY["where"]
    assert resolve("math", "broadcast") is REGISTRY["broadcast"]
    assert resolve("operator", "add") is REGISTRY["add"]
    for alias in LEGACY_ALIASES.values():
        assert get_op(alias.legacy) is REGISTRY[alias.op]


def test_unknown_op_says_where_to_register():
    with pytest.raises(KeyError) as info:
        get_op("expp")
    err = info.value
    assert isinstance(err, UnknownOpError) and isinstance(err, TilewrightError)
    text = str(err)
    assert "unknown block op 'expp'" in text and "'exp'" in text
    assert "tilewright/device/ops/registry.py" in text
    with pytest.raises(UnknownOpError, match="ttl.block has no block op 'exp'"):
        resolve("block", "exp")
    with pytest.raises(UnknownOpError, match="namespaces are math, block, operator"):
        ops_in("nn")


# --- result_shape -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "op,shapes,params,expected",
    [
        ("exp", [(2, 3)], {}, (2, 3)),
        ("add", [(2, 3), (2, 3)], {}, (2, 3)),
        ("mul", [(), (2, 3)], {}, (2, 3)),
        ("where", [(1, 2, 2)] * 3, {}, (1, 2, 2)),
        ("reduce_sum", [(2, 4)], {"dims": [-1], "shape": (2, 1)}, (2, 1)),
        ("reduce_max", [(3, 2, 4)], {"dims": [0, -2]}, (1, 1, 4)),
        ("broadcast", [(2, 1)], {"dims": [-1], "shape": (2, 4)}, (2, 4)),
        ("transpose", [(2, 3)], {}, (3, 2)),
        ("fill", [], {"value": 0.0, "shape": (2, 1)}, (2, 1)),
        ("matmul", [(2, 3), (3, 4)], {}, (2, 4)),
        ("matmul", [(5, 1, 2, 3), (7, 3, 4)], {}, (5, 7, 2, 4)),
        ("matmul", [(2, 3), (4, 3)], {"transpose_rhs": True}, (2, 4)),
        ("squeeze", [(1, 2, 1, 3)], {"dims": [0, 2]}, (2, 3)),
        ("squeeze", [(2, 1, 3, 1)], {"dims": [-1, -3]}, (2, 3)),
        ("unsqueeze", [(2, 3)], {"dims": [0, 2]}, (1, 2, 1, 3)),
        ("unsqueeze", [(2, 3)], {"dims": [-1, -3]}, (2, 1, 3, 1)),
        ("typecast", [(2, 2)], {"dtype": "bfloat8_b"}, (2, 2)),
    ],
)
def test_result_shape(op, shapes, params, expected):
    assert result_shape(op, *shapes, **params) == expected


def test_result_shape_agrees_with_impls():
    x = np.zeros((2, 64, 96), np.float32)
    for name, params in [
        ("reduce_sum", {"dims": [0, -1]}),
        ("squeeze", {"dims": [0]}),
        ("broadcast", {"dims": [0], "shape": (1, 2, 3)}),
    ]:
        src = x[:1] if name != "reduce_sum" else x
        out = get_op(name).impl(src, **params)
        block = (*out.shape[:-2], out.shape[-2] // 32, out.shape[-1] // 32)
        assert result_shape(name, (src.shape[0], 2, 3), **params) == block


@pytest.mark.parametrize(
    "op,shapes,params,text",
    [
        (
            "add",
            [(2, 3), (2, 1)],
            {},
            r"operator.add: operand block shapes \(2, 3\) and \(2, 1\) differ",
        ),
        ("max", [(), (2, 3)], {}, "operands must be blocks"),
        ("exp", [()], {}, "must be a block"),
        (
            "reduce_sum",
            [(2, 4)],
            {"dims": [-1], "shape": (2, 4)},
            r"gives shape \(2, 1\), but shape=\(2, 4\)",
        ),
        ("broadcast", [(2, 2)], {"dims": [-1], "shape": (2, 4)}, "must be 1"),
        ("transpose", [(1, 2, 3)], {}, "two-dimensional"),
        ("matmul", [(2, 3), (2, 4)], {}, "inner dimensions differ"),
        ("matmul", [(2, 2, 3), (3, 3, 4)], {}, "do not broadcast"),
        ("fill", [], {"value": 0.0, "shape": (4,)}, "at least 2"),
        ("exp", [(2, 2), (2, 2)], {}, "takes 1 block operand"),
    ],
)
def test_result_shape_errors(op, shapes, params, text):
    with pytest.raises(OpShapeError, match=text):
        result_shape(op, *shapes, **params)


def test_elementwise_mismatch_hints_broadcast():
    with pytest.raises(ValueError) as info:  # OpShapeError is a ValueError too
        result_shape("mul", (2, 4), (2, 1))
    assert "ttl.block.broadcast" in str(info.value)


# --- parameters and formats -------------------------------------------------------------------


def test_bind_params_positional_keywords_defaults_and_aliases():
    clamp = get_op("clamp")
    assert bind_params(clamp, (-1, 2)) == {"min": -1.0, "max": 2.0}
    assert bind_params(clamp, (), {"min_val": 0, "max": 1}) == {"min": 0.0, "max": 1.0}
    assert bind_params(get_op("exp"), (), {"scale": 2}) == {
        "approx": False, "scale": 2.0, "skip_clamp_check": False, "iterations": 8,
    }  # fmt: skip
    assert bind_params(get_op("reduce_sum"), ([-1],), {"shape": [2, 1]}) == {
        "dims": (-1,), "shape": (2, 1), "tile": (32, 32),
    }  # fmt: skip
    assert bind_params(get_op("softplus"), (1, 1), {"threshold": 20})["beta_reciprocal"] == 1.0
    assert bind_params(get_op("typecast"), ("bf16",)) == {"dtype": "bfloat16"}
    assert bind_params(get_op("fill"), (0.0, (2, 1)))["layout"] == "tile"


@pytest.mark.parametrize(
    "op,args,kwargs,text",
    [
        ("pow", (-1,), {}, "'exponent' must be a natural int, got -1"),
        ("pow", (1.5,), {}, "must be a natural int"),
        ("round", (True,), {}, "must be a natural int"),
        ("clamp", (0.0,), {}, "missing required parameter 'max'"),
        ("clamp", (0.0, 1.0, 2.0), {}, "takes 2 positional"),
        ("clamp", (0.0,), {"min": 1.0}, "multiple values for parameter 'min'"),
        ("exp", (), {"fast": True}, "unexpected keyword argument 'fast'"),
        ("exp", (True,), {}, "takes 0 positional"),
        ("exp", (), {"iterations": 0}, "positive int"),
        ("reduce_sum", ([],), {}, "list of dimension indexes"),
        ("typecast", ("int32",), {}, "float data format"),
        ("broadcast", ([-1], (2, 0)), {}, "'shape' must be a shape"),
    ],
)
def test_bind_params_errors(op, args, kwargs, text):
    with pytest.raises(OpParamError, match=text) as info:
        bind_params(get_op(op), args, kwargs)
    assert info.value.hint and "signature:" in info.value.hint
    assert isinstance(info.value, TypeError)


def test_check_formats():
    check_formats(get_op("exp"), "float32", "bf16")
    check_formats(get_op("matmul"), "bfloat16", "bfloat8_b")
    with pytest.raises(
        OpFormatError, match="math.exp does not support operands of format 'bfloat4_b'"
    ):
        check_formats(get_op("exp"), "bfloat4_b")


def test_importing_the_registry_does_not_import_torch():
    code = "import sys, tilewright.device.ops; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_result_shape_without_a_required_parameter():
    with pytest.raises(OpParamError, match="math.reduce_sum is missing required parameter 'dims'"):
        result_shape("reduce_sum", (2, 2))
