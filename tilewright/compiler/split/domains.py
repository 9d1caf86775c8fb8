"""Launch-node domains of node-guarded code (reference C.7: "Disjoint exact launch-node
domains need no order").

A DFB used only inside ``if <test>:`` (or its ``else``) runs on the nodes where the test
holds.  The test is a *node guard* when it is built from:

* ``ttl.node(dims=k)`` and ``ttl.grid_size(dims=k)`` calls (``dims`` a literal int);
* int / bool literals, and names captured from the enclosing scope (read when the
  operation is called; they must then be ints);
* top-level names of the body bound exactly once, before the test, to such an
  expression (``node_id = ttl.node(dims=1)``, ``nx, ny = ttl.node(dims=2)``);
* tuples, constant subscripts, ``+ - * // %``, unary ``- + not``, comparisons and
  ``and`` / ``or``.

At decoration, :func:`node_names` finds the node-valued names and :func:`guard_term`
turns an ``if`` test into the text of an expression over those primitives (names
substituted), or a reason it is not a node guard.  When the operation is called,
:func:`nodes_of` evaluates a :class:`~.plan.NodeGuard` for every node of the grid with
the same definitions ``ttl.node`` / ``ttl.grid_size`` use at run time; anything it
cannot evaluate makes the domain unknown (and the DFB unshareable).
"""

from __future__ import annotations

import ast
import copy
import operator
from collections.abc import Callable
from dataclasses import dataclass

from tilewright.compiler.split.plan import NodeGuard
from tilewright.lang.declare import grid_extent, node_coords

__all__ = ["GuardError", "NodeNames", "guard_term", "node_names", "nodes_of"]

_BINOPS: dict[type, Callable] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_UNOPS: dict[type, Callable] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
}
_COMPARE: dict[type, Callable] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_NODE_CALLS = ("node", "grid_size")


class GuardError(Exception):
    """An expression that is not a node guard, or cannot be evaluated on some node."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class NodeNames:
    """Top-level names bound once to node values: name -> (definition, top-level index)."""

    definitions: dict[str, tuple[ast.expr, int]]
    assigned: frozenset[str]  # every name bound anywhere in the body (or a parameter)


def _node_call(node: ast.Call) -> str | None:
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "ttl"
        and func.attr in _NODE_CALLS
    ):
        return func.attr
    return None


def _dims(call: ast.Call) -> int:
    args = list(call.args)
    kws = {k.arg: k.value for k in call.keywords}
    if len(args) > 1 or set(kws) - {"dims"} or (args and kws):
        raise GuardError(f"{ast.unparse(call)} takes only dims")
    value = args[0] if args else kws.get("dims")
    if value is None:
        return 2
    if isinstance(value, ast.Constant) and type(value.value) is int and value.value >= 1:
        return value.value
    raise GuardError(f"{ast.unparse(call)}: dims must be a positive int literal")


def _substitute(expr: ast.expr, names: NodeNames, before: int, captures: set[str]) -> ast.expr:
    """``expr`` with node-valued names replaced by their definitions; checks the grammar."""

    def visit(node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Constant):
            if type(node.value) not in (int, bool):
                raise GuardError(f"{node.value!r} is not an int")
            return node
        if isinstance(node, ast.Name):
            found = names.definitions.get(node.id)
            if found is not None:
                definition, index = found
                if index >= before:
                    raise GuardError(f"'{node.id}' is bound after the condition")
                return visit(copy.deepcopy(definition))  # collects its captured names
            if node.id in names.assigned:
                raise GuardError(f"'{node.id}' is a local value, not a node coordinate")
            captures.add(node.id)
            return node
        if isinstance(node, ast.Call):
            if _node_call(node) is None:
                raise GuardError(f"{ast.unparse(node.func)}(...) is not ttl.node or ttl.grid_size")
            _dims(node)
            return node
        if isinstance(node, ast.Tuple):
            return ast.Tuple([visit(e) for e in node.elts], ast.Load())
        if isinstance(node, ast.Subscript):
            sub = node.slice
            if not (isinstance(sub, ast.Constant) and type(sub.value) is int):
                raise GuardError(f"{ast.unparse(node)}: only constant int subscripts are supported")
            return ast.Subscript(visit(node.value), sub, ast.Load())
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNOPS:
            return ast.UnaryOp(node.op, visit(node.operand))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return ast.BinOp(visit(node.left), node.op, visit(node.right))
        if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            return ast.Compare(visit(node.left), node.ops, [visit(c) for c in node.comparators])
        if isinstance(node, ast.BoolOp):
            return ast.BoolOp(node.op, [visit(v) for v in node.values])
        raise GuardError(f"{ast.unparse(node)} is not a node expression")

    return visit(expr)


def _bound_anywhere(tree: ast.FunctionDef) -> dict[str, int]:
    """How often each name is bound in the body (any scope: conservative)."""
    counts: dict[str, int] = {}

    def bump(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bump(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node is not tree:
                bump(node.name)
        elif isinstance(node, ast.arg):
            bump(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bump((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bump(name)
                bump(name)  # rebinding through global / nonlocal: never a node name
    return counts


def node_names(tree: ast.FunctionDef) -> NodeNames:
    """The body's top-level names bound exactly once to node values (in source order)."""
    counts = _bound_anywhere(tree)
    params = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)}
    names = NodeNames({}, frozenset(counts) | frozenset(params))
    for index, stmt in enumerate(tree.body):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target = stmt.targets[0]
        try:
            value = _substitute(stmt.value, names, index, set())
        except GuardError:
            continue
        if isinstance(target, ast.Name):
            pairs = [(target.id, value)]
        elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            pairs = [
                (e.id, ast.Subscript(value, ast.Constant(i), ast.Load()))
                for i, e in enumerate(target.elts)
                if isinstance(e, ast.Name)
            ]
        else:
            continue
        for name, definition in pairs:
            if counts.get(name) == 1 and name not in params:
                names.definitions[name] = (definition, index)
    return names


def guard_term(test: ast.expr, names: NodeNames, before: int) -> tuple[str, tuple[str, ...]]:
    """(expression text, captured names) of a node guard; raises ``GuardError`` otherwise.

    ``before`` is the top-level index of the statement holding the test: node-valued
    names must be bound before it.
    """
    captures: set[str] = set()
    expr = _substitute(test, names, before, captures)
    return ast.unparse(expr), tuple(sorted(captures))


def _evaluate(node: ast.AST, grid, xy, env: dict[str, int]):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.Call):
        dims = _dims(node)
        if _node_call(node) == "node":
            return node_coords(grid, xy, dims)
        return grid_extent(grid, dims)
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(e, grid, xy, env) for e in node.elts)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return _evaluate(node.value, grid, xy, env)[node.slice.value]
    if isinstance(node, ast.UnaryOp):
        return _UNOPS[type(node.op)](_evaluate(node.operand, grid, xy, env))
    if isinstance(node, ast.BinOp):
        left, right = (_evaluate(n, grid, xy, env) for n in (node.left, node.right))
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, grid, xy, env)
        for op, comparator in zip(node.ops, node.comparators):
            right = _evaluate(comparator, grid, xy, env)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        value = None
        for v in node.values:
            value = _evaluate(v, grid, xy, env)
            if isinstance(node.op, ast.And) != bool(value):
                return value
        return value
    raise GuardError(f"{ast.unparse(node)} is not a node expression")


def nodes_of(guard: NodeGuard, grid, lookup: Callable[[str], object]) -> frozenset[tuple[int, int]]:
    """The nodes (x, y) of a (columns, rows) grid on which every term of ``guard`` holds.

    ``lookup`` resolves captured names when the operation is called.  Raises
    ``GuardError`` when a term cannot be evaluated on some node.
    """
    env: dict[str, int] = {}
    for name in guard.captures:
        value = lookup(name)
        if not (type(value) is int or type(value) is bool):
            raise GuardError(f"captured '{name}' is {type(value).__name__}, not an int")
        env[name] = value
    terms = [(ast.parse(text, mode="eval").body, polarity) for text, polarity, _ in guard.terms]
    out = set()
    for x in range(grid[0]):
        for y in range(grid[1]):
            try:
                if all(bool(_evaluate(t, grid, (x, y), env)) == pol for t, pol in terms):
                    out.add((x, y))
            except (ArithmeticError, TypeError, IndexError) as exc:
                raise GuardError(
                    f"the condition cannot be evaluated on node {(x, y)}: {exc}"
                ) from exc
    return frozenset(out)
