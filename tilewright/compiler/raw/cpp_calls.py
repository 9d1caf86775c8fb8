"""Calls of ``ttl.raw.cpp`` functions in an operation: checked, planned as external calls.

At decoration, after the operation's ``ttl.call_extern_func`` calls are validated,
every call whose callee resolves statically (as the external-call front end resolves
names: module globals, captures, attribute paths) to a
:class:`~tilewright.compiler.raw.cpp.CppFunction` is checked against the function's
typed signature -- argument count, DFB where ``ttl.raw.DFB``, a tensor parameter
where ``ttl.raw.TensorAccessor``, literals in range for ``i32`` / ``u32`` / ``i64`` and
representable for ``f32``, a used value only with ``result=`` -- its ``kernel=``
selection is checked as an external call's is, and its declared effects are
evaluated against the arguments (:mod:`.cpp_effects`).  The result is the plan
record a ``call_extern_func`` site becomes (:class:`~tilewright.lang.extern.plan.CallSite`).

The call is then rewritten in the operation's AST into the external call it is,
``ttl.call_extern_func(<header>, <entry>, func_args=[...], kernel=..., _site=<id>)``
(the position of the original call kept; ``_site`` names the validated site, as
composition names copied calls), so the splitter, composition, the lifecycle proofs
of DFB allocation, ``explain``, the run time and the compiled engine's lowering see
an external call and need no second path.  An explicit kernel function still runs
the user's ``ext(...)``, which finds the same site by its source position.
"""

from __future__ import annotations

import ast
import copy
import math
import struct
from typing import TYPE_CHECKING

from tilewright.compiler.extern.frontend import FoundCall, find_calls, kernel_selection
from tilewright.compiler.extern.scope import LocalScope, NotStaticError, Resolver
from tilewright.compiler.raw.cpp import CppFunction, RawCppError, header_for
from tilewright.compiler.raw.cpp_effects import DFBParam, RuntimeScalar, evaluate
from tilewright.compiler.split.registry import EXTERN_SITE_KEYWORD
from tilewright.errors import ExternCallError, SourceLoc
from tilewright.lang.extern import surface
from tilewright.lang.extern.plan import (
    CallSite,
    Effect,
    ExternPlan,
    FuncArg,
    Occurrence,
    TemplateArg,
    Variant,
    next_site_id,
    with_sites,
)

if TYPE_CHECKING:
    from tilewright.compiler.record import OperationRecord

__all__ = ["expand_operation"]

_RANGES = {
    "i32": (-(1 << 31), (1 << 31) - 1),
    "index": (-(1 << 31), (1 << 31) - 1),
    "i64": (-(1 << 63), (1 << 63) - 1),
    "u32": (0, (1 << 32) - 1),
}
_KIND = {"i32": "i32", "index": "i32", "i64": "i64", "u32": "uint32", "f32": "f32"}
"""Signature marker -> the plan's function-argument kind (how the glue declares it)."""


def expand_operation(op: OperationRecord, plan: ExternPlan | None) -> ExternPlan | None:
    """``plan`` with a site per call of a ``ttl.raw.cpp`` function in ``op`` (each call
    rewritten in ``op``'s AST into its ``ttl.call_extern_func``)."""
    resolver = Resolver(op.fn)

    def is_raw(call: ast.Call, chain: list[LocalScope]) -> bool:
        return isinstance(resolver.static_object(call.func, chain), CppFunction)

    found = find_calls(op, resolver, is_raw)
    if not found:
        return plan
    statements = {id(n.value) for n in ast.walk(op.source.tree) if isinstance(n, ast.Expr)}
    sites = tuple(_RawCall(op, resolver, f, statements).expand() for f in found)
    return with_sites(plan, op.qualname, sites)


class _RawCall:
    """One call of a ``ttl.raw.cpp`` function being checked and rewritten."""

    def __init__(
        self, op: OperationRecord, resolver: Resolver, found: FoundCall, statements: set[int]
    ) -> None:
        self.op = op
        self.r = resolver
        self.found = found
        self.call, self.chain = found[0], found[1]
        fn = resolver.static_object(self.call.func, self.chain)
        assert isinstance(fn, CppFunction)
        self.fn = fn
        self.is_statement = id(self.call) in statements
        call = self.call
        end = call.end_col_offset if call.end_lineno == call.lineno else None
        self.loc = SourceLoc(op.source.file, call.lineno, call.col_offset, end)
        self.title = fn.title

    @property
    def described(self) -> str:
        """The function and where it is declared, for messages about this call."""
        where = f" (declared at {self.fn.loc})" if self.fn.loc is not None else ""
        return f"{self.title}{where}"

    def error(self, message: str, hint: str | None = None) -> RawCppError:
        return RawCppError(f"{self.described}: {message}", loc=self.loc, hint=hint)

    def expand(self) -> CallSite:
        fn, call = self.fn, self.call
        self.check_shape()
        func_args, values, arg_nodes = self.arguments()
        try:
            kinds, _ = kernel_selection(self.op, self.r, self.found, self.described)
        except ExternCallError as exc:  # the external-call rules, reported as this call's
            raise RawCppError(exc.message, loc=exc.loc, hint=exc.hint) from None
        if fn.result is None and not self.is_statement:
            raise self.error(
                "the function returns no value (result=None), but the call's value is used",
                hint="declare result=ttl.raw.i32 (or i64) in ttl.raw.cpp(...), or call it as a statement",
            )
        occurrences = [
            Occurrence(a.name, "func_args", i)
            for i, a in enumerate(func_args)
            if a.kind == "dfb" and a.name is not None
        ]
        effects: list[Effect] = []
        inspected: list[int] = []
        if fn.effects is not None:
            effects, inspected = evaluate(fn.effects, values, fn.signature, self.error)
        header, include_paths = header_for(fn)
        self.require_ttl()
        site = CallSite(
            id=next_site_id(),
            operation=self.op.qualname,
            loc=self.loc,
            position=(call.lineno, call.end_lineno, call.col_offset, call.end_col_offset),
            header=header,
            callee=fn.entry,
            template_args=self.template_args(func_args),
            variants={
                None: Variant(
                    tuple(func_args), tuple(occurrences), tuple(effects), tuple(inspected)
                )
            },
            include_paths=include_paths,
            unknown_dfb_access=False,
            result_type=fn.result_type,
            condition=None,
            condition_name=None,
            kernel_kinds=kinds,
            kernel_function=getattr(self.found[2], "name", None),
            label=self.title,
        )
        self.rewrite(site, arg_nodes)
        return site

    # -- checks ------------------------------------------------------------------------------

    def check_shape(self) -> None:
        call, sig = self.call, self.fn.signature
        if any(isinstance(a, ast.Starred) for a in call.args):
            raise self.error("arguments must be written out (no *args)")
        extra = [k.arg or "**" for k in call.keywords if k.arg != "kernel"]
        if extra:
            raise self.error(
                f"got unexpected keyword argument(s): {', '.join(extra)}; the arguments are "
                "positional, plus kernel=<selector>"
            )
        if len(call.args) != len(sig):
            shown = ", ".join(repr(m) for m in sig)
            raise self.error(
                f"takes {len(sig)} argument(s) ({shown}), got {len(call.args)}",
            )

    def arguments(self) -> tuple[list[FuncArg], list[object], list[ast.expr]]:
        """The plan's function arguments, each parameter's value for the effects function and
        the argument nodes the rewritten call passes."""
        func_args: list[FuncArg] = []
        values: list[object] = []
        nodes: list[ast.expr] = []
        for i, (marker, node) in enumerate(zip(self.fn.signature, self.call.args, strict=True)):
            src = ast.unparse(node)
            name = self.fn.effect_names[i] if i < len(self.fn.effect_names) else f"arg{i}"
            what = f"argument {i} ({src}) for parameter {i} ({marker!r})"
            binding = self.r.lookup(node.id, self.chain) if isinstance(node, ast.Name) else None
            if marker.kind == "dfb":
                if binding is None or binding.kind != "dfb":
                    raise self.error(f"{what} must be a DFB of the operation")
                func_args.append(FuncArg("dfb", src, binding.identity))
                values.append(DFBParam(i, name))
                nodes.append(node)
                continue
            if marker.kind in ("tensor", "addr"):
                func_args.append(self.tensor_arg(marker, node, src, what, binding))
                values.append(RuntimeScalar(f"parameter '{name}'", src))
                nodes.append(self.addr_node(node) if marker.kind == "addr" else node)
                continue
            if binding is not None and binding.kind in ("dfb", "tensor", "kernel"):
                raise self.error(f"{what} is a {binding.kind}, not a {marker.name} scalar")
            func_args.append(FuncArg(_KIND[marker.name], src))
            values.append(self.scalar_value(marker, node, src, what, name))
            nodes.append(node)
        return func_args, values, nodes

    def tensor_arg(self, marker, node: ast.expr, src: str, what: str, binding) -> FuncArg:
        if marker.kind == "addr" and isinstance(node, ast.Call):
            fn = self.r.static_object(node.func, self.chain)
            inner = node.args[0] if len(node.args) == 1 and not node.keywords else None
            if fn is surface.raw_addr and isinstance(inner, ast.Name):
                b = self.r.lookup(inner.id, self.chain)
                if b.kind == "tensor":
                    return FuncArg("raw_addr", src, b.identity)
        if binding is not None and binding.kind == "tensor":
            return FuncArg(
                "tensor" if marker.kind == "tensor" else "raw_addr", src, binding.identity
            )
        if isinstance(node, ast.Subscript):
            raise self.error(f"{what}: tensor slices/views are not supported; pass the base tensor")
        raise self.error(f"{what} must be a tensor argument of the operation")

    def addr_node(self, node: ast.expr) -> ast.expr:
        """A bare tensor for a ``ttl.raw.RawAddr`` parameter becomes ``ttl.raw_addr(tensor)``."""
        if isinstance(node, ast.Call):
            return node
        wrapped = ast.Call(
            func=ast.Attribute(ast.Name("ttl", ast.Load()), "raw_addr", ast.Load()),
            args=[node],
            keywords=[],
        )
        return ast.fix_missing_locations(ast.copy_location(wrapped, node))

    def scalar_value(self, marker, node: ast.expr, src: str, what: str, name: str) -> object:
        """The static value of a scalar argument (checked against the parameter's type), or a
        :class:`RuntimeScalar` when it is known only at run time."""
        try:
            value = self.r.static_value(node, self.chain)
        except NotStaticError:
            try:
                value = self.r.static_int(node, self.chain)
            except NotStaticError:
                return RuntimeScalar(f"parameter '{name}'", src)
        if isinstance(value, (str, bytes, type(None))) or not isinstance(value, (int, float)):
            raise self.error(f"{what} is a {type(value).__name__}, not a {marker.name} scalar")
        if marker.kind == "float":
            return self.float_value(float(value), what)
        if isinstance(value, float):
            raise self.error(
                f"{what} is a float; the parameter is the integer type {marker.cpp}",
                hint="declare the parameter ttl.raw.f32, or pass an integer",
            )
        lo, hi = _RANGES[marker.name]
        if not lo <= int(value) <= hi:
            raise self.error(
                f"{what} = {int(value)} is out of range for {marker.cpp} ([{lo}, {hi}])"
            )
        return int(value)

    def float_value(self, value: float, what: str) -> float:
        try:
            narrowed = struct.unpack("<f", struct.pack("<f", value))[0]
        except OverflowError:
            narrowed = math.inf
        if math.isfinite(value) and not math.isfinite(narrowed):
            raise self.error(f"{what} = {value!r} is not representable as a 32-bit float")
        return value

    def require_ttl(self) -> None:
        bound = self.r.lookup("ttl", self.chain[:1])  # bound, not the resolver's fallback
        if bound.kind not in ("module", "captured") or (
            getattr(bound.value, "call_extern_func", None) is not surface.call_extern_func
        ):
            raise self.error(
                "the operation's module must name the TT-Lang module 'ttl' (import ttl, or from "
                "tilewright import ttl): the call is compiled as ttl.call_extern_func"
            )

    def template_args(self, func_args: list[FuncArg]) -> tuple[TemplateArg, ...]:
        """The declaration's template arguments, ``ttl.dfb_descriptor(i)`` / ``get_dfb_id(i)``
        naming this call's DFB argument ``i``."""
        out = list(self.fn.template_args)
        for t, p in self.fn.template_params:
            out[t] = TemplateArg(out[t].kind, dfb=func_args[p].name)
        return tuple(out)

    def template_nodes(self) -> list[ast.expr]:
        """The rewritten call's ``template_args``: the static values, and
        ``ttl.dfb_descriptor(<the DFB argument>)`` (or ``get_dfb_id``) where the run time and
        the compiled engine read a DFB."""
        fn = self.fn
        nodes: list[ast.expr] = []
        for arg, value in zip(fn.template_args, fn.template_values, strict=True):
            shown = value if isinstance(value, (bool, int, float)) else arg.text
            nodes.append(ast.Constant(shown))
        for i, p in fn.template_params:
            name = "dfb_descriptor" if fn.template_args[i].kind == "descriptor" else "get_dfb_id"
            func = ast.Attribute(ast.Name("ttl", ast.Load()), name, ast.Load())
            nodes[i] = ast.Call(func, [copy.deepcopy(self.call.args[p])], [])
        return nodes

    # -- the rewrite -------------------------------------------------------------------------

    def rewrite(self, site: CallSite, arg_nodes: list[ast.expr]) -> None:
        """The call, in place, as ``ttl.call_extern_func(header, entry, func_args=[...],
        kernel=..., _site=<id>)`` at the same position."""
        call = self.call
        kernel = [k for k in call.keywords if k.arg == "kernel"]
        template = [ast.keyword("template_args", ast.List(self.template_nodes(), ast.Load()))]
        call.func = ast.Attribute(ast.Name("ttl", ast.Load()), "call_extern_func", ast.Load())
        call.args = [ast.Constant(site.header), ast.Constant(site.callee)]
        call.keywords = [
            *(template if self.fn.template_params else []),
            ast.keyword("func_args", ast.List(arg_nodes, ast.Load())),
            *kernel,
        ]
        if (
            not self.op.multi_kernel
        ):  # the split body names its site (kernel functions run ext(...))
            call.keywords.append(ast.keyword(EXTERN_SITE_KEYWORD, ast.Constant(site.id)))
        for node in ast.walk(call):
            if (
                node is not call
                and not hasattr(node, "lineno")
                and isinstance(node, (ast.expr, ast.keyword))
            ):
                ast.copy_location(node, call)
        ast.fix_missing_locations(call)
