"""What the compiler's passes know of an operation: a small frozen record, fixed at decoration.

``compiler.operation.Operation`` is the orchestrator (decoration, the call, the
launch); every pass below it -- the external-call front end, kernel-handle binding,
the splitter, composition, DFB allocation, the program builder -- reads an
:class:`OperationRecord` instead, so no pass depends on the orchestrator and a
pass's inputs are visible in its signature.  :class:`ComposableOperation` is how
composition sees another operation it expands (by the record and split plan it
exposes, never by its class).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tilewright.compiler.interface import Interface
    from tilewright.compiler.source import FunctionSource
    from tilewright.compiler.split.plan import SplitPlan
    from tilewright.lang.extern.plan import ExternPlan

__all__ = ["ComposableOperation", "OperationRecord"]


@dataclass(frozen=True, slots=True)
class OperationRecord:
    """One ``@ttl.operation``: its function, names, source, interface and identity."""

    fn: Callable[..., object]
    name: str  # the function's name: what diagnostics call the operation
    qualname: str  # module.qualname: the external-call plan's operation name
    source: FunctionSource
    interface: Interface
    identity: str  # reference B.9: module.qualname[captures=...]
    has_grid: bool  # a grid= was given (an operation without one only expands into callers)

    @property
    def multi_kernel(self) -> bool:
        """Explicit ``@ttl.compute`` / ``@ttl.datamovement`` kernel functions (else unified)."""
        return self.interface.multi_kernel


class ComposableOperation(Protocol):
    """An operation as composition sees it: its record and, when unified, its split plan."""

    @property
    def record(self) -> OperationRecord: ...

    @property
    def split_plan(self) -> SplitPlan | None: ...

    @property
    def extern_plan(self) -> ExternPlan | None:
        """Its validated external calls (composition copies them into the caller)."""
