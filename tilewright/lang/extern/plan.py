"""The validated plan of an operation's external calls (immutable; built at decoration).

One :class:`CallSite` per ``ttl.call_extern_func(...)`` in the operation's source:
its location, header and callee, template arguments, and per kernel selection
(``Variant``) the function arguments, DFB dependency occurrences and the expanded
DFB contract.  :func:`dfb_usage` summarises what the calls do to DFBs for the DFB
lifecycle proofs of physical-index reuse (reference C.7: declared effects count as
transactions, inspections as uses; opaque occurrences and ``unknown_dfb_access``
forbid sharing unless a later reset terminates them).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import CodeType
from typing import TYPE_CHECKING, TypeAlias

from tilewright.errors import SourceLoc

if TYPE_CHECKING:
    from tilewright.lang.extern.types import DispatchCondition, ScalarType

__all__ = [
    "TemplateArg",
    "FuncArg",
    "Occurrence",
    "Effect",
    "Variant",
    "CallSite",
    "ExternPlan",
    "DFBUsage",
    "CallDFBUsage",
    "dfb_usage",
    "select_variant",
    "renamed_site",
    "with_sites",
    "EFFECT_KINDS",
    "MAX_EXPANDED_EFFECTS",
]

EFFECT_KINDS = ("reserve", "push", "wait", "pop")
MAX_EXPANDED_EFFECTS = 4096
"""Most protocol actions one call may declare after ``repeat`` expansion (C.6)."""

_SITE_IDS = itertools.count(1)

SourcePosition: TypeAlias = tuple[int | None, int | None, int | None, int | None]
"""(lineno, end_lineno, col_offset, end_col_offset), as ``ast`` and ``co_positions()`` give them."""

VariantKey: TypeAlias = str | None
"""A kernel key (``kernel:<name>``, ``kind:<kind>``, ``pipe_source``), ``"*"`` for the selected
kernels a per-kernel mapping omits, or None for the list form (every kernel)."""


def next_site_id() -> int:
    """A process-unique call-site id (crash reports of isolated runs name sites by id)."""
    return next(_SITE_IDS)


@dataclass(frozen=True, slots=True)
class TemplateArg:
    """One template argument: static C++ text, or a DFB (descriptor / physical index)."""

    kind: str  # "int" | "bool" | "float" | "uint" | "descriptor" | "dfb_id"
    text: str | None = None
    dfb: str | None = None  # DFB name, for "descriptor" / "dfb_id"


@dataclass(frozen=True, slots=True)
class FuncArg:
    """One function argument and how the generated C++ receives it (C.4)."""

    kind: str  # "scalar" | "uint32" | "dfb" | "tensor" | "raw_addr"; typed: "i32" | "i64" | "f32"
    source: str  # the Python expression, for messages
    name: str | None = None  # DFB / tensor name


@dataclass(frozen=True, slots=True)
class Occurrence:
    """A DFB dependency occurrence: func-arg DFBs, then descriptors, then dfb_dependencies."""

    dfb: str
    where: str  # "func_args" | "template_args" | "dfb_dependencies"
    position: int  # index in that (runtime) list


@dataclass(frozen=True, slots=True)
class Effect:
    kind: str  # reserve | push | wait | pop
    occurrence: int
    tiles: int

    def describe(self, name: str) -> str:
        return f"{self.kind}({name}, tiles={self.tiles})"


@dataclass(frozen=True, slots=True)
class Variant:
    """What the call passes and promises on one selected kernel."""

    func_args: tuple[FuncArg, ...]
    occurrences: tuple[Occurrence, ...]
    effects: tuple[Effect, ...]  # expanded, in C++ execution order
    inspected: tuple[int, ...]  # occurrence indices with DFBAccess.inspect

    @property
    def effect_occurrences(self) -> frozenset[int]:
        return frozenset(e.occurrence for e in self.effects)

    @property
    def opaque(self) -> tuple[int, ...]:
        """Occurrences with neither an effect nor an access (C.6 opaque occurrences)."""
        used = self.effect_occurrences | set(self.inspected)
        return tuple(i for i in range(len(self.occurrences)) if i not in used)


@dataclass(frozen=True, slots=True)
class CallSite:
    """One validated ``ttl.call_extern_func`` call of an operation."""

    id: int
    operation: str
    loc: SourceLoc
    position: SourcePosition
    header: str
    callee: str
    template_args: tuple[TemplateArg, ...]
    variants: dict[VariantKey, Variant]
    include_paths: tuple[str, ...]
    unknown_dfb_access: bool
    result_type: ScalarType | None
    condition: DispatchCondition | None
    condition_name: str | None
    kernel_kinds: frozenset[str] | None  # kinds the call may run on (None: not restricted)
    kernel_function: str | None  # enclosing explicit kernel function, if any
    label: str | None = None  # how messages name the call (a ttl.raw.cpp function's call)

    @property
    def title(self) -> str:
        if self.label is not None:
            return self.label
        return f"ttl.call_extern_func({self.header!r}, {self.callee!r})"

    def variant_key(self, kernel_keys: Iterable[str]) -> VariantKey:
        """The variant a kernel runs, given its keys most specific first (``kernel:<name>``,
        ``pipe_source``, ``kind:<kind>``, ``*``); the one rule for run time and allocation."""
        return select_variant(self.variants, kernel_keys)

    def describe(self) -> str:
        return f"{self.title} at {self.loc}"


@dataclass(slots=True)
class ExternPlan:
    """All external calls of one operation, findable by source position at run time."""

    operation: str
    sites: tuple[CallSite, ...]
    by_code: dict[tuple[CodeType, int], CallSite] = field(
        default_factory=dict
    )  # (code, lasti) -> CallSite, filled lazily

    def site_by_id(self, site_id: int) -> CallSite | None:
        """The call site with process-unique ``site_id`` (composed calls name theirs)."""
        return next((s for s in self.sites if s.id == site_id), None)

    def site_at(self, position: SourcePosition) -> CallSite | None:
        for s in self.sites:
            if s.position == position:
                return s
        same_start = [
            s for s in self.sites if s.position[0] == position[0] and s.position[2] == position[2]
        ]
        if len(same_start) == 1:
            return same_start[0]
        same_line = [s for s in self.sites if s.position[0] == position[0]]
        return same_line[0] if len(same_line) == 1 else None


def renamed_site(site: CallSite, names: Mapping[str, str]) -> CallSite:
    """``site`` as composition expands it into a caller (reference B.8): a new id, and the
    callee's DFB and tensor names replaced by the caller's (``names``: callee -> caller).

    The validation stays the callee's (its scope, its file for relative include paths);
    only the names the caller's lifecycle proofs and messages use change.
    """

    def name(n: str | None) -> str | None:
        return names.get(n, n) if n is not None else None

    variants = {
        key: dataclasses.replace(
            v,
            func_args=tuple(dataclasses.replace(a, name=name(a.name)) for a in v.func_args),
            occurrences=tuple(
                dataclasses.replace(o, dfb=name(o.dfb) or o.dfb) for o in v.occurrences
            ),
        )
        for key, v in site.variants.items()
    }
    template_args = tuple(dataclasses.replace(t, dfb=name(t.dfb)) for t in site.template_args)
    return dataclasses.replace(
        site, id=next_site_id(), variants=variants, template_args=template_args
    )


def with_sites(
    plan: ExternPlan | None, operation: str, sites: tuple[CallSite, ...]
) -> ExternPlan | None:
    """``plan`` with ``sites`` (calls composed into the operation) added."""
    if not sites:
        return plan
    own = plan.sites if plan is not None else ()
    return ExternPlan(operation, own + tuple(sites))


def select_variant(variants: dict[VariantKey, Variant], kernel_keys: Iterable[str]) -> VariantKey:
    """The key of ``variants`` a kernel with ``kernel_keys`` (most specific first) runs."""
    key = next((k for k in kernel_keys if k in variants), None)
    if key is None:
        key = None if None in variants else "*"
    return key


@dataclass(frozen=True, slots=True)
class CallDFBUsage:
    """What one external call (one kernel variant) does to DFBs (reference C.6, C.7)."""

    site: str  # "file:line"
    effects: dict[str, tuple[tuple[str, int], ...]]  # DFB name -> (kind, tiles) in order
    inspected: frozenset[str]
    opaque: frozenset[str]  # dependency occurrences without a contract
    unknown_dfb_access: bool
    position: SourcePosition | None = None  # the call's position
    kernel: VariantKey = None  # the variant key (None: every kernel the call runs on)
    actions: tuple[tuple[str, str, int], ...] = ()  # (DFB, kind, tiles) in C++ execution order
    variants: tuple[VariantKey, ...] = ()  # every variant key of the call (to choose per kernel)
    site_id: int | None = None  # the call site's id (composed calls are matched by it)


@dataclass(frozen=True, slots=True)
class DFBUsage:
    """The external calls' DFB facts of one operation (reference C.6, C.7).

    ``conflicting`` names the DFBs with opaque occurrences; ``all_opaque`` means some
    call may touch every user-managed DFB (``unknown_dfb_access=True``).  Such DFBs
    share no physical index unless a later synchronized reset on the call's kernel
    terminates the access (``split.lifecycle`` decides, per call site and kernel).
    """

    calls: tuple[CallDFBUsage, ...]

    @property
    def conflicting(self) -> frozenset[str]:
        out: set[str] = set()
        for c in self.calls:
            out |= c.opaque
        return frozenset(out)

    @property
    def all_opaque(self) -> bool:
        return any(c.unknown_dfb_access for c in self.calls)


def dfb_usage(plan: ExternPlan | None) -> DFBUsage:
    """The DFB usage record of an operation's external calls (empty if it makes none).

    One record per call site and kernel variant, with the call's source position so
    the split plan's lifecycle proofs (``split.lifecycle``) can place its declared
    effects, inspections and opaque occurrences in each kernel's program order.
    """
    if plan is None:
        return DFBUsage(())
    calls: list[CallDFBUsage] = []
    for site in plan.sites:
        for key, variant in site.variants.items():
            names = [o.dfb for o in variant.occurrences]
            effects: dict[str, list[tuple[str, int]]] = {}
            for e in variant.effects:
                effects.setdefault(names[e.occurrence], []).append((e.kind, e.tiles))
            calls.append(
                CallDFBUsage(
                    site=f"{site.loc.file}:{site.loc.line}",
                    effects={k: tuple(v) for k, v in effects.items()},
                    inspected=frozenset(names[i] for i in variant.inspected),
                    opaque=frozenset(names[i] for i in variant.opaque),
                    unknown_dfb_access=site.unknown_dfb_access,
                    position=site.position,
                    kernel=key,
                    actions=tuple((names[e.occurrence], e.kind, e.tiles) for e in variant.effects),
                    variants=tuple(site.variants),
                    site_id=site.id,
                )
            )
    return DFBUsage(tuple(calls))
