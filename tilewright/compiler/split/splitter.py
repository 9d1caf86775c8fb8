"""The splitter: a unified operation body -> a ``SplitPlan`` and the explicit multi-kernel
function it generates (the steps are listed in the package's docstring, reference B.1).

:func:`split_operation` runs every pass of :mod:`tilewright.compiler.split` in order;
:func:`bind_captured_handles` binds the Kernel handles of an explicit operation.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from tilewright.compiler.compose import Composer
from tilewright.compiler.scope import Scope
from tilewright.compiler.split import checks, codegen, identity, lifecycle, sync
from tilewright.compiler.split.astutil import assigned_names_in, child_blocks, walk_with_paths
from tilewright.compiler.split.lift import lift_setup
from tilewright.compiler.split.liveness import LivenessPlanner
from tilewright.compiler.split.placement import Context, Planner, State
from tilewright.compiler.split.plan import InlineAcquisition, SplitPlan, StatementPlacement
from tilewright.compiler.split.scope import SelectorResolver
from tilewright.errors import SplitError
from tilewright.lang.extern.plan import dfb_usage, with_sites
from tilewright.lang.selectors import (
    COMPUTE,
    DATA_MOVEMENT,
    PIPE_SOURCE,
    PIPE_SOURCE_KERNEL,
    Kernel,
    KernelKind,
    LogicalKernel,
    kernel_of,
)

if TYPE_CHECKING:
    from tilewright.compiler.record import OperationRecord
    from tilewright.lang.extern.plan import ExternPlan

__all__ = ["SplitPlan", "bind_captured_handles", "split_operation"]


def bind_captured_handles(op: OperationRecord) -> None:
    """Bind the Kernel handles an explicit (multi-kernel) operation names (reference B.2 / B.9)."""
    scope = Scope(op.fn)
    loads = {n.id for n in ast.walk(op.source.tree) if isinstance(n, ast.Name)}
    handles = {name: scope.lookup(name) for name in sorted(loads)}
    handles = {n: h for n, h in handles.items() if isinstance(h, Kernel)}
    identity.bind_kernels(handles, op.identity, op.name, loc=op.source.loc(op.source.tree))


def _param_kind(annotation: ast.expr | None, scope: Scope) -> str:
    if annotation is None:
        return "value"
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value
    else:
        value = scope.resolve(annotation)
        text = (
            getattr(value, "__name__", "")
            if str(getattr(value, "__module__", "")).startswith("tilewright")
            else ""
        )
    if text in ("DFB", "ttl.DFB"):
        return "dfb"
    if text in ("PipeNet", "ttl.PipeNet"):
        return "pipenet"
    return "value"


def split_operation(
    op: OperationRecord, extern_plan: ExternPlan | None
) -> tuple[SplitPlan, Callable[..., object]]:
    """Split ``op``'s unified body: ``(plan, generated function)`` (reference B.1)."""
    src = op.source
    tree = copy.deepcopy(src.tree)
    ident = op.identity
    checks.check_decorators(src, tree)
    scope = Scope(op.fn)
    kinds = {p: _param_kind(op.interface.annotations.get(p), scope) for p in op.interface.params}
    dfb_params = tuple(p for p, k in kinds.items() if k == "dfb")
    pipenet_params = tuple(p for p, k in kinds.items() if k == "pipenet")

    composer = Composer(src, tree, scope, op.name)
    injected = composer.run()
    composed_sites = tuple(composer.composed_sites)
    extern_plan = with_sites(extern_plan, op.qualname, composed_sites)
    scope = Scope(op.fn, injected)
    local = assigned_names_in(tree.body) | set(op.interface.params)
    checks.check_captures(src, tree, scope, op.name, local)
    checks.check_aliases(src, tree, scope, local)

    lifted = lift_setup(src, tree, scope, op.name)
    handles = _bind_handles(src, tree, scope, lifted, injected, ident, op.name, local)
    for name, handle in lifted.kernel_handles.items():
        injected[name] = handle
    scope = Scope(op.fn, injected)

    resolver = SelectorResolver(src, scope, handles)
    sync_objects = sync.sync_objects(tree, scope, local)
    ctx = Context(
        src,
        resolver,
        lifted.names("dfb") | set(dfb_params),
        lifted.names("semaphore"),
        sync_objects,
    )
    state = State()
    Planner(ctx, state).analyze(tree.body)
    all_kernels = frozenset(k for sel in state.anchors.values() for k in sel)
    has_grid = op.has_grid
    expand_only = bool(dfb_params or pipenet_params) or not has_grid
    if not all_kernels and not expand_only:
        raise src.error_at(
            tree,
            f"@ttl.operation '{op.name}': body contained no compute or data movement work after "
            "classification",
            cls=SplitError,
        )
    LivenessPlanner(src, state, all_kernels).analyze(tree.body)
    sync.check_rules(src, tree, state, ctx.dfb_names, sync_objects)

    kernels = tuple(sorted(all_kernels, key=LogicalKernel.sort_key))
    statements = _placements(tree, state, all_kernels)
    inline = _inline_plan(tree, state, ctx.dfb_names)
    plan = SplitPlan(
        op_name=op.name,
        identity=ident,
        file=src.file,
        line=tree.lineno,
        has_grid=has_grid,
        dfb_params=dfb_params,
        pipenet_params=pipenet_params,
        kernels=kernels,
        kernel_origins=tuple((k, state.origins[k].lineno) for k in kernels),
        requirements=tuple(
            (kind, sum(k.kind == kind for k in kernels)) for kind in ("compute", "data_movement")
        ),
        setup=tuple(lifted.decls),
        statements=statements,
        transactions=tuple(state.transactions),
        inline_acquisitions=inline,
        lifecycle=lifecycle.facts(
            tree, state, lifted, statements, inline, dfb_usage(extern_plan), sync_objects
        ),
        body=tree,
        injected=tuple(sorted(injected.items())),
        composed_sites=composed_sites,
    )
    if expand_only:
        return plan, op.fn
    selectors = {k: _selector_value(k, resolver, handles) for k in kernels}
    fn, source, kernel_defs = codegen.generate(
        plan, op.fn, src, lifted.indices, selectors, injected
    )
    kernel_sources = tuple(
        (codegen.function_names(kernels)[k], codegen.display_source(k, d))
        for k, d in zip(kernels, kernel_defs)
    )
    kernel_trees = tuple((k.function_name, d) for k, d in zip(kernels, kernel_defs))
    plan = dataclasses.replace(
        plan, generated_source=source, kernel_sources=kernel_sources, kernel_trees=kernel_trees
    )
    return plan, fn


def _bind_handles(
    src, tree, scope: Scope, lifted, injected, ident: str, op_name: str, local
) -> dict:
    """Kernel handles the body may select: declared, captured, or injected by composition."""
    handles: dict[str, Kernel] = {}
    for name in sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - set(local)):
        value = scope.lookup(name)
        if isinstance(value, Kernel) and name not in injected:
            handles[name] = value
    own = dict(handles)
    own.update(lifted.kernel_handles)
    identity.bind_kernels(own, ident, op_name, loc=src.loc(tree))
    handles.update(lifted.kernel_handles)
    for name, value in injected.items():
        if isinstance(value, Kernel):
            handles[name] = value
    return handles


def _selector_value(kernel: LogicalKernel, resolver: SelectorResolver, handles: dict):
    if kernel == COMPUTE:
        return KernelKind.COMPUTE
    if kernel == DATA_MOVEMENT:
        return KernelKind.DATA_MOVEMENT
    if kernel == PIPE_SOURCE:
        return PIPE_SOURCE_KERNEL
    if kernel in resolver.used:
        return resolver.used[kernel]
    return next(h for h in handles.values() if kernel_of(h) == kernel)


def _placements(
    tree: ast.FunctionDef, state: State, all_kernels: frozenset
) -> tuple[StatementPlacement, ...]:
    out: list[StatementPlacement] = []

    def walk(stmts, prefix, key, parent):
        for i, stmt in enumerate(stmts):
            path = prefix + ((key, i),)
            anchored = id(stmt) in state.anchors
            sel = state.anchors.get(id(stmt), parent)
            out.append(
                StatementPlacement(
                    path, stmt.lineno, tuple(sorted(sel, key=LogicalKernel.sort_key)), anchored
                )
            )
            inner = (
                all_kernels if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else sel
            )
            for child_key, block in child_blocks(stmt):
                walk(block, path, child_key, inner)

    walk(tree.body, (), "body", all_kernels)
    return tuple(out)


def _inline_plan(
    tree: ast.FunctionDef, state: State, dfb_names: set[str]
) -> tuple[InlineAcquisition, ...]:
    paths = {id(s): p for p, s in walk_with_paths(tree.body)}
    out = []
    for n, (stmt, call, dfb, method) in enumerate(state.inline):
        calls = codegen.acquisitions(stmt, dfb_names)
        ordinal = next(i for i, c in enumerate(calls) if c is call)
        owner = next(iter(state.anchors[id(stmt)]))
        out.append(
            InlineAcquisition(
                paths[id(stmt)], stmt.lineno, dfb, method, owner, f"_ttl_acq_{n}", ordinal
            )
        )
    return tuple(out)
