"""Operation identity and Kernel-handle binding (reference B.9).

An operation's identity is ``module.qualname``, plus ``[captures=<sha256[:16]>]``
over a canonical encoding of the nonlocal values it captures (literals with floats
as hex, enum members such as ``ScalarType``, Kernel kinds, nested operation and
function identities, objects with ``_operation_identity_capture()``), so
factory-made operations with equal captures share an identity and different
captures give different ones.

Kernel handles are bound once, to a name and an operation identity, when an
operation that uses them is decorated; a handle already bound to another operation,
or reaching one operation under two names, is rejected.
"""

from __future__ import annotations

import hashlib
import inspect
from enum import Enum

from tilewright.compiler.record import OperationRecord
from tilewright.errors import InterfaceError
from tilewright.lang.selectors import Kernel

__all__ = ["bind_kernels", "encode_capture", "operation_identity"]


def encode_capture(value) -> bytes | None:
    """A canonical byte encoding of a capture, or None when it does not affect identity."""
    if value is None:
        return b"none"
    if isinstance(value, bool):
        return b"bool:true" if value else b"bool:false"
    if isinstance(value, int):
        return f"int:{value}".encode()
    if isinstance(value, float):
        return f"float:{value.hex()}".encode()
    if isinstance(value, str):
        data = value.encode()
        return f"str:{len(data)}:".encode() + data
    if isinstance(value, (tuple, list)):
        parts = []
        for element in value:
            enc = encode_capture(element)
            if enc is None:
                return None
            parts.append(f"{len(enc)}:".encode() + enc)
        return (b"tuple:" if isinstance(value, tuple) else b"list:") + b"".join(parts)
    if isinstance(value, Kernel):
        return f"kernel:{value.kind.value}".encode()
    if isinstance(value, Enum):
        return f"enum:{type(value).__qualname__}.{value.name}".encode()
    hook = getattr(value, "_operation_identity_capture", None)
    if callable(hook):
        return f"object:{hook()!r}".encode()
    record = getattr(value, "record", None)
    if isinstance(record, OperationRecord):  # a nested @ttl.operation
        return f"operation:{record.identity}".encode()
    if inspect.isfunction(value):
        return f"function:{value.__module__}.{value.__qualname__}".encode()
    return None


def operation_identity(fn) -> str:
    """``module.qualname[captures=<sha256[:16]>]`` (reference B.9)."""
    base = f"{fn.__module__}.{fn.__qualname__}"
    try:
        nonlocals = inspect.getclosurevars(fn).nonlocals
    except (TypeError, ValueError):
        return base
    encoded = []
    for name, value in sorted(nonlocals.items()):
        enc = encode_capture(value)
        if enc is None:
            continue
        key = name.encode()
        encoded.append(f"{len(key)}:".encode() + key + f"{len(enc)}:".encode() + enc)
    if not encoded:
        return base
    digest = hashlib.sha256(b"".join(encoded)).hexdigest()[:16]
    return f"{base}[captures={digest}]"


def bind_kernels(handles: dict[str, Kernel], identity: str, op_name: str, loc=None) -> None:
    """Bind each handle to (its name, the operation identity), once (reference B.2 / B.9)."""
    seen: dict[int, str] = {}
    for name, handle in handles.items():
        previous = seen.get(id(handle))
        if previous is not None:
            raise InterfaceError(
                f"one logical Kernel handle reached operation '{op_name}' under multiple names: "
                f"'{previous}' and '{name}'",
                loc=loc,
            )
        seen[id(handle)] = name
        if handle.operation is not None and (handle.operation, handle.name) != (identity, name):
            raise InterfaceError(
                f"logical Kernel '{name}' is already bound as '{handle.name}' to operation "
                f"'{handle.operation}'",
                loc=loc,
            )
    for name, handle in handles.items():
        handle.bind(name, identity)
