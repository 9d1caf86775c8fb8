"""State and diagnostics shared by the external-call checker and its mixins.

The call checker (:mod:`.frontend`) is assembled from mixins (:mod:`.frontend_args`,
:mod:`.frontend_contract`); each of them derives from :class:`CheckerBase`, which
declares the state the checker's ``__init__`` sets and owns the diagnostics.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, TypeAlias

from tilewright.compiler.extern.scope import LocalScope, Resolver
from tilewright.errors import ExternCallError, SourceLoc

if TYPE_CHECKING:
    from tilewright.compiler.record import OperationRecord
    from tilewright.compiler.source import FunctionSource

__all__ = ["CheckerBase", "KernelDef"]

KernelDef: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef


class CheckerBase:
    """One call site being checked: its operation, AST, scopes and diagnostics."""

    op: OperationRecord
    src: FunctionSource
    r: Resolver
    call: ast.Call
    chain: list[LocalScope]
    kernel_def: KernelDef | None  # the enclosing kernel function, if any
    in_callback: bool
    loc: SourceLoc
    title: str
    kw: dict[str, ast.expr]  # the call's keywords that are not None

    def error(
        self, message: str, hint: str | None = None, cls: type[ExternCallError] = ExternCallError
    ) -> ExternCallError:
        return cls(f"{self.title}: {message}", loc=self.loc, hint=hint)

    def text(self, node: ast.AST) -> str:
        return ast.unparse(node)

    def dfb_identity(self, node: ast.AST) -> str | None:
        """The DFB a name (or an alias of one) refers to, else None."""
        if isinstance(node, ast.Name):
            b = self.r.lookup(node.id, self.chain)
            if b.kind == "dfb":
                return b.identity
        return None
