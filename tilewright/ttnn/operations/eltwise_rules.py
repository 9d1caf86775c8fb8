"""The table of ttnn elementwise operations: ttnn name -> device op registry entry + golden.

One :class:`EltwiseRule` per unary or binary ttnn operation.  Where the device op
registry (``tilewright.device.ops.REGISTRY``) has the operation, the rule names that
entry (``block_op``) and borrows its numpy implementation and its torch golden, with
fixed parameters where ttnn's operation is a parameterised registry op (``relu6`` is
``relu_max(upper_limit=6)``).  Only operations the registry lacks (the logical ones)
carry their own numpy implementation and torch golden here.  Integer support is ttnn's
own: a rule with ``int_impl`` accepts integer tensors and computes on int64.

ttnn goldens take torch tensors (and Python numbers) with ttnn's calling convention,
ignore ttnn-only keywords (``memory_config``, ``dtype``, ``output_tensor`` ...), apply
``activations`` when given, compute in float32 and return the result in the first
tensor's torch dtype -- the same rounding the operation applies on store.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilewright.device.ops import OpParamError, OpSpec, get_op
from tilewright.device.ops.sfpu_algorithms import sfpu_value
from tilewright.lazy import torch
from tilewright.ttnn.operations.io import ALL_DTYPES, FLOAT_DTYPES
from tilewright.ttnn.types import DataType

__all__ = [
    "RULES",
    "EltwiseRule",
    "activation_rule",
    "apply_activations",
    "binary_golden",
    "unary_golden",
]

F32 = np.float32


def _torch() -> Any:
    return torch  # an optional dependency: imported on first use


@dataclass(frozen=True, slots=True)
class EltwiseRule:
    """One ttnn elementwise operation.

    Attributes:
        name: ttnn name (``"reciprocal"`` -> ``ttnn.reciprocal``).
        arity: 1 (unary) or 2 (binary: second operand a tensor or a number).
        doc: one line.
        block_op: device op registry name (``"recip"``), or None when the registry lacks it.
        params: fixed registry parameters as (name, value) pairs (relu6: upper_limit 6).
        impl: float32 numpy implementation when ``block_op`` is None.
        golden: torch reference (float32 convention) when ``block_op`` is None.
        int_impl: int64 numpy implementation; None = float dtypes only.
        options: ttnn keyword flags accepted, with defaults, that do not change values
            on the virtual device (``fast_and_approximate_mode`` ...), except ``approx``.
        approx: the option (of ``options``) that, when true, runs the SFPU's approximate
            program of the op (``device/ops/sfpu_algorithms``), as ttnn passes it to
            ``<op>_tile<approx>``; None: no option changes the value.
    """

    name: str
    arity: int
    doc: str
    block_op: str | None = None
    params: tuple[tuple[str, Any], ...] = ()
    impl: Callable[..., np.ndarray] | None = None
    golden: Callable[..., Any] | None = None
    int_impl: Callable[..., np.ndarray] | None = None
    options: tuple[tuple[str, Any], ...] = ()
    approx: str | None = None

    @property
    def qualified_name(self) -> str:
        return f"ttnn.{self.name}"

    @property
    def spec(self) -> OpSpec | None:
        """The device op registry entry, if any."""
        return get_op(self.block_op) if self.block_op is not None else None

    @property
    def dtypes(self) -> frozenset[DataType]:
        return ALL_DTYPES if self.int_impl is not None else FLOAT_DTYPES

    def float_impl(self) -> Callable[..., np.ndarray]:
        spec = self.spec
        if spec is None:
            assert self.impl is not None, self.name
            return self.impl
        return functools.partial(spec.impl, **dict(self.params)) if self.params else spec.impl

    def torch_reference(self) -> Callable[..., Any]:
        """The float32-convention torch function (registry golden or ``golden``)."""
        spec = self.spec
        if spec is None:
            assert self.golden is not None, self.name
            return self.golden
        assert spec.torch_golden is not None, self.block_op
        golden = spec.torch_golden
        return functools.partial(golden, **dict(self.params)) if self.params else golden

    def compute(self, integer: bool, *operands: Any, approx: bool = False) -> np.ndarray:
        """Apply the operation to numpy operands (float32 or int64 arrays, or numbers);
        ``approx``: the SFPU's approximate program (float operands, ``self.approx`` set)."""
        if approx and not integer:
            spec = self.spec
            assert spec is not None and spec.sfpu is not None, self.name
            return sfpu_value(spec.sfpu.stem, operands[0], approx=True, fp32_dest=True)
        fn = self.int_impl if integer else self.float_impl()
        assert fn is not None, self.name  # io.integer_mode rejected integer operands already
        with np.errstate(all="ignore"):
            return np.asarray(fn(*operands))

    def describe(self) -> str:
        """How the value is computed, for docstrings."""
        if self.spec is not None:
            fixed = ", ".join(f"{k}={v!r}" for k, v in self.params)
            source = f"the device op registry's ``{self.spec.qualified_name}``" + (
                f" with {fixed}" if fixed else ""
            )
        else:
            source = "numpy (the device op registry has no such op)"
        ints = (
            "; integer operands use int64 arithmetic, wrapped to the output width"
            if self.int_impl
            else ""
        )
        return f"Computed by {source} in float32 on the decoded values{ints}."


# --- implementations the registry does not have ------------------------------------------------


def _truth(x: Any) -> Any:
    return np.not_equal(x, 0)


def _logical_and(a: Any, b: Any) -> np.ndarray:
    return (_truth(a) & _truth(b)).astype(F32)


def _logical_or(a: Any, b: Any) -> np.ndarray:
    return (_truth(a) | _truth(b)).astype(F32)


def _logical_not(x: Any) -> np.ndarray:
    return np.equal(x, 0).astype(F32)


def _torch_logical(name: str) -> Callable[..., Any]:
    def golden(*operands: Any) -> Any:
        torch = _torch()
        args = [o if isinstance(o, torch.Tensor) else torch.tensor(o) for o in operands]
        return getattr(torch, name)(*args).to(torch.float32)

    return golden


def _int_compare(ufunc: np.ufunc) -> Callable[..., np.ndarray]:
    return lambda a, b: ufunc(a, b).astype(np.int64)


def _relu_int(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0)


_FAST = ("fast_and_approximate_mode", False)


def _u(name: str, block_op: str | None, doc: str, **extra: Any) -> EltwiseRule:
    return EltwiseRule(name, 1, doc, block_op, **extra)


def _b(name: str, block_op: str | None, doc: str, **extra: Any) -> EltwiseRule:
    return EltwiseRule(name, 2, doc, block_op, **extra)


_TABLE: tuple[EltwiseRule, ...] = (
    # unary math
    _u("exp", "exp", "Natural exponential.", options=(_FAST,), approx=_FAST[0]),
    _u("log", "log", "Natural logarithm.", options=(_FAST,)),
    _u("sqrt", "sqrt", "Square root.", options=(_FAST,)),
    _u("rsqrt", "rsqrt", "1 / sqrt(x).", options=(_FAST,)),
    _u("reciprocal", "recip", "1 / x."),
    _u("square", "square", "x * x.", int_impl=np.square),
    _u("abs", "abs", "Absolute value.", int_impl=np.abs),
    _u("neg", "neg", "Negation.", int_impl=np.negative),
    _u("sign", "sign", "Sign: -1, 0 or 1.", int_impl=np.sign),
    _u("floor", "floor", "Floor."),
    _u("ceil", "ceil", "Ceil."),
    _u("sin", "sin", "Sine."),
    _u("cos", "cos", "Cosine."),
    _u("tan", "tan", "Tangent."),
    _u("tanh", "tanh", "Hyperbolic tangent.", options=(_FAST,), approx=_FAST[0]),
    # activations
    _u("relu", "relu", "max(x, 0).", int_impl=_relu_int),
    _u("relu6", "relu_max", "min(max(x, 0), 6).", params=(("upper_limit", 6.0),)),
    _u("gelu", "gelu", "GELU, exact erf form (the fast mode's approximation is not modelled).",
       options=(_FAST,)),
    _u("sigmoid", "sigmoid", "1 / (1 + exp(-x)).", options=(("vector_mode", 4), _FAST)),
    _u("silu", "silu", "x * sigmoid(x)."),
    _u("logical_not", None, "1 where x == 0, else 0.", impl=_logical_not,
       golden=_torch_logical("logical_not"), int_impl=_logical_not),
    # binary arithmetic
    _b("add", "add", "a + b.", int_impl=np.add),
    _b("subtract", "sub", "a - b.", int_impl=np.subtract),
    _b("multiply", "mul", "a * b.", int_impl=np.multiply),
    _b("divide", "div", "a / b (true division)."),
    _b("maximum", "max", "Elementwise maximum.", int_impl=np.maximum),
    _b("minimum", "min", "Elementwise minimum.", int_impl=np.minimum),
    # comparisons: 1 where true, 0 where false, in the output dtype
    _b("eq", "eq", "a == b as 1 / 0.", int_impl=_int_compare(np.equal)),
    _b("ne", "ne", "a != b as 1 / 0.", int_impl=_int_compare(np.not_equal)),
    _b("lt", "lt", "a < b as 1 / 0.", int_impl=_int_compare(np.less)),
    _b("gt", "gt", "a > b as 1 / 0.", int_impl=_int_compare(np.greater)),
    _b("le", "le", "a <= b as 1 / 0.", int_impl=_int_compare(np.less_equal)),
    _b("ge", "ge", "a >= b as 1 / 0.", int_impl=_int_compare(np.greater_equal)),
    _b("logical_and", None, "1 where a != 0 and b != 0, else 0.", impl=_logical_and,
       golden=_torch_logical("logical_and"), int_impl=_logical_and),
    _b("logical_or", None, "1 where a != 0 or b != 0, else 0.", impl=_logical_or,
       golden=_torch_logical("logical_or"), int_impl=_logical_or),
)  # fmt: skip

RULES: dict[str, EltwiseRule] = {rule.name: rule for rule in _TABLE}
"""ttnn elementwise operation name -> rule; the one table of ttnn elementwise ops."""


# --- activations (binary ``activations=``, matmul ``activation=``) ------------------------------


def _activation_name(activation: Any) -> str | None:
    """``"relu"``, ``UnaryOpType.RELU`` or ``UnaryWithParam(UnaryOpType.RELU)`` -> ``"relu"``."""
    if isinstance(activation, str):
        return activation.lower()
    kind = getattr(activation, "op_type", activation)
    name = getattr(kind, "name", None)
    return name.lower() if isinstance(name, str) else None


def activation_rule(op: str, activation: Any) -> EltwiseRule:
    """The unary rule an activation names.

    Raises:
        OpParamError: not the name of a unary elementwise operation.
    """
    name = _activation_name(activation)
    rule = RULES.get(name) if name is not None else None
    if rule is None or rule.arity != 1:
        unary = ", ".join(sorted(r.name for r in _TABLE if r.arity == 1))
        raise OpParamError(
            f"{op}: unknown activation {activation!r}",
            hint=f"activations are unary operation names: {unary}",
        )
    return rule


def apply_activations(op: str, activations: Any, values: np.ndarray, integer: bool) -> np.ndarray:
    """``values`` after each activation in turn (None or a list; one name is accepted too)."""
    if activations is None:
        return values
    listed = activations if isinstance(activations, (list, tuple)) else [activations]
    for activation in listed:
        rule = activation_rule(op, activation)
        if integer and rule.int_impl is None:
            raise OpParamError(f"{op}: activation {rule.name!r} needs float operands")
        values = rule.compute(integer, values)
    return values


def _reference_activations(op: str, activations: Any, out: Any) -> Any:
    if activations is None:
        return out
    listed = activations if isinstance(activations, (list, tuple)) else [activations]
    for activation in listed:
        out = activation_rule(op, activation).torch_reference()(out)
    return out


# --- goldens in ttnn's convention --------------------------------------------------------------


def _float_in(value: Any) -> Any:
    torch = _torch()
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.to(torch.float32)
    return value


def _result_like(out: Any, operands: tuple[Any, ...]) -> Any:
    torch = _torch()
    like = next((o for o in operands if isinstance(o, torch.Tensor)), None)
    return out.to(like.dtype) if like is not None else out


def unary_golden(rule: EltwiseRule) -> Callable[..., Any]:
    """``golden(input_tensor, **ttnn_kwargs)`` for a unary rule."""
    reference = rule.torch_reference()

    def golden(input_tensor: Any, *args: Any, **_ttnn_kwargs: Any) -> Any:
        return _result_like(reference(_float_in(input_tensor)), (input_tensor,))

    golden.__name__ = f"{rule.name}_golden"
    golden.__doc__ = f"torch reference of {rule.qualified_name}."
    return golden


def binary_golden(rule: EltwiseRule) -> Callable[..., Any]:
    """``golden(input_tensor_a, input_tensor_b, *, activations=None, **ttnn_kwargs)``."""
    reference = rule.torch_reference()

    def golden(
        input_tensor_a: Any,
        input_tensor_b: Any,
        *args: Any,
        activations: Any = None,
        **_ttnn_kwargs: Any,
    ) -> Any:
        out = reference(_float_in(input_tensor_a), _float_in(input_tensor_b))
        out = _reference_activations(rule.qualified_name, activations, out)
        return _result_like(out, (input_tensor_a, input_tensor_b))

    golden.__name__ = f"{rule.name}_golden"
    golden.__doc__ = f"torch reference of {rule.qualified_name}."
    return golden
