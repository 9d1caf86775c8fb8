"""Static name resolution for the external-call front end: the names bound inside the body.

What a name in an operation's source means, decided from the AST and the
operation function's globals and closure (never by running the body).  The
names the body binds are scanned here (:func:`build_scope`, one
:class:`LocalScope` per function); the rest -- captures, module globals,
builtins, attribute paths -- is the compiler's one resolver,
:class:`tilewright.compiler.scope.Scope`:

* a **DFB** -- bound by ``name = ttl.make_dataflow_buffer_like(...)`` (or another DFB
  factory) in the operation body, a ``ttl.DFB``-annotated parameter, or a plain alias
  ``x = dfb`` of one (an alias is the same DFB, C.6);
* a **tensor** -- an operation parameter (or an alias of one);
* a **kernel handle** -- ``name = ttl.Kernel(...)`` in the operation body;
* **local** -- any other name bound in a function scope enclosing the call (a run-time
  value: loop indices, ``ttl.node()`` results, scalar results of other calls);
* **captured** -- a free variable of the operation function (the enclosing factory's
  value, from ``__closure__``);
* **module** -- a global of the operation's module.

Static integer expressions (C.6): int literals, captured / module ints, unary ``+ -``
and binary ``+ - * // %``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tilewright.compiler.scope import MISSING, Scope

__all__ = ["LocalScope", "Resolver", "Binding", "NotStaticError", "DFB_FACTORIES"]

DFB_FACTORIES = frozenset(
    {
        "make_dataflow_buffer_like",
        "make_circular_buffer_like",
        "CircularBuffer",
        "make_dfb",
        "make_tensor_backed_dfb",
    }
)


class NotStaticError(Exception):
    """An expression that is not a static value; ``reason`` says why (for diagnostics)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True)
class LocalScope:
    """Names bound by one function (or lambda) of the operation, and what some of them are."""

    node: ast.AST
    bound: set[str] = field(default_factory=set)
    dfbs: dict[str, str] = field(default_factory=dict)  # local name -> DFB identity
    tensors: dict[str, str] = field(default_factory=dict)  # local name -> tensor parameter
    kernels: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class Binding:
    """What a name resolves to: kind in {dfb, tensor, kernel, local, captured, module, missing}."""

    kind: str
    value: object = None
    identity: str | None = None  # DFB / tensor identity


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for e in node.elts for n in _targets(e)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return []


def _is_factory_call(value: ast.AST, names: frozenset[str]) -> bool:
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    return name in names


def _annotation_is_dfb(ann: ast.expr | None) -> bool:
    if ann is None:
        return False
    if isinstance(ann, ast.Constant) and ann.value in ("DFB", "ttl.DFB"):
        return True
    if isinstance(ann, ast.Attribute) and ann.attr == "DFB":
        return True
    return isinstance(ann, ast.Name) and ann.id == "DFB"


def build_scope(
    fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
    outer: list[LocalScope],
    params_are_tensors: bool,
) -> LocalScope:
    """The names ``fn`` binds (not descending into nested functions, lambdas or classes)."""
    scope = LocalScope(fn)
    args = fn.args
    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        scope.bound.add(a.arg)
        if params_are_tensors:
            if _annotation_is_dfb(a.annotation):
                scope.dfbs[a.arg] = a.arg
            else:
                scope.tensors[a.arg] = a.arg
    for star in (args.vararg, args.kwarg):
        if star is not None:
            scope.bound.add(star.arg)
    stack: list[ast.AST] = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    aliases: list[tuple[str, str]] = []
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scope.bound.add(node.name)
            stack.extend(getattr(node, "decorator_list", []))
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Assign):
            for t in node.targets:
                scope.bound.update(_targets(t))
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if _is_factory_call(node.value, DFB_FACTORIES):
                    scope.dfbs[name] = name
                elif _is_factory_call(node.value, frozenset({"Kernel"})):
                    scope.kernels.add(name)
                elif isinstance(node.value, ast.Name):
                    aliases.append((name, node.value.id))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            scope.bound.update(_targets(node.target))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            scope.bound.update(_targets(node.target))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    scope.bound.update(_targets(item.optional_vars))
        elif isinstance(node, ast.NamedExpr):
            scope.bound.update(_targets(node.target))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                scope.bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            scope.bound.add(node.name)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.comprehension,)):
                continue
            stack.append(child)
    # Aliases (x = dfb / x = tensor) resolve against this scope, then enclosing ones.
    for _ in range(len(aliases)):
        for name, src in aliases:
            if src in scope.dfbs:
                scope.dfbs.setdefault(name, scope.dfbs[src])
            elif src in scope.tensors:
                scope.tensors.setdefault(name, scope.tensors[src])
            elif src not in scope.bound:
                for o in reversed(outer):
                    if src in o.bound:
                        if src in o.dfbs:
                            scope.dfbs.setdefault(name, o.dfbs[src])
                        elif src in o.tensors:
                            scope.tensors.setdefault(name, o.tensors[src])
                        break
    return scope


class Resolver:
    """Resolves names and static values for one operation function: the body's own names
    (a chain of :class:`LocalScope`, innermost last), then the operation's frozen scope."""

    def __init__(self, fn: object) -> None:
        self.scope = Scope(fn)

    # -- names -----------------------------------------------------------------------------

    def lookup(self, name: str, chain: list[LocalScope]) -> Binding:
        for scope in reversed(chain):
            if name in scope.bound or name in scope.dfbs or name in scope.tensors:
                if name in scope.dfbs:
                    return Binding("dfb", identity=scope.dfbs[name])
                if name in scope.tensors:
                    return Binding("tensor", identity=scope.tensors[name])
                if name in scope.kernels:
                    return Binding("kernel", identity=name)
                return Binding("local")
        where = self.scope.where(name)
        if where is None:
            return Binding("missing")
        return Binding("captured" if where == "closure" else "module", self.scope.lookup(name))

    def static_object(self, node: ast.AST, chain: list[LocalScope]) -> object:
        """The object a Name / dotted Attribute refers to statically, or MISSING."""
        return self.scope.resolve(node, _BoundIn(chain))

    def is_missing(self, obj: object) -> bool:
        return obj is MISSING

    # -- static values ---------------------------------------------------------------------------

    def static_int(self, node: ast.AST, chain: list[LocalScope]) -> int:
        """Value of a static integer expression (C.6), else NotStaticError with the reason."""
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                raise NotStaticError(f"{node.value!r} is a bool, not an integer")
            if isinstance(node.value, int):
                return node.value
            raise NotStaticError(f"{node.value!r} is not an integer")
        if isinstance(node, ast.Name):
            b = self.lookup(node.id, chain)
            if b.kind in ("captured", "module"):
                v = b.value
                if isinstance(v, bool):
                    raise NotStaticError(f"'{node.id}' is a bool, not an integer")
                if isinstance(v, int):
                    return v
                raise NotStaticError(f"'{node.id}' is a {type(v).__name__}, not an integer")
            if b.kind == "missing":
                raise NotStaticError(_undefined(node.id))
            raise NotStaticError(
                f"'{node.id}' is an operation-local value, not a compile-time integer "
                "(use literals and module-level or captured ints)"
            )
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.static_int(node.operand, chain)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
            sym = ops.get(type(node.op))
            if sym is None:
                raise NotStaticError(
                    f"operator {_op_text(node.op)} is not allowed in a static integer expression "
                    "(use + - * // %)"
                )
            left = self.static_int(node.left, chain)
            right = self.static_int(node.right, chain)
            if sym in ("//", "%") and right == 0:
                raise NotStaticError(f"division by zero in '{ast.unparse(node)}'")
            return {
                "+": left + right,
                "-": left - right,
                "*": left * right,
                "//": left // right if right else 0,
                "%": left % right if right else 0,
            }[sym]
        if isinstance(node, ast.Call):
            raise NotStaticError(
                f"'{ast.unparse(node)}' is a run-time value, not a compile-time integer"
            )
        raise NotStaticError(f"'{ast.unparse(node)}' is not a static integer expression")

    def static_value(self, node: ast.AST, chain: list[LocalScope]) -> object:
        """A literal, or a captured / module value by name (for strings, bools, floats)."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.static_value(node.operand, chain)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return -v if isinstance(node.op, ast.USub) else v
            raise NotStaticError(f"'{ast.unparse(node)}' is not a static number")
        if isinstance(node, ast.Name):
            b = self.lookup(node.id, chain)
            if b.kind in ("captured", "module"):
                return b.value
            if b.kind == "missing":
                raise NotStaticError(_undefined(node.id))
            raise NotStaticError(f"'{node.id}' is an operation-local value")
        raise NotStaticError(
            f"'{ast.unparse(node)}' is not a literal or a captured / module-level name"
        )

    def origin(self, name: str, chain: list[LocalScope]) -> str:
        return self.lookup(name, chain).kind


class _BoundIn:
    """The names a chain of local scopes binds (``in`` only): they shadow the frozen scope."""

    __slots__ = ("chain",)

    def __init__(self, chain: list[LocalScope]) -> None:
        self.chain = chain

    def __contains__(self, name: object) -> bool:
        return any(name in s.bound or name in s.dfbs or name in s.tensors for s in self.chain)


def _undefined(name: str) -> str:
    return (
        f"'{name}' is not defined when the operation is decorated (define module-level constants "
        "before the @ttl.operation that uses them)"
    )


def _op_text(op: ast.operator) -> str:
    return {
        ast.Pow: "**",
        ast.Div: "/",
        ast.MatMult: "@",
        ast.LShift: "<<",
        ast.RShift: ">>",
        ast.BitOr: "|",
        ast.BitAnd: "&",
        ast.BitXor: "^",
    }.get(type(op), type(op).__name__)
