"""Apply a split plan: generate the explicit multi-kernel function (reference B.1 step 4, B.11).

The generated function has the operation's signature and body::

    def op(a, b, out):
        <setup declarations, source order>
        @<kernel decorator>('compute', <selector>, 'compute')
        def compute():
            <the statements placed on COMPUTE, source order>
        @<kernel decorator>('data_movement', <selector>, 'data_movement')
        def data_movement():
            ...

Every statement keeps its original line (and file) so tracebacks, block-state
errors and deadlock reports point at the user's source; a kernel's decorator sits
on the line of the statement that introduced the kernel (the capacity
diagnostic's location, reference B.7).  The compiler's auto-sync is applied here:
a bare ``ttl.copy(...)`` gets its ``.wait()``, an inline ``dfb.wait()`` /
``dfb.reserve()`` its release after the statement, and external calls' ``kernel=``
selectors are stripped (a release keeps its selector: ``pop(kernel=...)`` marks an
unused transaction).  The code is compiled from the AST under the user's file
name inside a factory whose parameters are the captured and injected names, and
the result is rebuilt as a function over the original globals and closure cells.
"""

from __future__ import annotations

import ast
import copy
import sys
import types
from typing import TypeVar

from tilewright.compiler.split import registry
from tilewright.compiler.split.astutil import (
    iter_skip_nested,
    ttl_call_name,
    walk_with_paths,
)
from tilewright.compiler.split.plan import SplitPlan
from tilewright.errors import SplitError
from tilewright.lang import declare
from tilewright.lang.dfb import DataflowBuffer
from tilewright.lang.selectors import COMPUTE, DATA_MOVEMENT, PIPE_SOURCE, LogicalKernel

__all__ = ["acquisitions", "display_source", "generate", "kernel_decorator", "name_setup"]

_KERNEL_HELPER = "__ttl_kernel"
_NAME_HELPER = "__ttl_named"
_FACTORY = "__ttl_make"


def kernel_decorator(kind: str, selector, name: str):
    """The generated kernels' decorator: ``@ttl.compute(kernel=...)`` under the logical name."""
    register = (declare.compute if kind == "compute" else declare.datamovement)(kernel=selector)

    def apply(fn):
        fn.__name__ = fn.__qualname__ = name
        return register(fn)

    return apply


def name_setup(value, name: str) -> None:
    """Give a composed DFB declaration its (renamed) variable name for diagnostics."""
    if isinstance(value, DataflowBuffer):
        value.name = name


_Node = TypeVar("_Node", bound=ast.AST)


def _located(node: _Node, line: int, col: int = 0) -> _Node:
    """``node`` with every node in it placed at ``line``, ``col``."""
    position = (
        ("lineno", line),
        ("end_lineno", line),
        ("col_offset", col),
        ("end_col_offset", col),
    )
    for n in ast.walk(node):
        for attr, value in position:
            setattr(n, attr, value)
    return node


def _function_def(
    name: str, args: ast.arguments, body: list[ast.stmt], decorator_list: list[ast.expr]
) -> ast.FunctionDef:
    fn = ast.FunctionDef(
        name=name, args=args, body=body, decorator_list=decorator_list, returns=None
    )
    if sys.version_info >= (3, 12):  # generic functions: none here
        fn.type_params = []
    return fn


class _Rewrite(ast.NodeTransformer):
    """Strip extern ``kernel=``; wrap chosen acquisitions in walrus temporaries."""

    def __init__(self, block_names: set[str], walrus: dict[int, str]) -> None:
        self.block_names = block_names
        self.walrus = walrus

    def visit_Call(self, node: ast.Call) -> ast.expr:
        temp = self.walrus.get(id(node))
        self.generic_visit(node)  # rewrites the arguments in place
        # A release keeps its selector: it tells pop() that an unread block is a deliberately
        # unused transaction (reference C.10).
        if registry.is_extern_name(ttl_call_name(node)):
            node.keywords = [k for k in node.keywords if k.arg != "kernel"]
        if temp is not None:
            return ast.copy_location(
                ast.NamedExpr(target=ast.Name(temp, ast.Store()), value=node), node
            )
        return node


def acquisitions(stmt: ast.stmt, dfb_names: set[str]) -> list[ast.Call]:
    out = []
    for node in iter_skip_nested(stmt):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in registry.DFB_ACQUIRE_METHODS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in dfb_names
        ):
            out.append(node)
    return out


def _wait_bare_copy(stmt: ast.stmt) -> ast.stmt:
    """``ttl.copy(...)`` as a statement: the compiler inserts its ``.wait()`` (reference A.6)."""
    if (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and ttl_call_name(stmt.value) == ("copy",)
    ):
        call = stmt.value
        waited = ast.Call(
            func=ast.Attribute(value=call, attr="wait", ctx=ast.Load()), args=[], keywords=[]
        )
        stmt.value = ast.copy_location(waited, call)
        ast.copy_location(stmt.value.func, call)
    return stmt


class _Pruner:
    """One kernel's copy of the body: statements selected for it, in source order."""

    def __init__(
        self, selections: dict[int, frozenset], after: dict[int, list[ast.stmt]], skip: set[int]
    ):
        self.selections = selections
        self.after = after
        self.skip = skip

    def prune(
        self, stmts: list[ast.stmt], kernel: LogicalKernel, *, pass_if_empty: bool
    ) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            if id(stmt) in self.skip or kernel not in self.selections[id(stmt)]:
                continue
            clone = copy.copy(stmt)
            for key in ("body", "orelse", "finalbody"):
                block = getattr(stmt, key, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    if isinstance(stmt, ast.Try):
                        continue  # a try statement is one indivisible unit
                    setattr(clone, key, self.prune(block, kernel, pass_if_empty=key == "body"))
            out.append(clone)
            out.extend(copy.deepcopy(s) for s in self.after.get(id(stmt), ()))
        if not out and pass_if_empty:
            anchor = stmts[0] if stmts else None
            node = ast.Pass()
            return [ast.copy_location(node, anchor) if anchor is not None else _located(node, 1)]
        return out


def function_names(kernels) -> dict[LogicalKernel, str]:
    """Each logical kernel's function name: its ``function_name``; handles of one name bound
    to different operations (composed factory products, B.9) get ``_2``, ``_3`` ... in order."""
    out: dict[LogicalKernel, str] = {}
    used: dict[str, int] = {}
    for kernel in sorted(kernels, key=LogicalKernel.sort_key):
        base = kernel.function_name
        n = used[base] = used.get(base, 0) + 1
        out[kernel] = base if n == 1 else f"{base}_{n}"
    return out


def _kernel_function(
    plan: SplitPlan,
    kernel: LogicalKernel,
    name: str,
    index: int,
    body: list[ast.stmt],
    taken: set[str],
) -> ast.FunctionDef:
    line = plan.origin_line(kernel)
    fname = name
    if fname in taken or not fname.isidentifier():
        fname = f"__ttl_{fname.strip('<>')}"
    decorator = ast.Call(
        func=ast.Name(_KERNEL_HELPER, ast.Load()),
        args=[
            ast.Constant(kernel.kind),
            ast.Name(f"__ttl_sel_{index}", ast.Load()),
            ast.Constant(name),
        ],
        keywords=[],
    )
    fn = _function_def(
        fname,
        ast.arguments(
            posonlyargs=[],
            args=[],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body,
        [_located(decorator, line)],
    )
    fn.lineno = fn.end_lineno = line
    fn.col_offset = fn.end_col_offset = 0
    return fn


def generate(
    plan: SplitPlan,
    fn,
    op_source,
    setup_indices: list[int],
    selectors: dict[LogicalKernel, object],
    injected: dict[str, object],
):
    """Build the generated function and its source text (for ``tilewright explain``)."""
    tree = copy.deepcopy(plan.body)  # the plan's tree is never changed
    copies = [s for _, s in walk_with_paths(tree.body)]
    placement = {p.path: p for p in plan.statements}
    paths = [p for p, _ in walk_with_paths(plan.body.body)]
    selections = {
        id(c): frozenset(placement[p].kernels) for p, c in zip(paths, copies, strict=True)
    }
    by_path = dict(zip(paths, copies, strict=True))

    dfb_names = {t.dfb for t in plan.transactions} | {d.name for d in plan.setup if d.kind == "dfb"}
    dfb_names |= set(plan.dfb_params) | {a.dfb for a in plan.inline_acquisitions}
    walrus: dict[int, str] = {}
    after: dict[int, list[ast.stmt]] = {}
    for acq in plan.inline_acquisitions:
        stmt = by_path[acq.path]
        call = acquisitions(stmt, dfb_names)[acq.ordinal]
        walrus[id(call)] = acq.temp
        method = "pop" if acq.method == "wait" else "push"
        release = ast.Expr(
            ast.Call(
                func=ast.Attribute(ast.Name(acq.temp, ast.Load()), method, ast.Load()),
                args=[],
                keywords=[],
            )
        )
        after.setdefault(id(stmt), []).append(_located(release, stmt.lineno, stmt.col_offset))
    rewrite = _Rewrite({t.block for t in plan.transactions}, walrus)
    for stmt in copies:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _wait_bare_copy(stmt)
        for child in ast.iter_child_nodes(stmt):  # nested statements are visited on their own
            if not isinstance(child, (ast.stmt, ast.ExceptHandler, ast.match_case)):
                rewrite.visit(child)

    skip = {id(tree.body[i]) for i in setup_indices}
    pruner = _Pruner(selections, after, skip)
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | set(injected)
    body: list[ast.stmt] = []
    for i in setup_indices:
        decl, name = _declaration(tree.body[i])
        if isinstance(decl.value, ast.Call) and _is_declared(name, "kernel", plan):
            continue  # ttl.Kernel handles exist from decoration on: injected, not evaluated
        body.append(decl)
        if _is_declared(name, "dfb", plan) and op_source.name_at_line(decl.lineno) != name:
            named = ast.Expr(
                ast.Call(
                    func=ast.Name(_NAME_HELPER, ast.Load()),
                    args=[ast.Name(name, ast.Load()), ast.Constant(name)],
                    keywords=[],
                )
            )
            body.append(_located(named, decl.lineno, decl.col_offset))
    kernel_defs = []
    names = function_names(plan.kernels)
    for index, kernel in enumerate(plan.kernels):
        kbody = pruner.prune(tree.body, kernel, pass_if_empty=True)
        kernel_defs.append(_kernel_function(plan, kernel, names[kernel], index, kbody, taken))
    body.extend(kernel_defs)

    op_def = _function_def(tree.name, _plain_arguments(tree.args), body, [])
    ast.copy_location(op_def, tree)
    op_def.end_lineno = tree.end_lineno

    values = dict(injected)
    values[_KERNEL_HELPER] = kernel_decorator
    values[_NAME_HELPER] = name_setup
    for index, kernel in enumerate(plan.kernels):
        values[f"__ttl_sel_{index}"] = selectors[kernel]
    function = _build(op_def, fn, values, op_source.file)
    return function, ast.unparse(op_def), kernel_defs


def _declaration(stmt: ast.stmt) -> tuple[ast.Assign, str]:
    """A setup declaration and the name it binds (``lift_setup`` records ``name = ...`` only)."""
    if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
        return stmt, stmt.targets[0].id
    raise SplitError(f"line {stmt.lineno}: a setup declaration must assign one name")


def _is_declared(name: str, kind: str, plan: SplitPlan) -> bool:
    return any(d.name == name and d.kind == kind for d in plan.setup)


def _plain_arguments(args: ast.arguments) -> ast.arguments:
    """The operation's parameters without annotations (they are the call's tensors)."""
    strip = [ast.arg(arg=a.arg, annotation=None) for a in args.args]
    posonly = [ast.arg(arg=a.arg, annotation=None) for a in args.posonlyargs]
    for new, old in zip(posonly + strip, list(args.posonlyargs) + list(args.args)):
        ast.copy_location(new, old)
    return ast.arguments(
        posonlyargs=posonly,
        args=strip,
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )


def _build(op_def: ast.FunctionDef, fn, values: dict[str, object], filename: str):
    """Compile ``op_def`` in a factory over the captured names; bind globals and closure cells."""
    code = getattr(fn, "__code__", None)
    freevars = tuple(getattr(code, "co_freevars", ()))
    cells = dict(zip(freevars, getattr(fn, "__closure__", None) or ()))
    params = sorted(set(freevars) | set(values))
    factory = _function_def(
        _FACTORY,
        ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=p) for p in params],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        [op_def, ast.Return(ast.Name(op_def.name, ast.Load()))],
        [],
    )
    _located(factory.args, op_def.lineno)
    factory.lineno = factory.end_lineno = op_def.lineno
    factory.col_offset = factory.end_col_offset = 0
    ret = factory.body[1]
    _located(ret, op_def.lineno)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    module_code = compile(module, filename, "exec")
    factory_code = next(c for c in module_code.co_consts if isinstance(c, types.CodeType))
    op_code = next(
        c
        for c in factory_code.co_consts
        if isinstance(c, types.CodeType) and c.co_name == op_def.name
    )
    closure = tuple(
        cells[name] if name in cells else types.CellType(values[name])
        for name in op_code.co_freevars
    )
    function = types.FunctionType(op_code, fn.__globals__, op_def.name, None, closure)
    function.__qualname__ = fn.__qualname__
    function.__module__ = fn.__module__
    function.__doc__ = fn.__doc__
    return function


_DISPLAY_SELECTOR = {
    COMPUTE: "ttl.KernelKind.COMPUTE",
    DATA_MOVEMENT: "ttl.KernelKind.DATA_MOVEMENT",
    PIPE_SOURCE: "ttl.PIPE_SOURCE_KERNEL",
}


class _WithoutSiteNames(ast.NodeTransformer):
    """Drop the ``_site=`` composition adds to copied external calls (not the user's text)."""

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        node.keywords = [k for k in node.keywords if k.arg != registry.EXTERN_SITE_KEYWORD]
        return node


def _is_kernel_helper(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == _KERNEL_HELPER
        and len(node.args) == 3
        and isinstance(node.args[2], ast.Constant)
    )


def display_source(kernel: LogicalKernel, fn: ast.FunctionDef) -> str:
    """A generated kernel as the explicit form writes it (``@ttl.compute(kernel=...)``)."""
    deco = "compute" if kernel.kind == "compute" else "datamovement"
    selector = _DISPLAY_SELECTOR.get(kernel, kernel.name)
    shown = _WithoutSiteNames().visit(copy.deepcopy(fn))
    helper = next((d for d in fn.decorator_list if _is_kernel_helper(d)), None)
    arg = helper.args[2] if isinstance(helper, ast.Call) else None
    given = arg.value if isinstance(arg, ast.Constant) else None
    name = given if isinstance(given, str) else kernel.function_name
    shown.name = name if name.isidentifier() else fn.name
    shown.decorator_list = [ast.parse(f"ttl.{deco}(kernel={selector})", mode="eval").body]
    return ast.unparse(shown)
