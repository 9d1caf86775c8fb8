"""Checking what an external function did to DFBs against what its call declared (C.6).

The native bridge reports every circular-buffer protocol action the C++ performs
(``cb_reserve_back``, ``cb_push_back``, ``cb_wait_front``, ``cb_pop_front``) to the
running call's :class:`ContractMonitor` *before* the action runs, so a violation is
reported where it happens (not as a deadlock it may cause later):

* DFBs with ``dfb_effects``: the actions on them must be exactly the declared,
  expanded sequence -- order (also across DFBs), kind and tile count -- and all of it
  must have happened when the function returns;
* DFBs with ``DFBAccess.inspect``: no protocol action at all (the protocol state is
  left unchanged);
* opaque dependencies (a dependency without a contract): anything;
* any other DFB: only with ``unknown_dfb_access=True``.

A violation is a :class:`~tilewright.errors.DFBContractError` naming the call site,
the declared and the observed sequence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tilewright.errors import DFBContractError

if TYPE_CHECKING:
    from tilewright.device.engine import KernelRun
    from tilewright.lang.dfb import DataflowBuffer, IndexGuard
    from tilewright.lang.extern.plan import CallSite

__all__ = ["ContractMonitor", "render_actions"]

_CALLS = {
    "reserve": "cb_reserve_back",
    "push": "cb_push_back",
    "wait": "cb_wait_front",
    "pop": "cb_pop_front",
}
_SHOWN = 12


def render_actions(actions: Sequence[tuple[str, int, int]], names: dict[int, str]) -> str:
    """``[reserve(in_dfb, 4), push(in_dfb, 4), ...]`` (long sequences elided in the middle)."""
    parts = [f"{kind}({names.get(cb, f'cb {cb}')}, {n})" for kind, cb, n in actions]
    if len(parts) > _SHOWN:
        parts = [*parts[: _SHOWN - 4], f"... {len(parts) - _SHOWN + 2} more ...", *parts[-2:]]
    return "[" + ", ".join(parts) + "]"


class ContractMonitor:
    """The DFB contract of one bound call site, checked action by action."""

    __slots__ = (
        "site",
        "run",
        "expected",
        "tracked",
        "inspected",
        "opaque",
        "unknown",
        "names",
        "observed",
        "pos",
        "shared",
    )

    def __init__(
        self,
        site: CallSite,
        run: KernelRun | None,
        expected: tuple[tuple[str, int, int], ...],
        tracked: frozenset[int],
        inspected: frozenset[int],
        opaque: frozenset[int],
        unknown: bool,
        names: dict[int, str],
        effect_dfbs: tuple[DataflowBuffer, ...] = (),
    ) -> None:
        self.site = site
        self.run = run
        self.expected = expected  # ((kind, cb index, tiles), ...)
        self.tracked = tracked  # cb indices with effects
        self.inspected = inspected
        self.opaque = opaque
        self.unknown = unknown
        self.names = names  # cb index -> DFB name
        self.observed: list[tuple[str, int, int]] = []
        self.pos = 0
        # Per expected action: (guard, DFB) when the DFB shares its physical index (C.7), so
        # the run-time sharing check sees external actions like native ones.
        self.shared: tuple[tuple[IndexGuard | None, DataflowBuffer], ...] = (
            tuple((d.share_guard, d) for d in effect_dfbs)
            if any(d.share_guard is not None for d in effect_dfbs)
            else ()
        )

    def start(self) -> None:
        self.pos = 0
        if self.observed:
            self.observed = []

    def observe(self, kind: str, cb: int, n: int) -> None:
        if cb in self.tracked:
            self.observed.append((kind, cb, n))
            pos = self.pos
            if pos < len(self.expected) and self.expected[pos] == (kind, cb, n):
                self.pos = pos + 1
                if self.shared:
                    guard, dfb = self.shared[pos]
                    if guard is not None:
                        guard.extern_action(dfb, kind, n)
                return
            raise self._mismatch(kind, cb, n)
        if cb in self.inspected:
            name = self.names.get(cb, f"cb {cb}")
            raise self._error(
                f"DFBAccess.inspect({name}) declares that the function leaves {name}'s protocol state "
                f"unchanged, but it called {_CALLS[kind]}({name}, {n})",
                hint=f"declare the actions with dfb_effects=[ttl.DFBEffect.{kind}({name}, tiles={n}), ...] "
                "instead of DFBAccess.inspect",
            )
        if cb in self.opaque or self.unknown:
            return
        known = self.names.get(cb)
        what = f"DFB '{known}'" if known else f"circular buffer {cb}"
        raise self._error(
            f"the external function called {_CALLS[kind]}({cb}, {n}) on {what}, which is not a dependency "
            "of the call",
            hint="pass the DFB in func_args, as ttl.dfb_descriptor(dfb), or in dfb_dependencies (with its "
            "dfb_effects), or set unknown_dfb_access=True",
        )

    def finish(self) -> None:
        if self.pos != len(self.expected):  # the common case is one comparison
            exp = self.expected
            raise self._error(
                f"the external function returned after {self.pos} of the {len(exp)} DFB actions its "
                f"dfb_effects declare; next expected: {render_actions(exp[self.pos : self.pos + 1], self.names)}\n"
                f"  declared: {render_actions(exp, self.names)}\n"
                f"  observed: {render_actions(self.observed, self.names)}",
            )

    def _mismatch(self, kind: str, cb: int, n: int) -> DFBContractError:
        exp = self.expected
        pos = self.pos
        got = render_actions([(kind, cb, n)], self.names)[1:-1]
        if pos < len(exp):
            want = render_actions(exp[pos : pos + 1], self.names)[1:-1]
            head = f"DFB action {pos + 1} is {got} but dfb_effects declare {want}"
        else:
            head = (
                f"DFB action {pos + 1} is {got}, after all {len(exp)} actions dfb_effects declare"
            )
        return self._error(
            f"the external function broke its dfb_effects contract: {head}\n"
            f"  declared: {render_actions(exp, self.names)}\n"
            f"  observed: {render_actions(self.observed, self.names)}",
        )

    def _error(self, message: str, hint: str | None = None) -> DFBContractError:
        where = f" ({self.run.label})" if self.run is not None else ""
        return DFBContractError(
            f"{self.site.title}{where}: {message}",
            loc=self.site.loc,
            hint=hint,
            rule="extern-contract",
        )
