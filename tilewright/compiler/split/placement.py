"""Statement placement (reference B.3, B.6); ownership lives in ``ownership`` (B.4).

Anchors: a statement is *anchored* to the logical kernels its TT-Lang calls select
(``registry``): ``ttl.copy`` -> the current callback's data-movement kernel, block
math, ``blk.store`` and a block in a binary operation -> COMPUTE, ``net.if_src`` ->
the pipe-source kernel, ``call_extern_func`` -> its ``kernel=`` selection, resets ->
their participants, ``blk.push()`` / ``blk.pop()`` -> the block's owner.  Every
anchor in one statement must select the same kernels.

Control statements (``for`` / ``while`` / ``if`` / a ``with`` that acquires no
block) are selected by the union of their children and their header's anchors; a
``with`` of DFB acquisitions by its owner, and nothing inside may select another
kernel.  Nested functions are analysed in their own scope, with the data-movement
affinity of the PipeNet callback they serve.  Nothing here changes the AST.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tilewright.compiler.split import ownership, registry
from tilewright.compiler.split.astutil import (
    expr_root_name,
    iter_skip_nested,
    ttl_call_name,
)
from tilewright.compiler.split.ownership import (
    CALLBACK_KERNELS,
    acquisition,
    bound_acquisition,
    with_item_block,
)
from tilewright.compiler.split.plan import Transaction
from tilewright.compiler.split.scope import SelectorResolver
from tilewright.errors import SplitError
from tilewright.lang.selectors import (
    COMPUTE,
    DATA_MOVEMENT,
    LogicalKernel,
    format_kernels,
    kernel_of,
)
from tilewright.lang.unsupported import UNSUPPORTED

if TYPE_CHECKING:
    from tilewright.compiler.source import FunctionSource
    from tilewright.lang.resets import DFBReconfiguration, DFBReset

__all__ = ["Context", "Planner", "State"]

Selection = frozenset  # of LogicalKernel


@dataclass
class Context:
    """What the planner knows about the operation's names."""

    src: FunctionSource
    resolver: SelectorResolver
    dfb_names: set[str]
    semaphore_names: set[str]
    sync_objects: dict[str, DFBReset | DFBReconfiguration]  # captured declarations by name

    def error(self, node: ast.AST, message: str) -> SplitError:
        return self.src.error_at(node, message, cls=SplitError)


@dataclass
class State:
    """Mutable analysis results; frozen into the plan afterwards."""

    anchors: dict[int, Selection] = field(default_factory=dict)
    headers: dict[int, Selection] = field(default_factory=dict)
    origins: dict[LogicalKernel, ast.stmt] = field(default_factory=dict)
    transactions: list[Transaction] = field(default_factory=list)
    inline: list[tuple[ast.stmt, ast.Call, str, str]] = field(default_factory=list)
    syncs: list[tuple[ast.stmt, ast.Call]] = field(default_factory=list)
    extern_dfbs: set[str] = field(default_factory=set)
    acquires: set[int] = field(default_factory=set)  # ids of `with` statements acquiring blocks

    def select(self, stmt: ast.stmt, kernels) -> None:
        self.anchors[id(stmt)] = frozenset(kernels)
        for k in sorted(kernels, key=LogicalKernel.sort_key):
            self.origins.setdefault(k, stmt)

    def extend(self, stmt: ast.stmt, kernels) -> None:
        self.anchors[id(stmt)] = self.anchors.get(id(stmt), frozenset()) | frozenset(kernels)


def _assigned_copy_target(stmt: ast.stmt) -> str | None:
    """The target of ``name = ttl.copy(...)`` (rejected: reference B.3), else None."""
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
        and ttl_call_name(stmt.value) == ("copy",)
    ):
        return stmt.targets[0].id
    return None


class Planner:
    """Anchors and ownership for one scope (the body, or a nested function's body)."""

    def __init__(
        self,
        ctx: Context,
        state: State,
        *,
        dm: Selection = frozenset({DATA_MOVEMENT}),
        extern: Selection = frozenset(),
    ) -> None:
        self.ctx = ctx
        self.state = state
        self.dm = dm
        self.extern = extern
        # Transactions are keyed by block name for `blk = dfb.wait()` and by (name, id(with)) for
        # `with dfb.wait() as blk:`, whose block lives in the with body only.
        self.producers: dict[object, list[ast.stmt]] = {}
        self.producer_dfb: dict[object, str] = {}
        self.owners: dict[object, LogicalKernel] = {}
        self.callbacks: dict[str, set[LogicalKernel]] = {}
        self._scopes: list[dict[str, object]] = []  # with-bound block names while annotating

    # -- entry ---------------------------------------------------------------------------------

    def analyze(self, body: list[ast.stmt]) -> None:
        ownership.check_acquire_keywords(self, body)
        ownership.discover_producers(self, body)
        ownership.discover_callbacks(self, body)
        users, releases = ownership.collect_uses(self, body)
        ownership.resolve_transactions(self, users, releases)
        for stmt in body:
            self._annotate(stmt)

    # -- discovery -----------------------------------------------------------------------------

    # -- call classification (reference B.3) ----------------------------------------------------

    def classify_ttl(self, call: ast.Call, dm: Selection, extern: Selection) -> Selection | None:
        """The registry's selection for a call; None when the call does not anchor."""
        name = ttl_call_name(call)
        is_extern = registry.is_extern_name(name) or (
            isinstance(call.func, ast.Name) and call.func.id == registry.EXTERN_CALL
        )
        if is_extern:
            selection = self.ctx.resolver.resolve_extern(call, extern)
            for node in ast.walk(call):
                if isinstance(node, ast.Name) and node.id in self.ctx.dfb_names:
                    self.state.extern_dfbs.add(node.id)
            return selection
        if name is not None:
            if len(name) == 1:
                placement = registry.TTL_CALLS.get(name[0])
                if placement is None and name[0] in UNSUPPORTED:
                    return None  # its own run-time error names it and says why
                if placement is None:
                    raise self.ctx.error(
                        call.func,
                        f"unknown ttl.{name[0]}(...) call; register its logical kernel classification "
                        "in tilewright.compiler.split.registry.TTL_CALLS",
                    )
                return self._materialize(placement, call, dm)
            placement = registry.TTL_NAMESPACES.get(name[0])
            if placement is None:
                raise self.ctx.error(
                    call.func,
                    f"unknown ttl.{'.'.join(name)}(...) call; register namespace 'ttl.{name[0]}' in "
                    "tilewright.compiler.split.registry.TTL_NAMESPACES",
                )
            return self._materialize(placement, call, dm)
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            receiver, method = func.value.id, func.attr
            if method in registry.PIPENET_CALLBACK_METHODS:
                return frozenset({CALLBACK_KERNELS[registry.PIPENET_CALLBACK_METHODS[method]]})
            if receiver in self.ctx.dfb_names and method in registry.DFB_METHODS:
                if registry.DFB_METHODS[method] is None:
                    raise self.ctx.error(
                        call,
                        f"{receiver}.{method}() is the legacy DFB-level release (spec < 0.7); a unified "
                        f"body releases the block: blk.{method}()",
                    )
                return dm
            if receiver in self.ctx.semaphore_names and method in registry.SEMAPHORE_METHODS:
                return dm
        return None

    def _materialize(self, placement: registry.Placement, call: ast.Call, dm: Selection):
        if placement is registry.Placement.DATA_MOVEMENT:
            return dm
        if placement is registry.Placement.COMPUTE:
            return frozenset({COMPUTE})
        if placement is registry.Placement.SYNC:
            return self._sync_selection(call)
        return None

    def _sync_selection(self, call: ast.Call) -> Selection:
        """Reset / reconfiguration calls run on the declaration's participants (A.8)."""
        target = call.args[0] if call.args else None
        name = target.id if isinstance(target, ast.Name) else None
        value = self.ctx.sync_objects.get(name) if name is not None else None
        if value is None:
            what = ast.unparse(call.func)
            raise self.ctx.error(
                call,
                f"{what}(...) takes a ttl.DFBReset / ttl.DFBReconfiguration created by an enclosing "
                "factory and captured by the operation as its first positional argument",
            )
        refs = []
        for p in value.participants:
            ref = kernel_of(p)
            if ref is None:
                raise self.ctx.error(
                    call, f"participant {p!r} of '{name}' is not a bound logical kernel"
                )
            if ref.role == "explicit":
                self.ctx.resolver.used[ref] = p
            refs.append(ref)
        return frozenset(refs)

    def _owner(self, name: str | None) -> LogicalKernel | None:
        """The owner of the block ``name`` refers to here (innermost ``with`` binding first)."""
        if name is None:
            return None
        for scope in reversed(self._scopes):
            if name in scope:
                return self.owners.get(scope[name])
        return self.owners.get(name)

    # -- statement selection -------------------------------------------------------------------

    def _annotate(self, stmt: ast.stmt) -> None:
        owner = self._with_owner(stmt) if isinstance(stmt, ast.With) else None
        if isinstance(stmt, (ast.For, ast.While, ast.If)) or (
            isinstance(stmt, ast.With) and owner is None
        ):
            self._annotate_control(stmt)
            return
        if isinstance(stmt, ast.With) and owner is not None:
            kernels = owner
            if len(kernels) != 1:
                raise self.ctx.error(
                    stmt,
                    f"DFB acquire statement resolves to multiple logical kernels ({format_kernels(kernels)}); "
                    "each .reserve()/.wait() must resolve to exactly one kernel",
                )
            self.state.select(stmt, kernels)
            self.state.acquires.add(id(stmt))
            names: dict[str, object] = {}
            for item in stmt.items:
                named = with_item_block(item, self.ctx.dfb_names)
                if named is not None:
                    names[named[0]] = (named[0], id(stmt))
            self._scopes.append(names)
            for child in stmt.body:
                self._annotate(child)
            self._scopes.pop()
            self._check_inside_acquire(stmt, kernels)
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            chosen = self.callbacks.get(stmt.name)
            dm = frozenset(chosen) if chosen else self.dm
            Planner(self.ctx, self.state, dm=dm, extern=dm if chosen else self.extern).analyze(
                stmt.body
            )
            return
        bound = bound_acquisition(stmt, self.ctx.dfb_names)
        if bound is not None:
            self.state.select(stmt, {self.owners[bound[0]]})
            return
        handle = _assigned_copy_target(stmt)
        if handle is not None:
            raise self.ctx.error(
                stmt,
                f"assigned transfer handle '{handle}' is not supported yet; write `ttl.copy(...).wait()` "
                "as a single statement instead",
            )
        kernels = self._anchor_kernels(stmt)
        if kernels:
            self.state.select(stmt, kernels)
        self._record_inline(stmt, kernels)

    def _annotate_control(self, stmt: ast.For | ast.While | ast.If | ast.With) -> None:
        children = list(stmt.body) + list(getattr(stmt, "orelse", []))
        for child in children:
            self._annotate(child)
        child_kernels: set[LogicalKernel] = set()
        for child in children:
            child_kernels |= self._descendant_kernels(child)
        header = self._anchor_kernels(self._header(stmt))
        for node in iter_skip_nested(self._header(stmt)):
            if acquisition(node, self.ctx.dfb_names) is not None:
                raise self.ctx.error(
                    node,
                    "a DFB acquisition in a control header cannot be placed; bind it first "
                    "(`blk = dfb.wait()`) or use `with dfb.wait() as blk:`",
                )
        if header:
            self.state.headers[id(stmt)] = frozenset(header)
            excluded = child_kernels - header
            if excluded:
                raise self.ctx.error(
                    stmt,
                    "selected control expression excludes logical kernels used by its body "
                    f"({format_kernels(excluded)})",
                )
            child_kernels |= header
        if child_kernels:
            self.state.select(stmt, child_kernels)

    @staticmethod
    def _header(stmt: ast.For | ast.While | ast.If | ast.With) -> ast.AST:
        if isinstance(stmt, (ast.If, ast.While)):
            return stmt.test
        if isinstance(stmt, ast.For):
            return stmt.iter
        return ast.Tuple(elts=[item.context_expr for item in stmt.items], ctx=ast.Load())

    def _descendant_kernels(self, stmt: ast.stmt) -> set[LogicalKernel]:
        kernels: set[LogicalKernel] = set()
        pending = [stmt]
        while pending:
            node = pending.pop()
            kernels |= self.state.anchors.get(id(node), frozenset())
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            pending.extend(c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt))
        return kernels

    def _with_owner(self, stmt: ast.With) -> set[LogicalKernel] | None:
        merged: set[LogicalKernel] = set()
        any_dfb = False
        for item in stmt.items:
            named = with_item_block(item, self.ctx.dfb_names)
            if named is None:
                continue
            any_dfb = True
            merged.add(self.owners[(named[0], id(stmt))])
        return merged if any_dfb else None

    def _check_inside_acquire(self, stmt: ast.With, owner: set[LogicalKernel]) -> None:
        pending = list(stmt.body)
        while pending:
            node = pending.pop(0)
            selected = self.state.anchors.get(id(node))
            if selected is not None and not selected <= owner:
                raise self.ctx.error(
                    node,
                    f"statement selects logical kernels ({format_kernels(selected)}) outside its enclosing "
                    f"DFB acquire owner ({format_kernels(owner)})",
                )
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                pending.extend(c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt))

    def _anchor_kernels(self, root: ast.AST) -> set[LogicalKernel]:
        """The one selection shared by every anchor of an indivisible statement."""
        selections: list[Selection] = []
        for node in iter_skip_nested(root):
            if isinstance(node, ast.Call):
                selection = self._classify(node)
                if selection:
                    selections.append(selection)
                    called = ttl_call_name(node)
                    if isinstance(root, ast.stmt) and called and called[0] in registry.RESET_CALLS:
                        self.state.syncs.append((root, node))
            elif isinstance(node, ast.BinOp) and (
                isinstance(node.op, ast.MatMult)
                or self._owner(expr_root_name(node.left)) is not None
                or self._owner(expr_root_name(node.right)) is not None
            ):
                selections.append(frozenset({COMPUTE}))
            elif (
                isinstance(node, ast.AugAssign)
                and self._owner(expr_root_name(node.target)) is not None
            ):
                selections.append(frozenset({self._owner(expr_root_name(node.target))}))
            elif (
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, ast.Store)
                and (self._owner(expr_root_name(node.value)) is not None)
            ):
                selections.append(frozenset({COMPUTE}))
        if not selections:
            return set()
        expected = selections[0]
        for other in selections[1:]:
            if other != expected:
                raise self.ctx.error(
                    root,
                    f"calls in one indivisible expression select different logical kernels "
                    f"({format_kernels(expected)} versus {format_kernels(other)}); split the calls into "
                    "separate statements",
                )
        return set(expected)

    def _classify(self, call: ast.Call) -> Selection | None:
        selection = self.classify_ttl(call, self.dm, self.extern)
        if selection is not None:
            return selection
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner = self._owner(func.value.id)
            if owner is not None:
                if func.attr == "store":
                    return frozenset({COMPUTE})
                if func.attr in registry.RELEASE_METHODS:
                    return frozenset({owner})
        return None

    def _record_inline(self, stmt: ast.stmt, kernels: set[LogicalKernel]) -> None:
        """Unbound ``dfb.wait()`` / ``dfb.reserve()``: the compiler inserts the release."""
        for node in iter_skip_nested(stmt):
            if not isinstance(node, ast.Call):
                continue
            acq = acquisition(node, self.ctx.dfb_names)
            if acq is None:
                continue
            if not kernels:
                raise self.ctx.error(
                    node,
                    f"result of {acq[0]}.{acq[1]}() has no uses; the splitter cannot infer a logical "
                    "kernel and the release has no explicit kernel selector",
                )
            if len(kernels) != 1:
                raise self.ctx.error(
                    node,
                    f"DFB block of {acq[0]}.{acq[1]}() is used by multiple logical kernels "
                    f"({format_kernels(kernels)}); each .reserve()/.wait() must resolve to exactly one kernel",
                )
            self.state.inline.append((stmt, node, acq[0], acq[1]))
