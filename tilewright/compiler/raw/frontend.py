"""Front end of ``ttl.raw.call`` sites: check the call, trace it, compute its DFB effects.

At decoration every ``ttl.raw.call(fn, *args, kernel=...)`` in the operation's source
is found (the walk of the external-call front end), checked against ``fn``'s typed
signature -- argument count, DFB / tensor / raw address / scalar per parameter, literal
ranges, the kernel kind -- and traced *specialised to the call*: DFB parameters bound
to the call's DFB occurrences, compile-time scalar arguments (literals, module-level and
captured values) folded into constants so static trip counts expand, run-time scalars
left as parameters.  :func:`~tilewright.kir.effects.dfb_effects` of the traced IR is the
call's protocol; control flow that depends on run-time values makes it opaque (every
DFB argument an opaque dependency, as an undeclared external call's).

The result is a :class:`RawCallSite` -- a :class:`~tilewright.lang.extern.plan.CallSite`
with the computed effects in its variant -- added to the operation's ``ExternPlan``, so
the splitter, the DFB allocation and the lifecycle proofs use computed effects exactly
as they use declared ones.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from tilewright.compiler.extern.frontend import _CallChecker, find_calls
from tilewright.compiler.extern.scope import LocalScope, NotStaticError, Resolver
from tilewright.compiler.raw.function import RawIRError, RawIRFunction
from tilewright.compiler.raw.site import RawCallSite, trace_planned
from tilewright.compiler.raw.trace import Bind
from tilewright.compiler.source import call_name
from tilewright.errors import TilewrightError
from tilewright.kir.ir import KIND_COMPUTE, AccessorDecl
from tilewright.lang.extern import surface
from tilewright.lang.extern.plan import FuncArg, Occurrence, Variant, next_site_id
from tilewright.lang.raw import call as raw_call
from tilewright.lang.raw_types import RawType, fits

if TYPE_CHECKING:
    from tilewright.compiler.record import OperationRecord

__all__ = ["RawCallSite", "validate_operation", "is_raw_call"]

_KIND_WORDS = {"compute": "compute", "data_movement": "data-movement"}


def is_raw_call(call: ast.Call, resolver: Resolver, chain: list[LocalScope]) -> bool:
    recv, name = call_name(call.func)
    if name != "call":
        return False
    if recv == "ttl.raw":
        return True
    return resolver.static_object(call.func, chain) is raw_call


def validate_operation(op: OperationRecord) -> tuple[RawCallSite, ...]:
    """Check and trace every ``ttl.raw.call`` of ``op``."""
    resolver = Resolver(op.fn)
    found = find_calls(op, resolver, lambda call, chain: is_raw_call(call, resolver, chain))
    return tuple(
        _RawCallChecker(op, resolver, call, chain, kernel_def, in_callback).check_raw()
        for call, chain, kernel_def, in_callback in found
    )


class _RawCallChecker(_CallChecker):
    """Checks one ``ttl.raw.call``; ``check_raw()`` returns its RawCallSite."""

    def error(self, message: str, hint: str | None = None, cls: object = None) -> RawIRError:  # type: ignore[override]
        return RawIRError(f"{self.title}: {message}", loc=self.loc, hint=hint)

    def check_raw(self) -> RawCallSite:
        self.title = "ttl.raw.call"
        call = self.call
        if not call.args or any(isinstance(a, ast.Starred) for a in call.args):
            raise self.error(
                "takes the raw function and its arguments written out: ttl.raw.call(fn, a, b, ..., "
                "kernel=...)"
            )
        fn = self.r.static_object(call.args[0], self.chain)
        if not isinstance(fn, RawIRFunction):
            raise self.error(
                f"the first argument must be a @ttl.raw.ir function (module-level or captured), got "
                f"{self.text(call.args[0])}"
            )
        self.title = f"ttl.raw.call({fn.name})"
        for k in call.keywords:
            if k.arg != "kernel":
                raise self.error(
                    f"got unexpected keyword argument {k.arg or '**'}; the only keyword is kernel="
                )
            self.kw["kernel"] = k.value
        kinds = None
        if "kernel" in self.kw or self.kernel_def is not None:
            kinds, _keys = self.check_kernel_selection()
        if kinds is None or len(kinds) != 1:
            got = "" if kinds is None else f" (it selects {', '.join(sorted(kinds))})"
            raise self.error(
                f"a raw IR function runs on one kernel kind: select it with "
                f"kernel=ttl.KernelKind.COMPUTE or kernel=ttl.KernelKind.DATA_MOVEMENT{got}"
            )
        kind = next(iter(kinds))
        args = call.args[1:]
        if len(args) != len(fn.params):
            sig = ", ".join(f"{n}: {t!r}" for n, t in fn.params)
            raise self.error(
                f"'{fn.name}' takes {len(fn.params)} argument(s) ({sig}), got {len(args)}"
            )
        func_args: list[FuncArg] = []
        binds: list[Bind] = []
        occurrences: list[Occurrence] = []
        accessors: list[AccessorDecl] = []
        for i, (node, (pname, rt)) in enumerate(zip(args, fn.params)):
            fa, bind = self.argument(fn, i, node, pname, rt, kind)
            if fa.kind == "dfb":
                assert fa.name is not None
                bind = Bind("dfb", len(occurrences))
                occurrences.append(Occurrence(fa.name, "func_args", i))
            elif fa.kind == "tensor":
                name = f"acc_{pname}"
                bind = Bind("accessor", name)
                accessors.append(AccessorDecl(name, str(fa.name), 0, (), 0, 2048, ()))
            func_args.append(fa)
            binds.append(bind)
        try:
            traced, actions = trace_planned(
                fn, kind, binds, [o.dfb for o in occurrences], tuple(accessors), self.src.file
            )
        except TilewrightError as exc:
            exc.add_note(f"while tracing {self.title} at {self.loc} for a {kind} kernel")
            raise
        effects = actions or ()
        return RawCallSite(
            id=next_site_id(),
            operation=self.op.qualname,
            loc=self.loc,
            position=(call.lineno, call.end_lineno, call.col_offset, call.end_col_offset),
            header="",
            callee=fn.name,
            template_args=(),
            variants={None: Variant(tuple(func_args), tuple(occurrences), effects, ())},
            include_paths=(),
            unknown_dfb_access=False,
            result_type=None,
            condition=None,
            condition_name=None,
            kernel_kinds=frozenset({kind}),
            kernel_function=getattr(self.kernel_def, "name", None),
            fn=fn,
            kind=kind,
            binds=tuple(binds),
            trace=traced,
            computed="opaque" if actions is None else "expanded",
            reads=fn.reads(),
        )

    def argument(
        self, fn: RawIRFunction, i: int, node: ast.expr, pname: str, rt: RawType, kind: str
    ) -> tuple[FuncArg, Bind]:
        """The argument's kind (checked against parameter ``pname: rt``) and its binding."""
        src = self.text(node)
        what = f"argument {i + 1} ({src}) of '{fn.name}'"
        got = self.classify(node)
        if rt.kind == "dfb":
            if got[0] != "dfb":
                raise self.error(f"{what}: parameter '{pname}' is a ttl.raw.DFB; {got[2]}")
            return FuncArg("dfb", src, got[1]), Bind("dfb")
        if rt.kind == "tensor":
            if got[0] != "tensor":
                raise self.error(
                    f"{what}: parameter '{pname}' is a ttl.raw.TensorAccessor (pass a base tensor of "
                    f"the operation); {got[2]}"
                )
            if kind == KIND_COMPUTE:
                raise self.error(
                    f"{what}: a TensorAccessor is a data-movement resource; '{fn.name}' runs on a "
                    "compute kernel"
                )
            return FuncArg("tensor", src, got[1]), Bind("accessor")
        if rt.kind == "addr":
            if got[0] != "raw_addr":
                raise self.error(
                    f"{what}: parameter '{pname}' is a ttl.raw.RawAddr (pass ttl.raw_addr(tensor)); "
                    f"{got[2]}"
                )
            return FuncArg("raw_addr", src, got[1]), Bind("param")
        if got[0] != "scalar":
            raise self.error(f"{what}: parameter '{pname}' is a scalar {rt!r}; {got[2]}")
        value = self.static_scalar(node)
        if value is None:
            return FuncArg("scalar", src), Bind("param")
        if not fits(rt, value):
            raise self.error(
                f"{what}: {value!r} is not a valid {rt!r} (parameter '{pname}')"
                + ("" if rt.kind == "float" or isinstance(value, float) else " -- out of range")
            )
        return FuncArg("scalar", src), Bind("const", value)

    def classify(self, node: ast.expr) -> tuple[str, str | None, str]:
        """(kind, DFB / tensor identity, 'got ...' text) of a call argument."""
        src = self.text(node)
        if isinstance(node, ast.Name):
            b = self.r.lookup(node.id, self.chain)
            if b.kind == "dfb":
                return "dfb", b.identity, f"got the DFB '{src}'"
            if b.kind == "tensor":
                return "tensor", b.identity, f"got the tensor '{src}'"
            if b.kind == "kernel":
                return "kernel", None, f"got the kernel handle '{src}'"
        if isinstance(node, ast.Subscript) and self.is_tensor_expr(node.value):
            return "slice", None, f"got the tensor slice {src} (pass the base tensor)"
        if isinstance(node, ast.Call):
            fn = self.r.static_object(node.func, self.chain)
            if fn is surface.raw_addr:
                return "raw_addr", self.raw_addr_operand(node), f"got {src}"
        if isinstance(node, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.JoinedStr)) or (
            isinstance(node, ast.Constant) and isinstance(node.value, str)
        ):
            return "other", None, f"got {src}"
        return "scalar", None, f"got the scalar {src}"

    def static_scalar(self, node: ast.expr) -> int | float | None:
        """The compile-time value of a scalar argument, or None for a run-time one."""
        try:
            return self.r.static_int(node, self.chain)
        except NotStaticError:
            pass
        try:
            value = self.r.static_value(node, self.chain)
        except NotStaticError:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise RawIRError(
                f"{self.title}: argument {self.text(node)} is a {type(value).__name__}; scalar "
                "arguments are numbers",
                loc=self.loc,
            )
        return value
