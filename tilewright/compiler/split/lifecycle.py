"""DFB lifecycle facts for physical-index reuse (reference C.7), read off the split plan.

For each declared DFB: are its transactions *bounded* (every reserve / push / wait /
pop runs exactly once: straight-line top-level code, ``with`` bodies included,
never in loops, branches or callbacks), who owns its write and read pointers
(producer and consumer kernels), how many blocks it moves, and is it *opaque*
(named anywhere but as the receiver of ``reserve`` / ``wait`` / ``publish``, e.g.
by an external call).  Plus, per kernel, the ordered DFB events of its
straight-line code: the input of the happens-before proof (program order in each
kernel, and each push completing before the matching wait).
"""

from __future__ import annotations

import ast

from tilewright.compiler.split import registry
from tilewright.compiler.split.astutil import iter_skip_nested, walk_with_paths
from tilewright.compiler.split.plan import DFBEvent, DFBFacts, KernelRef, LifecycleFacts

__all__ = ["facts", "happens_before"]


def _release_target(node: ast.AST, blocks: dict[str, str]) -> tuple[str, str] | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in registry.RELEASE_METHODS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in blocks
    ):
        return node.func.value.id, node.func.attr
    return None


def facts(tree: ast.FunctionDef, state, lifted, statements, inline) -> LifecycleFacts:
    dfbs = [d for d in lifted.decls if d.kind == "dfb"]
    names = {d.name for d in dfbs}
    placement = {p.path: p for p in statements}
    blocks = {t.block: t.dfb for t in state.transactions if t.site == "bound"}
    owners = {t.block: t.owner for t in state.transactions if t.site == "bound"}
    owners.update({(t.block, t.line): t.owner for t in state.transactions if t.site == "with"})
    inline_at = {}
    for acq in inline:
        inline_at.setdefault(acq.path, []).append(acq)

    once: set[tuple] = set()  # paths of statements that run exactly once per kernel
    for path, stmt in walk_with_paths(tree.body):
        parent = path[:-1]
        if not parent or (parent in once and isinstance(_at(tree, parent), ast.With)):
            once.add(path)

    sites: dict[str, list[tuple[tuple, str, KernelRef]]] = {n: [] for n in names}
    opaque: dict[str, str] = {}
    receivers: set[int] = set()
    for path, stmt in walk_with_paths(tree.body):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            blk = stmt.targets[0].id
            if blk in blocks and _is_acq(stmt.value, names):
                sites[blocks[blk]].append((path, stmt.value.func.attr, owners[blk]))
        if isinstance(stmt, ast.With):
            for item in stmt.items:
                if _is_acq(item.context_expr, names) and isinstance(item.optional_vars, ast.Name):
                    owner = owners[(item.optional_vars.id, stmt.lineno)]
                    sites[item.context_expr.func.value.id].append(
                        (path, item.context_expr.func.attr, owner)
                    )
        for acq in inline_at.get(path, ()):
            sites[acq.dfb].append((path, acq.method, acq.owner))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in names
            and node.attr in registry.DFB_ACQUIRE_METHODS | {"publish"}
        ):
            receivers.add(id(node.value))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id in names
            and id(node) not in receivers
        ):
            opaque.setdefault(node.id, f"'{node.id}' is used as a value at line {node.lineno}")
    for name in state.extern_dfbs:
        opaque[name] = f"'{name}' is accessed by an external call"

    events = _events(tree, placement, names, blocks, owners, inline_at, once)
    out = []
    for d in dfbs:
        s = sites[d.name]
        reserves = [x for x in s if x[1] == "reserve"]
        waits = [x for x in s if x[1] == "wait"]
        producers = {x[2] for x in reserves}
        consumers = {x[2] for x in waits}
        reason = ""
        if not s:
            reason = f"'{d.name}' is never acquired"
        elif any(x[0] not in once for x in s):
            line = next(_at(tree, x[0]).lineno for x in s if x[0] not in once)
            reason = f"'{d.name}' is acquired at line {line} in a loop, branch or callback"
        elif len(reserves) != len(waits):
            reason = f"'{d.name}' has {len(reserves)} reserve(s) but {len(waits)} wait(s)"
        elif not _releases_once(tree, d.name, blocks, once):
            reason = f"a release of '{d.name}' is not straight-line code"
        elif len(producers) != 1 or len(consumers) != 1:
            reason = f"'{d.name}' has no single producer and consumer kernel"
        producer = next(iter(producers)) if len(producers) == 1 else None
        consumer = next(iter(consumers)) if len(consumers) == 1 else None
        out.append(
            DFBFacts(
                d.name,
                d.line,
                not reason and d.name not in opaque,
                reason or opaque.get(d.name, ""),
                producer,
                consumer,
                len(reserves),
                d.name in opaque,
            )
        )
    return LifecycleFacts(tuple(out), tuple(events))


def _at(tree: ast.FunctionDef, path: tuple) -> ast.stmt:
    from tilewright.compiler.split.astutil import statement_at

    return statement_at(tree, path)


def _is_acq(node: ast.AST, names: set[str]) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in registry.DFB_ACQUIRE_METHODS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in names
    )


def _releases_once(tree, dfb: str, blocks: dict[str, str], once: set[tuple]) -> bool:
    for path, stmt in walk_with_paths(tree.body):
        for node in (
            iter_skip_nested(stmt) if not isinstance(stmt, ast.FunctionDef) else ast.walk(stmt)
        ):
            target = _release_target(node, blocks)
            if target is not None and blocks[target[0]] == dfb and path not in once:
                return False
    return True


def _events(tree, placement, names, blocks, owners, inline_at, once) -> list[DFBEvent]:
    per_kernel: dict[KernelRef, list[DFBEvent]] = {}

    def emit(kernel: KernelRef, dfb: str, action: str) -> None:
        seq = per_kernel.setdefault(kernel, [])
        seq.append(DFBEvent(kernel, len(seq), dfb, action))

    ctx = (placement, names, blocks, owners, inline_at, emit)
    for i, stmt in enumerate(tree.body):
        path = (("body", i),)
        for kernel in placement[path].kernels:
            _statement_events(stmt, path, kernel, ctx)
    return [e for seq in per_kernel.values() for e in seq]


def _statement_events(stmt, path, kernel, ctx) -> None:
    """The DFB events ``kernel`` performs for one exactly-once statement, in order."""
    placement, names, blocks, owners, inline_at, emit = ctx
    if isinstance(stmt, ast.With):
        acquired = []
        for item in stmt.items:
            if _is_acq(item.context_expr, names) and isinstance(item.optional_vars, ast.Name):
                dfb = item.context_expr.func.value.id
                if owners.get((item.optional_vars.id, stmt.lineno)) == kernel:
                    emit(kernel, dfb, item.context_expr.func.attr)
                    acquired.append((dfb, item.context_expr.func.attr))
        for i, child in enumerate(stmt.body):
            child_path = path + (("body", i),)
            if kernel in placement[child_path].kernels:
                _statement_events(child, child_path, kernel, ctx)
        for dfb, method in reversed(acquired):
            emit(kernel, dfb, "push" if method == "reserve" else "pop")
        return
    if isinstance(
        stmt, (ast.For, ast.While, ast.If, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef)
    ):
        return
    for acq in inline_at.get(path, ()):
        if acq.owner == kernel:
            emit(kernel, acq.dfb, acq.method)
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        blk = stmt.targets[0].id
        if blk in blocks and _is_acq(stmt.value, names) and owners[blk] == kernel:
            emit(kernel, blocks[blk], stmt.value.func.attr)
    for node in iter_skip_nested(stmt):
        target = _release_target(node, blocks)
        if target is not None and owners[target[0]] == kernel:
            emit(kernel, blocks[target[0]], target[1])
    for acq in inline_at.get(path, ()):
        if acq.owner == kernel:
            emit(kernel, acq.dfb, "pop" if acq.method == "wait" else "push")


def happens_before(lifecycle: LifecycleFacts, first: DFBEvent, second: DFBEvent) -> bool:
    """Whether ``first`` strictly happens before ``second`` (reference C.7).

    Program order within a kernel, plus: the k-th push of a bounded DFB completes
    before its k-th wait.
    """
    reach: dict[KernelRef, int] = {first.kernel: first.position + 1}
    edges = []
    by_kernel: dict[KernelRef, list[DFBEvent]] = {}
    for e in lifecycle.events:
        by_kernel.setdefault(e.kernel, []).append(e)
    for f in lifecycle.dfbs:
        if not f.bounded or f.producer is None or f.consumer is None:
            continue
        pushes = [e for e in by_kernel.get(f.producer, ()) if e.dfb == f.dfb and e.action == "push"]
        waits = [e for e in by_kernel.get(f.consumer, ()) if e.dfb == f.dfb and e.action == "wait"]
        edges.extend(zip(pushes, waits))
    changed = True
    while changed:
        changed = False
        for push, wait in edges:
            start = reach.get(push.kernel)
            after_push = start is not None and push.position >= start
            if after_push and wait.position + 1 < reach.get(wait.kernel, 1 << 30):
                reach[wait.kernel] = wait.position + 1
                changed = True
    return second.position >= reach.get(second.kernel, 1 << 30)
