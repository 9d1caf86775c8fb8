"""Control-flow retention and scalar liveness (reference B.5).

A backward dataflow over the structured body: for every name, the set of logical
kernels that read it later.  A definition whose value some kernel reads is kept in
that kernel: unanchored statements already run on every kernel of their region;
a control statement (``for`` / ``while`` / ``if``) whose body defines a value read
by other kernels is extended to them.  When an *anchored* statement, a DFB
acquisition region or an anchored control header would have to run on a kernel it
excludes, the program is rejected with the reference's messages.  Loops iterate to
a fixpoint.
"""

from __future__ import annotations

import ast

from tilewright.compiler.split.astutil import (
    assigned_names_in,
    bound_names_in_target,
    control_header_loaded_names,
    direct_bound_names,
    direct_loaded_names,
    function_header_loaded_names,
    loaded_names_in,
    nested_scope_bindings,
)
from tilewright.compiler.split.placement import State
from tilewright.errors import SplitError
from tilewright.lang.selectors import format_kernels

__all__ = ["LivenessPlanner"]

Live = dict  # name -> set[LogicalKernel]


def _copy(live: Live) -> Live:
    return {k: set(v) for k, v in live.items()}


def _merge(*maps: Live) -> Live:
    out: Live = {}
    for m in maps:
        for name, ks in m.items():
            out.setdefault(name, set()).update(ks)
    return out


def _restrict(live: Live, kernels) -> Live:
    out = {}
    for name, ks in live.items():
        kept = set(ks) & set(kernels)
        if kept:
            out[name] = kept
    return out


def _exclude(live: Live, kernels) -> Live:
    out = {}
    for name, ks in live.items():
        kept = set(ks) - set(kernels)
        if kept:
            out[name] = kept
    return out


class LivenessPlanner:
    """Keep scalar definitions in every kernel that observes them (reference B.5)."""

    def __init__(self, src, state: State, all_kernels: frozenset) -> None:
        self.src = src
        self.state = state
        self.all = all_kernels

    def error(self, node: ast.AST, message: str) -> SplitError:
        return self.src.error_at(node, message, cls=SplitError)

    def analyze(self, body: list[ast.stmt]) -> None:
        self._body(body, {}, self.all)

    def _selection(self, stmt: ast.stmt, parent) -> frozenset:
        return self.state.anchors.get(id(stmt), parent)

    def _body(self, body: list[ast.stmt], live_out: Live, parent) -> Live:
        live = _copy(live_out)
        for stmt in reversed(body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = self._body(stmt.body, {}, self.all)
                local = nested_scope_bindings(stmt)
                live = _merge(live, {n: ks for n, ks in inner.items() if n not in local})
                for name in function_header_loaded_names(stmt):
                    live.setdefault(name, set()).update(parent)
                live.get(stmt.name, set()).difference_update(self._selection(stmt, parent))
            elif isinstance(stmt, (ast.For, ast.While, ast.If)):
                live = self._control(stmt, live, parent)
            elif isinstance(stmt, ast.With):
                live = self._with(stmt, live, parent)
            else:
                live = self._simple(stmt, live, parent)
        return live

    @staticmethod
    def _required(names: set[str], live: Live) -> set:
        out: set = set()
        for name in names:
            out |= live.get(name, set())
        return out

    def _control(self, stmt, live: Live, parent) -> Live:
        assigned = assigned_names_in(stmt.body + stmt.orelse)
        if isinstance(stmt, ast.For):
            assigned |= bound_names_in_target(stmt.target)
        required = self._required(assigned, live)
        header = self.state.headers.get(id(stmt))
        if header is not None:
            excluded = required - set(header)
            if excluded:
                raise self.error(
                    stmt,
                    "selected control expression excludes logical kernels that consume values "
                    f"defined by its body ({format_kernels(excluded)})",
                )
        if required:
            self.state.extend(stmt, required)
        kernels = self._selection(stmt, parent)
        outside = _exclude(live, kernels)
        branch_out = _restrict(live, kernels)
        else_live = self._body(stmt.orelse, branch_out, kernels)
        if isinstance(stmt, ast.If):
            body_live = self._body(stmt.body, branch_out, kernels)
            result = _merge(outside, body_live, else_live)
        else:
            exit_live = _merge(branch_out, else_live)
            if isinstance(stmt, ast.While):
                for name in control_header_loaded_names(stmt):
                    exit_live.setdefault(name, set()).update(kernels)
            entry = _copy(exit_live)
            while True:
                body_live = self._body(stmt.body, entry, kernels)
                if isinstance(stmt, ast.For):
                    for name in bound_names_in_target(stmt.target):
                        body_live.get(name, set()).difference_update(kernels)
                nxt = _merge(exit_live, body_live)
                if nxt == entry:
                    break
                entry = nxt
            result = _merge(outside, entry)
        if not isinstance(stmt, ast.While):
            for name in control_header_loaded_names(stmt):
                result.setdefault(name, set()).update(kernels)
        return result

    def _with(self, stmt: ast.With, live: Live, parent) -> Live:
        optional: set[str] = set()
        for item in stmt.items:
            if item.optional_vars is not None:
                optional |= bound_names_in_target(item.optional_vars)
        assigned = assigned_names_in(stmt.body) | optional
        required = self._required(assigned, live)
        kernels = self._selection(stmt, parent)
        missing = required - set(kernels)
        if id(stmt) not in self.state.acquires:
            if required:  # a plain `with` is retained like a control statement
                self.state.extend(stmt, required)
                kernels = self._selection(stmt, parent)
        elif missing:
            raise self.error(
                stmt,
                "values defined inside a selected DFB acquisition are used by excluded logical "
                f"kernels ({format_kernels(missing)})",
            )
        body_live = self._body(stmt.body, _restrict(live, kernels), kernels)
        for item in reversed(stmt.items):
            if item.optional_vars is not None:
                for name in bound_names_in_target(item.optional_vars):
                    body_live.get(name, set()).difference_update(kernels)
            for name in loaded_names_in(item.context_expr):
                body_live.setdefault(name, set()).update(kernels)
        return _merge(_exclude(live, kernels), body_live)

    def _simple(self, stmt: ast.stmt, live: Live, parent) -> Live:
        kernels = self._selection(stmt, parent)
        anchored = id(stmt) in self.state.anchors
        for name in direct_bound_names(stmt):
            required = live.get(name, set())
            missing = required - set(kernels)
            if missing and anchored:
                raise self.error(
                    stmt,
                    f"value '{name}' is produced for ({format_kernels(kernels)}) but consumed by "
                    f"excluded logical kernels ({format_kernels(missing)})",
                )
            required.difference_update(kernels)
        for name in direct_loaded_names(stmt):
            live.setdefault(name, set()).update(kernels)
        return live
