"""What every engine checks around one external call on one kernel run (C.6, C.9).

The interpreter (``runtime.Binding``, a Python kernel calling the glue it built) and the
compiled engine (a native kernel whose emitted C++ calls the function directly, announcing
the call to Python before and after it: ``TTLANG_EXTERN_BEGIN`` / ``_END`` in
``ttlang/support.h``) run the same checks, in the same order, from here:

* when the call is first evaluated on a run: the declared tile counts against the DFBs'
  capacities;
* before each call: an inspected DFB that shares its physical index (C.7) is touched;
  the contract monitor (:class:`.contract.ContractMonitor`) starts -- the native runtime
  then shows it every CB protocol action of the call before it happens;
* after it: every declared action happened (``ContractMonitor.finish``); a C++ exception
  that escaped the function is reported at the call; a dispatch condition's truth value
  agrees with the node's earlier evaluations in the dispatch.

Per-launch state (bindings, dispatch conditions) lives here too: a new launch
(``lang.state.CURRENT``) drops it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from tilewright.errors import DFBContractError, ExternCallError, KernelError, SourceLoc
from tilewright.lang import state
from tilewright.lang.extern.contract import ContractMonitor
from tilewright.native import isolate

__all__ = ["CallChecks", "launch_state", "compiled_call", "current_call", "current_site"]


class _LaunchState(threading.local):
    """Bindings and dispatch conditions of the launch running on this thread."""

    def __init__(self) -> None:
        self.launch: object = None
        self.bindings: dict = {}
        self.conditions: dict = {}
        self.current: dict = {}  # compiled kernel run -> (call site it is inside, start clock)


_PER_THREAD = _LaunchState()


def launch_state() -> _LaunchState:
    """This thread's per-launch state, emptied when a new launch runs."""
    per = _PER_THREAD
    launch = state.CURRENT
    if per.launch is not launch:
        per.launch, per.bindings, per.conditions, per.current = launch, {}, {}, {}
    return per


class CallChecks:
    """The checks of one call site bound on one kernel run (either engine)."""

    __slots__ = ("site", "run", "monitor", "inspected_shared")

    def __init__(self, site, run, variant, dfbs: Sequence, setup, *, guarded: bool = True) -> None:
        """``guarded``: the DFBs' shared-index guards (C.7) see the call's actions -- in the
        interpreter, whose own DFB actions feed them too; a compiled kernel's do not (the
        index reuse it compiles is the allocator's compile-time proof), so neither do its
        external calls'."""
        self.site = site
        self.run = run
        _check_capacities(site, variant, dfbs)
        names = {d.index: d.name for d in getattr(setup, "dfbs", ()) if d.index is not None}
        names.update((d.index, d.name) for d in dfbs)
        expected = tuple((e.kind, dfbs[e.occurrence].index, e.tiles) for e in variant.effects)
        self.monitor = ContractMonitor(
            site,
            run,
            expected,
            tracked=frozenset(dfbs[e.occurrence].index for e in variant.effects),
            inspected=frozenset(dfbs[i].index for i in variant.inspected),
            opaque=frozenset(dfbs[i].index for i in variant.opaque),
            unknown=site.unknown_dfb_access,
            names=names,
            effect_dfbs=tuple(dfbs[e.occurrence] for e in variant.effects) if guarded else (),
        )
        self.inspected_shared = tuple(
            dfbs[i]
            for i in variant.inspected
            if guarded and getattr(dfbs[i], "share_guard", None) is not None
        )

    def begin(self) -> None:
        """Before the call: inspections of shared indices; the monitor starts."""
        for dfb in self.inspected_shared:  # an inspection touches the shared index (C.7)
            dfb.share_guard.check_access(dfb, f"DFBAccess.inspect({dfb.name}) in {self.site.title}")
        self.monitor.start()

    def end(self, escaped: str | None, value: int | None) -> None:
        """After the call: the whole contract happened, no C++ exception escaped, and a
        dispatch condition's result (``value``) agrees within the dispatch."""
        self.monitor.finish()
        site = self.site
        if escaped is not None:
            raise KernelError(
                f"{site.title}: a C++ exception escaped the external function: {escaped}",
                loc=site.loc,
                rule="extern-cpp-exception",
            )
        if site.condition is not None and value is not None:
            _record_condition(site, self.run, value)


def _check_capacities(site, variant, dfbs: Sequence) -> None:
    seen = set()
    for e in variant.effects:
        key = (e.occurrence, e.tiles)
        if key in seen:
            continue
        seen.add(key)
        dfb = dfbs[e.occurrence]
        if e.tiles > dfb.capacity_tiles:
            raise ExternCallError(
                f"{site.title}: ttl.DFBEffect.{e.kind}({dfb.name}, tiles={e.tiles}) exceeds the capacity "
                f"of DFB '{dfb.name}' ({dfb.capacity_tiles} tiles: {dfb.block_count} blocks of "
                f"{dfb.block_pages} tiles)",
                loc=site.loc,
            )


def _record_condition(site, run, value: int) -> None:
    key = (site.condition, run.core.index)
    truth = bool(value)
    conditions = launch_state().conditions
    prev = conditions.get(key)
    if prev is None:
        conditions[key] = (truth, site, run.label)
        return
    if prev[0] != truth:
        first, first_label = prev[1], prev[2]
        raise DFBContractError(
            f"DispatchCondition '{site.condition_name}' disagrees within one dispatch on "
            f"{run.place}: {first.title} at {first.loc} ({first_label}) returned {prev[0]}, but "
            f"{site.title} at {site.loc} ({run.label}) returned {truth}; every evaluation of one "
            "DispatchCondition on a node must give the same truth value",
            loc=site.loc,
            rule="dispatch-condition",
        )


# -- the compiled engine's half -----------------------------------------------------------------

BEGIN, END, ESCAPED = 0, 1, 2
"""Phases of ``twrt_extern_call`` (``ttlang/support.h``: ``TTLANG_EXTERN_BEGIN`` / ``_END`` /
``_ESCAPED``)."""


def compiled_call(
    run, position, variant_key, dfb_positions: Sequence[int], phase: int, value: int, text
) -> Callable[[str, int, int], None] | None:
    """A compiled kernel's external call at ``position`` (its source position, as the
    lowering matched it) begins or ended on ``run``.  ``dfb_positions``: the declaration
    positions of the call's dependency occurrences.  Returns the contract observer at
    ``BEGIN``; ``value`` is the call's result at ``END`` (the condition's truth), ``text``
    the escaped exception's text at ``ESCAPED``."""
    per = launch_state()
    # composed copies of one call share its position: their DFBs tell them apart
    key = (run, position, variant_key, tuple(dfb_positions))
    checks = per.bindings.get(key)
    if checks is None:
        setups = getattr(per.launch, "setups", None) or {}
        setup = setups.get(run.core.index)
        plan = getattr(getattr(setup, "op", None), "extern_plan", None)
        site = plan.site_at(position) if plan is not None else None
        if site is None or setup is None:
            raise KernelError(
                "a compiled external call that its operation's plan does not list "
                f"(source position {position})",
                rule="extern-unvalidated",
            )
        dfbs = [setup.dfbs[p] for p in dfb_positions]
        checks = per.bindings[key] = CallChecks(
            site, run, site.variants[variant_key], dfbs, setup, guarded=False
        )
        isolate.announce(site)  # --isolate: the parent can name the call in a crash report
    if phase == BEGIN:
        checks.begin()
        per.current[run] = (checks.site, int(run.state.clock))
        return checks.monitor.observe
    _, start = per.current.pop(run, (None, 0))
    tracer = state.TRACER
    if tracer is not None:  # one span per external call on the kernel's track, as interpreted
        tracer.span(run, f"extern {checks.site.callee}", start, int(run.state.clock))
    if phase == END:
        checks.end(None, value if checks.site.result_type is not None else None)
    else:
        checks.end(text, None)
    return None


def current_site(run):
    """The call site a compiled kernel run is inside (between BEGIN and END), or None."""
    current = _PER_THREAD.current.get(run) if _PER_THREAD.launch is state.CURRENT else None
    return None if current is None else current[0]


def current_call(run) -> tuple[str, SourceLoc] | None:
    """(title, line) of the external call a compiled kernel run is inside, if any: a fault,
    exit or interruption there is reported as the interpreter reports it, at the call."""
    site = current_site(run)
    if site is None:
        return None
    return site.title, SourceLoc(site.loc.file, site.loc.line)
