"""A validated ``ttl.raw.call``: the plan record whose DFB effects were computed from IR.

:class:`RawCallSite` is a :class:`~tilewright.lang.extern.plan.CallSite` (so the
splitter, the DFB allocation and the lifecycle proofs read it as they read a declared
external call) plus what the raw call needs: the function, the kernel kind it was traced
for, the parameter bindings, the decoration-time trace, and the binder the kernel-time
entry (``lang.raw.call``) calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tilewright.compiler.raw.function import RawIRFunction
from tilewright.compiler.raw.trace import Bind, RawTrace
from tilewright.lang.extern.plan import CallSite

__all__ = ["RawCallSite"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RawCallSite(CallSite):
    """A validated ``ttl.raw.call``: a call site whose effects were computed from IR."""

    fn: RawIRFunction
    kind: str  # the kernel kind the function is traced for
    binds: tuple[Bind, ...]  # per parameter: DFB occurrence / folded constant / run time / tensor
    trace: RawTrace  # the decoration-time trace (DFB parameters as occurrence indices)
    computed: str  # "expanded" (static protocol) | "opaque" (depends on run-time values)
    reads: tuple = ()  # fn.reads() when it was traced at decoration (module values it folds)

    @property
    def title(self) -> str:
        return f"ttl.raw.call({self.fn.name})"

    binder: Callable[..., Any]  # runtime.Binding: (site, run, fn, args) -> the bound call

    def bind_raw(self, run: object, fn: object, args: tuple[object, ...]) -> object:
        """The call bound on kernel run ``run`` (``lang.raw.call`` calls this once per
        launch and kernel; the binding's ``invoke(args)`` runs the traced IR)."""
        return self.binder(self, run, fn, args)

    def describe_effects(self) -> str:
        """``computed from IR: [wait(src, 1), ...]`` (``tilewright explain``)."""
        variant = self.variants[None]
        names = [o.dfb for o in variant.occurrences]
        if self.computed == "opaque":
            deps = ", ".join(sorted(set(names))) or "none"
            return (
                "computed from IR: opaque (DFB actions depend on run-time values); opaque "
                f"dependencies: {deps}"
            )
        acts = [f"{e.kind}({names[e.occurrence]}, {e.tiles})" for e in variant.effects]
        shown = (
            acts if len(acts) <= 12 else [*acts[:8], f"... {len(acts) - 10} more ...", *acts[-2:]]
        )
        return f"computed from IR: {len(acts)} action(s) [{', '.join(shown)}]"
