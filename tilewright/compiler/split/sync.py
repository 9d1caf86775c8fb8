"""Rules for DFB resets and reconfiguration boundaries in unified bodies (reference A.8).

``ttl.reset_dfbs(reset, /, *, dfbs=[...])``, ``ttl.reset_all_dfbs(reset, /)`` and
``ttl.reconfigure_dfbs(boundary, /)`` take a declaration captured from an
enclosing factory; the call is replicated to the declaration's participants (the
placement registry does that).  Checked here, at the call:

* the argument forms (one positional declaration of the right type; ``dfbs=`` a
  nonempty list of distinct DFBs; no other keywords);
* a declaration executes at most once per node, or once per iteration of one loop
  with a compile-time trip count: not under ``if`` / ``while`` / ``try``, not in
  nested loops, not in callbacks, and only one call site per declaration.
"""

from __future__ import annotations

import ast

from tilewright.compiler.scope import Scope
from tilewright.compiler.split.astutil import child_blocks
from tilewright.errors import SplitError
from tilewright.lang.resets import DFBReconfiguration, DFBReset

__all__ = ["check_rules", "sync_objects"]

_TYPES = {
    "reset_dfbs": "DFBReset",
    "reset_all_dfbs": "DFBReset",
    "reconfigure_dfbs": "DFBReconfiguration",
}


def sync_objects(
    tree: ast.FunctionDef, scope: Scope, local: set[str]
) -> dict[str, DFBReset | DFBReconfiguration]:
    """Names the body reads that denote a DFBReset / DFBReconfiguration."""
    out: dict[str, DFBReset | DFBReconfiguration] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in local:
            value = scope.lookup(node.id)
            if isinstance(value, (DFBReset, DFBReconfiguration)):
                out[node.id] = value
    return out


def _static_range(node: ast.expr) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in ("range", "static_range") or node.keywords:
        return False
    return all(isinstance(a, ast.Constant) and type(a.value) is int for a in node.args)


def _ancestors(tree: ast.FunctionDef) -> dict[int, list[ast.stmt]]:
    chains: dict[int, list[ast.stmt]] = {}

    def walk(stmts: list[ast.stmt], chain: list[ast.stmt]) -> None:
        for stmt in stmts:
            chains[id(stmt)] = chain
            for _key, block in child_blocks(stmt):
                walk(block, chain + [stmt])

    walk(tree.body, [])
    return chains


def check_rules(
    src,
    tree: ast.FunctionDef,
    state,
    dfb_names: set[str],
    declared: dict[str, DFBReset | DFBReconfiguration],
) -> None:
    def error(node, message):
        return src.error_at(node, message, cls=SplitError)

    chains = _ancestors(tree)
    used: dict[int, ast.Call] = {}
    for stmt, call in state.syncs:
        what = ast.unparse(call.func)
        kind = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id
        if len(call.args) != 1:
            raise error(call, f"{what}(...) takes exactly one positional argument, the declaration")
        target = call.args[0]
        value = declared.get(target.id) if isinstance(target, ast.Name) else None
        if type(value).__name__ != _TYPES[kind]:
            raise error(
                target, f"{what}(...) takes a ttl.{_TYPES[kind]}, got {type(value).__name__}"
            )
        allowed = {"dfbs"} if kind == "reset_dfbs" else set()
        extra = [k.arg for k in call.keywords if k.arg not in allowed]
        if extra:
            raise error(
                call,
                f"{what}(...) got unexpected keyword argument(s): {', '.join(map(str, extra))}",
            )
        if kind == "reset_dfbs":
            dfbs = next((k.value for k in call.keywords if k.arg == "dfbs"), None)
            elts = dfbs.elts if isinstance(dfbs, (ast.List, ast.Tuple)) else None
            names = [e.id for e in elts or () if isinstance(e, ast.Name) and e.id in dfb_names]
            if not elts or len(names) != len(elts) or len(set(names)) != len(names):
                raise error(
                    dfbs if dfbs is not None else call,
                    f"{what}(reset, dfbs=[...]): dfbs must be a nonempty list of distinct DFBs of the operation",
                )
        chain = chains.get(id(stmt), [])
        loops = [s for s in chain if isinstance(s, (ast.For, ast.AsyncFor))]
        bad = [
            s
            for s in chain
            if isinstance(s, (ast.If, ast.While, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        if bad or len(loops) > 1 or any(not _static_range(loop.iter) for loop in loops):
            raise error(
                call,
                f"{what}(...) may execute at most once per node, or once per iteration of one loop with a "
                "compile-time trip count; it cannot be under a condition, in a callback or in nested loops",
            )
        previous = used.get(id(value))
        if previous is not None and previous is not call:
            raise error(
                call,
                f"ttl.{_TYPES[kind]} '{target.id}' is executed by more than one call (line "
                f"{previous.lineno} and line {call.lineno}); each declaration executes once per node: "
                "create one declaration per synchronisation point",
            )
        used[id(value)] = call
