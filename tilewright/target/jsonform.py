"""JSON form of a system descriptor, shaped like ``ttrt query``'s output (reference §9.1).

The whole :class:`SystemDescRoot` is written (version, schema_hash, ttmlir_git_hash,
product_identifier, system_desc) with FlatBuffer enum names (``"Wormhole_b0"``,
``"Host"``, ``"Float32"``), structs as objects (``{"y": 8, "x": 8}``), every scalar
including zeros, and capabilities as flatc prints bit flags: ``"HostMMIO"`` for 1 and the
number ``0`` for none.  :func:`from_json` is the exact inverse, so
``.ttsys → .json → .ttsys`` reproduces the bytes.  Like flatc, it also accepts enum numbers
and omitted scalars (0).

Both directions walk the field tables of :mod:`fields`.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from tilewright.errors import SystemDescError
from tilewright.target.fields import (
    SYSTEM_DESC_ROOT,
    EnumKind,
    FieldKind,
    Scalar,
    StringKind,
    StructSpec,
    TableSpec,
    VectorKind,
    value_problems,
)
from tilewright.target.model import SystemDescRoot

__all__ = ["from_json", "from_json_dict", "to_json", "to_json_dict"]


# --- writing ---------------------------------------------------------------------------------


def _flags_out(kind: EnumKind, value: int) -> int | str:
    # flatc: a mask made only of named bits prints as space-separated names, else a number.
    named = [row for row in kind.table.rows if row.member.value]
    names = [row.fb_name for row in named if value & row.member.value == row.member.value]
    covered = sum(row.member.value for row in named if row.fb_name in names)
    return " ".join(names) if value and covered == value else int(value)


def _out(kind: FieldKind, value: Any) -> Any:
    if isinstance(kind, Scalar):
        return value
    if isinstance(kind, EnumKind):
        return _flags_out(kind, value) if kind.is_flags else kind.table.fb_name(value)
    if isinstance(kind, StringKind):
        return value
    if isinstance(kind, StructSpec):
        return {name: _out(member, getattr(value, name)) for name, member in kind.members}
    if isinstance(kind, TableSpec):
        return {
            f.name: _out(f.kind, getattr(value, f.name))
            for f in kind.fields
            if getattr(value, f.name) is not None  # absent strings are omitted, as flatc does
        }
    return [_out(kind.elem, item) for item in value]


def to_json_dict(root: SystemDescRoot) -> dict[str, Any]:
    """The JSON object of a root (plain dicts, lists, strings and ints).

    Raises:
        SystemDescError: a value does not fit its FlatBuffer type (rule 0).
    """
    problems = value_problems(SYSTEM_DESC_ROOT, root)
    if problems:
        path, message = problems[0]
        _fail(path, message)
    result: dict[str, Any] = _out(SYSTEM_DESC_ROOT, root)
    return result


def to_json(root: SystemDescRoot, *, indent: int | None = 2) -> str:
    """JSON text of the whole root (§9.1 layout), newline-terminated."""
    return json.dumps(to_json_dict(root), indent=indent) + "\n"


# --- reading ---------------------------------------------------------------------------------


def _fail(path: str, message: str, rule: int = 0) -> NoReturn:
    raise SystemDescError(
        f"{path or 'JSON'}: {message}", field=path or None, rule=f"system-desc.{rule}"
    )


def _int(value: Any, scalar: Scalar, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(path, f"expected an integer ({scalar.name}), got {json.dumps(value)}")
    if not scalar.lo <= value <= scalar.hi:
        _fail(path, f"{value} does not fit {scalar.name}")
    return value


def _enum_in(kind: EnumKind, value: Any, path: str) -> Any:
    table = kind.table
    if kind.is_flags and isinstance(value, str):
        members = [table.from_fb_name(name) for name in value.split()]
        if any(m is None for m in members):
            _fail(
                path,
                f"{value!r} is not made of {table.name} names "
                f"({', '.join(r.fb_name for r in table.rows)})",
                kind.rule,
            )
        total = 0
        for member in members:
            if member is not None:
                total |= member.value
        return table.enum_type(total)
    member = (
        table.from_fb_name(value)
        if isinstance(value, str)
        else (
            table.from_fb(_int(value, kind.scalar, path)) if not isinstance(value, bool) else None
        )
    )
    if member is None:
        _fail(
            path,
            f"{json.dumps(value)} is not a valid {table.name} ({table.fb_values()})",
            kind.rule,
        )
    return member


def _in(kind: FieldKind, value: Any, path: str) -> Any:
    if isinstance(kind, Scalar):
        return _int(value, kind, path)
    if isinstance(kind, EnumKind):
        return _enum_in(kind, value, path)
    if isinstance(kind, StringKind):
        if not isinstance(value, str):
            _fail(path, f"expected a string, got {json.dumps(value)}")
        return value
    if isinstance(kind, StructSpec):
        return kind.cls(
            **_object(
                kind.name,
                value,
                path,
                [(name, member, True, None, 0) for name, member in kind.members],
            )
        )
    if isinstance(kind, TableSpec):
        # Like flatc, an omitted scalar means its default (0); offsets must be present.
        return kind.cls(
            **_object(
                kind.name,
                value,
                path,
                [
                    (
                        f.name,
                        f.kind,
                        not f.optional and not isinstance(f.kind, Scalar | EnumKind),
                        f.default,
                        f.rule,
                    )
                    for f in kind.fields
                ],
            )
        )
    if not isinstance(value, list):
        _fail(path, f"expected a list, got {json.dumps(value)[:40]}")
    assert isinstance(kind, VectorKind)
    return tuple(_in(kind.elem, item, f"{path}[{i}]") for i, item in enumerate(value))


def _object(
    name: str, value: Any, path: str, members: list[tuple[str, FieldKind, bool, Any, int]]
) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(path, f"expected a {name} object, got {json.dumps(value)[:40]}")
    known = {m[0] for m in members}
    unknown = sorted(set(value) - known)
    if unknown:
        _fail(path, f"unknown {name} field(s) {unknown} (known: {', '.join(sorted(known))})")
    out: dict[str, Any] = {}
    for key, kind, required, default, rule in members:
        sub = f"{path}.{key}" if path else key
        if key in value:
            out[key] = _in(kind, value[key], sub)
        elif required:
            _fail(sub, f"required {name} field '{key}' is missing", rule)
        else:
            out[key] = default
    return out


def from_json_dict(data: Any) -> SystemDescRoot:
    """Inverse of :func:`to_json_dict`.

    Raises:
        SystemDescError: wrong shape, unknown names or out-of-range values, naming the path.
    """
    root: SystemDescRoot = _in(SYSTEM_DESC_ROOT, data, "")
    return root


def from_json(text: str | bytes) -> SystemDescRoot:
    """Parse the JSON text written by :func:`to_json` (or flatc / ``ttrt query``)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as err:  # JSONDecodeError, bad UTF-8, digit limits
        raise SystemDescError(f"not JSON: {err}") from None
    return from_json_dict(data)
