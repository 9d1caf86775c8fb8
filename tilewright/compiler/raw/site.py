"""A validated ``ttl.raw.call``: the plan record whose DFB effects were computed from IR.

:class:`RawCallSite` is a :class:`~tilewright.lang.extern.plan.CallSite` (so the
splitter, the DFB allocation and the lifecycle proofs read it as they read a declared
external call) plus what the raw call needs: the function, the kernel kind it was traced
for, the parameter bindings, the decoration-time trace, and the two services the
kernel-time entry (:mod:`tilewright.lang.raw`, which never imports the compiler) calls
through it: :meth:`RawCallSite.current_binds` (the folded values as the program has them
now, retraced and checked when one changed) and :meth:`RawCallSite.trace_bound` (the
function traced with the physical CBs and the kernel's DST capacity).

Retracing (:func:`current_binds`): at decoration a call's compile-time scalar arguments
(literals, module-level and captured values) are folded into the trace, so static trip
counts expand and the operation is planned with the computed effects.  The program may change such a value between calls
(``SCALE = -3.0``), and every other part of an operation reads the value at the call, so
a raw call must too: both engines pass the values they see to :func:`current_binds`,
which traces the function again when one differs.  The values must leave the computed
effects as they were planned -- a DFB allocation or a split made for four actions cannot
run eight -- otherwise the call is a :class:`RawIRError` naming the argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilewright.compiler.raw.function import RawIRError, RawIRFunction
from tilewright.compiler.raw.trace import Bind, RawTrace, trace
from tilewright.kir.effects import dfb_effects
from tilewright.kir.ir import AccessorDecl, CBDecl, Kernel
from tilewright.lang.extern.plan import CallSite, Effect
from tilewright.lang.raw_types import fits

__all__ = ["RawCallSite", "current_binds", "trace_planned", "PLACEHOLDER_PAGES", "MAX_DST"]


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

    def current_binds(self, values: dict[int, object]) -> tuple[Bind, ...]:
        """The binds with ``values`` (position -> the value the engine sees now) for the
        folded arguments, retraced and checked against the planned effects when one
        changed (:func:`current_binds`)."""
        return current_binds(self, values)

    def trace_bound(
        self,
        kind: str,
        binds: list[Bind],
        *,
        dst_tiles: int,
        cbs: tuple[CBDecl, ...],
        accessors: tuple[AccessorDecl, ...],
    ) -> RawTrace:
        """The function traced for one kernel run: DFB parameters bound to physical CBs."""
        return trace(
            self.fn, kind, binds, dst_tiles=dst_tiles, cbs=cbs, accessors=accessors,
            source=self.loc.file,
        )  # fmt: skip

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


MAX_DST = 8
"""DST tiles a trace at decoration allows (16-bit half-sync); the kernel's own capacity is
checked again when the call is compiled or run."""
PLACEHOLDER_PAGES = 1 << 16
"""CB pages at decoration (capacities are checked when the call is bound to its DFBs)."""

_CHECKED: dict[tuple, tuple[Bind, ...]] = {}
_MAX_CHECKED = 256


def trace_planned(
    fn: RawIRFunction,
    kind: str,
    binds: list[Bind],
    dfb_names: list[str],
    accessors: tuple[AccessorDecl, ...],
    source: str,
) -> tuple[RawTrace, tuple[Effect, ...] | None]:
    """Trace a call as the operation is planned with it -- DFB argument ``k`` is CB ``k``
    (its occurrence), pages unbounded -- and its computed DFB actions (None: opaque)."""
    cbs = tuple(
        CBDecl(i, name, "Float16_b", 2048, PLACEHOLDER_PAGES, 1) for i, name in enumerate(dfb_names)
    )
    traced = trace(fn, kind, binds, dst_tiles=MAX_DST, cbs=cbs, accessors=accessors, source=source)
    kernel = Kernel(fn.name, kind, "", source, cbs=cbs, locals=traced.locals, body=traced.body)
    actions = dfb_effects(kernel)
    effects = None if actions is None else tuple(Effect(e.kind, e.cb, e.pages) for e in actions)
    return traced, effects


def _placeholder_accessors(binds: tuple[Bind, ...]) -> tuple[AccessorDecl, ...]:
    return tuple(
        AccessorDecl(str(b.value), str(b.value), 0, (), 0, 2048, ())
        for b in binds
        if b.kind == "accessor"
    )


def current_binds(site: RawCallSite, values: dict[int, object]) -> tuple[Bind, ...]:
    """The site's binds with ``values`` (parameter position -> the value the engine sees) for
    its folded arguments; traced again, and checked, when one differs from decoration."""
    binds = list(site.binds)
    changed = False
    for pos, value in values.items():
        old = binds[pos]
        if old.kind != "const" or (type(value) is type(old.value) and value == old.value):
            continue
        pname, rt = site.fn.params[pos]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not fits(rt, value):
            raise RawIRError(
                f"{site.title}: argument {pos + 1} ('{pname}') is now {value!r}, not a valid "
                f"{rt!r}",
                loc=site.loc,
            )
        binds[pos] = Bind("const", value)
        changed = True
    reads = site.fn.reads()
    if not changed and reads == site.reads:
        return site.binds
    result = tuple(binds)
    key = (site.id, result, reads)
    if key in _CHECKED:
        return _CHECKED[key]
    planned = site.variants[None].effects if site.computed == "expanded" else None
    _, now = trace_planned(
        site.fn,
        site.kind,
        list(result),
        [occ.dfb for occ in site.variants[None].occurrences],
        _placeholder_accessors(result),
        site.loc.file,
    )
    if now != planned:
        diff = [
            f"'{site.fn.params[p][0]}' = {site.binds[p].value!r} -> {result[p].value!r}"
            for p in range(len(result))
            if result[p] != site.binds[p]
        ]
        before = dict(site.reads)
        diff += [
            f"module value '{n}' = {_shown(before.get(n))} -> {_shown(v)}"
            for n, v in reads
            if before.get(n) != v
        ]
        raise RawIRError(
            f"{site.title}: the value(s) it folds changed since the operation was decorated "
            f"({', '.join(diff)}) and the computed DFB effects change with them "
            f"({_count(planned)} -> {_count(now)}); the operation's split and DFB allocation "
            "were planned with the old effects",
            loc=site.loc,
            hint="pass the value as a run-time argument of the operation, or decorate the "
            "operation again after changing it",
        )
    if len(_CHECKED) >= _MAX_CHECKED:
        _CHECKED.pop(next(iter(_CHECKED)))
    _CHECKED[key] = result
    return result


def _shown(sig: object) -> str:
    """A value as ``RawIRFunction.reads`` records it, shown as the user wrote it."""
    if isinstance(sig, tuple) and len(sig) == 2 and isinstance(sig[0], str):
        return repr(sig[1])
    return repr(sig)


def _count(effects: tuple[Effect, ...] | None) -> str:
    return "opaque" if effects is None else f"{len(effects)} action(s)"
