"""DFB lifecycle facts for physical-index reuse (reference C.6, C.7), read off the split plan.

For each declared DFB: is its lifecycle *bounded*, who owns its write and read
pointers (producer and consumer kernels), the tiles of each transaction, and the
launch-node domain it is used on.  A lifecycle is bounded when:

* every reserve / push / wait / pop runs exactly once per node of one guard:
  straight-line top-level code and ``with`` bodies (every node), or the same
  ``if`` / ``else`` branches whose conditions are launch-node guards
  (``split.domains``) -- never in loops or callbacks;
* external calls take part through their declared ``dfb_effects``: within one call
  each reserve is followed by its push and each wait by its pop, with matching tile
  counts (C.6 bounded transactions; a partial summary proves nothing);
  ``DFBAccess.inspect`` is a use of the DFB at the call;
* reserves and waits pair (as many of each, the k-th with matching tiles), with one
  producer and one consumer kernel;
* the DFB is never used as a plain value, and each opaque external occurrence
  (no effect or access, or ``unknown_dfb_access``) is terminated by a later
  synchronized reset of the DFB (``reset_dfbs``, ``reset_all_dfbs``,
  ``reconfigure_dfbs`` with ``discard_dfb_state=True``) on the call's kernel.

Plus the inputs of the happens-before proof (``lifecycle_events``): every kernel's
ordered DFB events, the barriers, and DFB pairs one external call depends on.
"""

from __future__ import annotations

import ast

from tilewright.compiler.split import domains, registry
from tilewright.compiler.split.astutil import statement_at, walk_with_paths
from tilewright.compiler.split.lifecycle_events import (
    Reach,
    build_events,
    happens_before,
    statement_order,
)
from tilewright.compiler.split.lifecycle_sites import Site, collect, guards, reset_touches
from tilewright.compiler.split.plan import DFBFacts, LifecycleFacts, NodeGuard
from tilewright.lang.extern.plan import DFBUsage
from tilewright.lang.selectors import format_kernels

__all__ = ["Reach", "facts", "happens_before"]

_ACQUIRE = ("reserve", "wait")


def facts(
    tree: ast.FunctionDef, state, lifted, statements, inline, usage=None, sync_objects=None
) -> LifecycleFacts:
    """The lifecycle facts of a unified body (see the module docstring).

    ``usage`` is ``compiler.extern.dfb_usage(op)``; ``sync_objects`` maps names to the
    captured ``DFBReset`` / ``DFBReconfiguration`` declarations.
    """
    usage = usage if usage is not None else DFBUsage(())
    sync_objects = sync_objects or {}
    dfbs = [d for d in lifted.decls if d.kind == "dfb"]
    names = {d.name for d in dfbs}
    table = collect(tree, state, statements, inline, usage, sync_objects, names)
    guard_of = guards(tree)
    walk = list(walk_with_paths(tree.body))
    start, end = statement_order(walk)
    with_paths = {p for p, s in walk if isinstance(s, ast.With)}

    straight = [s for ss in table.sites.values() for s in ss if guard_of.get(s.path) == ()]
    syncs = _syncs(tree, state, statements, sync_objects, names, guard_of)
    events, barriers = build_events(straight, syncs, start, end, with_paths)
    ctx = _Context(tree, guard_of, start, barriers, domains.node_names(tree))

    values = _value_uses(tree, names, table.contract_names)
    out = [_dfb_facts(d, table.sites[d.name], values.get(d.name), ctx) for d in dfbs]
    return LifecycleFacts(tuple(out), events, barriers, tuple(table.together))


class _Context:
    def __init__(self, tree, guard_of, start, barriers, node_names) -> None:
        self.tree = tree
        self.guard_of = guard_of
        self.start = start
        self.barriers = barriers
        self.node_names = node_names
        self.terms: dict[tuple, tuple[str, tuple[str, ...]] | str] = {}

    def term(self, if_path: tuple):
        """(text, captures) of an ``if`` test that is a node guard, else the reason."""
        if if_path not in self.terms:
            stmt = statement_at(self.tree, if_path)
            try:
                if not isinstance(stmt, ast.If):  # guards() records if statements only
                    raise domains.GuardError(f"line {stmt.lineno} is not an if statement")
                self.terms[if_path] = domains.guard_term(stmt.test, self.node_names, if_path[0][1])
            except domains.GuardError as exc:
                self.terms[if_path] = exc.reason
        return self.terms[if_path]


def _syncs(tree, state, statements, sync_objects, names, guard_of) -> list:
    placement = {p.path: p for p in statements}
    paths = {id(stmt): path for path, stmt in walk_with_paths(tree.body)}
    out = []
    for stmt, call in state.syncs:
        path = paths.get(id(stmt))
        if path is None or guard_of.get(path) != ():
            continue
        target = call.args[0] if call.args else None
        declaration = sync_objects.get(target.id) if isinstance(target, ast.Name) else None
        touches = reset_touches(call, declaration, names)
        out.append((path, call.lineno, call.func.attr, placement[path].kernels, touches))
    return out


def _value_uses(tree: ast.FunctionDef, names: set[str], contract_names: set[int]) -> dict[str, str]:
    """DFBs named anywhere but as a receiver or in an external / reset call's contract."""
    receivers: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in names
            and node.attr in registry.DFB_ACQUIRE_METHODS | {"publish"}
        ):
            receivers.add(id(node.value))
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id in names
            and id(node) not in receivers
            and id(node) not in contract_names
        ):
            out.setdefault(node.id, f"'{node.id}' is used as a value at line {node.lineno}")
    return out


def _dfb_facts(decl, sites: list[Site], value_use: str | None, ctx: _Context) -> DFBFacts:
    name = decl.name
    order = sorted(sites, key=lambda s: (ctx.start[s.path], s.seq))
    reserves = [s for s in order if s.kind == "reserve"]
    waits = [s for s in order if s.kind == "wait"]
    producers = {s.kernel for s in reserves}
    consumers = {s.kernel for s in waits}
    domain, reason = None, ""
    if not reserves and not waits:
        reason = f"'{name}' is never acquired"
    else:
        reason = _placement_reason(name, order, ctx)
        if not reason:
            domain, reason = _domain(name, order, ctx)
    reason = reason or _extern_reason(name, order)
    terminated: list[tuple[int, int]] = []
    if not reason:
        reason = _termination_reason(name, order, domain, ctx, terminated)
    if not reason and len(reserves) != len(waits):
        reason = f"'{name}' has {len(reserves)} reserve(s) but {len(waits)} wait(s)"
    if not reason and (len(producers) != 1 or len(consumers) != 1):
        reason = f"'{name}' has no single producer and consumer kernel"
    pairs = zip(reserves, waits)
    if not reason and any(None not in (r.tiles, w.tiles) and r.tiles != w.tiles for r, w in pairs):
        reason = (
            f"'{name}' is reserved in transactions of {_tiles(reserves)} but waited on in "
            f"{_tiles(waits)}; transaction tile counts must pair"
        )
    if not reason and value_use:
        reason = value_use
    producer = next(iter(producers)) if len(producers) == 1 else None
    consumer = next(iter(consumers)) if len(consumers) == 1 else None
    extern_lines = tuple(
        sorted({s.line for s in order if s.origin == "extern" and s.kind != "opaque"})
    )
    return DFBFacts(
        name,
        decl.line,
        not reason,
        reason,
        producer,
        consumer,
        len(reserves),
        value_use is not None or any(s.kind == "opaque" for s in order),
        tuple(s.tiles for s in reserves),
        tuple(s.tiles for s in waits),
        domain,
        extern_lines,
        tuple(terminated),
    )


def _tiles(sites: list[Site]) -> str:
    return "(" + ", ".join("block" if s.tiles is None else f"{s.tiles} tiles" for s in sites) + ")"


def _placement_reason(name: str, order: list[Site], ctx: _Context) -> str:
    """Every site must run exactly once per node of its guard."""
    for s in order:
        if s.path in ctx.guard_of:
            continue
        if s.kind in _ACQUIRE and s.origin == "native":
            return f"'{name}' is acquired at line {s.line} in a loop, branch or callback"
        if s.kind in ("push", "pop") and s.origin == "native":
            return f"a release of '{name}' is not straight-line code"
        if s.kind == "reset":
            return f"'{name}' is reset at line {s.line} in a loop"
        return (
            f"'{name}' is used by the external call at line {s.line} in a loop, branch or callback"
        )
    return ""


def _domain(name: str, order: list[Site], ctx: _Context) -> tuple[NodeGuard | None, str]:
    """The node guard shared by every site of the DFB (``None``: every node), or why not."""
    guards_seen = {ctx.guard_of[s.path] for s in order}
    if len(guards_seen) > 1:
        lines = sorted({s.line for s in order})
        return None, (
            f"'{name}' is used under different conditions (lines {', '.join(map(str, lines))}); "
            "every use of a shared DFB runs under one node guard"
        )
    guard = next(iter(guards_seen))
    if not guard:
        return None, ""
    terms, captures = [], set()
    for if_path, polarity in guard:
        term = ctx.term(if_path)
        line = statement_at(ctx.tree, if_path).lineno
        if isinstance(term, str):
            return None, (
                f"'{name}' is used at line {order[0].line} under a condition that is not a "
                f"launch-node guard (line {line}: {term})"
            )
        terms.append((term[0], polarity, line))
        captures.update(term[1])
    return NodeGuard(tuple(terms), tuple(sorted(captures))), ""


def _extern_reason(name: str, order: list[Site]) -> str:
    """External calls' effects on the DFB: complete, ordered transactions per call (C.6)."""
    calls: dict[tuple, list[Site]] = {}
    for s in order:
        if s.origin == "extern" and s.kind in ("reserve", "push", "wait", "pop"):
            calls.setdefault((s.path, s.kernel), []).append(s)
    for actions in calls.values():
        line = actions[0].line
        for opener, closer in (("reserve", "push"), ("wait", "pop")):
            pending: list[Site] = []
            for s in actions:
                if s.kind == opener:
                    pending.append(s)
                elif s.kind == closer:
                    if not pending:
                        return (
                            f"the external call at line {line} declares {closer}({name}) without a "
                            f"preceding {opener} in the same call; a partial summary does not prove a "
                            "bounded lifecycle"
                        )
                    first = pending.pop(0)
                    if first.tiles != s.tiles:
                        return (
                            f"the external call at line {line} declares {opener}({name}, tiles={first.tiles}) "
                            f"but {closer}({name}, tiles={s.tiles}); a transaction's tile counts must match"
                        )
            if pending:
                return (
                    f"the external call at line {line} declares {opener}({name}) without its {closer}; "
                    "a partial summary does not prove a bounded lifecycle"
                )
    return ""


def _termination_reason(
    name: str, order: list[Site], domain, ctx: _Context, terminated: list[tuple[int, int]]
) -> str:
    """Opaque external occurrences must be terminated by a later reset on the same kernel (C.6)."""
    for s in order:
        if s.kind != "opaque":
            continue
        what = {
            "unknown": f"the external call at line {s.line} has unknown_dfb_access=True",
            "unvalidated": f"the external call at line {s.line} has no validated DFB contract",
        }.get(
            s.origin,
            f"'{name}' is an opaque dependency of the external call at line {s.line} "
            "(no dfb_effects or dfb_accesses)",
        )
        if domain is not None:
            return f"{what}, under a node guard where no reset can terminate it"
        barrier = None if s.origin == "unvalidated" else _terminating(name, s, ctx)
        if barrier is None:
            kernel = format_kernels([s.kernel]) if s.kernel is not None else "its kernel"
            return (
                f"{what} and no later ttl.reset_dfbs / reset_all_dfbs / "
                f"reconfigure_dfbs(discard_dfb_state=True) on {kernel} terminates it"
            )
        if (s.line, barrier.line) not in terminated:
            terminated.append((s.line, barrier.line))
    return ""


def _terminating(name: str, site: Site, ctx: _Context):
    """The first barrier resetting the DFB later in the program of the call's kernel (C.6)."""
    return next(
        (
            barrier
            for barrier in ctx.barriers
            if barrier.resets(name)
            and any(a.kernel == site.kernel for a in barrier.arrivals)
            and ctx.start[barrier.path] > ctx.start[site.path]
        ),
        None,
    )
