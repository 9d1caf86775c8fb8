"""Logical-kernel selectors: ``KernelKind``, ``Kernel`` handles, ``PIPE_SOURCE_KERNEL`` (reference B.6).

A selector names the logical kernel(s) a statement, external call or kernel
function runs on: a ``KernelKind`` member (the canonical kernel of that kind), the
implicit pipe-source data-movement kernel, an operation-local ``ttl.Kernel``
handle, a ``|`` union of KernelKind members, or a tuple of selectors.
"""

from __future__ import annotations

from enum import Enum

from tilewright.compiler.capacity import LogicalKernel
from tilewright.errors import InterfaceError, SourceLoc

__all__ = [
    "KernelKind",
    "Kernel",
    "PIPE_SOURCE_KERNEL",
    "PipeSourceKernel",
    "logical_kernel_of",
    "selector_kernels",
]


class KernelKind(Enum):
    """The two kinds of logical kernel."""

    COMPUTE = "compute"
    DATA_MOVEMENT = "data_movement"

    def __or__(self, other):
        if isinstance(other, KernelKind):
            return (self, other) if self is not other else (self,)
        if isinstance(other, tuple) and all(isinstance(o, KernelKind) for o in other):
            return (self, *[o for o in other if o is not self])
        raise InterfaceError(
            "kernel kind union operands must be KernelKind members; use a tuple to include "
            "operation-local Kernel handles"
        )

    __ror__ = __or__


class PipeSourceKernel:
    """The compiler-owned data-movement kernel that runs PipeNet source callbacks."""

    kind = KernelKind.DATA_MOVEMENT
    role = "pipe_source"

    def __repr__(self) -> str:
        return "ttl.PIPE_SOURCE_KERNEL"


PIPE_SOURCE_KERNEL = PipeSourceKernel()


class Kernel:
    """An operation-local logical kernel handle: ``ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)``.

    Bound once, to a name and an operation identity, when an operation that uses it
    is registered (reference B.2 / B.9); equality of an unbound handle is an error.
    """

    __slots__ = ("kind", "name", "operation", "__weakref__")

    def __init__(self, kind: KernelKind) -> None:
        if not isinstance(kind, KernelKind):
            raise InterfaceError(f"ttl.Kernel(kind) takes a ttl.KernelKind member, got {kind!r}")
        self.kind = kind
        self.name: str | None = None
        self.operation: str | None = None

    def bind(self, name: str, operation: str) -> None:
        if self.operation is not None and self.operation != operation:
            raise InterfaceError(
                f"Kernel handle '{self.name}' is bound to operation '{self.operation}'; "
                f"it cannot also be used by '{operation}'"
            )
        if self.name is not None and self.name != name and self.operation == operation:
            raise InterfaceError(
                f"Kernel handle '{self.name}' reaches operation '{operation}' under two names "
                f"('{self.name}' and '{name}')"
            )
        self.name, self.operation = name, operation

    def _check_bound(self) -> None:
        if self.name is None:
            raise InterfaceError(
                "an unbound ttl.Kernel handle has no identity yet (equality / hash)"
            )

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        self._check_bound()
        if isinstance(other, Kernel):
            other._check_bound()
            return (self.name, self.operation) == (other.name, other.operation)
        return NotImplemented

    def __hash__(self) -> int:
        self._check_bound()
        return hash((self.name, self.operation))

    def __repr__(self) -> str:
        name = f" '{self.name}'" if self.name else ""
        return f"ttl.Kernel({self.kind.name}){name}"


def logical_kernel_of(
    selector, decorator_kind: str, fn_name: str, loc: SourceLoc | None
) -> LogicalKernel:
    """The logical kernel a ``@ttl.compute(kernel=...)`` / ``@ttl.datamovement(kernel=...)`` selects."""
    deco = "@ttl.compute" if decorator_kind == "compute" else "@ttl.datamovement"
    if selector is None or isinstance(selector, KernelKind):
        kind = selector.value if selector is not None else decorator_kind
        if kind != decorator_kind:
            raise InterfaceError(
                f"{deco}(kernel={selector!r}) selects a {kind} kernel; the decorator's kind is {decorator_kind}",
                loc=loc,
            )
        return LogicalKernel(decorator_kind, "canonical", "", 0, loc)
    if isinstance(selector, PipeSourceKernel):
        if decorator_kind != "data_movement":
            raise InterfaceError(
                f"{deco}(kernel=ttl.PIPE_SOURCE_KERNEL): the pipe-source kernel is a "
                "data-movement kernel",
                loc=loc,
            )
        return LogicalKernel("data_movement", "pipe_source", "", 0, loc)
    if isinstance(selector, Kernel):
        if selector.kind.value != decorator_kind:
            raise InterfaceError(
                f"{deco}(kernel=...) selects {selector!r}, a {selector.kind.value} kernel; the "
                f"decorator's kind is {decorator_kind}",
                loc=loc,
            )
        return LogicalKernel(
            decorator_kind, "explicit", selector.name or fn_name, 0, loc, handle=selector
        )
    raise InterfaceError(
        f"{deco}(kernel=...) takes one selector (a KernelKind member, ttl.PIPE_SOURCE_KERNEL or a "
        f"ttl.Kernel handle), got {selector!r}",
        loc=loc,
    )


def selector_kernels(selector: object) -> tuple[object, ...]:
    """Flatten a selector (member, handle, union tuple, tuple) into its parts."""
    if isinstance(selector, tuple):
        out: list[object] = []
        for s in selector:
            out.extend(selector_kernels(s))
        return tuple(out)
    return (selector,)
