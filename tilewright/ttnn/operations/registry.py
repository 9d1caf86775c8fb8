"""The ttnn operation registry: ``Operation`` records, registration and golden functions.

Follows ``ttnn/ttnn/decorators.py`` (tt-metal digest §6): every ttnn operation is an
:class:`Operation` -- a callable that knows its fully qualified name (``"ttnn.add"``),
its torch golden function and how to move data into and out of that golden -- and
non-method operations are recorded in ``REGISTERED_OPERATIONS``.
``query_registered_operations`` lists them sorted by name, ``ttnn.experimental.*``
only on request; ``get_golden_function`` returns an operation's golden (raising a
:class:`MissingGoldenError` naming the operation when it has none);
``get_fallback_function`` runs the golden on ttnn tensors (inputs converted to torch,
outputs converted back with the first input tensor's dtype, layout and device).

Differences from ttnn, on purpose:

* Registration never assigns module attributes (ttnn ``setattr``s the op onto
  ``ttnn.<module>`` and creates modules in ``sys.modules``); the caller binds the
  returned operation to a name, as Tilewright's own modules do.
* Operations sort by name (ttnn's ``Operation.__gt__`` is inverted, which makes its
  ``sorted()`` order depend on the comparison Python picks).
* Comparison mode, tracing, graph capture and pre/post hooks are not modelled.
* A Tilewright error raised inside an operation gets the user's call site as its
  ``loc`` (the first frame outside the package), so it renders ``file:line`` and a caret.

This module knows nothing about tensors' contents; ``io`` stores results.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tilewright.device import session
from tilewright.device.ops import OpError, OpParamError
from tilewright.errors import TilewrightError, user_location
from tilewright.lazy import torch
from tilewright.ttnn import device_time
from tilewright.ttnn.convert import from_torch
from tilewright.ttnn.distributed import to_torch
from tilewright.ttnn.operations.io import guard_layout
from tilewright.ttnn.spmd import call_per_chip, mesh_of_arguments, param_names
from tilewright.ttnn.tensor import Tensor

__all__ = [
    "REGISTERED_OPERATIONS",
    "MissingGoldenError",
    "Operation",
    "RegisteredOperations",
    "RegistrationError",
    "attach_golden_function",
    "default_postprocess_golden_function_outputs",
    "default_preprocess_golden_function_inputs",
    "get_fallback_function",
    "get_golden_function",
    "query_registered_operations",
    "register_python_operation",
]

RULE_NO_GOLDEN = "ttnn-no-golden"
RULE_REGISTER = "ttnn-register"
EXPERIMENTAL_PREFIX = "ttnn.experimental."
_IGNORED_CALL_KEYWORDS = ("queue_id", "cq_id")  # one command queue: ttnn pops these too

Preprocess = Callable[[tuple, dict], tuple[tuple, dict]]
Postprocess = Callable[[Any, tuple, dict], Any]


class MissingGoldenError(OpError, RuntimeError):
    """``get_golden_function`` on an operation that has no golden function."""

    default_rule = RULE_NO_GOLDEN


class RegistrationError(OpError, RuntimeError):
    """A bad operation name or a name that is already registered."""

    default_rule = RULE_REGISTER


# --- golden data movement (ttnn defaults) ------------------------------------------------------


def _map_tensors(value: Any, convert: Callable[[Any], Any], kind: type) -> Any:
    """``value`` with every ``kind`` instance (also inside lists and tuples) converted."""
    if isinstance(value, kind):
        return convert(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(v, convert, kind) for v in value)
    return value


def _ttnn_tensors(value: Any) -> list:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _ttnn_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _ttnn_tensors(v)]
    return []


def default_preprocess_golden_function_inputs(
    function_args: tuple, function_kwargs: dict
) -> tuple[tuple, dict]:
    """ttnn tensors among the arguments (also in lists and tuples) -> torch tensors."""
    args = tuple(_map_tensors(a, to_torch, Tensor) for a in function_args)
    kwargs = {k: _map_tensors(v, to_torch, Tensor) for k, v in function_kwargs.items()}
    return args, kwargs


def default_postprocess_golden_function_outputs(
    output: Any, function_args: tuple, function_kwargs: dict
) -> Any:
    """torch outputs -> ttnn tensors with the first input tensor's dtype, layout and device.

    A rank-0/1 result of a TILE-layout input is stored ROW_MAJOR (``io.guard_layout``).
    """
    inputs = _ttnn_tensors((function_args, function_kwargs))
    first = inputs[0] if inputs else None

    def convert(out: Any) -> Any:
        if first is None:
            return from_torch(out)
        layout, dtype = guard_layout(out.dim(), first.layout, first.dtype)
        return from_torch(out, dtype=dtype, layout=layout, device=first.device())

    if not isinstance(output, (torch.Tensor, list, tuple)):
        raise OpParamError(f"a golden function returned {type(output).__name__}, not torch tensors")
    return _map_tensors(output, convert, torch.Tensor)


# --- the operation record --------------------------------------------------------------------


@dataclass(eq=False)
class Operation:
    """A registered ttnn operation (``ttnn.decorators.Operation``).

    Calling it calls ``function``.  ``__doc__`` is the function's docstring and
    ``inspect.signature`` sees the function's signature.

    Attributes:
        python_fully_qualified_name: ``"ttnn.add"``.
        function: the implementation.
        golden_function: the torch reference (torch tensors in, torch tensors out), or None.
        preprocess_golden_function_inputs: ``(args, kwargs) -> (args, kwargs)`` for the golden.
        postprocess_golden_function_outputs: ``(output, args, kwargs) -> ttnn output``.
        is_cpp_operation: always False here (every operation is Python).
        is_experimental: registered as experimental.
    """

    python_fully_qualified_name: str
    function: Callable[..., Any]
    golden_function: Callable[..., Any] | None = None
    preprocess_golden_function_inputs: Preprocess | None = None
    postprocess_golden_function_outputs: Postprocess | None = None
    is_cpp_operation: bool = False
    is_experimental: bool = False

    def __post_init__(self) -> None:
        attach_golden_function(
            self,
            self.golden_function,
            preprocess_golden_function_inputs=self.preprocess_golden_function_inputs,
            postprocess_golden_function_outputs=self.postprocess_golden_function_outputs,
        )
        self.__doc__ = self.function.__doc__
        self.__wrapped__ = self.function  # inspect.signature follows __wrapped__

    @property
    def __name__(self) -> str:
        return self.python_fully_qualified_name

    def __call__(self, *function_args: Any, **function_kwargs: Any) -> Any:
        for key in _IGNORED_CALL_KEYWORDS:
            function_kwargs.pop(key, None)
        try:
            mesh = mesh_of_arguments(function_args, function_kwargs, param_names(self.function))
            if mesh is not None:  # mesh tensors: the operation runs on every chip
                return call_per_chip(self.function, mesh, function_args, function_kwargs)
            if not session.recording_ops():
                return self.function(*function_args, **function_kwargs)
            launched = len(session.OPTIONS.ops)
            result = self.function(*function_args, **function_kwargs)
            if len(session.OPTIONS.ops) == launched:  # no device program ran: model its own
                device_time.record(
                    self.python_fully_qualified_name, function_args, function_kwargs, result
                )
            return result
        except TilewrightError as exc:
            if exc.loc is None:  # resolved only when raising: point at the user's call
                exc.loc = user_location()
            raise

    def __hash__(self) -> int:
        return hash(self.python_fully_qualified_name)

    def __repr__(self) -> str:
        return f"<ttnn operation {self.python_fully_qualified_name}>"


class RegisteredOperations:
    """The set of registered operations, unique by fully qualified name."""

    def __init__(self) -> None:
        self._by_name: dict[str, Operation] = {}

    def __iter__(self) -> Iterator[Operation]:
        return iter(list(self._by_name.values()))

    def __len__(self) -> int:
        return len(self._by_name)

    def __contains__(self, operation: object) -> bool:
        if isinstance(operation, str):
            return operation in self._by_name
        name = getattr(operation, "python_fully_qualified_name", None)
        return name is not None and self._by_name.get(name) is operation

    def add(self, operation: Operation, name: str | None = None) -> None:
        """Record ``operation``; a second operation with the same name is an error."""
        key = name or operation.python_fully_qualified_name
        if key in self._by_name:
            raise RegistrationError(
                f'operation with name "{key}" is already registered',
                hint="pick another name, or discard the old one: REGISTERED_OPERATIONS.discard(op)",
            )
        self._by_name[key] = operation

    def discard(self, operation: Operation) -> None:
        """Forget ``operation`` (no error if it is not registered)."""
        if self._by_name.get(operation.python_fully_qualified_name) is operation:
            del self._by_name[operation.python_fully_qualified_name]

    def get(self, name: str) -> Operation | None:
        return self._by_name.get(name)


REGISTERED_OPERATIONS = RegisteredOperations()


def query_registered_operations(include_experimental: bool = False) -> list[Operation]:
    """Registered ``ttnn.*`` operations by name, then (on request) ``ttnn.experimental.*``."""
    ordered = sorted(REGISTERED_OPERATIONS, key=lambda op: op.python_fully_qualified_name)
    experimental = [
        op for op in ordered if op.python_fully_qualified_name.startswith(EXPERIMENTAL_PREFIX)
    ]
    stable = [
        op
        for op in ordered
        if op.python_fully_qualified_name.startswith("ttnn.") and op not in experimental
    ]
    return stable + experimental if include_experimental else stable


# --- goldens -------------------------------------------------------------------------------------


def attach_golden_function(
    operation: Operation,
    golden_function: Callable[..., Any] | None,
    *,
    preprocess_golden_function_inputs: Preprocess | None = None,
    postprocess_golden_function_outputs: Postprocess | None = None,
) -> None:
    """Give ``operation`` a golden function (and optional data-movement hooks; None = default)."""
    target = _operation_of(operation)
    target.golden_function = golden_function
    target.preprocess_golden_function_inputs = (
        preprocess_golden_function_inputs or default_preprocess_golden_function_inputs
    )
    target.postprocess_golden_function_outputs = (
        postprocess_golden_function_outputs or default_postprocess_golden_function_outputs
    )


def get_golden_function(operation: Operation) -> Callable[..., Any]:
    """The torch golden of ``operation``.

    Raises:
        MissingGoldenError: the operation has none.
    """
    target = _operation_of(operation)
    if target.golden_function is None:
        raise MissingGoldenError(
            f"{target.python_fully_qualified_name} does not have a golden function",
            hint="attach one with ttnn.attach_golden_function(op, golden_function)",
        )
    return target.golden_function


def get_fallback_function(operation: Operation) -> Callable[..., Any]:
    """A function with the operation's calling convention that runs its golden on the host."""
    target = _operation_of(operation)
    golden = get_golden_function(target)

    def fallback_function(*function_args: Any, **function_kwargs: Any) -> Any:
        preprocess = (
            target.preprocess_golden_function_inputs or default_preprocess_golden_function_inputs
        )
        postprocess = (
            target.postprocess_golden_function_outputs
            or default_postprocess_golden_function_outputs
        )
        args, kwargs = preprocess(function_args, function_kwargs)
        return postprocess(golden(*args, **kwargs), function_args, function_kwargs)

    fallback_function.__name__ = f"{target.python_fully_qualified_name}.fallback"
    return fallback_function


def _operation_of(operation: Any) -> Operation:
    """The :class:`Operation` behind ``operation`` (an operation or a method wrapper)."""
    target = getattr(operation, "operation", operation)
    if not isinstance(target, Operation):
        raise OpParamError(
            f"{operation!r} is not a ttnn operation",
            hint="pass a registered operation such as ttnn.add",
        )
    return target


# --- registration -----------------------------------------------------------------------------


def _check_name(name: str) -> None:
    module_path, _, func_name = name.rpartition(".")
    if not module_path or not func_name:
        raise RegistrationError(f"operation name {name!r} must have at least two dotted parts")
    if not (module_path == "ttnn" or module_path.startswith("ttnn.")):
        raise RegistrationError(f'operation name {name!r} must start with "ttnn."')


def _with_doc(function: Callable[..., Any], doc: str) -> Callable[..., Any]:
    """A wrapper of ``function`` documented by ``doc`` (the function itself is untouched)."""

    @functools.wraps(function)
    def documented(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    documented.__doc__ = doc
    return documented


def register_python_operation(
    *,
    name: str,
    is_experimental: bool = False,
    is_method: bool = False,
    golden_function: Callable[..., Any] | None = None,
    preprocess_golden_function_inputs: Preprocess | None = None,
    postprocess_golden_function_outputs: Postprocess | None = None,
    doc: str | None = None,
) -> Callable[[Callable[..., Any]], Any]:
    """Decorator that makes a function a ttnn :class:`Operation` called ``name``.

    Args:
        name: fully qualified name, ``"ttnn.<...>.<op>"``.
        is_experimental: mark the operation experimental.
        is_method: return a method wrapper ``(self, *args, **kwargs)`` (``.operation`` is
            the Operation) and do not register it (ttnn: methods are not exported).
        golden_function: torch reference; attach later with :func:`attach_golden_function`.
        preprocess_golden_function_inputs: golden input hook (default: ttnn -> torch).
        postprocess_golden_function_outputs: golden output hook (default: torch -> ttnn).
        doc: docstring to use instead of the function's.

    Returns:
        The decorator; it returns the Operation (or the method wrapper).

    Raises:
        RegistrationError: a bad name or one that is already registered.
    """
    _check_name(name)

    def decorator(function: Callable[..., Any]) -> Any:
        if doc is not None:
            function = _with_doc(function, doc)
        operation = Operation(
            python_fully_qualified_name=name,
            function=function,
            golden_function=golden_function,
            preprocess_golden_function_inputs=preprocess_golden_function_inputs,
            postprocess_golden_function_outputs=postprocess_golden_function_outputs,
            is_cpp_operation=False,
            is_experimental=is_experimental,
        )
        if not is_method:
            REGISTERED_OPERATIONS.add(operation)
            return operation

        def method_call(self: Any, *function_args: Any, **function_kwargs: Any) -> Any:
            return operation(self, *function_args, **function_kwargs)

        method_call.__name__ = method_call.__qualname__ = name.rpartition(".")[2]
        method_call.__doc__ = operation.__doc__
        # Function attributes: mypy's function type declares neither.
        method_call.__wrapped__ = operation.function  # type: ignore[attr-defined]
        method_call.operation = operation  # type: ignore[attr-defined]
        return method_call

    return decorator
