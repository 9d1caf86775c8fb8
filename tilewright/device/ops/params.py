"""Binding and checking of an op's scalar parameters and operand formats.

``bind_params(spec, args, kwargs)`` turns the extra arguments of a call such as
``ttl.math.clamp(x, -1.0, max=1.0)`` into the keyword dict ``spec.impl`` takes,
filling defaults, accepting the legacy keyword spellings in ``Param.aliases`` and
checking each value against its :class:`~.spec.ParamKind`.  ``check_formats``
rejects operand formats an op does not list.  The ``ttl`` layer calls both once per
expression node when the expression is built, never per tile.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tilewright.device.formats import data_type_name, data_type_named

from .op_errors import OpFormatError, OpParamError
from .spec import ALL_FORMATS, OpSpec, Param, ParamKind

__all__ = ["bind_params", "check_formats", "check_param", "format_name_of"]


def format_name_of(fmt: Any) -> str | None:
    """Canonical (ttnn) name of a data type given as a string or an enum member (by
    ``.name``: ttnn ``DataType``, ``tt::DataFormat``), else None (``device.formats``'
    table of data-type names)."""
    text = fmt if isinstance(fmt, str) else getattr(fmt, "name", None)
    if not isinstance(text, str):
        return None
    dtype = data_type_named(text)
    return data_type_name(dtype) if dtype is not None else None


def check_formats(spec: OpSpec, *formats: Any) -> None:
    """Raise :class:`OpFormatError` if an operand format is not in ``spec.formats``."""
    for fmt in formats:
        name = format_name_of(fmt)
        if name is None or name not in spec.formats:
            supported = ", ".join(sorted(spec.formats))
            raise OpFormatError(
                f"{spec.qualified_name} does not support operands of format {fmt!r}",
                hint=f"supported formats: {supported}; convert with ttl.math.typecast",
            )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) or (
        hasattr(value, "__float__") and hasattr(value, "dtype")  # numpy scalars
    )


def _ints(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(_is_int(v) for v in value)


def _natural(v: Any) -> Any:
    return int(v) if _is_int(v) and v >= 0 else None


def _positive(v: Any) -> Any:
    return int(v) if _is_int(v) and v > 0 else None


def _real(v: Any) -> Any:
    return float(v) if _is_real(v) else None


def _optional_real(v: Any) -> Any:
    return None if v is None else _real(v)


def _bool(v: Any) -> Any:
    return v if isinstance(v, bool) else None


def _dims(v: Any) -> Any:
    if _is_int(v):
        return (int(v),)
    return tuple(int(d) for d in v) if _ints(v) and len(v) > 0 else None


def _shape(v: Any) -> Any:
    if _is_int(v) and v > 0:
        return (int(v),)
    return tuple(int(s) for s in v) if _ints(v) and all(s > 0 for s in v) else None


def _optional_shape(v: Any) -> Any:
    return None if v is None else _shape(v)


def _tile(v: Any) -> Any:
    return tuple(int(s) for s in v) if _ints(v) and len(v) == 2 and all(s > 0 for s in v) else None


def _dtype(v: Any) -> Any:
    name = format_name_of(v)
    return name if name in ALL_FORMATS else None


def _layout(v: Any) -> Any:
    text = v if isinstance(v, str) else getattr(v, "name", None)
    if not isinstance(text, str):
        return None
    text = text.lower()
    return text if text in ("tile", "row_major") else None


_CHECKERS: dict[ParamKind, Callable[[Any], Any]] = {
    ParamKind.NATURAL: _natural,
    ParamKind.POSITIVE: _positive,
    ParamKind.FLOAT: _real,
    ParamKind.OPTIONAL_FLOAT: _optional_real,
    ParamKind.BOOL: _bool,
    ParamKind.DIMS: _dims,
    ParamKind.SHAPE: _shape,
    ParamKind.OPTIONAL_SHAPE: _optional_shape,
    ParamKind.TILE: _tile,
    ParamKind.DTYPE: _dtype,
    ParamKind.LAYOUT: _layout,
}
"""ParamKind -> normaliser returning the canonical value, or None if invalid
(``None`` is a valid result only for the OPTIONAL kinds, handled in check_param)."""


def check_param(spec: OpSpec, param: Param, value: Any) -> Any:
    """The canonical form of ``value`` for ``param`` (ints, floats, tuples, format names).

    Raises:
        OpParamError: naming the op, the parameter, the expected kind and the value.
    """
    optional = param.kind in (ParamKind.OPTIONAL_FLOAT, ParamKind.OPTIONAL_SHAPE)
    if value is None and optional:
        return None
    result = _CHECKERS[param.kind](value)
    if result is None:
        raise OpParamError(
            f"{spec.qualified_name}: parameter '{param.name}' must be a "
            f"{param.kind.value}, got {value!r}",
            hint=f"signature: {spec.signature()}",
        )
    return result


def bind_params(
    spec: OpSpec, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Bind the extra arguments of a call to ``spec.params``; return impl keywords.

    Args:
        spec: the op.
        args: positional arguments *after* the block operands.
        kwargs: keyword arguments (spec names or ``Param.aliases``).

    Raises:
        OpParamError: too many positionals, an unknown / duplicate keyword, a missing
            required parameter, or a value of the wrong kind.
    """
    kwargs = dict(kwargs or {})
    positional = [p for p in spec.params if not p.keyword_only]
    if len(args) > len(positional):
        raise OpParamError(
            f"{spec.qualified_name} takes {len(positional)} positional parameter(s) after "
            f"its operand(s), got {len(args)}",
            hint=f"signature: {spec.signature()}",
        )
    bound: dict[str, Any] = {p.name: v for p, v in zip(positional, args)}
    by_keyword = {alias: p for p in spec.params for alias in (p.name, *p.aliases)}
    for key, value in kwargs.items():
        param = by_keyword.get(key)
        if param is None:
            raise OpParamError(
                f"{spec.qualified_name} got an unexpected keyword argument '{key}'",
                hint=f"signature: {spec.signature()}",
            )
        if param.name in bound:
            raise OpParamError(
                f"{spec.qualified_name} got multiple values for parameter '{param.name}'",
                hint=f"signature: {spec.signature()}",
            )
        bound[param.name] = value
    result: dict[str, Any] = {}
    for param in spec.params:
        if param.name in bound:
            result[param.name] = check_param(spec, param, bound[param.name])
        elif param.required:
            raise OpParamError(
                f"{spec.qualified_name} is missing required parameter '{param.name}'"
                + (f" ({param.doc})" if param.doc else ""),
                hint=f"signature: {spec.signature()}",
            )
        else:
            result[param.name] = param.default
    return result
