"""The methods of ``ttnn.Tensor`` that are ttnn functions: one table, installed once.

ttnn defines these on its Tensor class as aliases of functions: the arithmetic
operators and ``reshape`` are operations (registered with ``is_method=True``, so not
listed in ``REGISTERED_OPERATIONS``, each with its golden function), and the
conversions (``to_torch``, ``to``, ``to_layout``, host-side ``tensor[...]``) are the
functions of ``ttnn.convert``.  ``tensor.py`` sits below both (they build tensors),
so it defines none of them; :func:`install` puts every entry of
:data:`TENSOR_METHODS` and :data:`TENSOR_CONVERSIONS` on the class when
``ttnn.operations`` is imported (``ttnn``'s package import does that).  Comparison
operators (``==`` ...) are left out on purpose: they would make tensors unhashable
and break ``tensor in list``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilewright.device.engine import ACTIVE
from tilewright.ttnn import convert, distributed
from tilewright.ttnn.operations.data_movement import reshape
from tilewright.ttnn.operations.eltwise import neg, run_binary
from tilewright.ttnn.operations.eltwise_rules import RULES, binary_golden
from tilewright.ttnn.operations.matmul import matmul
from tilewright.ttnn.operations.registry import (
    Operation,
    get_golden_function,
    register_python_operation,
)
from tilewright.ttnn.tensor import Tensor
from tilewright.ttnn.types import MemoryConfig

__all__ = ["TENSOR_CONVERSIONS", "TENSOR_METHODS", "install"]


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


def _operation_method(name: str, operation: Operation, spelled: str) -> Callable[..., Any]:
    """``Tensor.<name>``: the registered ``operation`` on ``self`` and the arguments."""

    def method(self: Tensor, *args: Any) -> Tensor:
        return operation(self, *args)

    method.__doc__ = f"``{spelled}`` ({operation.python_fully_qualified_name})."
    return register_python_operation(
        name=f"ttnn.Tensor.{name}", is_method=True, golden_function=get_golden_function(operation)
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
    "__add__": _binary_method("__add__", "add", "+", reflected=False),
    "__radd__": _binary_method("__radd__", "add", "+", reflected=True),
    "__sub__": _binary_method("__sub__", "subtract", "-", reflected=False),
    "__rsub__": _binary_method("__rsub__", "subtract", "-", reflected=True),
    "__mul__": _binary_method("__mul__", "multiply", "*", reflected=False),
    "__rmul__": _binary_method("__rmul__", "multiply", "*", reflected=True),
    "__truediv__": _binary_method("__truediv__", "divide", "/", reflected=False),
    "__rtruediv__": _binary_method("__rtruediv__", "divide", "/", reflected=True),
    "__matmul__": _operation_method("__matmul__", matmul, "self @ other"),
    "__neg__": _operation_method("__neg__", neg, "-self"),
    "reshape": _reshape_method,
}
"""Tensor attribute name -> operation method wrapper (``.operation`` is its ttnn Operation)."""


def _to(self: Tensor, device: Any, memory_config: MemoryConfig | None = None) -> Tensor:
    """A device copy of a tensor (``Tensor.to(device, mem_cfg)``, ``ttnn.to_device``); onto a
    mesh device, one tensor per chip."""
    return distributed.to_device(self, device, memory_config)


def _getitem(self: Tensor, key: Any) -> Any:
    """``tensor[...]``: a page-unit slice inside a kernel, a ``ttnn.slice`` on the host."""
    if ACTIVE.run is not None:
        return self.slice_pages(key)
    return convert.host_slice(self, key)


TENSOR_CONVERSIONS: dict[str, Callable[..., Any]] = {
    "to_torch": distributed.to_torch,
    "to": _to,
    "to_layout": convert.to_layout,
    "__getitem__": _getitem,
}
"""Tensor attribute name -> conversion (host <-> device, layout, torch, host slicing)."""


def install() -> None:
    """Put every method of both tables on ``Tensor`` (the class defines none of them)."""
    for table in (TENSOR_METHODS, TENSOR_CONVERSIONS):
        for name, method in table.items():
            if Tensor.__dict__.get(name, method) is not method:
                raise TypeError(f"ttnn.Tensor defines {name} itself; it belongs to one table")
            setattr(Tensor, name, method)
