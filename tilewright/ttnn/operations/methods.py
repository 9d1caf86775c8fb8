"""ttnn.Tensor methods that are operations: reflected arithmetic, ``/`` and ``reshape``.

ttnn defines these on its Tensor class as aliases of operations (registered with
``is_method=True``, so not listed in ``REGISTERED_OPERATIONS``).  ``tensor.py``
already spells ``+ - * @`` and unary ``-`` through ``ttnn.operations``; this table adds
the rest and :func:`install` puts each on ``Tensor`` unless the class already defines it.
Comparison operators (``==`` ...) are left out on purpose: they would make tensors
unhashable and break ``tensor in list``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilewright.ttnn.operations.data_movement import reshape
from tilewright.ttnn.operations.eltwise import run_binary
from tilewright.ttnn.operations.eltwise_rules import RULES, binary_golden
from tilewright.ttnn.operations.registry import get_golden_function, register_python_operation
from tilewright.ttnn.tensor import Tensor

__all__ = ["TENSOR_METHODS", "install"]


def _binary_method(name: str, rule_name: str, symbol: str, reflected: bool) -> Callable[..., Any]:
    rule = RULES[rule_name]
    forward = binary_golden(rule)

    def golden(input_tensor: Any, other: Any, **kwargs: Any) -> Any:
        return (
            forward(other, input_tensor, **kwargs)
            if reflected
            else forward(input_tensor, other, **kwargs)
        )

    def method(self: Tensor, other: Any) -> Tensor:
        return run_binary(rule, self, other, reflected=reflected)

    spelled = f"other {symbol} self" if reflected else f"self {symbol} other"
    method.__doc__ = f"``{spelled}`` ({rule.qualified_name}{', reflected' if reflected else ''})."
    return register_python_operation(
        name=f"ttnn.Tensor.{name}", is_method=True, golden_function=golden
    )(method)


def _reshape_golden(input_tensor: Any, *shape: Any, **_ttnn_kwargs: Any) -> Any:
    return get_golden_function(reshape)(input_tensor, _shape_of(shape))


def _shape_of(shape: tuple[Any, ...]) -> Any:
    return shape[0] if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else shape


@register_python_operation(
    name="ttnn.Tensor.reshape", is_method=True, golden_function=_reshape_golden
)
def _reshape_method(self: Tensor, *shape: Any) -> Tensor:
    """``tensor.reshape(shape)`` or ``tensor.reshape(d0, d1, ...)``: ttnn.reshape."""
    return reshape(self, _shape_of(shape))


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "__radd__": _binary_method("__radd__", "add", "+", reflected=True),
    "__rsub__": _binary_method("__rsub__", "subtract", "-", reflected=True),
    "__rmul__": _binary_method("__rmul__", "multiply", "*", reflected=True),
    "__truediv__": _binary_method("__truediv__", "divide", "/", reflected=False),
    "__rtruediv__": _binary_method("__rtruediv__", "divide", "/", reflected=True),
    "reshape": _reshape_method,
}
"""Tensor attribute name -> method wrapper (``.operation`` is its ttnn Operation)."""


def install() -> None:
    """Put every method of :data:`TENSOR_METHODS` that ``Tensor`` lacks on the class."""
    for name, method in TENSOR_METHODS.items():
        if name not in Tensor.__dict__:
            setattr(Tensor, name, method)
