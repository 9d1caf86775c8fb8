"""Where a unified body touches each DFB, for the lifecycle proofs (reference C.6, C.7).

A *site* is one DFB action of one statement on one kernel: a native acquisition or
release, an external call's declared effect (``dfb_effects``), inspection
(``DFBAccess.inspect``) or opaque occurrence, or a synchronized reset.  With every
site comes its statement path; :func:`guards` says which statements run exactly once
per node of a *guard* (top-level straight-line code and ``with`` bodies: the empty
guard; ``if`` / ``else`` bodies of such statements: the ``if`` paths and branches).

External calls are matched to their validated call sites by source position
(``compiler.extern.dfb_usage``); the variant a kernel runs is chosen by the rule
the run time uses (``CallSite.variant_key``).  A call the operation did not validate
(e.g. composed from another operation) is opaque on every DFB it names.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tilewright.compiler.split import registry
from tilewright.compiler.split.astutil import iter_skip_nested, statement_at, walk_with_paths
from tilewright.lang.extern.plan import select_variant
from tilewright.lang.selectors import LogicalKernel

__all__ = ["Site", "SiteTable", "collect", "guards", "own_nodes"]

Guard = tuple  # ((if path, polarity), ...): empty = top-level straight-line code


@dataclass(frozen=True, slots=True)
class Site:
    """One DFB action of one statement on one kernel (``seq`` orders actions in a statement)."""

    dfb: str
    path: tuple
    seq: int
    kind: str  # reserve | push | wait | pop | use | opaque | reset
    kernel: LogicalKernel | None
    line: int
    tiles: int | None = None  # None: one native block
    origin: str = "native"  # native | extern | unknown | unvalidated | sync


@dataclass
class SiteTable:
    """Every site per DFB, the DFB names external and reset calls read, DFB pairs per call."""

    sites: dict[str, list[Site]]
    contract_names: set[int]  # ids of Name nodes read by external / reset calls
    together: list[tuple[str, str, int]]


def guards(tree: ast.FunctionDef) -> dict[tuple, Guard]:
    """Statements that run exactly once per node of their guard, and that guard."""
    out: dict[tuple, Guard] = {}
    for path, _stmt in walk_with_paths(tree.body):
        parent = path[:-1]
        if not parent:
            out[path] = ()
            continue
        if parent not in out:
            continue
        holder = _at(tree, parent)
        key = path[-1][0]
        if isinstance(holder, ast.With) and key == "body":
            out[path] = out[parent]
        elif isinstance(holder, ast.If) and key in ("body", "orelse"):
            out[path] = out[parent] + ((parent, key == "body"),)
    return out


def own_nodes(stmt: ast.stmt):
    """The expression nodes of a statement itself (not of the statements nested in it)."""
    if not any(True for _k in _child_stmt_fields(stmt)):
        yield from iter_skip_nested(stmt)
        return
    for field_name, value in ast.iter_fields(stmt):
        if field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST):
                yield from iter_skip_nested(item)


def _child_stmt_fields(stmt: ast.stmt):
    for name in ("body", "orelse", "finalbody", "handlers", "cases"):
        if getattr(stmt, name, None):
            yield name


def _at(tree: ast.FunctionDef, path: tuple) -> ast.stmt:
    return statement_at(tree, path)


def is_extern_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == registry.EXTERN_CALL
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "call"
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == "raw"
        and isinstance(func.value.value, ast.Name)
        and func.value.value.id == "ttl"
    ):
        return True  # ttl.raw.call: computed effects, in the same plan
    return (
        isinstance(func, ast.Attribute)
        and func.attr == registry.EXTERN_CALL
        and isinstance(func.value, ast.Name)
        and func.value.id == "ttl"
    )


def _reset_call(node: ast.AST) -> str | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "ttl"
        and node.func.attr in registry.RESET_CALLS
    ):
        return node.func.attr
    return None


def reset_touches(call: ast.Call, declaration, dfb_names: set[str]) -> frozenset[str] | None:
    """DFBs a reset / reconfiguration call resets (``None``: every DFB)."""
    kind = call.func.attr if isinstance(call.func, ast.Attribute) else None
    if kind == "reset_dfbs":
        dfbs = next((k.value for k in call.keywords if k.arg == "dfbs"), None)
        elts = getattr(dfbs, "elts", ())
        return frozenset(e.id for e in elts if isinstance(e, ast.Name) and e.id in dfb_names)
    if kind == "reset_all_dfbs":
        return None
    return None if getattr(declaration, "discard_dfb_state", False) else frozenset()


class _Collector:
    def __init__(self, tree, state, statements, inline, usage, sync_objects, dfb_names) -> None:
        self.tree = tree
        self.state = state
        self.placement = {p.path: p for p in statements}
        self.inline: dict[tuple, list] = {}
        for acq in inline:
            self.inline.setdefault(acq.path, []).append(acq)
        self.records: dict[tuple, list] = {}
        self.by_site: dict[int, list] = {}  # composed calls name their site (B.8)
        for record in usage.calls:
            self.records.setdefault(record.position, []).append(record)
            if record.site_id is not None:
                self.by_site.setdefault(record.site_id, []).append(record)
        self.sync_objects = sync_objects
        self.names = dfb_names
        self.table = SiteTable({n: [] for n in dfb_names}, set(), [])
        self.blocks = {t.block: t.dfb for t in state.transactions if t.site == "bound"}
        self.owners = {t.block: t.owner for t in state.transactions if t.site == "bound"}
        self.owners.update(
            {(t.block, t.line): t.owner for t in state.transactions if t.site == "with"}
        )

    def add(self, dfb: str, path, seq, kind, kernel, line, tiles=None, origin="native") -> None:
        sites = self.table.sites.get(dfb)
        if sites is None:  # a ttl.DFB parameter: its lifecycle belongs to the caller
            return
        sites.append(Site(dfb, path, seq, kind, kernel, line, tiles, origin))

    def run(self) -> SiteTable:
        for path, stmt in walk_with_paths(self.tree.body):
            self.native(path, stmt)
            for node in own_nodes(stmt):
                if is_extern_call(node):
                    self.extern(path, node)
                elif _reset_call(node) is not None:
                    self.reset(path, node)
        return self.table

    def native(self, path: tuple, stmt: ast.stmt) -> None:
        names = self.names
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            acq = _acquisition(stmt.value, names)
            if isinstance(target, ast.Name) and target.id in self.blocks and acq is not None:
                method = acq[1]
                self.add(
                    self.blocks[target.id], path, 0, method, self.owners[target.id], stmt.lineno
                )
        if isinstance(stmt, ast.With):
            for i, item in enumerate(stmt.items):
                acq, var = _acquisition(item.context_expr, names), item.optional_vars
                if acq is not None and isinstance(var, ast.Name):
                    dfb, method = acq
                    owner = self.owners[(var.id, stmt.lineno)]
                    self.add(dfb, path, i, method, owner, stmt.lineno)
                    release = "push" if method == "reserve" else "pop"
                    self.add(dfb, path, 1000 - i, release, owner, stmt.lineno)
        for acq in self.inline.get(path, ()):
            release = "pop" if acq.method == "wait" else "push"
            self.add(acq.dfb, path, acq.ordinal, acq.method, acq.owner, acq.line)
            self.add(acq.dfb, path, 1000 + acq.ordinal, release, acq.owner, acq.line)
        for n, node in enumerate(own_nodes(stmt)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in registry.RELEASE_METHODS
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in self.blocks
            ):
                blk = node.func.value.id
                self.add(
                    self.blocks[blk], path, 500 + n, node.func.attr, self.owners[blk], node.lineno
                )

    def extern(self, path: tuple, call: ast.Call) -> None:
        named = [n for n in ast.walk(call) if isinstance(n, ast.Name) and n.id in self.names]
        self.table.contract_names.update(id(n) for n in named)
        position = (call.lineno, call.end_lineno, call.col_offset, call.end_col_offset)
        site_id = next(
            (
                k.value.value
                for k in call.keywords
                if k.arg == registry.EXTERN_SITE_KEYWORD and isinstance(k.value, ast.Constant)
            ),
            None,
        )
        records = (
            self.by_site.get(site_id) if isinstance(site_id, int) else self.records.get(position)
        )
        kernels = self.placement[path].kernels if path in self.placement else ()
        if not records:
            for dfb in sorted({n.id for n in named}):
                for k in kernels or (None,):
                    self.add(dfb, path, 100, "opaque", k, call.lineno, origin="unvalidated")
            return
        by_key = {r.kernel: r for r in records}
        listed: set[str] = set()
        for k in kernels or (None,):
            key = select_variant(by_key, k.keys) if k is not None else next(iter(by_key))
            record = by_key[key]
            for i, (dfb, kind, tiles) in enumerate(record.actions):
                self.add(dfb, path, 100 + i, kind, k, call.lineno, tiles, "extern")
            for dfb in sorted(record.inspected):
                self.add(dfb, path, 100, "use", k, call.lineno, origin="extern")
            opaque = set(record.opaque)
            origin = "extern"
            if record.unknown_dfb_access:
                opaque, origin = set(self.names), "unknown"
            for dfb in sorted(opaque):
                self.add(dfb, path, 100, "opaque", k, call.lineno, origin=origin)
            listed |= set(record.effects) | set(record.inspected) | set(record.opaque)
        ordered = sorted(listed)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                self.table.together.append((a, b, call.lineno))

    def reset(self, path: tuple, call: ast.Call) -> None:
        target = call.args[0] if call.args else None
        declaration = self.sync_objects.get(target.id) if isinstance(target, ast.Name) else None
        touches = reset_touches(call, declaration, self.names)
        for node in ast.walk(call):
            if isinstance(node, ast.Name) and node.id in self.names:
                self.table.contract_names.add(id(node))
        kernels = self.placement[path].kernels if path in self.placement else ()
        for dfb in sorted(self.names if touches is None else touches):
            for k in kernels:
                self.add(dfb, path, 0, "reset", k, call.lineno, origin="sync")


def _acquisition(node: ast.AST, names: set[str]) -> tuple[str, str] | None:
    """(DFB, method) of ``<dfb>.reserve()`` / ``<dfb>.wait()``, else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in registry.DFB_ACQUIRE_METHODS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in names
    ):
        return node.func.value.id, node.func.attr
    return None


def collect(tree, state, statements, inline, usage, sync_objects, dfb_names) -> SiteTable:
    """Every DFB site of the body (see the module docstring)."""
    return _Collector(tree, state, statements, inline, usage, sync_objects, dfb_names).run()
