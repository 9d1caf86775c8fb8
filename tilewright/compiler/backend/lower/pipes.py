"""Pipe copies in kernel code (spec §Pipes): ``ttl.copy(block, pipe)`` / ``ttl.copy(pipe, block)``."""

from __future__ import annotations

import ast

from tilewright.compiler.backend.lower.values import Value

__all__ = ["pipe_copy", "finish_send"]


def pipe_copy(lw, src: Value, dst: Value, node: ast.AST) -> Value:
    raise lw.fail("pipe copies are not compiled yet", node)


def finish_send(lw, handle) -> None:
    return None


def net_method(lw, net, name: str, node: ast.AST) -> Value:
    raise lw.fail(f"pipe nets (net.{name}) are not compiled yet", node)
