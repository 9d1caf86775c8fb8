"""AST helpers shared by the splitter's passes: names bound and loaded, statement walks.

Statements are addressed by *paths*: a tuple of ``(block, index)`` steps from the
operation body (``("body", 3), ("orelse", 0)``), so a plan computed on one tree
applies to a faithful copy of it.  Nested functions and lambdas are separate
scopes: walks that collect a statement's own anchors or loads stop at them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

__all__ = [
    "NESTED_FUNCTIONS",
    "assigned_names_in",
    "bound_names_in_target",
    "child_blocks",
    "control_header_loaded_names",
    "direct_bound_names",
    "direct_loaded_names",
    "expr_root_name",
    "free_loads",
    "function_header_loaded_names",
    "iter_skip_nested",
    "loaded_names_in",
    "nested_scope_bindings",
    "statement_at",
    "ttl_call_name",
    "walk_with_paths",
]

NESTED_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def iter_skip_nested(root: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``root`` without entering nested functions or lambdas."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, NESTED_FUNCTIONS):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def bound_names_in_target(target: ast.AST) -> set[str]:
    names: set[str] = set()
    if isinstance(target, ast.Name):
        names.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            names |= bound_names_in_target(elt)
    elif isinstance(target, ast.Starred):
        names |= bound_names_in_target(target.value)
    return names


def direct_bound_names(stmt: ast.stmt) -> set[str]:
    """Names a simple statement binds (assignments and walrus targets)."""
    names: set[str] = set()
    if isinstance(stmt, ast.Assign):
        for t in stmt.targets:
            names |= bound_names_in_target(t)
    elif (
        isinstance(stmt, ast.AnnAssign)
        and stmt.value is not None
        or isinstance(stmt, ast.AugAssign)
    ):
        names |= bound_names_in_target(stmt.target)
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            names.add((alias.asname or alias.name).split(".")[0])
    for node in iter_skip_nested(stmt):
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def loaded_names_in(root: ast.AST) -> set[str]:
    return {
        n.id
        for n in iter_skip_nested(root)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def _lambda_free_loads(root: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in iter_skip_nested(root):
        if isinstance(node, ast.Lambda) and node is not root:
            bound = nested_scope_bindings(node)
            out |= {n for n in loaded_names_in_all(node.body) if n not in bound}
    return out


def loaded_names_in_all(root: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(root) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def direct_loaded_names(stmt: ast.stmt) -> set[str]:
    """Names a simple statement reads (lambda free variables included)."""
    names = loaded_names_in(stmt) | _lambda_free_loads(stmt)
    if isinstance(stmt, ast.AugAssign):
        names |= bound_names_in_target(stmt.target)
    return names


def control_header_loaded_names(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.If, ast.While)):
        return loaded_names_in(stmt.test)
    if isinstance(stmt, ast.For):
        return loaded_names_in(stmt.iter)
    if isinstance(stmt, ast.With):
        names: set[str] = set()
        for item in stmt.items:
            names |= loaded_names_in(item.context_expr)
        return names
    return set()


def function_header_loaded_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    exprs: list[ast.expr] = list(fn.decorator_list) + list(fn.args.defaults)
    exprs += [d for d in fn.args.kw_defaults if d is not None]
    names: set[str] = set()
    for e in exprs:
        names |= loaded_names_in(e)
    return names


def assigned_names_in(stmts: list[ast.stmt]) -> set[str]:
    """Names bound anywhere in these statements (not inside nested functions)."""
    names: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
            continue
        names |= direct_bound_names(stmt)
        if isinstance(stmt, ast.For):
            names |= bound_names_in_target(stmt.target)
        if isinstance(stmt, ast.With):
            for item in stmt.items:
                if item.optional_vars is not None:
                    names |= bound_names_in_target(item.optional_vars)
        if isinstance(stmt, ast.Try):
            for h in stmt.handlers:
                if h.name:
                    names.add(h.name)
        for _key, block in child_blocks(stmt):
            names |= assigned_names_in(block)
    return names


def nested_scope_bindings(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """Names a nested function or lambda binds locally (parameters and assignments)."""
    args = fn.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    if args.vararg:
        names.add(args.vararg.arg)
    if args.kwarg:
        names.add(args.kwarg.arg)
    if isinstance(fn, ast.Lambda):
        return names
    declared_global: set[str] = set()
    for stmt in fn.body:
        for node in iter_skip_nested(stmt):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not stmt:
                names.add(node.name)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                declared_global |= set(node.names)
        names |= assigned_names_in([stmt])
    return names - declared_global


def child_blocks(stmt: ast.stmt) -> list[tuple[object, list[ast.stmt]]]:
    """The statement lists nested in a compound statement, keyed for paths."""
    out: list[tuple[object, list[ast.stmt]]] = []
    for key in ("body", "orelse", "finalbody"):
        block = getattr(stmt, key, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            out.append((key, block))
    for j, handler in enumerate(getattr(stmt, "handlers", None) or ()):
        out.append((("handler", j), handler.body))
    for j, case in enumerate(getattr(stmt, "cases", None) or ()):
        out.append((("case", j), case.body))
    return out


def walk_with_paths(body: list[ast.stmt], prefix: tuple = (), key: object = "body"):
    """(path, statement) for every statement, parents before children, in source order."""
    for i, stmt in enumerate(body):
        path = prefix + ((key, i),)
        yield path, stmt
        for child_key, block in child_blocks(stmt):
            yield from walk_with_paths(block, path, child_key)


def statement_at(fn: ast.FunctionDef, path: tuple) -> ast.stmt:
    """The statement at a ``walk_with_paths`` path of ``fn``'s body."""
    node: ast.stmt = fn
    for key, index in path:
        node = dict(child_blocks(node))[key][index]
    return node


def expr_root_name(node: ast.AST) -> str | None:
    """Leftmost name of ``a``, ``a.b``, ``a[i]``, ``a.f(...)``."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def ttl_call_name(call: ast.Call) -> tuple[str, ...] | None:
    """``ttl.copy(...)`` -> ("copy",); ``ttl.math.exp(...)`` -> ("math", "exp"); else None."""
    parts: list[str] = []
    node = call.func
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "ttl" and parts:
        return tuple(reversed(parts))
    return None


def free_loads(expr: ast.AST) -> set[str]:
    """Names an expression reads from its enclosing scope (comprehension targets excluded)."""
    out: set[str] = set()

    def visit(node: ast.AST, bound: frozenset[str]) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in bound:
                out.add(node.id)
            return
        if isinstance(node, _COMPREHENSIONS):
            inner = set(bound)
            for gen in node.generators:
                visit(gen.iter, frozenset(inner))
                inner |= bound_names_in_target(gen.target)
                for cond in gen.ifs:
                    visit(cond, frozenset(inner))
            elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for e in elts:
                visit(e, frozenset(inner))
            return
        if isinstance(node, ast.Lambda):
            visit(node.body, bound | nested_scope_bindings(node))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, bound)

    visit(expr, frozenset())
    return out
