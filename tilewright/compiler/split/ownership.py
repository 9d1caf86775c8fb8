"""DFB transaction discovery and ownership inference (reference B.4).

Each acquisition site -- ``blk = dfb.reserve()`` / ``blk = dfb.wait()`` (keyed by the
block name) or ``with dfb.wait() as blk:`` (keyed by the statement: the block lives
in the ``with`` body) -- gets exactly one owner: the kernels of the calls that use
the block (a block used in a binary operation, ``+=``, ``blk[...] = ...`` or
``store`` means COMPUTE; a block passed to ``ttl.copy`` the current callback's data
movement kernel), or the explicit ``push(kernel=...)`` / ``pop(kernel=...)``
selector.  Nested functions and lambdas are separate scopes (their own bindings
shadow block names).  The functions here work on a ``placement.Planner``.
"""

from __future__ import annotations

import ast

from tilewright.compiler.split import registry
from tilewright.compiler.split.astutil import (
    expr_root_name,
    iter_skip_nested,
    nested_scope_bindings,
    ttl_call_name,
)
from tilewright.compiler.split.plan import Transaction
from tilewright.lang.selectors import (
    COMPUTE,
    DATA_MOVEMENT,
    PIPE_SOURCE,
    LogicalKernel,
    format_kernels,
)

__all__ = [
    "CALLBACK_KERNELS",
    "acquisition",
    "bound_acquisition",
    "check_acquire_keywords",
    "collect_uses",
    "discover_callbacks",
    "discover_producers",
    "resolve_transactions",
    "with_item_block",
]

#: PipeNet callbacks: ``if_src`` runs on the pipe-source kernel, ``if_dst`` on canonical DM.
CALLBACK_KERNELS = {"pipe_source": PIPE_SOURCE, "data_movement": DATA_MOVEMENT}


def acquisition(node: ast.AST, dfb_names: set[str]) -> tuple[str, str] | None:
    """(dfb name, method) when ``node`` is ``<dfb>.reserve()`` / ``<dfb>.wait()``."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in registry.DFB_ACQUIRE_METHODS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in dfb_names
    ):
        return node.func.value.id, node.func.attr
    return None


def bound_acquisition(stmt: ast.stmt, dfb_names: set[str]) -> tuple[str, str] | None:
    """(block name, dfb name) for ``blk = dfb.wait()`` / ``blk = dfb.reserve()``."""
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        acq = acquisition(stmt.value, dfb_names)
        if acq is not None:
            return stmt.targets[0].id, acq[0]
    return None


def with_item_block(item: ast.withitem, dfb_names: set[str]) -> tuple[str, str] | None:
    acq = acquisition(item.context_expr, dfb_names)
    if acq is not None and isinstance(item.optional_vars, ast.Name):
        return item.optional_vars.id, acq[0]
    return None


def check_acquire_keywords(planner, body: list[ast.stmt]) -> None:
    for stmt in body:
        for node in iter_skip_nested(stmt):
            if not isinstance(node, ast.Call):
                continue
            acq = acquisition(node, planner.ctx.dfb_names)
            if acq is not None and any(k.arg == "kernel" for k in node.keywords):
                raise planner.ctx.error(
                    node,
                    f"kernel= is not supported on DFB {acq[1]}(); select release ownership on "
                    "push() or pop()",
                )


def discover_producers(planner, body: list[ast.stmt]) -> None:
    for stmt in body:
        bound = bound_acquisition(stmt, planner.ctx.dfb_names)
        if bound is not None:
            planner.producers.setdefault(bound[0], []).append(stmt)
            planner.producer_dfb.setdefault(bound[0], bound[1])
        if isinstance(stmt, ast.With):
            for item in stmt.items:
                named = with_item_block(item, planner.ctx.dfb_names)
                if named is not None:
                    key = (named[0], id(stmt))
                    planner.producers.setdefault(key, []).append(stmt)
                    planner.producer_dfb.setdefault(key, named[1])
                elif acquisition(item.context_expr, planner.ctx.dfb_names) is not None:
                    raise planner.ctx.error(
                        item.context_expr,
                        "a DFB acquisition in a with statement must bind its block "
                        "(`with dfb.reserve() as blk:`) so the splitter can place it",
                    )
        if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With)):
            discover_producers(planner, stmt.body)
            discover_producers(planner, getattr(stmt, "orelse", []))


def discover_callbacks(planner, body: list[ast.stmt]) -> None:
    for stmt in body:
        for node in iter_skip_nested(stmt):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in registry.PIPENET_CALLBACK_METHODS
                and node.args
                and isinstance(node.args[0], ast.Name)
            ):
                kernel = CALLBACK_KERNELS[registry.PIPENET_CALLBACK_METHODS[node.func.attr]]
                planner.callbacks.setdefault(node.args[0].id, set()).add(kernel)


def collect_uses(planner, body: list[ast.stmt]):
    """Inferred users and explicit releases of every acquisition site of one scope."""
    users: dict[object, set[LogicalKernel]] = {key: set() for key in planner.producers}
    releases: dict[object, list[tuple[ast.Call, LogicalKernel]]] = {
        key: [] for key in planner.producers
    }

    def record_args(call: ast.Call, kernels: frozenset, visible: dict) -> None:
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            root = expr_root_name(arg)
            if root in visible:
                users[visible[root]].update(kernels)

    def visit(node: ast.AST, visible: dict, dm: frozenset, extern: frozenset) -> None:
        if isinstance(node, ast.Call):
            func = node.func
            sub_dm, sub_ext = dm, extern
            method_selection = None
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                receiver, method = func.value.id, func.attr
                if receiver in visible and method in registry.RELEASE_METHODS:
                    explicit = planner.ctx.resolver.resolve_release(node)
                    if explicit is not None:
                        releases[visible[receiver]].append((node, explicit))
                    for operand in [*node.args, *(k.value for k in node.keywords)]:
                        visit(operand, visible, dm, extern)
                    return
                if receiver in visible and method == "store":
                    users[visible[receiver]].add(COMPUTE)
                    method_selection = frozenset({COMPUTE})
                if method in registry.PIPENET_CALLBACK_METHODS:
                    sub_dm = frozenset(
                        {CALLBACK_KERNELS[registry.PIPENET_CALLBACK_METHODS[method]]}
                    )
                    sub_ext = sub_dm
            selection = planner.classify_ttl(node, dm, extern) or method_selection
            is_extern = registry.is_extern_name(ttl_call_name(node))
            if selection and not is_extern:
                record_args(node, selection, visible)
            for operand in [*node.args, *(k.value for k in node.keywords)]:
                visit(operand, visible, sub_dm, sub_ext)
            if isinstance(func, ast.Attribute):
                visit(func.value, visible, sub_dm, sub_ext)
            return
        if isinstance(node, ast.BinOp):
            for side in (node.left, node.right):
                root = expr_root_name(side)
                if root in visible:
                    users[visible[root]].add(COMPUTE)
        elif isinstance(node, ast.AugAssign):
            for part in (node.target, node.value):
                root = expr_root_name(part)
                if root in visible:
                    users[visible[root]].add(COMPUTE)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and expr_root_name(target.value) in visible:
                    users[visible[expr_root_name(target.value)]].add(COMPUTE)
        if isinstance(node, ast.With):
            inner = dict(visible)
            for item in node.items:
                visit(item.context_expr, visible, dm, extern)
                named = with_item_block(item, planner.ctx.dfb_names)
                if named is not None and (named[0], id(node)) in users:
                    inner[named[0]] = (named[0], id(node))
                elif named is not None:  # a nested scope's own acquisition shadows the name
                    inner.pop(named[0], None)
            for child in node.body:
                visit(child, inner, dm, extern)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            hidden = nested_scope_bindings(node)
            inner = {k: v for k, v in visible.items() if k not in hidden}
            chosen = planner.callbacks.get(node.name)
            inner_dm = frozenset(chosen) if chosen else dm
            for child in node.body:
                visit(child, inner, inner_dm, inner_dm if chosen else extern)
            return
        if isinstance(node, ast.Lambda):
            hidden = nested_scope_bindings(node)
            visit(node.body, {k: v for k, v in visible.items() if k not in hidden}, dm, extern)
            return
        for sub in ast.iter_child_nodes(node):
            visit(sub, visible, dm, extern)

    bound = {key: key for key in planner.producers if isinstance(key, str)}
    for stmt in body:
        visit(stmt, bound, planner.dm, planner.extern)
    return users, releases


def resolve_transactions(planner, users, releases) -> None:
    """One owner per acquisition site, with the reference's diagnostics."""
    by_name: dict[str, set[LogicalKernel]] = {}
    for key in planner.producers:
        name = key if isinstance(key, str) else key[0]
        by_name.setdefault(name, set()).update(users.get(key, ()))
        by_name[name].update(sel for _, sel in releases.get(key, ()))
    for key, producers in planner.producers.items():
        block = key if isinstance(key, str) else key[0]
        inferred = frozenset(users.get(key, ()))
        explicit = frozenset(sel for _, sel in releases.get(key, ()))
        first = producers[0]
        if len(inferred) > 1:
            raise planner.ctx.error(
                first,
                f"DFB block '{block}' is used by multiple logical kernels ({format_kernels(inferred)}); "
                "each .reserve()/.wait() must resolve to exactly one kernel",
            )
        if len(explicit) > 1:
            raise planner.ctx.error(
                first,
                f"DFB block '{block}' has releases assigned to multiple logical kernels "
                f"({format_kernels(explicit)})",
            )
        if inferred and explicit and inferred != explicit:
            raise planner.ctx.error(
                releases[key][0][0],
                f"explicit {format_kernels(explicit)} release ownership conflicts with inferred "
                f"{format_kernels(inferred)} ownership for DFB block '{block}'",
            )
        owners = inferred or explicit
        if not owners and not isinstance(key, str) and len(by_name[block]) == 1:
            owners = frozenset(by_name[block])  # an unused with block: the name's only owner
        if not owners:
            raise planner.ctx.error(
                first,
                f"result of a DFB wait/reserve bound to '{block}' has no uses; the splitter cannot "
                "infer a logical kernel and the release has no explicit kernel selector",
            )
        owner = next(iter(owners))
        planner.owners[key] = owner
        planner.state.transactions.append(
            Transaction(
                block,
                planner.producer_dfb[key],
                first.lineno,
                tuple(sorted(inferred, key=LogicalKernel.sort_key)),
                tuple(sorted(explicit, key=LogicalKernel.sort_key)),
                owner,
                "bound" if isinstance(key, str) else "with",
            )
        )
