"""Operation runtime resources: the typed records a ``runtime_resource_factory`` returns
(reference C.11; tt-lang's "Operation runtime resources").

``@ttl.operation(runtime_resource_factory=make_resources)`` calls
``make_resources(tensors=..., core_ranges=..., first_free_semaphore_id=...)`` once per
device execution.  It returns a :class:`ProgramRuntimeResources`: caller-defined
program semaphores (``ttnn.SemaphoreDescriptor``), per logical kernel the per-node
runtime-argument words (``get_arg_val`` in the kernel's external C++) and JIT
definitions (``#define`` for its external C++), and host objects to keep alive.

The records are frozen and hold tuples; each remembers the user's line that built it,
so the planner (``compiler.runtime_resources``) points its diagnostics there.  Their
constructors check what one record can check (types, tuples, strings); rules across
records -- kernels of this operation, nodes inside the grid, semaphore ids -- are the
planner's.  Fabric managers (``FabricManagerClaim`` ...) are not modelled.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field
from typing import Any

from tilewright.errors import InterfaceError, SourceLoc, user_location

__all__ = [
    "CoreRuntimeArgs",
    "KernelDefine",
    "KernelRuntimeResources",
    "ProgramRuntimeResources",
]

_MACRO = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _error(record: str, message: str) -> InterfaceError:
    return InterfaceError(f"ttl.{record}: {message}", loc=user_location(), rule="runtime-resources")


def _tuple(record: str, name: str, value: object) -> tuple:
    if not isinstance(value, tuple):
        raise _error(record, f"{name} must be a tuple, got {type(value).__name__}")
    return value


def _here(record: object) -> None:
    object.__setattr__(record, "loc", user_location())


@dataclass(frozen=True, slots=True)
class KernelDefine:
    """``ttl.KernelDefine(name, value)``: ``#define name value`` for the kernel's external C++
    (a JIT compilation input: part of the program's identity)."""

    name: str
    value: str
    loc: SourceLoc | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        _here(self)
        for what, v in (("name", self.name), ("value", self.value)):
            if not isinstance(v, str):
                raise _error("KernelDefine", f"{what} must be a string, got {type(v).__name__}")
        if not _MACRO.match(self.name):
            raise _error("KernelDefine", f"name {self.name!r} is not a C++ macro name")
        if "\n" in self.value:
            raise _error("KernelDefine", f"value of {self.name} must be one line")


@dataclass(frozen=True, slots=True)
class CoreRuntimeArgs:
    """``ttl.CoreRuntimeArgs(core, values)``: one node's runtime-argument words (uint32,
    ``get_arg_val<uint32_t>(i)``); the words may change from one execution to the next."""

    core: object
    values: tuple
    loc: SourceLoc | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        _here(self)
        values = _tuple("CoreRuntimeArgs", "values", self.values)
        for i, v in enumerate(values):
            if isinstance(v, bool):
                raise _error(
                    "CoreRuntimeArgs", f"values[{i}] is a bool; runtime arguments are integers"
                )
            try:
                word = operator.index(v)
            except TypeError:
                raise _error(
                    "CoreRuntimeArgs",
                    f"values[{i}] is {type(v).__name__} {v!r}, not an integer",
                ) from None
            if not -(1 << 31) <= word < 1 << 32:
                raise _error("CoreRuntimeArgs", f"values[{i}] = {word} does not fit 32 bits")

    @property
    def node(self) -> tuple[int, int]:
        """The node's (x, y), from a ``ttnn.CoreCoord`` or an ``(x, y)`` pair."""
        c: Any = self.core
        if hasattr(c, "x") and hasattr(c, "y"):
            return (int(c.x), int(c.y))
        if isinstance(c, tuple) and len(c) == 2 and all(isinstance(v, int) for v in c):
            return (c[0], c[1])
        raise InterfaceError(
            f"ttl.CoreRuntimeArgs: core must be a ttnn.CoreCoord, got {type(c).__name__} {c!r}",
            loc=self.loc,
            rule="runtime-resources",
        )

    def words(self) -> tuple[int, ...]:
        return tuple(operator.index(v) & 0xFFFFFFFF for v in self.values)


@dataclass(frozen=True, slots=True)
class KernelRuntimeResources:
    """``ttl.KernelRuntimeResources(kernel, runtime_args=(), defines=())``: what one logical
    kernel (a ``KernelKind`` member, ``ttl.PIPE_SOURCE_KERNEL`` or a ``ttl.Kernel`` handle
    of the operation) gets."""

    kernel: object
    runtime_args: tuple = ()
    defines: tuple = ()
    loc: SourceLoc | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        _here(self)
        for i, a in enumerate(_tuple("KernelRuntimeResources", "runtime_args", self.runtime_args)):
            if not isinstance(a, CoreRuntimeArgs):
                raise _error(
                    "KernelRuntimeResources",
                    f"runtime_args[{i}] must be a ttl.CoreRuntimeArgs, got {type(a).__name__}",
                )
        names: set[str] = set()
        for i, d in enumerate(_tuple("KernelRuntimeResources", "defines", self.defines)):
            if not isinstance(d, KernelDefine):
                raise _error(
                    "KernelRuntimeResources",
                    f"defines[{i}] must be a ttl.KernelDefine, got {type(d).__name__}",
                )
            if d.name in names:
                raise _error("KernelRuntimeResources", f"define {d.name} is given twice")
            names.add(d.name)


@dataclass(frozen=True, slots=True)
class ProgramRuntimeResources:
    """``ttl.ProgramRuntimeResources(semaphore_descriptors=(), kernel_resources=(),
    lifetimes=(), fabric_connections=())``: one execution's runtime resources."""

    semaphore_descriptors: tuple = ()
    kernel_resources: tuple = ()
    lifetimes: tuple = ()
    fabric_connections: tuple = ()
    loc: SourceLoc | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        _here(self)
        for name in (
            "semaphore_descriptors",
            "kernel_resources",
            "lifetimes",
            "fabric_connections",
        ):
            _tuple("ProgramRuntimeResources", name, getattr(self, name))
        for i, k in enumerate(self.kernel_resources):
            if not isinstance(k, KernelRuntimeResources):
                raise _error(
                    "ProgramRuntimeResources",
                    f"kernel_resources[{i}] must be a ttl.KernelRuntimeResources, got "
                    f"{type(k).__name__}",
                )
        if self.fabric_connections:
            raise _error(
                "ProgramRuntimeResources",
                "fabric_connections need external fabric managers, which Tilewright does not "
                "model (reference C.12)",
            )
