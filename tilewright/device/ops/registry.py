"""The block-math op registry: one table that every layer reads.

``REGISTRY`` maps an op name to its :class:`~.spec.OpSpec`.  The TT-Lang block
expression engine evaluates ``spec.impl``; ``ttl.math`` / ``ttl.block`` bind their
names from ``ops_in("math")`` / ``ops_in("block")`` and Python operators from
``spec.dunder``; the compiler reads ``compiler_supported``, ``formats`` and
``placement`` (always COMPUTE) and, for compiled unary ops, ``sfpu`` / ``lowering`` (the
SFPU steps it emits); ttnn uses ``torch_golden``.  The kernel API's tile ops
(``tile_ops.py``: the SFPU functions of the Python kernel API, the native runtime's op
table, the compiler's SFPU names) are derived from the ``sfpu`` forms here.  Adding an
op means one ``_OPS`` entry here (a torch golden by name, or one in ``goldens.py``) and
its numpy impl (``elementwise.py`` / ``tiled.py``); tests check the rest
(``docs/architecture.md``, "A block math op").

Sources: TT-Lang specification v0.20 Appendix B (names, parameters, semantics) and
Appendix D (which ops the compiler supports), reference A.5 (status list: exp, log,
sqrt, rsqrt, tanh, sigmoid, relu, floor, recip, min, max; sin..atan, ``@``, reduce,
broadcast, fill, transpose; expm1, exp2, ceil, sign, gelu, silu, hardsigmoid, square,
softsign, signbit, frac, trunc; operators ``+ - * / - abs`` and comparisons
``> < == !=``).  Everything else is simulator-only.  The simulator's ``^`` operator is
left out on purpose: bitwise xor has no meaning on float32 block values.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import elementwise as ew
from . import tiled
from .goldens import GOLDENS, torch_call
from .legacy import LEGACY_ALIASES
from .op_errors import UnknownOpError
from .shapes import Shape
from .shapes import result_shape as _result_shape
from .spec import (
    ALL_FORMATS,
    NAMESPACES,
    SAME,
    Namespace,
    OpKind,
    OpSpec,
    Param,
    ParamKind,
    SfpuForm,
)

__all__ = ["REGISTER_HINT", "REGISTRY", "get_op", "ops_in", "resolve", "result_shape"]

U, B, T = OpKind.UNARY, OpKind.BINARY, OpKind.TERNARY
P = ParamKind

REGISTER_HINT = (
    "block ops are registered in tilewright/device/ops/registry.py (the _OPS table), with a "
    "numpy impl in elementwise.py or tiled.py and a torch golden in goldens.py"
)

_TILE = Param(
    "tile", P.TILE, (32, 32), keyword_only=True, doc="operand tile shape (engine-supplied)"
)
_DIMS = Param("dims", P.DIMS, doc="dimension indexes (0 outermost, -1 innermost)")


def _real(name: str, doc: str = "", *aliases: str, default: Any = None) -> Param:
    if default is None:
        return Param(name, P.FLOAT, aliases=aliases, doc=doc)
    return Param(name, P.FLOAT, default, aliases=aliases, doc=doc)


def _sfpu(
    stem: str, *params: str, ir: str | None = SAME, ulps: int = 0, init: str | None = None
) -> SfpuForm:
    """``<stem>_tile(idst, *params)`` computes the op exactly (see :class:`SfpuForm`)."""
    return SfpuForm(stem, params, ir, ulps, init)


TRANSCENDENTAL = 3
"""ulps between the native runtime's double-then-float32 functions and numpy's float32 loops."""


def _op(
    name: str,
    kind: OpKind,
    impl: Callable[..., np.ndarray],
    doc: str,
    *,
    compiler: bool = False,
    params: Sequence[Param] = (),
    namespace: Namespace = "math",
    golden: str | None = None,
    **extra: Any,
) -> OpSpec:
    """One registry row; ``golden`` names a torch function (``"erf"``, ``"nn.functional.gelu"``)
    when the op is exactly that function, else ``goldens.GOLDENS`` has it."""
    return OpSpec(
        name=name,
        kind=kind,
        impl=impl,
        params=tuple(params),
        namespace=namespace,
        torch_golden=torch_call(golden) if golden is not None else GOLDENS.get(name),
        compiler_supported=compiler,
        doc=doc,
        **extra,
    )


def _operator(
    name: str, impl, dunder: str, doc: str, compiler: bool, scalar: bool = True
) -> OpSpec:
    return _op(
        name, B, impl, doc, compiler=compiler, namespace="operator", dunder=dunder,
        accepts_scalar=scalar,
    )  # fmt: skip


_OPS: tuple[OpSpec, ...] = (
    # ttl.math binary
    _op("max", B, ew.max_, "Elementwise maximum.", compiler=True),
    _op("min", B, ew.min_, "Elementwise minimum.", compiler=True),
    # ttl.math basic unary (abs/neg/pow are also the operators abs(), -, **)
    _op("abs", U, ew.abs_, "Absolute value.", compiler=True, dunder="__abs__", sfpu=_sfpu("abs")),
    _op(
        "neg", U, ew.neg, "Negation.", compiler=True, dunder="__neg__",
        sfpu=_sfpu("negative"),
    ),
    _op(
        "pow", U, ew.pow_, "Power with a natural-number exponent.", dunder="__pow__",
        params=[Param("exponent", P.NATURAL, doc="natural-number exponent")],
        sfpu=_sfpu("power_iterative", "exponent", ir="power", ulps=TRANSCENDENTAL),
    ),
    _op(
        "exp", U, ew.exp, "Natural exponential, e**(scale*x) with scale.", compiler=True,
        params=[
            Param("approx", P.BOOL, False, keyword_only=True, doc="fast approximate exp"),
            Param("scale", P.OPTIONAL_FLOAT, None, keyword_only=True, doc="input multiplier"),
            Param("skip_clamp_check", P.BOOL, False, keyword_only=True, doc="no input clamp"),
            Param("iterations", P.POSITIVE, 8, keyword_only=True, doc="SFPU lane iterations"),
        ],
        sfpu=_sfpu("exp"),
    ),
    _op(
        "exp2", U, ew.exp2, "Base-2 exponential.", compiler=True,
        sfpu=_sfpu("exp2", ulps=TRANSCENDENTAL),
    ),
    _op(
        "expm1", U, ew.expm1, "exp(x) - 1.", compiler=True,
        sfpu=_sfpu("expm1", ulps=TRANSCENDENTAL),
    ),
    _op(
        "log", U, ew.log, "Natural logarithm.", compiler=True,
        sfpu=_sfpu("log"),
    ),
    _op("logp1", U, ew.logp1, "log(x + 1).", sfpu=_sfpu("log1p", ulps=TRANSCENDENTAL)),
    _op("sqrt", U, ew.sqrt, "Square root.", compiler=True, sfpu=_sfpu("sqrt")),
    _op("square", U, ew.square, "Square.", compiler=True, sfpu=_sfpu("square")),
    _op("rsqrt", U, ew.rsqrt, "1 / sqrt(x).", compiler=True, sfpu=_sfpu("rsqrt")),
    _op("recip", U, ew.recip, "1 / x.", compiler=True, sfpu=_sfpu("recip")),
    _op(
        "rsub", U, ew.rsub, "b - x for a scalar b.",
        params=[_real("b", "scalar minuend (the spec types it NaturalInt)")],
        sfpu=_sfpu("rsub", "b", ir=None),
        lowering=(("rsub_scalar", ("b",)),),  # rsub_unary_tile, as the hardware compiler
    ),
    # trigonometric
    _op("tan", U, ew.tan, "Tangent.", compiler=True, sfpu=_sfpu("tan", ulps=TRANSCENDENTAL)),
    _op(
        "tanh", U, ew.tanh, "Hyperbolic tangent.", compiler=True,
        sfpu=_sfpu("tanh"),
    ),
    _op("atan", U, ew.atan, "Arctangent.", compiler=True, sfpu=_sfpu("atan", ulps=TRANSCENDENTAL)),
    _op("atanh", U, ew.atanh, "Hyperbolic arctangent.", sfpu=_sfpu("atanh", ulps=TRANSCENDENTAL)),
    _op("sin", U, ew.sin, "Sine.", compiler=True, sfpu=_sfpu("sin", ulps=TRANSCENDENTAL)),
    _op("asin", U, ew.asin, "Arcsine.", compiler=True, sfpu=_sfpu("asin", ulps=TRANSCENDENTAL)),
    _op("asinh", U, ew.asinh, "Hyperbolic arcsine.", sfpu=_sfpu("asinh", ulps=TRANSCENDENTAL)),
    _op("cos", U, ew.cos, "Cosine.", compiler=True, sfpu=_sfpu("cos", ulps=TRANSCENDENTAL)),
    _op("acos", U, ew.acos, "Arccosine.", compiler=True, sfpu=_sfpu("acos", ulps=TRANSCENDENTAL)),
    _op("acosh", U, ew.acosh, "Hyperbolic arccosine.", sfpu=_sfpu("acosh", ulps=TRANSCENDENTAL)),
    # activations
    _op("relu", U, ew.relu, "ReLU.", compiler=True, sfpu=_sfpu("relu")),
    _op(
        "relu_max", U, ew.relu_max, "relu(min(x, upper_limit)).",
        params=[_real("upper_limit", "upper clamp", "upper")],
        sfpu=_sfpu("relu_max", "upper_limit"),
    ),
    _op(
        "relu_min", U, ew.relu_min, "relu(max(x, lower_limit)).",
        params=[_real("lower_limit", "lower clamp", "lower")],
        # relu_min_tile is max(x, lower_limit) (tt-llk); relu after it makes the spec's op.
        lowering=(("relu_min_raw", ("lower_limit",)), ("relu", ())),
    ),
    _op(
        "leaky_relu", U, ew.leaky_relu, "Leaky ReLU.",
        params=[_real("slope", "negative slope", "negative_slope")],
        sfpu=_sfpu("leaky_relu", "slope"),
    ),
    _op(
        "elu", U, ew.elu, "ELU.", params=[_real("slope", "ELU alpha", "alpha")],
        sfpu=_sfpu("elu", "slope", ulps=TRANSCENDENTAL),
    ),
    _op("gelu", U, ew.gelu, "GELU (exact, erf form).", compiler=True, sfpu=_sfpu("gelu")),
    _op(
        "sigmoid", U, ew.sigmoid, "Sigmoid.", compiler=True,
        sfpu=_sfpu("sigmoid"),
    ),
    _op(
        "celu", U, ew.celu, "CELU.",
        params=[_real("alpha", "CELU alpha"), _real("alpha_recip", "1 / alpha")],
        golden_note="the golden divides by alpha; the impl multiplies by alpha_recip",
        sfpu=_sfpu("celu", "alpha", "alpha_recip", ulps=TRANSCENDENTAL),
    ),
    _op(
        "silu", U, ew.silu, "SiLU (swish).", compiler=True,
        sfpu=_sfpu("silu", ulps=TRANSCENDENTAL),
    ),
    _op(
        "prelu", U, ew.prelu, "PReLU with one scalar weight.", params=[_real("alpha", "slope")],
        sfpu=_sfpu("prelu", "alpha"),
    ),
    _op(
        "softplus", U, ew.softplus, "Softplus with torch's linear threshold.",
        params=[
            _real("beta", "beta"),
            _real("beta_reciprocal", "1 / beta", "beta_recip"),
            _real("threshold", "linear above beta*x > threshold"),
        ],
        golden_note="the golden divides by beta; the impl multiplies by beta_reciprocal",
        sfpu=_sfpu("softplus", "beta", "beta_reciprocal", "threshold", ulps=TRANSCENDENTAL),
    ),
    _op("softsign", U, ew.softsign, "x / (1 + |x|).", compiler=True, sfpu=_sfpu("softsign")),
    _op(
        "hardsigmoid", U, ew.hardsigmoid, "relu6(x + 3) / 6.", compiler=True,
        sfpu=_sfpu("hardsigmoid"),
    ),
    _op(
        "hardtanh", U, ew.hardtanh, "Clamp to [min, max].",
        params=[_real("min", "lower bound", "min_val"), _real("max", "upper bound", "max_val")],
        sfpu=_sfpu("hardtanh", "min", "max"),
    ),
    _op(
        "selu", U, ew.selu, "SELU.",
        params=[
            _real("scale", "SELU scale", default=1.0507009873554804934193349852946),
            _real("alpha", "SELU alpha", default=1.6732632423543772848170429916717),
        ],
        sfpu=_sfpu("selu", "scale", "alpha", ulps=TRANSCENDENTAL),
    ),
    # rounding
    _op("frac", U, ew.frac, "Fractional part.", compiler=True, sfpu=_sfpu("frac")),
    _op("trunc", U, ew.trunc, "Integer part (towards zero).", compiler=True, sfpu=_sfpu("trunc")),
    _op(
        "round", U, ew.round_, "Round to decimals places (ties to even).",
        params=[Param("decimals", P.NATURAL, 0, doc="decimal places")],
        sfpu=_sfpu("round", "decimals", init="rounding_op_tile_init"),
    ),
    _op("floor", U, ew.floor, "Floor.", compiler=True, sfpu=_sfpu("floor")),
    _op("ceil", U, ew.ceil, "Ceil.", compiler=True, sfpu=_sfpu("ceil")),
    _op(
        "clamp", U, ew.clamp, "Clamp to [min, max].",
        params=[_real("min", "lower bound", "min_val"), _real("max", "upper bound", "max_val")],
        sfpu=_sfpu("clamp", "min", "max"),
    ),
    _op(
        "threshold", U, ew.threshold, "Elements > threshold become value.",
        params=[_real("threshold", "threshold"), _real("value", "replacement")],
        golden_note="spec semantics (x > threshold -> value), the opposite of torch/ttnn threshold",
    ),
    _op("sign", U, ew.sign, "Sign (-1, 0, 1).", compiler=True, sfpu=_sfpu("sign")),
    _op(
        "signbit", U, ew.signbit, "1 for negatives and -0, else 0 (hardware; spec prose inverts it).",
        compiler=True, sfpu=_sfpu("signbit"),
    ),
    _op(
        "typecast", OpKind.TYPECAST, ew.typecast, "Convert to another float format.",
        compiler=True, formats=ALL_FORMATS,
        params=[Param("dtype", P.DTYPE, doc="float32, bfloat16, bfloat8_b or bfloat4_b")],
        golden_note="block-float targets are identity here; the codec quantises on store",
    ),
    # reductions
    _op(
        "reduce_sum", OpKind.REDUCE, tiled.reduce_sum, "Tiled two-step sum over dims.",
        compiler=True, params=[_DIMS, Param("shape", P.OPTIONAL_SHAPE, None), _TILE],
        golden_note="tiled semantics in torch; for ttnn use torch.sum on logical tensors",
    ),
    _op(
        "reduce_max", OpKind.REDUCE, tiled.reduce_max, "Tiled two-step maximum over dims.",
        compiler=True, params=[_DIMS, Param("shape", P.OPTIONAL_SHAPE, None), _TILE],
        golden_note="tiled semantics in torch; for ttnn use torch.amax on logical tensors",
    ),
    # ttl.block
    _op(
        "broadcast", OpKind.BROADCAST, tiled.broadcast, "Tiled two-step broadcast to shape.",
        compiler=True, namespace="block", params=[_DIMS, Param("shape", P.SHAPE), _TILE],
        golden_note="tiled semantics in torch",
    ),
    _op(
        "transpose", OpKind.TRANSPOSE, tiled.transpose, "Transpose a 2-D block.",
        compiler=True, namespace="block", params=[_TILE],
    ),
    _op(
        "fill", OpKind.FILL, tiled.fill, "A block of shape filled with value.",
        compiler=True, namespace="block",
        params=[
            _real("value", "fill value"),
            Param("shape", P.SHAPE, doc="block shape"),
            Param("layout", P.LAYOUT, "tile", doc="tile or row_major"),
            Param("dtype", P.DTYPE, "bfloat16", doc="stored format"),
            Param("tile", P.TILE, (32, 32), doc="tile shape"),
        ],
    ),
    _op("mask", B, ew.mask, "Elements where mask == 1 become 0.", namespace="block"),
    _op(
        "mask_posinf", B, ew.mask_posinf, "Elements where mask == 1 become +inf.",
        namespace="block",
    ),
    _op(
        "where", T, ew.where, "true_value where condition == 1, else false_value.",
        namespace="block",
    ),
    _op(
        "squeeze", OpKind.SHAPE, tiled.squeeze, "Remove grid dims of extent 1.",
        namespace="block", params=[_DIMS, _TILE],
    ),
    _op(
        "unsqueeze", OpKind.SHAPE, tiled.unsqueeze, "Insert grid dims of extent 1.",
        namespace="block", params=[_DIMS, _TILE],
    ),
    # Python operators on block expressions
    _operator("add", ew.add, "__add__", "a + b (also +=).", True),
    _operator("sub", ew.sub, "__sub__", "a - b.", True),
    _operator("mul", ew.mul, "__mul__", "a * b.", True),
    _operator("div", ew.div, "__truediv__", "a / b.", True),
    _operator("mod", ew.mod, "__mod__", "a % b (simulator only).", False),
    _operator("floordiv", ew.floordiv, "__floordiv__", "a // b (simulator only).", False),
    _operator("gt", ew.gt, "__gt__", "a > b as 1.0/0.0.", True),
    _operator("lt", ew.lt, "__lt__", "a < b as 1.0/0.0.", True),
    _operator("eq", ew.eq, "__eq__", "a == b as 1.0/0.0.", True),
    _operator("ne", ew.ne, "__ne__", "a != b as 1.0/0.0.", True),
    _operator("ge", ew.ge, "__ge__", "a >= b as 1.0/0.0.", False),
    _operator("le", ew.le, "__le__", "a <= b as 1.0/0.0.", False),
    _op(
        "matmul", OpKind.MATMUL, tiled.matmul, "[..., M, K] @ [..., K, N] (also ttl.matmul).",
        compiler=True, namespace="operator", dunder="__matmul__", formats=ALL_FORMATS,
        params=[Param("transpose_rhs", P.BOOL, False, keyword_only=True, doc="use rhs^T")],
    ),
)  # fmt: skip


def _build() -> dict[str, OpSpec]:
    table: dict[str, OpSpec] = {}
    for spec in _OPS:
        if spec.name in table:
            raise AssertionError(f"duplicate op {spec.name!r} in the registry")
        table[spec.name] = spec
    for alias in LEGACY_ALIASES.values():
        spec = table[alias.op]
        if alias.legacy != spec.qualified_name:
            table[alias.op] = dataclasses.replace(spec, aliases=(*spec.aliases, alias.legacy))
    return table


REGISTRY: dict[str, OpSpec] = _build()
"""Op name -> spec; the one table of block ops."""

_QUALIFIED: dict[str, OpSpec] = {spec.qualified_name: spec for spec in REGISTRY.values()} | {
    alias: spec for spec in REGISTRY.values() for alias in spec.aliases
}


def get_op(name: str) -> OpSpec:
    """The spec of ``name``: a registry name (``"exp"``), a qualified spelling
    (``"math.exp"``, ``"block.where"``) or a legacy qualified spelling (``"math.where"``).

    Raises:
        UnknownOpError: (a ``KeyError``) naming the op and where ops are registered.
    """
    spec = REGISTRY.get(name) or _QUALIFIED.get(name)
    if spec is not None:
        return spec
    candidates = [*REGISTRY, *_QUALIFIED]
    close = difflib.get_close_matches(name, candidates, n=3)
    suggestion = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
    raise UnknownOpError(f"unknown block op {name!r}{suggestion}", hint=REGISTER_HINT)


def resolve(namespace: str, name: str) -> OpSpec:
    """The spec spelled ``ttl.<namespace>.<name>`` (``"operator"`` for Python operators),
    including legacy spellings; raises :class:`UnknownOpError` otherwise."""
    spec = _QUALIFIED.get(f"{namespace}.{name}")
    if spec is None:
        raise UnknownOpError(
            f"ttl.{namespace} has no block op {name!r}"
            if namespace != "operator"
            else f"block expressions have no operator {name!r}",
            hint=REGISTER_HINT,
        )
    return spec


def ops_in(namespace: str) -> tuple[OpSpec, ...]:
    """Every op whose current spelling is in ``namespace`` (``"math"``, ``"block"``,
    ``"operator"``), in table order."""
    if namespace not in NAMESPACES:
        raise UnknownOpError(
            f"unknown op namespace {namespace!r}; namespaces are {', '.join(NAMESPACES)}"
        )
    return tuple(spec for spec in REGISTRY.values() if spec.namespace == namespace)


def result_shape(op: str | OpSpec, *operand_shapes: Sequence[int], **params: Any) -> Shape:
    """Block shape (in tiles) of ``op`` applied to operands of the given block shapes.

    ``op`` is a spec or any name :func:`get_op` accepts; see :func:`shapes.result_shape`.

    Raises:
        OpShapeError: the operand shapes or parameters break the op's shape rule.
    """
    spec = op if isinstance(op, OpSpec) else get_op(op)
    return _result_shape(spec, *operand_shapes, **params)
