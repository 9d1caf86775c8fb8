"""ttnn elementwise operations: unary, binary, ``where``, ``clamp`` and ``isclose``.

Unary and binary operations are built from their row in ``eltwise_rules.RULES`` and
bound here by name, one line each, so readers and type checkers see every operation.
Each reads its operands (``io.read``), computes with the rule (the device op
registry's numpy implementation in float32), applies ``activations`` in float32 and
stores the result once (``io.store``), so it is rounded to the output dtype a single
time -- as a fused activation on the device is.

Binary operations (ttnn ``add``): ``input_tensor_b`` is a tensor or a Python number
(a number is used as a float32 scalar); tensor operands broadcast as numpy does (ttnn:
up to 5-D); the result takes ``input_tensor_a``'s dtype (or ``dtype=``), layout and
memory config.  ``output_tensor=`` writes into an existing tensor of the result's shape.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from tilewright.device.ops import OpParamError, OpShapeError, get_op
from tilewright.lazy import torch
from tilewright.ttnn.operations.eltwise_rules import (
    RULES,
    EltwiseRule,
    apply_activations,
    binary_golden,
    unary_golden,
)
from tilewright.ttnn.operations.io import (
    ALL_DTYPES,
    FLOAT_DTYPES,
    broadcast_shape,
    broadcasts_to,
    common_device,
    dtype_name,
    integer_mode,
    read,
    scalar_value,
    store,
    tensor_arg,
)
from tilewright.ttnn.operations.registry import Operation, register_python_operation
from tilewright.ttnn.tensor import Tensor

__all__ = [
    "abs_",
    "add",
    "ceil",
    "clamp",
    "cos",
    "divide",
    "eq",
    "exp",
    "floor",
    "ge",
    "gelu",
    "gt",
    "isclose",
    "le",
    "log",
    "logical_and",
    "logical_not",
    "logical_or",
    "lt",
    "maximum",
    "minimum",
    "multiply",
    "ne",
    "neg",
    "reciprocal",
    "relu",
    "relu6",
    "rsqrt",
    "run_binary",
    "sigmoid",
    "sign",
    "silu",
    "sin",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "where",
]

_P = inspect.Parameter
_KW = _P.KEYWORD_ONLY


def _placed(operands: dict[str, Tensor], output_tensor: Any, op: str) -> dict[str, Tensor]:
    """Operands plus ``output_tensor`` (checked), for the one-device rule."""
    if output_tensor is None:
        return operands
    return {**operands, "output_tensor": tensor_arg(op, "output_tensor", output_tensor)}


def _check_options(rule: EltwiseRule, options: dict[str, Any]) -> None:
    accepted = {name for name, _ in rule.options}
    for key in options:
        if key not in accepted:
            raise OpParamError(
                f"{rule.qualified_name}() got an unexpected keyword argument {key!r}"
            )


def _plain(signature: inspect.Signature) -> inspect.Signature:
    """``signature`` without annotations, for docstrings."""
    params = [p.replace(annotation=_P.empty) for p in signature.parameters.values()]
    return signature.replace(parameters=params, return_annotation=inspect.Signature.empty)


def _doc(rule: EltwiseRule, signature: inspect.Signature) -> str:
    types = ", ".join(sorted(dtype_name(d) for d in rule.dtypes))
    return (
        f"{rule.qualified_name}{signature}\n\n{rule.doc}\n\n{rule.describe()} The result is "
        f"rounded to the output dtype on store.\n\nSupported dtypes: {types}.  Golden: the torch "
        f"reference, computed in float32 and returned in the input's torch dtype."
    )


# --- unary ----------------------------------------------------------------------------------------


def _run_unary(
    rule: EltwiseRule,
    input_tensor: Any,
    memory_config: Any,
    output_tensor: Any,
    approx: bool = False,
) -> Tensor:
    op = rule.qualified_name
    x = tensor_arg(op, "input_tensor", input_tensor)
    operands = {"input_tensor": x}
    common_device(op, _placed(operands, output_tensor, op))
    integer = integer_mode(op, operands, rule.dtypes)
    result = rule.compute(integer, read(x, integer), approx=approx)
    return store(op, result, x, memory_config=memory_config, output_tensor=output_tensor)


def _unary(name: str) -> Operation:
    rule = RULES[name]

    def function(
        input_tensor: Any, *, memory_config: Any = None, output_tensor: Any = None, **options: Any
    ) -> Tensor:
        _check_options(rule, options)
        approx = rule.approx is not None and bool(options.get(rule.approx, False))
        return _run_unary(rule, input_tensor, memory_config, output_tensor, approx)

    signature = inspect.Signature(
        [
            _P("input_tensor", _P.POSITIONAL_OR_KEYWORD),
            *(_P(opt, _KW, default=default) for opt, default in rule.options),
            _P("memory_config", _KW, default=None),
            _P("output_tensor", _KW, default=None),
        ]
    )
    function.__name__ = function.__qualname__ = name
    # inspect.signature() reads __signature__; mypy's function type does not declare it.
    function.__signature__ = signature  # type: ignore[attr-defined]
    function.__doc__ = _doc(rule, signature)
    return register_python_operation(name=rule.qualified_name, golden_function=unary_golden(rule))(
        function
    )


# --- binary ---------------------------------------------------------------------------------------


def run_binary(
    rule: EltwiseRule,
    input_tensor_a: Any,
    input_tensor_b: Any,
    *,
    dtype: Any = None,
    memory_config: Any = None,
    output_tensor: Any = None,
    activations: Any = None,
    reflected: bool = False,
) -> Tensor:
    """Run a binary rule; ``reflected`` computes ``b (op) a`` (``Tensor.__rsub__``)."""
    op = rule.qualified_name
    a = tensor_arg(op, "input_tensor_a", input_tensor_a)
    operands = {"input_tensor_a": a}
    if isinstance(input_tensor_b, Tensor):
        operands["input_tensor_b"] = input_tensor_b
    common_device(op, _placed(operands, output_tensor, op))
    integer = integer_mode(op, operands, rule.dtypes)
    lhs = read(a, integer)
    if isinstance(input_tensor_b, Tensor):
        broadcast_shape(op, a.shape, input_tensor_b.shape)
        rhs: Any = read(input_tensor_b, integer)
    else:
        rhs = scalar_value(op, "input_tensor_b", input_tensor_b, integer)
    result = rule.compute(integer, *((rhs, lhs) if reflected else (lhs, rhs)))
    result = apply_activations(op, activations, result, integer)
    return store(
        op, result, a, dtype=dtype, memory_config=memory_config, output_tensor=output_tensor
    )


def _binary(name: str) -> Operation:
    rule = RULES[name]

    def function(
        input_tensor_a: Any,
        input_tensor_b: Any,
        *,
        memory_config: Any = None,
        dtype: Any = None,
        output_tensor: Any = None,
        activations: Any = None,
    ) -> Tensor:
        return run_binary(
            rule,
            input_tensor_a,
            input_tensor_b,
            dtype=dtype,
            memory_config=memory_config,
            output_tensor=output_tensor,
            activations=activations,
        )

    function.__name__ = function.__qualname__ = name
    function.__doc__ = _doc(rule, _plain(inspect.signature(function)))
    return register_python_operation(name=rule.qualified_name, golden_function=binary_golden(rule))(
        function
    )


# --- the table's operations, bound by name --------------------------------------------------------

exp = _unary("exp")
log = _unary("log")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
reciprocal = _unary("reciprocal")
square = _unary("square")
abs_ = _unary("abs")  # ttnn.abs; bound as abs_ so this module keeps the builtin
neg = _unary("neg")
sign = _unary("sign")
floor = _unary("floor")
ceil = _unary("ceil")
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
tanh = _unary("tanh")
relu = _unary("relu")
relu6 = _unary("relu6")
gelu = _unary("gelu")
sigmoid = _unary("sigmoid")
silu = _unary("silu")
logical_not = _unary("logical_not")

add = _binary("add")
subtract = _binary("subtract")
multiply = _binary("multiply")
divide = _binary("divide")
maximum = _binary("maximum")
minimum = _binary("minimum")
eq = _binary("eq")
ne = _binary("ne")
lt = _binary("lt")
gt = _binary("gt")
le = _binary("le")
ge = _binary("ge")
logical_and = _binary("logical_and")
logical_or = _binary("logical_or")


# --- where, clamp, isclose ----------------------------------------------------------------------

_WHERE = get_op("where")
_MAX = get_op("max")
_MIN = get_op("min")


def _torch() -> Any:
    return torch  # an optional dependency: imported on first use


def _where_golden(condition: Any, true_value: Any, false_value: Any, **_ttnn_kwargs: Any) -> Any:
    torch = _torch()
    values = [v for v in (true_value, false_value) if isinstance(v, torch.Tensor)]
    like = values[0] if values else condition
    f32 = [
        v.to(torch.float32) if isinstance(v, torch.Tensor) else float(v)
        for v in (true_value, false_value)
    ]
    out = torch.where(condition != 0, *(torch.as_tensor(v, dtype=torch.float32) for v in f32))
    return out.to(like.dtype)


@register_python_operation(name="ttnn.where", golden_function=_where_golden)
def where(
    condition: Any,
    true_value: Any,
    false_value: Any,
    *,
    memory_config: Any = None,
    output_tensor: Any = None,
) -> Tensor:
    """ttnn.where(condition, true_value, false_value, *, memory_config=None, output_tensor=None)

    ``true_value`` where ``condition`` is nonzero, else ``false_value`` (torch.where on
    ``condition != 0``).  The values are tensors or numbers; all three broadcast.  The
    result takes the first value tensor's dtype (the condition's if both are numbers) and
    the condition's layout and memory config.  Float values select with the device op
    registry's ``block.where`` on the normalised condition; integer values exactly.
    """
    op = "ttnn.where"
    cond = tensor_arg(op, "condition", condition)
    named = {"true_value": true_value, "false_value": false_value}
    values = {p: v for p, v in named.items() if isinstance(v, Tensor)}
    common_device(op, _placed({"condition": cond, **values}, output_tensor, op))
    integer = integer_mode(op, values, ALL_DTYPES) if values else cond.dtype not in FLOAT_DTYPES
    broadcast_shape(op, cond.shape, *(v.shape for v in values.values()))
    picked = [
        read(v, integer) if isinstance(v, Tensor) else scalar_value(op, p, v, integer)
        for p, v in named.items()
    ]
    truth = np.not_equal(read(cond, cond.dtype not in FLOAT_DTYPES), 0)
    if integer:
        result = np.where(truth, *picked)
    else:
        result = _WHERE.impl(truth.astype(np.float32), *picked)
    out_dtype = next(iter(values.values())).dtype if values else cond.dtype
    return store(
        op, result, cond, dtype=out_dtype, memory_config=memory_config, output_tensor=output_tensor
    )


def _clamp_golden(input_tensor: Any, min: Any = None, max: Any = None, **_ttnn_kwargs: Any) -> Any:
    torch = _torch()

    def bound(v: Any) -> Any:
        return v.to(torch.float32) if isinstance(v, torch.Tensor) else v

    out = torch.clamp(input_tensor.to(torch.float32), min=bound(min), max=bound(max))
    return out.to(input_tensor.dtype)


@register_python_operation(name="ttnn.clamp", golden_function=_clamp_golden)
def clamp(
    input_tensor: Any,
    min: Any = None,
    max: Any = None,
    *,
    memory_config: Any = None,
    output_tensor: Any = None,
) -> Tensor:
    """ttnn.clamp(input_tensor, min=None, max=None, *, memory_config=None, output_tensor=None)

    ``minimum(maximum(x, min), max)`` (torch.clamp: ``max`` wins where ``min > max``).
    Bounds are numbers or tensors that broadcast to ``input_tensor``; one may be None.
    Float operands use the device op registry's ``math.max`` / ``math.min`` in float32.
    """
    op = "ttnn.clamp"
    x = tensor_arg(op, "input_tensor", input_tensor)
    if min is None and max is None:
        raise OpParamError(f"{op}: min and max cannot both be None")
    bounds = {p: v for p, v in (("min", min), ("max", max)) if v is not None}
    tensors = {p: v for p, v in bounds.items() if isinstance(v, Tensor)}
    operands = {"input_tensor": x, **tensors}
    common_device(op, _placed(operands, output_tensor, op))
    integer = integer_mode(op, operands, ALL_DTYPES)
    if not all(broadcasts_to(t.shape, x.shape) for t in tensors.values()):
        raise OpShapeError(
            f"{op}: the bounds must broadcast to input_tensor's shape {list(x.shape)}"
        )
    value = read(x, integer)
    for param, (numpy_fn, spec) in (("min", (np.maximum, _MAX)), ("max", (np.minimum, _MIN))):
        if param not in bounds:
            continue
        bound = bounds[param]
        operand = (
            read(bound, integer)
            if isinstance(bound, Tensor)
            else scalar_value(op, param, bound, integer)
        )
        value = numpy_fn(value, operand) if integer else spec.impl(value, operand)
    return store(op, value, x, memory_config=memory_config, output_tensor=output_tensor)


def _isclose_golden(
    input_tensor_a: Any,
    input_tensor_b: Any,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool = False,
    **_ttnn_kwargs: Any,
) -> Any:
    torch = _torch()
    out = torch.isclose(
        input_tensor_a.to(torch.float32),
        input_tensor_b.to(torch.float32),
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
    )
    return out.to(input_tensor_a.dtype)


@register_python_operation(name="ttnn.isclose", golden_function=_isclose_golden)
def isclose(
    input_tensor_a: Any,
    input_tensor_b: Any,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool = False,
    *,
    memory_config: Any = None,
    output_tensor: Any = None,
) -> Tensor:
    """ttnn.isclose(input_tensor_a, input_tensor_b, rtol=1e-05, atol=1e-08, equal_nan=False, *,
    memory_config=None, output_tensor=None)

    1 where ``|a - b| <= atol + rtol * |b|`` (torch.isclose), else 0, in ``a``'s dtype.
    Computed in float32 on the decoded values; float dtypes only.
    """
    op = "ttnn.isclose"
    a = tensor_arg(op, "input_tensor_a", input_tensor_a)
    b = tensor_arg(op, "input_tensor_b", input_tensor_b)
    operands = {"input_tensor_a": a, "input_tensor_b": b}
    common_device(op, _placed(operands, output_tensor, op))
    integer_mode(op, operands, FLOAT_DTYPES)
    broadcast_shape(op, a.shape, b.shape)
    for param, value in (("rtol", rtol), ("atol", atol)):
        scalar_value(op, param, value, integer=False)
    with np.errstate(all="ignore"):
        close = np.isclose(
            read(a, False),
            read(b, False),
            rtol=float(rtol),
            atol=float(atol),
            equal_nan=bool(equal_nan),
        )
    return store(
        op, close.astype(np.float32), a, memory_config=memory_config, output_tensor=output_tensor
    )
