"""Decoration-time checks on a unified body's names (reference A.2, B.1, B.11, G.9).

* Decorators below ``@ttl.operation`` would wrap the function the compiler reads:
  rejected.
* A captured ``DataflowBuffer`` is rejected ("external DFB"); DFBs belong to the
  operation that declares them (or reach a composed operation as a ``ttl.DFB``
  argument).
* ``DFBReset``, ``DFBReconfiguration``, ``DFBAllocationGroup`` and
  ``DispatchCondition`` must come from an enclosing factory: module globals are
  rejected.
* Aliased receivers: the splitter recognises calls spelled ``ttl.<name>(...)``; a
  name bound to the ``ttl`` module (``T = ttl``), or a bare call of a placed
  ``ttl`` function imported by name, would be invisible to it, so it is rejected
  (reference G.9, issue #779).
"""

from __future__ import annotations

import ast

from tilewright.compiler.scope import MISSING, Scope, is_ttl_module, ttl_module
from tilewright.compiler.source import decorator_name
from tilewright.compiler.split import registry
from tilewright.errors import InterfaceError, SplitError
from tilewright.lang.dfb import DataflowBuffer

__all__ = ["FACTORY_TYPES", "check_aliases", "check_captures", "check_decorators"]

FACTORY_TYPES = ("DFBReset", "DFBReconfiguration", "DFBAllocationGroup", "DispatchCondition")
_PLACED = {registry.Placement.DATA_MOVEMENT, registry.Placement.COMPUTE, registry.Placement.SYNC}


def check_decorators(src, tree: ast.FunctionDef) -> None:
    names = [decorator_name(d) for d in tree.decorator_list]
    op_index = next((i for i, n in enumerate(names) if n in ("operation", "kernel")), None)
    if op_index is not None and op_index != len(names) - 1:
        below = tree.decorator_list[op_index + 1]
        raise src.error_at(
            below,
            f"decorator '@{ast.unparse(below)}' is placed below @ttl.operation; the compiler reads the "
            "function's own source, so put other decorators above @ttl.operation",
            cls=SplitError,
        )


def _first_loads(tree: ast.FunctionDef) -> dict[str, ast.Name]:
    first: dict[str, ast.Name] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            prev = first.get(node.id)
            if prev is None or (node.lineno, node.col_offset) < (prev.lineno, prev.col_offset):
                first[node.id] = node
    return first


def check_captures(src, tree: ast.FunctionDef, scope: Scope, op_name: str, local: set[str]) -> None:
    for name, node in sorted(_first_loads(tree).items()):
        if name in local:
            continue
        value = scope.lookup(name)
        if isinstance(value, DataflowBuffer):
            raise src.error_at(
                node,
                f"@ttl.operation '{op_name}': external DFB '{name}' is not supported; declare it as a "
                "top-level operation resource or pass it to an expand-only composed operation",
                cls=InterfaceError,
            )
        kind = type(value).__name__
        if kind in FACTORY_TYPES and scope.where(name) == "global":
            raise src.error_at(
                node,
                f"ttl.{kind} '{name}' is a module global; it must be created by an enclosing factory "
                "and captured by the operation",
                cls=InterfaceError,
            )


def check_aliases(src, tree: ast.FunctionDef, scope: Scope, local: set[str]) -> None:
    module = ttl_module()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and is_ttl_module(scope.resolve(node.value)):
            raise src.error_at(
                node,
                f"aliased TT-Lang receiver '{ast.unparse(node.targets[0])}': the splitter places calls "
                "written `ttl.<name>(...)`; use the `ttl` module directly",
                cls=SplitError,
            )
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
            continue
        if node.id == "ttl" or node.id in local:
            continue
        value = scope.lookup(node.id)
        if value is MISSING:
            continue
        if is_ttl_module(value):
            raise src.error_at(
                node,
                f"aliased TT-Lang receiver '{node.id}': the splitter places calls written "
                "`ttl.<name>(...)`; use the `ttl` module directly",
                cls=SplitError,
            )
        if module is not None and callable(value):
            exported = getattr(value, "__name__", None)
            placement = registry.TTL_CALLS.get(exported) if isinstance(exported, str) else None
            if (
                placement in _PLACED
                and isinstance(exported, str)
                and getattr(module, exported, None) is value
            ):
                raise src.error_at(
                    node,
                    f"'{node.id}' is ttl.{exported} imported by name; call it as `ttl.{exported}(...)` "
                    "so the splitter can place it",
                    cls=SplitError,
                )
