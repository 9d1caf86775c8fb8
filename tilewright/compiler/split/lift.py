"""Setup lifting: the resource declarations of a unified body (reference B.2).

Every top-level ``name = factory(...)`` whose factory is a DFB factory
(``make_dfb``, ``make_dataflow_buffer_like``, ``make_tensor_backed_dfb``, legacy
``make_circular_buffer_like``), ``Pipe`` / ``PipeNet`` (or a list, tuple or
comprehension of ``Pipe``), ``ttl.Semaphore`` (and a ``get_remote`` view of a
declared semaphore), ``ttl.make_dfb_allocation_group`` or ``ttl.Kernel`` is a
setup declaration: it is evaluated once per node in source order, before the
kernels, and is shared by every kernel of the node.  ``ttl.Kernel`` declarations
are evaluated right here, at decoration, so the handle exists (and is bound) when
selectors are resolved.

Rules: a declaration may not read values the body computes; a factory call
anywhere else (under control flow, in a callback, nested in an expression, with
several targets) is rejected; objects that must come from an enclosing factory
(``DFBReset``, ``DFBReconfiguration``, ``DFBAllocationGroup``,
``DispatchCondition``) may not be constructed in the body.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tilewright.compiler.scope import MISSING, Scope, ttl_module
from tilewright.compiler.split import registry
from tilewright.compiler.split.astutil import assigned_names_in, free_loads, ttl_call_name
from tilewright.compiler.split.plan import SetupDecl
from tilewright.errors import SplitError
from tilewright.lang.selectors import Kernel, KernelKind

__all__ = ["Lifted", "lift_setup", "setup_factory"]

_KINDS = {
    "make_dfb": "dfb",
    "make_dataflow_buffer_like": "dfb",
    "make_circular_buffer_like": "dfb",
    "CircularBuffer": "dfb",
    "make_tensor_backed_dfb": "dfb",
    "Pipe": "pipe",
    "PipeNet": "pipe",
    "Semaphore": "semaphore",
    "Kernel": "kernel",
    "make_dfb_allocation_group": "group",
}


@dataclass
class Lifted:
    """The setup declarations of a body, in source order."""

    decls: list[SetupDecl] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)  # top-level statement indices
    kernel_handles: dict[str, Kernel] = field(default_factory=dict)

    def names(self, kind: str) -> set[str]:
        return {d.name for d in self.decls if d.kind == kind}


def setup_factory(call: ast.AST, scope: Scope) -> str | None:
    """The factory a call constructs with (``ttl.make_dfb(...)`` -> "make_dfb"), if any."""
    if not isinstance(call, ast.Call):
        return None
    name = ttl_call_name(call)
    if name is not None and len(name) == 1 and name[0] in registry.SETUP_FACTORIES:
        return name[0]
    if isinstance(call.func, ast.Name) and call.func.id in registry.SETUP_FACTORIES:
        module = ttl_module()
        value = scope.lookup(call.func.id)
        if (
            module is not None
            and value is not MISSING
            and value is getattr(module, call.func.id, None)
        ):
            return call.func.id
    return None


def _is_pipe_list(node: ast.AST, scope: Scope) -> bool:
    if isinstance(node, (ast.List, ast.Tuple)):
        return bool(node.elts) and all(setup_factory(e, scope) == "Pipe" for e in node.elts)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return setup_factory(node.elt, scope) == "Pipe"
    return False


def _declaration(stmt: ast.Assign, scope: Scope, semaphores: set[str]) -> tuple[str, str] | None:
    """(target name, factory) when ``stmt`` is a liftable declaration."""
    if len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if not isinstance(target, ast.Name):
        return None
    value = stmt.value
    factory = setup_factory(value, scope)
    if factory is not None:
        return target.id, factory
    if _is_pipe_list(value, scope):
        return target.id, "Pipe"
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id in semaphores
        and value.func.attr in registry.SEMAPHORE_VIEW_METHODS
    ):
        return target.id, value.func.attr
    return None


def lift_setup(src, fn_def: ast.FunctionDef, scope: Scope, op_name: str) -> Lifted:
    """Find, validate and (for ``ttl.Kernel``) evaluate the setup declarations."""
    lifted = Lifted()
    semaphores: set[str] = set()
    liftable_calls: set[int] = set()
    declarations: list[ast.Assign] = []
    for i, stmt in enumerate(fn_def.body):
        if not isinstance(stmt, ast.Assign):
            continue
        decl = _declaration(stmt, scope, semaphores)
        if decl is None:
            continue
        name, factory = decl
        kind = _KINDS.get(factory, "semaphore")
        if kind == "semaphore":
            semaphores.add(name)
        value = stmt.value
        group = None
        if kind == "dfb" and isinstance(value, ast.Call):  # a factory call
            group_node = next(
                (k.value for k in value.keywords if k.arg == "allocation_group"), None
            )
            if isinstance(group_node, ast.Name):
                group = group_node.id
        lifted.decls.append(SetupDecl(name, factory, stmt.lineno, kind, group))
        lifted.indices.append(i)
        declarations.append(stmt)
        for node in ast.walk(value):
            if isinstance(node, ast.Call):
                liftable_calls.add(id(node))
        if kind == "kernel" and isinstance(value, ast.Call):  # ttl.Kernel(...)
            lifted.kernel_handles[name] = _evaluate_kernel(src, value, scope)

    setup_names = {d.name for d in lifted.decls}
    params = {a.arg for a in (*fn_def.args.posonlyargs, *fn_def.args.args)}
    local_values = assigned_names_in(fn_def.body) - setup_names - params
    for declaration in declarations:
        deps = sorted(free_loads(declaration.value) & local_values)
        if deps:
            raise src.error_at(
                declaration,
                f"@ttl.operation '{op_name}': resource declarations cannot depend on "
                f"operation-local values {deps}",
                cls=SplitError,
            )
    for node in ast.walk(fn_def):
        if not isinstance(node, ast.Call) or id(node) in liftable_calls:
            continue
        called = ttl_call_name(node)
        made = setup_factory(node, scope)
        if made is not None:
            raise src.error_at(
                node,
                f"@ttl.operation '{op_name}': resource declaration '{made}' must be a simple "
                "top-level assignment in the operation body; declarations inside control flow, "
                "callbacks, or nested scopes are not supported",
                cls=SplitError,
            )
        if called is not None and len(called) == 1 and called[0] in registry.FACTORY_ONLY:
            raise src.error_at(
                node,
                f"ttl.{called[0]} must be created by an enclosing factory and captured by the "
                "operation, not constructed in the operation body",
                cls=SplitError,
            )
    return lifted


def _evaluate_kernel(src, call: ast.Call, scope: Scope) -> Kernel:
    """``ttl.Kernel(ttl.KernelKind.X)``: its kind must be a static KernelKind member."""
    args = list(call.args) + [k.value for k in call.keywords if k.arg == "kind"]
    if len(args) != 1 or len(call.args) + len(call.keywords) != 1:
        raise src.error_at(
            call, "ttl.Kernel(kind) takes exactly one KernelKind member", cls=SplitError
        )
    kind = scope.resolve(args[0])
    if not isinstance(kind, KernelKind):
        raise src.error_at(
            args[0],
            "ttl.Kernel(kind) declared in an operation body needs a static KernelKind member "
            "(ttl.KernelKind.COMPUTE or ttl.KernelKind.DATA_MOVEMENT)",
            cls=SplitError,
        )
    return Kernel(kind)
