"""Logical kernels and their selectors (reference B.6, B.7): one representation for every layer.

A *selector* names the logical kernel(s) a statement, external call or kernel
function runs on: a ``KernelKind`` member (the canonical kernel of that kind), the
implicit pipe-source data-movement kernel (``PIPE_SOURCE_KERNEL``), an
operation-local ``ttl.Kernel`` handle, a ``|`` union of KernelKind members, or a
tuple of selectors.

A selected kernel is a :class:`LogicalKernel` -- the same frozen value in the
splitter's plan, in slot assignment (``compiler.capacity``), in reset participants
and in external calls, whose per-kernel variants are keyed by
:attr:`LogicalKernel.keys` (``kernel:<name>``, ``pipe_source``, ``kind:<kind>``,
``*``).  :func:`kernel_of` maps a selector object to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from tilewright.errors import InterfaceError, SourceLoc

__all__ = [
    "COMPUTE",
    "DATA_MOVEMENT",
    "PIPE_SOURCE",
    "PIPE_SOURCE_KERNEL",
    "Kernel",
    "KernelKind",
    "LogicalKernel",
    "PipeSourceKernel",
    "format_kernels",
    "handle_key",
    "kernel_of",
    "kind_key",
    "logical_kernel_of",
    "selector_kernels",
]

_KIND_ORDER = {"compute": 0, "data_movement": 1}
_ROLE_ORDER = {"canonical": 0, "ordinal": 0, "pipe_source": 1, "explicit": 2}


@dataclass(frozen=True, slots=True)
class LogicalKernel:
    """One logical kernel of an operation.

    ``role`` is ``"canonical"`` (the kind's default kernel, selected by a
    ``KernelKind`` member), ``"pipe_source"`` (the implicit data-movement kernel that
    runs ``if_src`` callbacks), ``"explicit"`` (a ``ttl.Kernel`` handle, identified as
    the reference binds it: its ``name`` and the ``operation`` identity it is bound to
    (B.9), so the handles of two factory products with equal captures are one logical
    kernel and with different captures two) or ``"ordinal"`` (the ``order``-th kernel
    function of an explicit multi-kernel operation without selectors).  ``loc`` (the
    statement that introduced it) and ``handle`` do not take part in equality.
    """

    kind: str
    role: str
    name: str = ""
    operation: str = ""
    order: int = 0
    loc: SourceLoc | None = field(default=None, compare=False)
    handle: object = field(default=None, compare=False)

    def describe(self) -> str:
        """The reference's spelling: ``compute``, ``data_movement kernel 'reader'``."""
        if self.role == "canonical":
            return self.kind
        return f"{self.kind} kernel '{self.name}'"

    def sort_key(self) -> tuple[int, int, int, str, str]:
        """Reference B.7 order: kind, implicit before explicit, then position or name (and the
        bound operation, for handles of one name from different operations)."""
        return (
            _KIND_ORDER[self.kind],
            _ROLE_ORDER[self.role],
            self.order,
            self.name,
            self.operation,
        )

    @property
    def function_name(self) -> str:
        """The kernel function's name in a generated body (its logical identity)."""
        if self.role == "canonical":
            return self.kind
        if self.role == "pipe_source":
            return "pipe_source"
        return self.name

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys that may name this kernel in a per-kernel mapping, most specific first."""
        if self.role == "explicit":
            return (handle_key(self.name), kind_key(self.kind), "*")
        if self.role == "pipe_source":
            return ("pipe_source", kind_key(self.kind), "*")
        return (kind_key(self.kind), "*")

    @property
    def key(self) -> str:
        """The key a selector of exactly this kernel writes (``kernel:<name>``, ``kind:compute``)."""
        return self.keys[0]


def kind_key(kind: str) -> str:
    """The key of a ``KernelKind`` member in a per-kernel mapping (``kind:compute``)."""
    return f"kind:{kind}"


def handle_key(name: str) -> str:
    """The key of the ``ttl.Kernel`` handle bound to ``name`` (``kernel:reader``)."""
    return f"kernel:{name}"


COMPUTE = LogicalKernel("compute", "canonical")
DATA_MOVEMENT = LogicalKernel("data_movement", "canonical")
PIPE_SOURCE = LogicalKernel("data_movement", "pipe_source", "<pipe_source>")


def format_kernels(kernels) -> str:
    """``compute, data_movement`` in the reference's order."""
    return ", ".join(k.describe() for k in sorted(kernels, key=LogicalKernel.sort_key))


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


def kernel_of(selector: object) -> LogicalKernel | None:
    """The logical kernel one selector object denotes (None: not a selector, or an unbound handle)."""
    if isinstance(selector, KernelKind):
        return COMPUTE if selector is KernelKind.COMPUTE else DATA_MOVEMENT
    if isinstance(selector, PipeSourceKernel):
        return PIPE_SOURCE
    if isinstance(selector, Kernel) and selector.name is not None:
        return LogicalKernel(
            selector.kind.value,
            "explicit",
            selector.name,
            selector.operation or "",
            handle=selector,
        )
    return None


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
        return LogicalKernel(decorator_kind, "canonical", loc=loc)
    if isinstance(selector, PipeSourceKernel):
        if decorator_kind != "data_movement":
            raise InterfaceError(
                f"{deco}(kernel=ttl.PIPE_SOURCE_KERNEL): the pipe-source kernel is a "
                "data-movement kernel",
                loc=loc,
            )
        return LogicalKernel("data_movement", "pipe_source", PIPE_SOURCE.name, loc=loc)
    if isinstance(selector, Kernel):
        if selector.kind.value != decorator_kind:
            raise InterfaceError(
                f"{deco}(kernel=...) selects {selector!r}, a {selector.kind.value} kernel; the "
                f"decorator's kind is {decorator_kind}",
                loc=loc,
            )
        name = selector.name or fn_name
        return LogicalKernel(
            decorator_kind, "explicit", name, selector.operation or "", loc=loc, handle=selector
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
