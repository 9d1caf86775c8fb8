"""Composition: expanding calls of unified operations in place (reference B.8).

A standalone expression statement ``sub_op(a, b)`` whose callee resolves to a
*unified* operation is expanded at decoration, macro-style, recursively and also
inside compound statements.  The callee's composed body is copied with

* its parameters replaced by the caller's argument names (bare names only),
* its locals renamed with the suffix ``__<callee>_inl_<sha12>_<n>`` (sha256 of the
  callee identity and the call's AST, ``n`` counting identical calls),
* its compile-time literal captures substituted as constants, and every other
  captured value reached through a name injected into the caller's scope: shared by
  identity (PipeNets, Kernel handles, allocation groups, dispatch conditions,
  functions...) so repeated calls reuse one logical kernel, except ``DFBReset`` /
  ``DFBReconfiguration``, which get a fresh instance per call site.

Resource declarations of a callee expanded inside a compound statement are
hoisted to the caller's top level (before the statement that holds the call).
Statements from another file are relocated to the call's line, so diagnostics point
into the caller's file.  Multi-kernel operations never compose.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from dataclasses import dataclass, field
from typing import TypeGuard

from tilewright.compiler.record import ComposableOperation, OperationRecord
from tilewright.compiler.scope import MISSING, Scope, is_ttl_module
from tilewright.compiler.split import registry
from tilewright.compiler.split.astutil import (
    assigned_names_in,
    bound_names_in_target,
    free_loads,
    nested_scope_bindings,
)
from tilewright.compiler.split.lifecycle_sites import is_extern_call
from tilewright.compiler.split.lift import setup_factory
from tilewright.errors import SplitError
from tilewright.lang.extern.plan import CallSite, ExternPlan, renamed_site

__all__ = ["INLINED", "Composer"]

INLINED = "_ttl_inlined"  # on statements produced by composition: the call statement they expand
_NESTED_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_SHARED_BY_CALL_SITE = ("DFBReset", "DFBReconfiguration")
# Operation resources always reach the caller through an injected name (shared by identity, or a
# fresh instance per call site), never through a caller name that happens to hold the same object.
_RESOURCES = ("Kernel", "PipeNet", "DispatchCondition", "DFBAllocationGroup", *_SHARED_BY_CALL_SITE)


def _is_operation(value: object) -> TypeGuard[ComposableOperation]:
    """Whether ``value`` is an ``@ttl.operation`` (by the record it exposes, not its class)."""
    return isinstance(getattr(value, "record", None), OperationRecord) and hasattr(
        value, "split_plan"
    )


def _is_literal(value) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return type(value) in (bool, int, float, str, type(None))
    if isinstance(value, (tuple, list)):
        return all(_is_literal(v) for v in value)
    return False


def _literal_node(value) -> ast.expr:
    if isinstance(value, tuple):
        return ast.Tuple(elts=[_literal_node(v) for v in value], ctx=ast.Load())
    if isinstance(value, list):
        return ast.List(elts=[_literal_node(v) for v in value], ctx=ast.Load())
    return ast.Constant(value)


def _identifiers(root: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(root):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
    return names


def _outer_locals(fn: ast.FunctionDef) -> set[str]:
    """Names the callee binds in its own scope (not inside nested scopes)."""
    names = assigned_names_in(fn.body)
    for node in ast.walk(fn):
        if isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _nested_bindings(scope: ast.AST) -> set[str]:
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        names = nested_scope_bindings(scope)
    else:
        names = set()
    if isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        for gen in scope.generators:
            names |= bound_names_in_target(gen.target)
    return names


@dataclass
class _Expansion:
    """Per-call bookkeeping while one callee body is substituted."""

    params: dict[str, ast.Name] = field(default_factory=dict)
    renames: dict[str, str] = field(default_factory=dict)
    values: dict[str, ast.expr] = field(default_factory=dict)


class _Substitute(ast.NodeTransformer):
    def __init__(self, exp: _Expansion, callee: str, caller: str, src, call: ast.AST) -> None:
        self.exp = exp
        self.callee = callee
        self.caller = caller
        self.src = src
        self.call = call

    def visit_FunctionDef(self, node):
        node.name = self.exp.renames.get(node.name, node.name)
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Name(self, node: ast.Name):
        if node.id in self.exp.params:
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                raise self.src.error_at(
                    self.call,
                    f"@ttl.operation: composing '{self.callee}' into '{self.caller}' cannot assign to "
                    f"parameter '{node.id}'",
                    cls=SplitError,
                )
            return ast.copy_location(ast.Name(self.exp.params[node.id].id, ast.Load()), node)
        if node.id in self.exp.renames:
            return ast.copy_location(ast.Name(self.exp.renames[node.id], node.ctx), node)
        if node.id in self.exp.values and isinstance(node.ctx, ast.Load):
            replacement = copy.deepcopy(self.exp.values[node.id])
            for n in ast.walk(replacement):
                ast.copy_location(n, node)
            return replacement
        return node


class Composer:
    """Expands composed calls in a caller's body (a private copy of its tree)."""

    def __init__(self, src, tree: ast.FunctionDef, scope: Scope, caller: str) -> None:
        self.src = src
        self.tree = tree
        self.scope = scope
        self.caller = caller
        self.reserved = _identifiers(tree)
        self.injected: dict[str, object] = {}
        self._shared: dict[int, str] = {}
        self._occurrences: dict[str, int] = {}
        self.caller_locals = _outer_locals(tree) | {a.arg for a in tree.args.args}
        self.composed_sites: list[CallSite] = []  # external calls copied from callees

    def error(self, node: ast.AST, message: str) -> SplitError:
        return self.src.error_at(node, message, cls=SplitError)

    # -- driver ----------------------------------------------------------------------------------

    def run(self) -> dict[str, object]:
        """Expand every composed call; hoist composed resource declarations; return injected names."""
        self.tree.body = self._statements(self.tree.body)
        self._hoist()
        return self.injected

    def _statements(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            for key in ("body", "orelse", "finalbody"):
                block = getattr(stmt, key, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    setattr(stmt, key, self._statements(block))
            for handler in getattr(stmt, "handlers", None) or ():
                handler.body = self._statements(handler.body)
            standalone = self._standalone(stmt)
            if standalone is None:
                self._reject_calls(stmt)
                out.append(stmt)
                continue
            callee, call = standalone
            out.extend(self._expand(callee, stmt, call))
        return out

    def _standalone(self, stmt: ast.stmt) -> tuple[ComposableOperation, ast.Call] | None:
        """(the unified operation, the call) of a statement that only calls one, else None."""
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            return None
        call = stmt.value
        func = call.func
        if not isinstance(func, ast.Name) or func.id == self.caller:
            return None
        value = self.scope.lookup(func.id)
        if not _is_operation(value) or value.record.multi_kernel:
            return None
        return value, call

    def _reject_calls(self, stmt: ast.stmt) -> None:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Name) and node.func.id == self.caller:
                raise self.error(node, f"@ttl.operation '{self.caller}' cannot compose itself")
            value = self.scope.resolve(node.func)
            if not _is_operation(value):
                continue
            ref = ast.unparse(node.func)
            if value.record.multi_kernel:
                raise self.error(
                    node,
                    f"@ttl.operation: cannot compose multi-kernel operation '{ref}' into '{self.caller}'",
                )
            if isinstance(node.func, ast.Attribute):
                raise self.error(
                    node,
                    f"@ttl.operation: compose '{ref}' through a captured name instead of a qualified reference",
                )
            raise self.error(
                node,
                f"@ttl.operation: composed call to '{ref}' in '{self.caller}' must be a standalone statement",
            )

    # -- one expansion -----------------------------------------------------------------------------

    def _expand(
        self, callee: ComposableOperation, stmt: ast.stmt, call: ast.Call
    ) -> list[ast.stmt]:
        plan = callee.split_plan
        if plan is None:  # a unified operation is split when it is decorated
            raise self.error(
                call, f"@ttl.operation: '{callee.record.name}' has no split plan to compose"
            )
        name = callee.record.name
        exp = _Expansion()
        exp.params = self._bind_arguments(callee, call)
        suffix = self._suffix(plan.identity, name, call)
        body_def = plan.body
        callee_scope = Scope(callee.record.fn, dict(plan.injected))
        locals_ = _outer_locals(body_def)
        for local in sorted(locals_ - set(exp.params)):
            exp.renames[local] = self._fresh(local + suffix)
        loads = {
            n.id
            for n in ast.walk(body_def)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        for free in sorted(loads - locals_ - set(exp.params)):
            self._bind_free(free, callee_scope, exp, name, suffix, call)
        self._check_nested(body_def, exp, locals_, name, call)
        relocate = callee.record.source.file != self.src.file
        position = (
            ("lineno", stmt.lineno),
            ("end_lineno", stmt.lineno),
            ("col_offset", stmt.col_offset),
            ("end_col_offset", stmt.end_col_offset),
        )
        names = {p: arg.id for p, arg in exp.params.items()} | exp.renames
        out: list[ast.stmt] = []
        for original in body_def.body:
            clone = copy.deepcopy(original)
            self._name_extern_sites(callee, clone, names, call)
            clone = _Substitute(exp, name, self.caller, self.src, call).visit(clone)
            if relocate:  # every positioned node (stmt, expr, arg, ...) points at the call
                for n in ast.walk(clone):
                    if hasattr(n, "lineno"):
                        for attr, value in position:
                            setattr(n, attr, value)
            ast.fix_missing_locations(clone)
            setattr(clone, INLINED, stmt)  # the call statement it came from
            out.append(clone)
        return out

    def _name_extern_sites(
        self, callee: ComposableOperation, stmt: ast.stmt, names: dict[str, str], call: ast.Call
    ) -> None:
        """Give every external call copied from ``callee`` its validated call site (C, B.8).

        The callee validated the call in its own scope; the caller gets a copy of that
        site under the caller's DFB and tensor names, and the copied call names it
        (``_site=<id>``), so the run time and the caller's lifecycle proofs find it
        wherever composition placed the statement.
        """
        for node in ast.walk(stmt):
            if not is_extern_call(node):
                continue
            assert isinstance(node, ast.Call)
            site = _callee_site(callee.extern_plan, node)
            if site is None:
                raise self.error(
                    call,
                    f"@ttl.operation: composing '{callee.record.name}' into '{self.caller}': its "
                    f"ttl.call_extern_func at line {node.lineno} has no validated call site",
                )
            copied = renamed_site(site, names)
            self.composed_sites.append(copied)
            node.keywords = [k for k in node.keywords if k.arg != registry.EXTERN_SITE_KEYWORD]
            node.keywords.append(ast.keyword(registry.EXTERN_SITE_KEYWORD, ast.Constant(copied.id)))

    def _suffix(self, identity: str, name: str, call: ast.Call) -> str:
        text = ast.dump(call, annotate_fields=True, include_attributes=False)
        digest = hashlib.sha256(f"{identity}\0{text}".encode()).hexdigest()[:12]
        n = self._occurrences.get(digest, 0)
        self._occurrences[digest] = n + 1
        return f"__{name}_inl_{digest}_{n}"

    def _fresh(self, base: str) -> str:
        candidate, n = base, 0
        while candidate in self.reserved:
            n += 1
            candidate = f"{base}_{n}"
        self.reserved.add(candidate)
        return candidate

    def _bind_free(
        self,
        free: str,
        callee_scope: Scope,
        exp: _Expansion,
        callee: str,
        suffix: str,
        call: ast.Call,
    ) -> None:
        value = callee_scope.lookup(free)
        if value is MISSING:
            return
        if _is_literal(value):
            exp.values[free] = _literal_node(value)
            return
        resource = type(value).__name__ in _RESOURCES
        if (
            not resource
            and free not in self.caller_locals
            and free not in self.injected
            and (self.scope.lookup(free) is value)
        ):
            return  # the caller sees the same object under the same name
        if free == "ttl" and is_ttl_module(value):
            if free in self.caller_locals or self.scope.lookup(free) not in (MISSING, value):
                raise self.error(
                    call, f"composing '{callee}': 'ttl' means something else in '{self.caller}'"
                )
            self.injected["ttl"] = value
            return
        if type(value).__name__ in _SHARED_BY_CALL_SITE:
            fresh = self._fresh(f"{callee}__{free}{suffix}")
            self.injected[fresh] = _fresh_instance(value)
        else:
            shared = self._shared.get(id(value))
            if shared is None:
                shared = self._fresh(f"{callee}__{free}")
                self._shared[id(value)] = shared
                self.injected[shared] = value
            fresh = shared
        exp.values[free] = ast.Name(fresh, ast.Load())

    def _bind_arguments(self, callee, call: ast.Call) -> dict[str, ast.Name]:
        name = callee.record.name
        where = f"composing '{name}' into '{self.caller}'"
        if any(isinstance(a, ast.Starred) for a in call.args):
            raise self.error(call, f"@ttl.operation: {where} does not support *-unpacking")
        if any(k.arg is None for k in call.keywords):
            raise self.error(call, f"@ttl.operation: {where} does not support **-unpacking")
        params = list(callee.record.interface.params)
        if len(call.args) > len(params):
            raise self.error(
                call, f"@ttl.operation: {where} received too many positional arguments"
            )
        bound: dict[str, ast.expr] = dict(zip(params, call.args))
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        unknown = sorted(set(keywords) - set(params))
        if unknown:
            raise self.error(call, f"@ttl.operation: {where} received unknown arguments {unknown}")
        for p in params:
            if p in bound:
                if p in keywords:
                    raise self.error(call, f"@ttl.operation: argument '{p}' was passed twice")
                continue
            if p not in keywords:
                raise self.error(call, f"@ttl.operation: missing argument '{p}' while {where}")
            bound[p] = keywords[p]
        names: dict[str, ast.Name] = {}
        for p, arg in bound.items():
            if not isinstance(arg, ast.Name):
                raise self.error(
                    arg,
                    f"@ttl.operation: argument '{p}' while {where} must be a tensor or resource name",
                )
            names[p] = arg
        return names

    def _check_nested(
        self,
        body_def: ast.FunctionDef,
        exp: _Expansion,
        locals_: set[str],
        callee: str,
        call: ast.Call,
    ) -> None:
        protected = set(exp.params) | locals_ | set(exp.values)
        protected |= {arg.id for arg in exp.params.values()}
        for scope in ast.walk(body_def):
            if scope is body_def or not isinstance(scope, _NESTED_SCOPES):
                continue
            conflicts = _nested_bindings(scope) & protected
            if conflicts:
                raise self.error(
                    call,
                    f"@ttl.operation: composing '{callee}' into '{self.caller}' would capture or rebind "
                    f"{sorted(conflicts)}; rename the nested binding",
                )

    # -- hoisting ----------------------------------------------------------------------------------

    def _hoist(self) -> None:
        """Composed resource declarations inside compound statements move to the top level."""
        params = {a.arg for a in self.tree.args.args}
        static = params | set(self.injected)
        dynamic = assigned_names_in(self.tree.body) - params

        def is_decl(stmt: ast.stmt) -> TypeGuard[ast.Assign]:
            return (
                bool(getattr(stmt, INLINED, False))
                and isinstance(stmt, ast.Assign)
                and (setup_factory(stmt.value, self.scope) is not None)
            )

        def collect(stmts: list[ast.stmt]) -> tuple[list[ast.stmt], list[ast.stmt]]:
            kept: list[ast.stmt] = []
            hoisted: list[ast.stmt] = []
            for stmt in stmts:
                if is_decl(stmt):
                    deps = sorted((free_loads(stmt.value) & dynamic) - static - self._decl_names)
                    if deps:
                        raise self.error(
                            getattr(stmt, INLINED),
                            f"@ttl.operation '{self.caller}': composed resource declaration cannot be hoisted "
                            f"because it depends on operation-local values {deps}",
                        )
                    hoisted.append(stmt)
                    continue
                nested = self._nested_collect(stmt, collect)
                hoisted.extend(nested)
                kept.append(stmt)
            return kept, hoisted

        self._decl_names = {
            s.targets[0].id
            for s in ast.walk(self.tree)
            if isinstance(s, ast.Assign) and is_decl(s) and isinstance(s.targets[0], ast.Name)
        }
        out: list[ast.stmt] = []
        for stmt in self.tree.body:
            out.extend(self._nested_collect(stmt, collect))
            out.append(stmt)
        self.tree.body = out

    @staticmethod
    def _nested_collect(stmt: ast.stmt, collect) -> list[ast.stmt]:
        hoisted: list[ast.stmt] = []
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return hoisted
        for key in ("body", "orelse", "finalbody"):
            block = getattr(stmt, key, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                kept, moved = collect(block)
                setattr(
                    stmt,
                    key,
                    kept or ([ast.copy_location(ast.Pass(), stmt)] if key == "body" else []),
                )
                hoisted.extend(moved)
        for handler in getattr(stmt, "handlers", None) or ():
            kept, moved = collect(handler.body)
            handler.body = kept or [ast.copy_location(ast.Pass(), handler)]
            hoisted.extend(moved)
        return hoisted


def _callee_site(plan: ExternPlan | None, call: ast.Call) -> CallSite | None:
    """The callee's validated site of ``call``: named by an earlier composition, else by position."""
    if plan is None:
        return None
    for k in call.keywords:
        if k.arg == registry.EXTERN_SITE_KEYWORD and isinstance(k.value, ast.Constant):
            site_id = k.value.value
            return plan.site_by_id(site_id) if isinstance(site_id, int) else None
    return plan.site_at((call.lineno, call.end_lineno, call.col_offset, call.end_col_offset))


def _fresh_instance(value):
    """A new DFBReset / DFBReconfiguration with the same declaration (one per call site)."""
    return value.fresh_copy() if hasattr(value, "fresh_copy") else copy.copy(value)
