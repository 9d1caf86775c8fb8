"""Front-end validation of ``ttl.call_extern_func`` call sites (reference C.1-C.9, B.6).

At decoration every call in the operation's source is checked against the
must-reject checklist (C.9) from its AST, in the reference's order: positional
arguments and keywords, template arguments (before effects are resolved against
dependency occurrences), function arguments, dependencies, effects (expanded, at
most 4096 actions), accesses, flags, results and dispatch conditions, kernel
selection.  Every error is an :class:`~tilewright.errors.ExternCallError` located at
the line of the ``ttl.call_extern_func(`` call.  Checks that need values (DFB
capacity, a tensor's memory) run when a call is first bound on a kernel
(:mod:`.runtime`).  The result is an immutable :class:`~.plan.CallSite` per call.

This module finds the calls and checks positional arguments, keywords, kernel
selection, flags, results and dispatch conditions; the argument checks live in
:mod:`.frontend_args`, the DFB-contract checks in :mod:`.frontend_contract`.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

from tilewright.compiler.extern.checker import KernelDef
from tilewright.compiler.extern.frontend_args import ArgumentChecks, ExternArgumentTypeError
from tilewright.compiler.extern.frontend_contract import ContractChecks
from tilewright.compiler.extern.scope import LocalScope, NotStaticError, Resolver, build_scope
from tilewright.compiler.interface import KERNEL_DECORATORS
from tilewright.compiler.source import call_name, decorator_name
from tilewright.errors import ExternCallError, SourceLoc
from tilewright.lang.extern import surface
from tilewright.lang.extern import types as extern_types
from tilewright.lang.extern.plan import (
    CallSite,
    ExternPlan,
    Occurrence,
    TemplateArg,
    Variant,
    VariantKey,
    next_site_id,
)
from tilewright.lang.selectors import (
    Kernel,
    KernelKind,
    PipeSourceKernel,
    handle_key,
    kernel_of,
    kind_key,
)

if TYPE_CHECKING:
    from tilewright.compiler.record import OperationRecord

__all__ = [
    "validate_operation",
    "find_calls",
    "kernel_selection",
    "ExternArgumentTypeError",
    "KNOWN_KEYWORDS",
]

KNOWN_KEYWORDS = (
    "template_args",
    "func_args",
    "dfb_dependencies",
    "dfb_effects",
    "dfb_accesses",
    "unknown_dfb_access",
    "include_paths",
    "kernel",
    "result_type",
    "condition_result",
)
_CALLEE = re.compile(r"^(::)?[A-Za-z_]\w*(::[A-Za-z_]\w*)*$")


def _kind_of_kernel_def(fn: ast.AST) -> str | None:
    for d in getattr(fn, "decorator_list", ()):
        name = decorator_name(d)
        if name in KERNEL_DECORATORS:
            return KERNEL_DECORATORS[name]
    return None


def validate_operation(op: OperationRecord) -> ExternPlan | None:
    """Validate every external call of ``op``; the plan, or None if it makes none."""
    resolver = Resolver(op.fn)

    def is_extern(call: ast.Call, chain: list[LocalScope]) -> bool:
        recv, name = call_name(call.func)
        if name != "call_extern_func":
            return False
        if recv == "ttl":
            return True
        return resolver.static_object(call.func, chain) is surface.call_extern_func

    found = find_calls(op, resolver, is_extern)
    if not found:
        return None
    sites = tuple(
        _CallChecker(op, resolver, call, chain, kernel_def, in_callback).check()
        for call, chain, kernel_def, in_callback in found
    )
    return ExternPlan(op.qualname, sites)


FoundCall: TypeAlias = tuple[ast.Call, list[LocalScope], KernelDef | None, bool]
"""A call in an operation's source: the call, its scope chain, the enclosing kernel function
(if any) and whether it sits in a callback (a nested function that is not a kernel)."""


def find_calls(
    op: OperationRecord,
    resolver: Resolver,
    is_target: Callable[[ast.Call, list[LocalScope]], bool],
) -> list[FoundCall]:
    """The calls of ``op``'s source that ``is_target`` selects, in source order, with the
    scope chain names resolve in (external calls, ``ttl.raw.cpp`` functions' calls)."""
    found: list[FoundCall] = []
    root = build_scope(op.source.tree, [], params_are_tensors=True)

    def walk(
        node: ast.AST, chain: list[LocalScope], kernel_def: KernelDef | None, in_callback: bool
    ) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                for d in getattr(child, "decorator_list", ()):
                    walk(d, chain, kernel_def, in_callback)
                inner = build_scope(child, chain, params_are_tensors=False)
                kernel = (
                    child
                    if not isinstance(child, ast.Lambda) and _kind_of_kernel_def(child) is not None
                    else None
                )
                walk(
                    child,
                    [*chain, inner],
                    kernel if kernel is not None else kernel_def,
                    in_callback or kernel is None,
                )
                continue
            if isinstance(child, ast.arguments):
                continue
            if isinstance(child, ast.Call) and is_target(child, chain):
                found.append((child, chain, kernel_def, in_callback))
            walk(child, chain, kernel_def, in_callback)

    walk(op.source.tree, [root], None, False)
    return found


def kernel_selection(
    op: OperationRecord, resolver: Resolver, found: FoundCall, title: str
) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """(kinds, kernel keys) a call selects with its ``kernel=`` keyword (B.6, C.2), checked as
    an external call's selection is; errors name the call as ``title``."""
    call, chain, kernel_def, in_callback = found
    checker = _CallChecker(op, resolver, call, chain, kernel_def, in_callback)
    checker.title = title
    node = next((k.value for k in call.keywords if k.arg == "kernel"), None)
    if node is not None and not (isinstance(node, ast.Constant) and node.value is None):
        checker.kw["kernel"] = node
    return checker.check_kernel_selection()


class _CallChecker(ArgumentChecks, ContractChecks):
    """Checks one call site; ``check()`` returns its CallSite or raises ExternCallError."""

    def __init__(
        self,
        op: OperationRecord,
        resolver: Resolver,
        call: ast.Call,
        chain: list[LocalScope],
        kernel_def: KernelDef | None,
        in_callback: bool,
    ) -> None:
        self.op = op
        self.src = op.source
        self.r = resolver
        self.call = call
        self.chain = chain
        self.kernel_def = kernel_def
        self.in_callback = in_callback
        end = call.end_col_offset if call.end_lineno == call.lineno else None
        self.loc = SourceLoc(self.src.file, call.lineno, call.col_offset, end)
        self.title = "ttl.call_extern_func"
        self.kw = {}

    # -- the checklist, in order ---------------------------------------------------------------

    def check(self) -> CallSite:
        header, callee = self.check_positional()
        self.check_keywords()
        template_args, descriptors, id_dfbs = self.check_template_args()
        kinds, kernel_keys = self.check_kernel_selection()
        variants = self.check_variants(descriptors, id_dfbs, kernel_keys)
        unknown = self.check_unknown_access()
        include_paths = self.check_include_paths()
        result_type, condition, condition_name = self.check_results()
        self.check_condition_restrictions(condition, template_args, variants, unknown)
        call = self.call
        return CallSite(
            id=next_site_id(),
            operation=self.op.qualname,
            loc=self.loc,
            position=(call.lineno, call.end_lineno, call.col_offset, call.end_col_offset),
            header=header,
            callee=callee,
            template_args=tuple(template_args),
            variants=variants,
            include_paths=include_paths,
            unknown_dfb_access=unknown,
            result_type=result_type,
            condition=condition,
            condition_name=condition_name,
            kernel_kinds=kinds,
            kernel_function=getattr(self.kernel_def, "name", None),
        )

    # 1-3: positional arguments -----------------------------------------------------------------

    def check_positional(self) -> tuple[str, str]:
        args = self.call.args
        if any(isinstance(a, ast.Starred) for a in args):
            raise self.error(
                "positional arguments must be written out: ttl.call_extern_func(header, callee, ...)"
            )
        if len(args) < 2:
            raise self.error(
                "requires at least 2 positional arguments: header path and callee name",
                hint='ttl.call_extern_func("my_header.hpp", "my_function", ...)',
            )
        if len(args) > 2:
            raise self.error(
                f"accepts only 2 positional arguments (header, callee), got {len(args)}; pass the "
                "function's arguments as func_args=[...]"
            )
        header = self.static_str(args[0], "header")
        callee = self.static_str(args[1], "callee")
        if not header or any(c in header for c in '"\n<>'):
            raise self.error(f"header {header!r} is not a header path")
        if not _CALLEE.match(callee):
            raise self.error(f"callee {callee!r} is not a C++ function name")
        self.title = f"ttl.call_extern_func({header!r}, {callee!r})"
        return header, callee

    def static_str(self, node: ast.AST, what: str) -> str:
        try:
            value = self.r.static_value(node, self.chain)
        except NotStaticError as exc:
            raise self.error(
                f"{what} must be a string literal or a module-level or captured string; {exc.reason}"
            ) from None
        if not isinstance(value, str):
            raise self.error(
                f"{what} must be a string literal or a module-level or captured string, got "
                f"{type(value).__name__} {self.text(node)}"
            )
        return value

    # 4: keywords ----------------------------------------------------------------------------

    def check_keywords(self) -> None:
        unknown = []
        for k in self.call.keywords:
            if k.arg is None:
                raise self.error("keyword arguments must be written out (no **mapping)")
            if k.arg not in KNOWN_KEYWORDS:
                unknown.append(k.arg)
            elif not (isinstance(k.value, ast.Constant) and k.value.value is None):
                self.kw[k.arg] = k.value
        if unknown:
            raise self.error(
                f"got unexpected keyword argument(s): {', '.join(unknown)}",
                hint="accepted keywords: " + ", ".join(KNOWN_KEYWORDS),
            )

    # 31: kernel selection ----------------------------------------------------------------------

    def check_kernel_selection(self) -> tuple[frozenset[str] | None, frozenset[str] | None]:
        """(kinds the call may run on, kernel keys it selects); None when unrestricted."""
        node = self.kw.get("kernel")
        keys = kinds = None
        if node is not None:
            keys, kinds = self.selector(node)
        kernel_def = self.kernel_def
        enclosing = _kind_of_kernel_def(kernel_def) if kernel_def is not None else None
        if kernel_def is not None and enclosing is not None:
            if kinds is not None and enclosing not in kinds:
                raise self.error(
                    f"explicit external-call kernel selection ({', '.join(sorted(kinds))}) conflicts with "
                    f"the enclosing kernel function '{kernel_def.name}' ({enclosing})"
                )
            return frozenset({enclosing}), self.kernel_def_keys(kernel_def, enclosing)
        if self.op.multi_kernel and kinds is None:
            raise self.error(
                "in a multi-kernel operation an external call belongs inside a kernel function "
                "(@ttl.compute() / @ttl.datamovement()) or names its kernel with kernel=..."
            )
        if not self.op.multi_kernel and kinds is None and not self.in_callback:
            raise self.error(
                "call_extern_func requires a kernel selector when its logical kernel cannot be inferred",
                hint="add kernel=ttl.KernelKind.DATA_MOVEMENT or kernel=ttl.KernelKind.COMPUTE",
            )
        return kinds, keys

    def kernel_def_keys(self, kernel_def: KernelDef, kind: str) -> frozenset[str]:
        """Keys naming the enclosing explicit kernel function: its kind, and its decorator's selector."""
        keys = {kind_key(kind)}
        for d in kernel_def.decorator_list:
            if isinstance(d, ast.Call) and decorator_name(d) in KERNEL_DECORATORS:
                sel = next(
                    (k.value for k in d.keywords if k.arg == "kernel"),
                    d.args[0] if d.args else None,
                )
                if sel is not None and not (isinstance(sel, ast.Constant) and sel.value is None):
                    try:
                        keys |= self.selector(sel)[0]
                    except ExternCallError:  # the decorator reports its own selector errors
                        pass
        return frozenset(keys)

    def selector(self, node: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
        """(keys, kinds) of a kernel selector (reference B.6)."""
        if isinstance(node, ast.Tuple):
            if not node.elts:
                raise self.error("call_extern_func kernel selection requires a nonempty tuple")
            keys: list[str] = []
            kinds: set[str] = set()
            for e in node.elts:
                k, kk = self.selector(e)
                for key in k:
                    if key in keys:
                        raise self.error(
                            "call_extern_func kernel selection contains a duplicate kernel selector"
                        )
                    keys.append(key)
                kinds |= kk
            return frozenset(keys), frozenset(kinds)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            parts = []
            for side in (node.left, node.right):
                k, kk = self.selector(side)
                if any(not key.startswith("kind:") for key in k):
                    raise self.error(
                        "kernel kind union operands must be KernelKind members; use a tuple to include "
                        "operation-local Kernel handles"
                    )
                parts.append((k, kk))
            return parts[0][0] | parts[1][0], parts[0][1] | parts[1][1]
        if isinstance(node, ast.Attribute):
            base = self.r.static_object(node.value, self.chain)
            if base is KernelKind and not isinstance(
                getattr(KernelKind, node.attr, None), KernelKind
            ):
                raise self.error(f"unknown KernelKind member '{node.attr}'")
        if isinstance(node, ast.Name):
            b = self.r.lookup(node.id, self.chain)
            if b.kind == "kernel":
                kind = self.kernel_handle_kind(node.id)
                return frozenset({handle_key(node.id)}), frozenset(
                    {kind} if kind else {"compute", "data_movement"}
                )
        value = self.r.static_object(node, self.chain)
        if isinstance(value, (KernelKind, PipeSourceKernel)):
            kernel = kernel_of(value)
            assert kernel is not None  # a KernelKind member or PIPE_SOURCE_KERNEL
            return frozenset({kernel.key}), frozenset({kernel.kind})
        if isinstance(value, Kernel) and isinstance(node, ast.Name):
            return frozenset({handle_key(node.id)}), frozenset({value.kind.value})
        raise self.error(
            f"kernel selector must be a KernelKind or Kernel declared as a top-level operation resource, "
            f"got {self.text(node)}"
        )

    def kernel_handle_kind(self, name: str) -> str | None:
        for node in ast.walk(self.src.tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == name
                and isinstance(node.value, ast.Call)
                and node.value.args
            ):
                v = self.r.static_object(node.value.args[0], self.chain[:1])
                if isinstance(v, KernelKind):
                    return v.value
        return None

    # 14-24, 33, 35: per-kernel arguments and contracts -----------------------------------------

    def mapping(self, name: str) -> dict[VariantKey, ast.expr]:
        """A keyword's value as {kernel key: node}: key None for the list form."""
        node = self.kw.get(name)
        if node is None:
            return {}
        if isinstance(node, ast.Dict):
            out: dict[VariantKey, ast.expr] = {}
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    raise self.error(f"{name} mapping must list its kernels (no ** expansion)")
                keys, _ = self.selector(k)
                if len(keys) != 1:
                    raise self.error(
                        f"{name} mapping keys must each name one kernel, got {self.text(k)}"
                    )
                out[next(iter(keys))] = v
            return out
        return {None: node}

    def check_variants(
        self,
        descriptors: list[tuple[str, int]],
        id_dfbs: list[str],
        kernel_keys: frozenset[str] | None,
    ) -> dict[VariantKey, Variant]:
        func = self.mapping("func_args")
        effects = self.mapping("dfb_effects")
        accesses = self.mapping("dfb_accesses")
        deps_node = self.kw.get("dfb_dependencies")
        keys = {k for m in (func, effects, accesses) for k in m if k is not None}
        if keys and kernel_keys is not None:
            for key in keys:
                if key not in kernel_keys and not self.key_selected(key, kernel_keys):
                    raise self.error(
                        f"per-kernel mapping key {key.split(':')[-1]} is not a selected kernel of this call"
                    )
        for name, m in (("dfb_effects", effects), ("dfb_accesses", accesses)):
            for mapped, v in m.items():
                if mapped is not None and isinstance(v, ast.List) and not v.elts:
                    raise self.error(f"{name} mapping entries must be nonempty lists")
        # Key None: the list forms (every kernel); with mappings, one variant per named kernel
        # plus "*" for selected kernels the mappings omit (their call omits the keyword).
        variant_keys: list[VariantKey] = [*sorted(keys), "*"] if keys else [None]
        out: dict[VariantKey, Variant] = {}
        for variant_key in variant_keys:
            fnode = func.get(variant_key, func.get(None))
            enode = effects.get(variant_key, effects.get(None))
            anode = accesses.get(variant_key, accesses.get(None))
            out[variant_key] = self.variant(fnode, enode, anode, deps_node, descriptors, id_dfbs)
        return out

    @staticmethod
    def key_selected(key: str, kernel_keys: frozenset[str]) -> bool:
        kind = key.split(":", 1)[1] if key.startswith("kind:") else None
        return kind is not None and kind_key(kind) in kernel_keys

    def variant(
        self,
        fnode: ast.expr | None,
        enode: ast.expr | None,
        anode: ast.expr | None,
        deps_node: ast.expr | None,
        descriptors: list[tuple[str, int]],
        id_dfbs: list[str],
    ) -> Variant:
        func_args = self.check_func_args(fnode)
        occurrences = [
            Occurrence(a.name, "func_args", i)
            for i, a in enumerate(func_args)
            if a.kind == "dfb" and a.name is not None
        ]
        occurrences += [Occurrence(dfb, "template_args", pos) for dfb, pos in descriptors]
        occurrences += self.check_dependencies(deps_node, occurrences)
        for dfb in id_dfbs:
            if not any(o.dfb == dfb for o in occurrences):
                raise self.error(
                    f"ttl.get_dfb_id({dfb}) reaches C++ but '{dfb}' is not a dependency of the call; pass it "
                    "in func_args, as ttl.dfb_descriptor(...), or in dfb_dependencies"
                )
        effects = self.check_effects(enode, occurrences)
        inspected = self.check_accesses(anode, occurrences, effects)
        return Variant(tuple(func_args), tuple(occurrences), tuple(effects), tuple(inspected))

    # 25: flags and include paths -----------------------------------------------------------

    def check_unknown_access(self) -> bool:
        node = self.kw.get("unknown_dfb_access")
        if node is None:
            return False
        try:
            value = self.r.static_value(node, self.chain)
        except NotStaticError as exc:
            raise self.error(f"unknown_dfb_access must be a static bool; {exc.reason}") from None
        if not isinstance(value, bool):
            raise self.error(f"unknown_dfb_access must be a static bool, got {self.text(node)}")
        return value

    def check_include_paths(self) -> tuple[str, ...]:
        node = self.kw.get("include_paths")
        if node is None:
            return ()
        if not isinstance(node, ast.List):
            raise self.error(f"include_paths must be a list of strings, got {self.text(node)}")
        base = os.path.dirname(os.path.abspath(self.src.file))
        out = []
        for e in node.elts:
            path = self.static_str(e, "include_paths element")
            out.append(path if os.path.isabs(path) else os.path.normpath(os.path.join(base, path)))
        return tuple(out)

    # 26-29: results and dispatch conditions -------------------------------------------------

    def check_results(
        self,
    ) -> tuple[extern_types.ScalarType | None, extern_types.DispatchCondition | None, str | None]:
        rnode = self.kw.get("result_type")
        cnode = self.kw.get("condition_result")
        if rnode is not None and cnode is not None:
            raise self.error("cannot combine result_type and condition_result")
        result_type: extern_types.ScalarType | None = None
        if rnode is not None:
            value = self.r.static_object(rnode, self.chain)
            if not isinstance(value, extern_types.ScalarType):
                raise self.error(
                    f"result_type must be ttl.ScalarType.I32 or ttl.ScalarType.I64, got {self.text(rnode)}"
                )
            result_type = value
        condition: extern_types.DispatchCondition | None = None
        name: str | None = None
        if cnode is not None:
            condition, name = self.condition(cnode)
            result_type = condition.scalar_type
        return result_type, condition, name

    def condition(self, node: ast.AST) -> tuple[extern_types.DispatchCondition, str]:
        factory = "a ttl.DispatchCondition must be created by an enclosing factory and captured by the operation"
        if isinstance(node, ast.Name):
            b = self.r.lookup(node.id, self.chain)
            if b.kind == "captured" and isinstance(b.value, extern_types.DispatchCondition):
                return b.value, node.id
            if b.kind == "module" and isinstance(b.value, extern_types.DispatchCondition):
                raise self.error(
                    f"condition_result '{node.id}' is a module-level DispatchCondition; {factory}"
                )
            if b.kind in ("local", "dfb", "tensor", "kernel"):
                raise self.error(
                    f"condition_result '{node.id}' is an operation-local value; {factory}"
                )
        if (
            isinstance(node, ast.Call)
            and self.r.static_object(node.func, self.chain) is extern_types.DispatchCondition
        ):
            raise self.error(f"condition_result {self.text(node)}: {factory}")
        raise self.error(f"condition_result must be a ttl.DispatchCondition, got {self.text(node)}")

    def check_condition_restrictions(
        self,
        condition: extern_types.DispatchCondition | None,
        template_args: list[TemplateArg],
        variants: dict[VariantKey, Variant],
        unknown: bool,
    ) -> None:
        if condition is None:
            return
        bad: str | None = None
        if any(t.kind in ("descriptor", "dfb_id") for t in template_args):
            bad = "a DFB template argument"
        elif unknown:
            bad = "unknown_dfb_access=True"
        else:
            for v in variants.values():
                if v.occurrences:
                    bad = "a DFB dependency"
                elif v.effects:
                    bad = "dfb_effects"
                elif v.inspected:
                    bad = "dfb_accesses"
        if bad is None and self.kw.get("dfb_accesses") is not None:
            bad = "dfb_accesses"
        if bad is None and self.kw.get("dfb_effects") is not None:
            bad = "dfb_effects"
        if bad is not None:
            raise self.error(f"condition_result call cannot access DFB state (it has {bad})")
