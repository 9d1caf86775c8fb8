"""The split plan of a unified operation: immutable data, computed before any AST change.

A plan says, for one unified body (after composition and setup lifting), which
logical kernels exist (``lang.selectors.LogicalKernel``), which kernels every statement is placed on
(``StatementPlacement``), who owns every DFB transaction (``Transaction``), which
inline acquisitions get a compiler-inserted release (``InlineAcquisition``), the
kernel requirement per kind, and the DFB lifecycle facts the allocator uses to
prove physical-index reuse (``LifecycleFacts``, reference C.7).  Everything here is
a frozen dataclass (reference B.7: "The split plan ... is immutable and computed
before any AST mutation"); code generation reads the plan and a private copy of
the analysed tree.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tilewright.lang.extern.plan import CallSite
from tilewright.lang.selectors import LogicalKernel

__all__ = [
    "Barrier",
    "DFBEvent",
    "DFBFacts",
    "InlineAcquisition",
    "LifecycleFacts",
    "NodeGuard",
    "SetupDecl",
    "SplitPlan",
    "StatementPlacement",
    "Transaction",
]


@dataclass(frozen=True, slots=True)
class StatementPlacement:
    """Where one statement of the analysed body runs.

    ``path`` addresses the statement in the analysed tree (child list indices);
    ``anchored`` says whether a TT-Lang call (or ownership) pinned it, as opposed to
    being replicated by default or by scalar liveness (reference B.5).
    """

    path: tuple
    line: int
    kernels: tuple[LogicalKernel, ...]
    anchored: bool


@dataclass(frozen=True, slots=True)
class Transaction:
    """The owner of the DFB transactions of one acquisition site (reference B.4).

    A ``with dfb.wait() as blk:`` block lives in its ``with`` body, so each such
    statement is its own site; ``blk = dfb.wait()`` bindings share one owner per name.
    """

    block: str
    dfb: str
    line: int
    inferred: tuple[LogicalKernel, ...]
    explicit: tuple[LogicalKernel, ...]
    owner: LogicalKernel
    site: str = (
        "bound"  # "bound" (`blk = dfb.wait()`, one owner per name) or "with" (per statement)
    )


@dataclass(frozen=True, slots=True)
class InlineAcquisition:
    """An unbound ``dfb.wait()`` / ``dfb.reserve()`` whose release the compiler inserts."""

    path: tuple
    line: int
    dfb: str
    method: str
    owner: LogicalKernel
    temp: str
    ordinal: int  # which acquisition of the statement (iter_skip_nested order)


@dataclass(frozen=True, slots=True)
class SetupDecl:
    """A lifted setup declaration (reference B.2): ``name = factory(...)`` at top level."""

    name: str
    factory: str
    line: int
    kind: str  # "dfb" | "pipe" | "kernel" | "semaphore" | "group"
    group: str | None = None  # the allocation_group= name of a DFB declaration


@dataclass(frozen=True, slots=True)
class DFBEvent:
    """One DFB event of a kernel's straight-line program (reference C.7).

    Actions: ``reserve`` / ``push`` / ``wait`` / ``pop`` (native or an external
    call's ``dfb_effects``), ``use`` (``DFBAccess.inspect``: a use within the
    lifecycle), ``opaque`` (an external dependency without a contract, or
    ``unknown_dfb_access``), ``sync`` (a participant's arrival at a synchronized
    reset or reconfiguration boundary; ``dfb`` is empty, see ``Barrier``).
    """

    kernel: LogicalKernel
    position: int
    dfb: str
    action: str
    line: int = 0


@dataclass(frozen=True, slots=True)
class Barrier:
    """A top-level ``reset_dfbs`` / ``reset_all_dfbs`` / ``reconfigure_dfbs`` (reference A.8, C.6).

    ``arrivals`` are its ``sync`` events, one per participant.  Every event before
    an arrival happens before every event after any arrival.  ``touches`` are the
    DFBs whose circular buffers it resets (``None``: every DFB); resetting is a use
    of the DFB and terminates its opaque external accesses.
    """

    line: int
    call: str
    arrivals: tuple[DFBEvent, ...]
    touches: frozenset[str] | None
    path: tuple = ()  # the statement's path in the analysed body

    def resets(self, dfb: str) -> bool:
        return self.touches is None or dfb in self.touches


@dataclass(frozen=True, slots=True)
class NodeGuard:
    """The launch nodes a DFB is used on: a conjunction of node conditions (reference C.7).

    ``terms`` are ``(expression, polarity, line)``: the ``if`` test with node-valued
    names replaced by their definitions (``ttl.node`` / ``ttl.grid_size`` calls,
    literals and ``captures``), true in the ``if`` body and false in its ``else``.
    ``split.domains.nodes_of`` evaluates it for every node of a grid.
    """

    terms: tuple[tuple[str, bool, int], ...]
    captures: tuple[str, ...] = ()

    def describe(self) -> str:
        parts = [t if pol else f"not ({t})" for t, pol, _ in self.terms]
        return " and ".join(parts)


@dataclass(frozen=True, slots=True)
class DFBFacts:
    """What the plan proves about one declared DFB's lifecycle (reference C.7).

    ``bounded`` holds when every reserve/push/wait/pop of the DFB (native or an
    external call's ``dfb_effects``) runs exactly once, paired in order, and every
    opaque external access is terminated by a later reset; ``reason`` says why not
    otherwise.  ``producer`` / ``consumer`` are the pointer-owner kernels;
    ``transactions`` the number of blocks moved; ``reserve_tiles`` / ``wait_tiles``
    the tiles of each transaction in order (``None``: one native block).
    ``domain`` is the node guard every use runs under (``None``: every node).
    ``extern_lines`` are the external calls whose effects or accesses the proof used;
    ``terminated`` pairs each opaque external call with the reset that ends it.
    """

    dfb: str
    line: int
    bounded: bool
    reason: str
    producer: LogicalKernel | None
    consumer: LogicalKernel | None
    transactions: int
    opaque: bool
    reserve_tiles: tuple[int | None, ...] = ()
    wait_tiles: tuple[int | None, ...] = ()
    domain: NodeGuard | None = None
    extern_lines: tuple[int, ...] = ()
    terminated: tuple[tuple[int, int], ...] = ()  # (opaque external call line, reset line)


@dataclass(frozen=True, slots=True)
class LifecycleFacts:
    """Per-DFB facts, every kernel's straight-line DFB events (happens-before input),
    the top-level barriers, and DFB pairs one external call depends on together."""

    dfbs: tuple[DFBFacts, ...]
    events: tuple[DFBEvent, ...]
    barriers: tuple[Barrier, ...] = ()
    together: tuple[tuple[str, str, int], ...] = ()  # (dfb, dfb, line of the external call)

    def facts(self, dfb: str) -> DFBFacts | None:
        return next((f for f in self.dfbs if f.dfb == dfb), None)

    def called_together(self, a: str, b: str) -> int | None:
        """Line of an external call that depends on both DFBs, if any."""
        return next((ln for x, y, ln in self.together if {x, y} == {a, b}), None)


@dataclass(frozen=True)
class SplitPlan:
    """The complete, immutable split decision for one unified operation."""

    op_name: str
    identity: str
    file: str
    line: int
    has_grid: bool
    dfb_params: tuple[str, ...]
    pipenet_params: tuple[str, ...]
    kernels: tuple[LogicalKernel, ...]
    kernel_origins: tuple[tuple[LogicalKernel, int], ...]
    requirements: tuple[tuple[str, int], ...]
    setup: tuple[SetupDecl, ...]
    statements: tuple[StatementPlacement, ...]
    transactions: tuple[Transaction, ...]
    inline_acquisitions: tuple[InlineAcquisition, ...]
    lifecycle: LifecycleFacts
    # The analysed body (composition applied, setup still in place).  Never mutated:
    # code generation and callers that compose this operation work on copies.
    body: ast.FunctionDef = field(compare=False, repr=False)
    # Values of names the composed body references that the original function's
    # scope does not provide (composition's fresh names, lifted Kernel handles).
    injected: tuple[tuple[str, object], ...] = field(default=(), compare=False, repr=False)
    generated_source: str = field(default="", compare=False, repr=False)
    # Each kernel's generated function as the explicit form spells it: (name, source).
    kernel_sources: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)
    # External calls composition copied from callees (reference B.8, C): the operation's
    # external-call plan adds them; each copied call names its site (``_site=<id>``).
    composed_sites: tuple[CallSite, ...] = field(default=(), compare=False, repr=False)
    # Each kernel's generated function AST (the user's lines), for the compiler back end.
    kernel_trees: tuple[tuple[str, ast.FunctionDef], ...] = field(
        default=(), compare=False, repr=False
    )

    @property
    def expand_only(self) -> bool:
        """Callable only by composition: DFB / PipeNet parameters or no grid (reference B.8)."""
        return bool(self.dfb_params or self.pipenet_params) or not self.has_grid

    def expand_only_reason(self, name: str) -> str:
        params = self.dfb_params + self.pipenet_params
        if params:
            listed = ", ".join(f"'{p}'" for p in params)
            return (
                f"@ttl.operation '{name}' is expand-only because it has DFB or PipeNet "
                f"parameter(s): {listed}; it cannot be called directly"
            )
        return (
            f"@ttl.operation '{name}' has no grid and is expand-only; it cannot be called directly"
        )

    def placement(self, path: tuple) -> StatementPlacement | None:
        return next((s for s in self.statements if s.path == path), None)

    def origin_line(self, kernel: LogicalKernel) -> int:
        return dict(self.kernel_origins).get(kernel, self.line)
