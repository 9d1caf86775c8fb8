"""Front-end checks of an external call's arguments (reference C.3, C.4; C.9 items 5-16).

Template arguments become C++ text (ints, bools, float bit patterns, ``ttl.uint32``
values, DFB descriptors and ids, starred captured sequences); function arguments are
classified (scalar, ``ttl.uint32``, DFB, base tensor, ``ttl.raw_addr``).  A mixin of
the call checker in :mod:`.frontend`.
"""

from __future__ import annotations

import ast
import math
import struct

from tilewright.compiler.extern.checker import CheckerBase
from tilewright.compiler.extern.scope import NotStaticError
from tilewright.errors import ExternCallError
from tilewright.lang.extern import surface
from tilewright.lang.extern import types as extern_types
from tilewright.lang.extern.plan import FuncArg, TemplateArg

__all__ = ["ArgumentChecks", "ExternArgumentTypeError"]

_INT32 = (-(1 << 31), (1 << 31) - 1)
_UINT32 = (0, (1 << 32) - 1)
_BARE_DFB = (
    "bare DFB template arguments are ambiguous; use ttl.dfb_descriptor(dfb) for the typed "
    "ttlang::DFBDescriptor<index, pages_per_block, block_count, page_size> or ttl.get_dfb_id(dfb) "
    "for the DFB's physical index"
)
_TEMPLATE_KINDS = (
    "must be an int, bool, float, ttl.dfb_descriptor(dfb), ttl.get_dfb_id(dfb), or an "
    "integer/index value"
)


class ExternArgumentTypeError(ExternCallError, TypeError):
    """A typed argument function given a value of the wrong Python type (``ttl.uint32(1.5)``)."""

    default_rule = "extern-type"


class ArgumentChecks(CheckerBase):
    """Template- and function-argument checks (mixed into the call checker)."""

    # 5-13: template arguments ----------------------------------------------------------------

    def check_template_args(
        self,
    ) -> tuple[list[TemplateArg], list[tuple[str, int]], list[str]]:
        """The template arguments, the descriptors' (DFB, position) and the DFBs passed by id."""
        node = self.kw.get("template_args")
        out: list[TemplateArg] = []
        descriptors: list[tuple[str, int]] = []  # (DFB, runtime position)
        id_dfbs: list[str] = []
        if node is None:
            return out, descriptors, id_dfbs
        if not isinstance(node, ast.List):
            raise self.error(
                f"template_args must be a list literal (its order is the C++ order), got {self.text(node)}"
            )
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                for value in self.starred_sequence(elt):
                    out.append(self.template_value(value, self.text(elt)))
                continue
            arg = self.template_element(elt)
            if arg.kind == "descriptor" and arg.dfb is not None:
                descriptors.append((arg.dfb, len(out)))
            elif arg.kind == "dfb_id" and arg.dfb is not None:
                id_dfbs.append(arg.dfb)
            out.append(arg)
        return out, descriptors, id_dfbs

    def starred_sequence(self, elt: ast.Starred) -> list[object]:
        value = elt.value
        if isinstance(value, ast.Name):
            b = self.r.lookup(value.id, self.chain)
            if b.kind in ("captured", "module") and isinstance(b.value, (list, tuple)):
                return list(b.value)
        raise self.error(
            f"starred template argument {self.text(elt)} must reference a captured or module-level "
            "list or tuple"
        )

    def template_value(self, value: object, source: str) -> TemplateArg:
        """A template argument from a static Python value (captured / module / starred)."""
        if isinstance(value, bool):
            return TemplateArg("bool", "true" if value else "false")
        if isinstance(value, int):
            return self.int_arg(value)
        if isinstance(value, float):
            return self.float_arg(value)
        if isinstance(value, extern_types.UInt32):
            return self.uint_arg(value.value)
        if type(value).__name__ == "GlobalSemaphore" and hasattr(value, "address"):
            address = value.address() if callable(value.address) else value.address
            return self.uint_arg(int(address))
        raise self.error(
            f"template argument {source} {_TEMPLATE_KINDS}; got {type(value).__name__}"
        )

    def int_arg(self, v: int) -> TemplateArg:
        if not _INT32[0] <= v <= _INT32[1]:
            raise self.error(
                f"signed integer template argument must fit in 32 bits, got {v}",
                hint="use ttl.uint32(value) for an unsigned 32-bit value",
            )
        return TemplateArg("int", str(v) if v != _INT32[0] else "(-2147483647 - 1)")

    def uint_arg(self, v: int) -> TemplateArg:
        if not _UINT32[0] <= v <= _UINT32[1]:
            raise self.error(
                f"unsigned template argument must fit in 32 bits (0 <= value < 2**32), got {v}"
            )
        return TemplateArg("uint", f"{v}U")

    def float_arg(self, v: float) -> TemplateArg:
        try:
            bits = struct.unpack("<I", struct.pack("<f", v))[0]
        except OverflowError:
            raise self.error(
                f"float template argument {v!r} is not representable as a 32-bit float"
            ) from None
        if math.isfinite(v) and not math.isfinite(struct.unpack("<f", struct.pack("<f", v))[0]):
            raise self.error(
                f"float template argument {v!r} is not representable as a 32-bit float"
            )
        return TemplateArg("float", f"{bits}U")

    def template_element(self, elt: ast.expr) -> TemplateArg:
        src = self.text(elt)
        if isinstance(elt, ast.Constant) or (
            isinstance(elt, ast.UnaryOp)
            and isinstance(elt.op, (ast.USub, ast.UAdd))
            and isinstance(elt.operand, ast.Constant)
        ):
            try:
                value = self.r.static_value(elt, self.chain)
            except NotStaticError:
                raise self.error(f"template argument {src} {_TEMPLATE_KINDS}") from None
            if isinstance(value, (bool, int, float)):
                return self.template_value(value, src)
            raise self.error(
                f"template argument {src} {_TEMPLATE_KINDS}; got {type(value).__name__}"
            )
        if isinstance(elt, ast.Name):
            b = self.r.lookup(elt.id, self.chain)
            if b.kind == "dfb":
                raise self.error(f"{_BARE_DFB} (got '{elt.id}')")
            if b.kind == "tensor":
                raise self.error(
                    f"template argument '{elt.id}' is a tensor; a template argument {_TEMPLATE_KINDS} "
                    "(pass tensors in func_args)"
                )
            if b.kind == "local":
                raise self.error(
                    f"integer/index template argument '{elt.id}' is not a compile-time constant (an "
                    "operation-local value); use a literal or a module-level or captured value, or pass "
                    "it in func_args"
                )
            if b.kind == "missing":
                raise self.error(f"template argument '{elt.id}' is not defined")
            if b.kind == "module" and type(b.value).__name__ == "GlobalSemaphore":
                raise self.error(
                    f"global semaphore '{elt.id}' is a module-level value; it must be captured by an "
                    "operation factory (its address is part of the compiled operation)"
                )
            return self.template_value(b.value, src)
        if isinstance(elt, ast.Call):
            fn = self.r.static_object(elt.func, self.chain)
            if fn is surface.dfb_descriptor or fn is surface.get_dfb_id:
                which = "dfb_descriptor" if fn is surface.dfb_descriptor else "get_dfb_id"
                dfb = self.dfb_operand(elt, f"ttl.{which}")
                return TemplateArg("descriptor" if which == "dfb_descriptor" else "dfb_id", dfb=dfb)
            if fn is surface.uint32:
                return self.uint32_operand(elt)
            if fn is surface.raw_addr:
                raise self.error(
                    f"template argument {src}: ttl.raw_addr is a function argument (func_args)"
                )
        if isinstance(elt, ast.Subscript) and self.is_tensor_expr(elt.value):
            raise self.error(
                f"does not support tensor slices/views in template_args ({src}); pass the base tensor or "
                "ttl.raw_addr(base_tensor) in func_args"
            )
        try:
            return self.int_arg(self.r.static_int(elt, self.chain))
        except NotStaticError as exc:
            if "operation-local" in exc.reason or "run-time" in exc.reason:
                raise self.error(
                    f"integer/index template argument {src} is not a compile-time constant: {exc.reason}"
                ) from None
        raise self.error(f"template argument {src} {_TEMPLATE_KINDS}")

    def dfb_operand(self, call: ast.Call, what: str) -> str:
        if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
            raise self.error(f"{what} takes exactly one argument: the DFB (got {self.text(call)})")
        arg = call.args[0]
        dfb = self.dfb_identity(arg)
        if dfb is not None:
            return dfb
        raise self.error(f"{what}({self.text(arg)}): argument must be a DFB")

    def uint32_operand(self, call: ast.Call) -> TemplateArg:
        if len(call.args) != 1 or call.keywords:
            raise self.error(f"ttl.uint32 takes exactly one argument, got {self.text(call)}")
        arg = call.args[0]
        try:
            value = self.r.static_value(arg, self.chain)
        except NotStaticError:
            try:
                value = self.r.static_int(arg, self.chain)
            except NotStaticError as exc:
                raise self.error(
                    f"ttl.uint32({self.text(arg)}) is not a compile-time constant: {exc.reason}"
                ) from None
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.error(
                f"ttl.uint32 takes an int, got {type(value).__name__} {self.text(arg)}",
                cls=ExternArgumentTypeError,
            )
        return self.uint_arg(value)

    def is_tensor_expr(self, node: ast.AST) -> bool:
        while isinstance(node, ast.Subscript):
            node = node.value
        return isinstance(node, ast.Name) and self.r.lookup(node.id, self.chain).kind == "tensor"

    def check_func_args(self, node: ast.expr | None) -> list[FuncArg]:
        if node is None:
            return []
        if not isinstance(node, ast.List):
            raise self.error(
                f"func_args must be a list literal (or a mapping of kernels to lists), got {self.text(node)}"
            )
        return [self.func_arg(e) for e in node.elts]

    def func_arg(self, e: ast.expr) -> FuncArg:
        src = self.text(e)
        if isinstance(e, ast.Starred):
            raise self.error(f"func_args elements must be written out, got {src}")
        if isinstance(e, ast.Name):
            b = self.r.lookup(e.id, self.chain)
            if b.kind == "dfb":
                return FuncArg("dfb", src, b.identity)
            if b.kind == "tensor":
                return FuncArg("tensor", src, b.identity)
            if b.kind == "kernel":
                raise self.error(f"func_args element '{e.id}' is a kernel handle")
            if b.kind == "module" and type(b.value).__name__ == "GlobalSemaphore":
                raise self.error(
                    f"global semaphore '{e.id}' is a module-level value; it must be captured by an "
                    "operation factory"
                )
            if (
                b.kind in ("captured", "module")
                and not isinstance(b.value, int)
                and type(b.value).__name__ != "GlobalSemaphore"
            ):
                raise self.error(self.func_arg_kinds(src, type(b.value).__name__))
            return FuncArg("scalar", src)
        if isinstance(e, ast.Subscript) and self.is_tensor_expr(e.value):
            raise self.error(
                f"does not support tensor slices/views in func_args ({src}); pass the base tensor or "
                "ttl.raw_addr(base_tensor)"
            )
        if isinstance(e, ast.Call):
            fn = self.r.static_object(e.func, self.chain)
            if fn is surface.raw_addr:
                return FuncArg("raw_addr", src, self.raw_addr_operand(e))
            if fn is surface.dfb_descriptor or fn is surface.get_dfb_id:
                raise self.error(
                    f"{src} is a template argument; pass the DFB itself in func_args (the C++ receives its "
                    "physical index)"
                )
            if fn is surface.uint32:
                if len(e.args) != 1 or e.keywords:
                    raise self.error(f"ttl.uint32 takes exactly one argument, got {src}")
                return FuncArg("uint32", src)
        if isinstance(e, ast.Constant):
            if isinstance(e.value, (bool, int)):
                return FuncArg("scalar", src)
            raise self.error(self.func_arg_kinds(src, type(e.value).__name__))
        if isinstance(e, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.Lambda, ast.JoinedStr)):
            raise self.error(self.func_arg_kinds(src, type(e).__name__.lower()))
        return FuncArg("scalar", src)

    @staticmethod
    def func_arg_kinds(src: str, got: str) -> str:
        return (
            f"func_args element {src} is a {got}; function arguments are integer scalars, DFBs, base "
            "tensors, ttl.raw_addr(tensor) or captured global semaphores"
        )

    def raw_addr_operand(self, call: ast.Call) -> str:
        if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
            raise self.error(
                f"ttl.raw_addr takes exactly one argument: a tensor (got {self.text(call)})"
            )
        arg = call.args[0]
        if isinstance(arg, ast.Subscript) and self.is_tensor_expr(arg):
            raise self.error(
                f"ttl.raw_addr does not support tensor slices/views ({self.text(arg)}); pass the base tensor"
            )
        if isinstance(arg, ast.Name):
            b = self.r.lookup(arg.id, self.chain)
            if b.kind == "tensor" and b.identity is not None:
                return b.identity
        raise self.error(
            f"ttl.raw_addr({self.text(arg)}): the operand must be a tensor argument of the operation"
        )
