"""``kernel=`` selectors of unified bodies, resolved statically (reference B.6).

``SelectorResolver`` turns a selector expression (``ttl.KernelKind.COMPUTE``,
``ttl.PIPE_SOURCE_KERNEL``, a Kernel handle, a ``|`` union of KernelKind members,
a tuple of selectors) into ``LogicalKernel`` values, with the reference's messages for
every malformed selector.
"""

from __future__ import annotations

import ast
from typing import TypeGuard

from tilewright.compiler.scope import MISSING, Scope
from tilewright.errors import SplitError
from tilewright.lang.selectors import Kernel, KernelKind, LogicalKernel, format_kernels, kernel_of

__all__ = ["SelectorResolver", "keyword"]


def _is_union(node: ast.AST) -> TypeGuard[ast.BinOp]:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr)


def _flatten_union(node: ast.expr) -> list[ast.expr]:
    if not _is_union(node):
        return [node]
    return _flatten_union(node.left) + _flatten_union(node.right)


class SelectorResolver:
    """Resolves ``kernel=`` expressions statically (reference B.6)."""

    def __init__(self, src, scope: Scope, handles: dict[str, Kernel]) -> None:
        self.src = src
        self.scope = scope
        self.handles = dict(handles)  # operation-resource Kernel handles by name
        self.used: dict[LogicalKernel, object] = {}  # every explicit ref resolved -> its handle

    def error(self, node: ast.AST, message: str) -> SplitError:
        return self.src.error_at(node, message, cls=SplitError)

    def _resolve_reference(self, node: ast.expr):
        if isinstance(node, ast.Name) and node.id in self.handles:
            return self.handles[node.id]
        if (
            isinstance(node, ast.Name)
            and node.id == "KernelKind"
            and self.scope.where("KernelKind") is None
        ):
            return KernelKind
        return self.scope.resolve(node)

    def resolve_one(self, node: ast.expr) -> LogicalKernel:
        """One selector: KernelKind member, PIPE_SOURCE_KERNEL or a Kernel handle."""
        value = self._resolve_reference(node)
        if isinstance(value, Kernel) and not any(value is h for h in self.handles.values()):
            value = MISSING if value.name is None else value
        ref = kernel_of(value)
        if ref is not None:
            if ref.role == "explicit":
                self.used[ref] = value
            return ref
        if isinstance(node, ast.Attribute) and value is MISSING:
            owner = self._resolve_reference(node.value)
            if owner is KernelKind:
                raise self.error(node, f"unknown KernelKind member '{node.attr}'")
        detail = "" if value is MISSING else f", got {type(value).__name__}"
        raise self.error(
            node,
            "kernel selector must be a KernelKind or Kernel declared as a top-level operation "
            f"resource{detail}",
        )

    def resolve_selection(
        self, node: ast.expr, *, allow_tuple: bool = True
    ) -> frozenset[LogicalKernel]:
        """A selection: one selector, a ``|`` union of KernelKind members, or a tuple."""
        if _is_union(node):
            parts = _flatten_union(node)
            refs = [self.resolve_one(p) for p in parts]
            if any(r.role != "canonical" for r in refs):
                raise self.error(
                    node,
                    "kernel kind union operands must be KernelKind members; use a tuple to include "
                    "operation-local Kernel handles",
                )
            return self._distinct(node, refs)
        if not isinstance(node, ast.Tuple):
            return frozenset({self.resolve_one(node)})
        if not allow_tuple:
            raise self.error(node, "expected one kernel selector, not a tuple")
        if not node.elts:
            raise self.error(node, "call_extern_func kernel selection requires a nonempty tuple")
        return self._distinct(node, [self.resolve_one(e) for e in node.elts])

    def _distinct(self, node: ast.expr, refs: list[LogicalKernel]) -> frozenset[LogicalKernel]:
        selected = frozenset(refs)
        if len(selected) != len(refs):
            raise self.error(
                node, "call_extern_func kernel selection contains a duplicate kernel selector"
            )
        return selected

    def resolve_release(self, call: ast.Call) -> LogicalKernel | None:
        """The ``kernel=`` of ``blk.push()`` / ``blk.pop()``: one selector only."""
        node = keyword(call, "kernel")
        if node is None:
            return None
        what = ast.unparse(call.func)
        if isinstance(node, ast.Tuple):
            raise self.error(node, f"{what} accepts one kernel selector, not a tuple")
        if _is_union(node):
            raise self.error(node, f"{what} accepts one kernel selector, not a kind union")
        return self.resolve_one(node)

    def resolve_extern(
        self, call: ast.Call, inferred: frozenset[LogicalKernel]
    ) -> frozenset[LogicalKernel]:
        """``call_extern_func``'s selection (reference B.6 / C.2)."""
        node = keyword(call, "kernel")
        if node is None:
            if len(inferred) == 1:
                return inferred
            raise self.error(
                call,
                "call_extern_func requires a kernel selector when its logical kernel cannot be inferred",
            )
        selected = self.resolve_selection(node, allow_tuple=True)
        if inferred and selected != inferred:
            raise self.error(
                node,
                f"explicit external-call kernel selection ({format_kernels(selected)}) conflicts with "
                f"inferred selection ({format_kernels(inferred)})",
            )
        return selected


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None
