"""Python helpers in kernel code: functions and generators, inlined (issue 21).

TT-Lang programs compute tile coordinates in small Python helpers defined in the
operation body (or a module) and loop over generators of them::

    def my_blocks():
        x, y = ttl.node(dims=2)
        for i in range(per_row):
            yield y * per_row + i, x

    @ttl.datamovement()
    def reader():
        for r, c in my_blocks():
            ...

The lowering inlines both, so the hardware code is the loop nest the Python runs:

* a call of a helper function is lowered at the call site with its arguments bound
  (``Lowering.inline``); a ``return`` may only be its last statement;
* ``for T in gen(args): body`` is the generator's body with each ``yield v`` replaced by
  ``T = v`` followed by ``body`` (:func:`expand_for`): the generator's loops become the
  loop nest, its locals renamed apart (``tw.g<k>.<name>``, C++ ``tw_g<k>_d<name>``, a
  prefix user names never take) so they cannot meet the caller's.  The expansion is
  plain statements of the caller's scope, so every analysis of the lowering (assignment
  sites, loop-variable stability, node-dependent branches, block states) sees the
  program that runs.

A helper's free names resolve in its own closure and module (per node), as Python's do.
What the expansion cannot keep equal to Python is refused with the construct and line:
a ``return`` in a generator, ``yield from``, ``yield`` as a value or inside ``try``, a
function defined in a generator, recursion, ``break`` / ``continue`` in the body of a
loop over a generator, a generator used other than as a ``for`` iterable.  Helpers are
the functions of the operation's own file; a function of another module (a library)
stays not compilable.
"""

from __future__ import annotations

import ast
import copy
import types
from typing import Any

from tilewright.compiler.backend.lower.analysis import assigned
from tilewright.compiler.backend.lower.values import FuncRef, HelperRef, Value
from tilewright.compiler.source import same_file, source_of
from tilewright.errors import TilewrightError

Lowering = Any  # the kernel lowering (lower/kernel.py), which imports this module

__all__ = [
    "is_helper",
    "helper_ref",
    "is_generator",
    "generator_call",
    "lower_for",
    "own_nodes",
]


def is_helper(lw: Lowering, first: object, values: list) -> bool:
    """A Python function defined in the operation's file (the same code on every node):
    kernel code may call it, inlined.  Functions of other modules (libraries, the standard
    library) are not the user's kernel code, and stay not compilable."""
    if not isinstance(first, types.FunctionType):
        return False
    if any(
        not isinstance(v, types.FunctionType) or v.__code__ is not first.__code__ for v in values
    ):
        return False
    return same_file(first.__code__.co_filename, lw.kin.file)


def helper_ref(lw: Lowering, fns: list, node: ast.AST) -> HelperRef:
    """The helper a captured function stands for (its source parsed once per code object)."""
    first = fns[0]
    if first.__name__ == "<lambda>":
        raise lw.fail("a lambda called from kernel code (define the helper with def)", node)
    try:
        src = source_of(first)
    except TilewrightError as exc:
        raise lw.fail(
            f"the source of the helper '{first.__qualname__}' cannot be read ({exc.message})",
            node,
        ) from None
    if src.tree.decorator_list:
        raise lw.fail(f"a call of the decorated function '{first.__qualname__}'", node)
    return HelperRef(src.tree, tuple(fns), src.file)


def own_nodes(f: ast.FunctionDef):
    """The nodes of ``f``'s body: functions and lambdas defined in it, not their insides."""
    stack: list[ast.AST] = list(f.body)
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))


def is_generator(f: ast.FunctionDef) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(f))


def generator_call(lw: Lowering, it: ast.expr) -> tuple[FuncRef | HelperRef, list[Value]] | None:
    """``gen(args)`` as a for loop's iterable, with ``gen`` a generator function: the
    generator and its arguments (evaluated in the caller); None for any other iterable."""
    if not isinstance(it, ast.Call) or not isinstance(it.func, (ast.Name, ast.Attribute)):
        return None
    fn = lw.expr(it.func)
    if not isinstance(fn, (FuncRef, HelperRef)) or not is_generator(fn.node):
        return None
    name = fn.node.name
    if it.keywords or any(isinstance(a, ast.Starred) for a in it.args):
        raise lw.fail(f"keyword or * arguments to the generator '{name}'", it)
    a = fn.node.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
        raise lw.fail(f"'{name}' takes only plain positional parameters here", it)
    if len(it.args) != len(a.args):
        raise lw.fail(f"'{name}' takes {len(a.args)} argument(s), got {len(it.args)}", it)
    return fn, [lw.expr(x) for x in it.args]


def _check_generator(lw: Lowering, f: ast.FunctionDef) -> None:
    name = f.name

    def refuse(what: str, n: ast.AST) -> TilewrightError:
        return lw.fail(f"{what} in the generator '{name}' (a loop over it is inlined)", n)

    for n in own_nodes(f):
        if isinstance(n, ast.Return):
            raise refuse("'return'", n)
        if isinstance(n, ast.YieldFrom):
            raise refuse("'yield from'", n)
        if isinstance(n, (ast.Try, ast.TryStar)):
            for inner in ast.walk(n):
                if isinstance(inner, (ast.Yield, ast.YieldFrom)):
                    raise refuse("'yield' inside 'try'", inner)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            raise refuse("a function defined", n)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name:
            raise lw.fail(f"recursive use of the generator '{name}'", n)
    statements = {id(n.value) for n in own_nodes(f) if isinstance(n, ast.Expr)}
    for n in own_nodes(f):
        if isinstance(n, ast.Yield) and id(n) not in statements:
            raise refuse("'yield' used as a value", n)


def _check_body(lw: Lowering, body: list[ast.stmt], name: str) -> None:
    """``break`` / ``continue`` of the loop over the generator (not of loops inside it),
    ``return`` anywhere in it: each would leave or resume the generator."""
    stack: list[ast.AST] = list(body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Break, ast.Continue, ast.Return)):
            word = {ast.Break: "break", ast.Continue: "continue", ast.Return: "return"}[type(n)]
            raise lw.fail(f"'{word}' in the body of a loop over the generator '{name}'", n)
        if isinstance(n, (ast.For, ast.While, ast.AsyncFor)):
            stack.extend(n.orelse)
            continue
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(n))


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        new = self.names.get(node.id)
        if new is not None:
            node.id = new
        return node


class _Yields(ast.NodeTransformer):
    """``yield v`` -> ``target = v`` and the loop body."""

    def __init__(self, loop: ast.For) -> None:
        self.loop = loop

    def visit_Expr(self, node: ast.Expr):
        if not isinstance(node.value, ast.Yield):
            return node
        value = node.value.value if node.value.value is not None else ast.Constant(None)
        bind = ast.Assign(targets=[copy.deepcopy(self.loop.target)], value=value)
        ast.copy_location(bind, node)
        for n in ast.walk(bind.targets[0]):
            if hasattr(n, "lineno"):
                ast.copy_location(n, node)
        return [bind, *self.loop.body]


def _bind_argument(lw: Lowering, name: str, value: Value, node: ast.AST) -> None:
    """Bind a generator's parameter to its argument's value *now*: the loop body runs
    between the generator's steps and may change a caller's local the argument reads
    (Python evaluated the argument once, at the call), so a run-time number is copied
    into the generator's own local (``Lowering.bind``: a constant or an affine
    expression of stable symbols stays symbolic; a tuple's items likewise)."""
    lw.scope.counts.setdefault(name, 1)
    lw.bind(ast.copy_location(ast.Name(id=name, ctx=ast.Store()), node), value)


def lower_for(lw: Lowering, stmt: ast.For, fn: FuncRef | HelperRef, args: list[Value]) -> None:
    """Lower ``for T in gen(args): body`` as the generator's body with its yields bound."""
    f = fn.node
    name = f.name
    if stmt.orelse:
        raise lw.fail("'for ... else'", stmt)
    _check_generator(lw, f)
    _check_body(lw, stmt.body, name)
    # a generator iterating itself is refused above; loops over one generator nested in
    # the body of a loop over it are fine, so only the depth is bounded (mutual recursion)
    if len(lw._active) >= 16:
        raise lw.fail(f"loops over generators nested 16 deep at '{name}' (recursion?)", stmt)
    k = lw.new_site()
    params = [p.arg for p in f.args.args]
    local_names = set(assigned(f.body)) | set(params)
    if isinstance(fn, HelperRef):  # every name: the free ones resolve in its closure
        free = {n.id for n in own_nodes(f) if isinstance(n, ast.Name)} - local_names
    else:  # a generator defined in the kernel reads the kernel's names
        free = set()
    renames = {n: f"tw.g{k}.{n}" for n in local_names | free}
    body = [_Rename(renames).visit(s) for s in copy.deepcopy(f.body)]
    expansion: list[ast.stmt] = []
    for s in body:
        out = _Yields(stmt).visit(s)
        expansion.extend(out if isinstance(out, list) else [out])
    if isinstance(fn, HelperRef):
        table = lw.extra.setdefault("free_names", {})
        for n in free:
            table[renames[n]] = (fn, n)
    scope = lw.scope
    in_loop = len(lw.loops) > scope.loop_base
    # the scope's assignment sites: the program with this loop replaced by its expansion
    before = assigned([stmt], in_loop)
    for n, count in assigned(expansion, in_loop).items():
        scope.counts[n] = scope.counts.get(n, 0) + max(0, count - before.get(n, 0))
    for p in params:
        scope.counts[renames[p]] = scope.counts.get(renames[p], 0) + 1
    for p, v in zip(params, args):
        _bind_argument(lw, renames[p], v, stmt)
    lw._active.append(f)
    try:
        lw.statements(expansion)
    finally:
        lw._active.pop()
