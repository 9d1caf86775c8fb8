"""C++ emission: a verified kernel IR becomes one readable tt-metal kernel source.

The source uses only the public tt-metal kernel API (the headers tt-metal kernels
include) plus ``ttlang/support.h`` (Python's integer division, wrap-around signed
arithmetic, float bits, the ``ttlang::DFBDescriptor`` of external calls, the run-time
checks).  Its layout follows reference C.8: ``#include <cstdint>``, the support header,
the API headers the ops need, the user's external headers, then ``kernel_main`` (data
movement) or ``namespace NAMESPACE { void MAIN { ... } }`` (compute).  Each statement is
preceded by a ``#line`` directive naming the user's Python line when it changes, so
compiler messages, kernel-API errors, deadlock reports and the block-state checks point
at the Python source.

Each op renders from its row (``optable.OPS[code].cpp``: a format over the operand names,
or a function given this module's writer); each expression from the scalar table
(:mod:`tilewright.kir.scalar`), written so that its C++ type is its IR type -- the
meaning the interpreter gives it.
"""

from __future__ import annotations

import os

from tilewright.errors import SourceLoc
from tilewright.kir.ir import (
    Arg,
    BinOp,
    Cast,
    Const,
    Function,
    Intrinsic,
    Kernel,
    Op,
    Ty,
    UnOp,
    Var,
)
from tilewright.kir.optable import OPS
from tilewright.kir.scalar import CPP_TYPE, INTRINSICS, OPERATORS, float_literal

__all__ = ["emit_kernel", "cpp_expr", "CPP_TYPE", "EMITTER_VERSION"]

EMITTER_VERSION = "5"
"""Part of the build-cache key: bump when the same IR must give different C++."""


def _int_literal(v: int, wide: bool) -> str:
    """An ``i64`` constant: a plain literal when it fits an ``int`` and the context converts
    it to ``int64_t`` anyway, else ``INT64_C`` (so its C++ type is its IR type)."""
    if v == -(1 << 63):  # no literal: 9223372036854775808 does not fit int64_t
        return "(-INT64_C(9223372036854775807) - 1)"
    return str(v) if -(1 << 31) <= v < 1 << 31 and not wide else f"INT64_C({v})"


def _operand(e: object, other: object) -> str:
    """A binary operand: an ``i64`` constant is ``INT64_C`` where a plain ``int`` literal
    would change the meaning -- against a ``uint32_t`` (which would make the comparison
    unsigned) or against another ``int`` literal."""
    if isinstance(e, Const) and e.ty is Ty.I64:
        other_ty = getattr(other, "ty", None)
        wide = other_ty is Ty.U32 or (isinstance(other, Const) and other.ty is Ty.I64)
        return _int_literal(int(e.value), wide)
    return cpp_expr(e)


def cpp_expr(e: object) -> str:
    """A scalar expression as C++."""
    if isinstance(e, Const):
        if e.ty is Ty.BOOL:
            return "true" if e.value else "false"
        if e.ty is Ty.F64:
            return float_literal(float(e.value))
        if e.ty is Ty.F32:
            return float_literal(float(e.value)) + "f"
        if e.ty is Ty.U32:
            return f"{int(e.value) & 0xFFFFFFFF}u"
        if e.ty is Ty.U64:
            return f"{int(e.value) & 0xFFFFFFFFFFFFFFFF}ull"
        return _int_literal(int(e.value), False)
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Arg):
        raw = f"get_arg_val<uint32_t>({e.index})"
        if e.ty is Ty.U32:
            return raw
        if e.ty is Ty.I64:  # per-node Python ints travel as int32 bit patterns
            return f"static_cast<int64_t>(static_cast<int32_t>({raw}))"
        return f"static_cast<{CPP_TYPE[e.ty]}>({raw})"
    if isinstance(e, BinOp):
        row = OPERATORS.get(e.op)
        if row is None:
            raise ValueError(f"no C++ for operator {e.op!r}")
        form = row.cpp_signed if row.cpp_signed and e.ty is Ty.I64 else row.cpp
        return form.format(a=_operand(e.a, e.b), b=_operand(e.b, e.a), T=CPP_TYPE[e.ty])
    if isinstance(e, UnOp):
        row = OPERATORS.get(e.op)
        if row is None:
            raise ValueError(f"no C++ for operator {e.op!r}")
        form = row.cpp_signed if row.cpp_signed and e.ty is Ty.I64 else row.cpp
        return form.format(a=_operand(e.a, e.a), T=CPP_TYPE[e.ty])
    if isinstance(e, Intrinsic):
        return INTRINSICS[e.name].cpp.format(*(cpp_expr(a) for a in e.args))
    if isinstance(e, Cast):
        return f"static_cast<{CPP_TYPE[e.ty]}>({cpp_expr(e.a)})"
    if isinstance(e, str):
        return e
    return repr(e)


class _Writer:
    """Lines of C++ with ``#line`` directives that keep every code line at its op's user line
    (what a row's C++ rule may ask, ``opdef.Writer``).

    A ``#line N`` directive names the *next* physical line; the writer tracks which user
    line the next physical line maps to and re-synchronises only when an op's line differs.
    """

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.lines: list[str] = []
        self.next: tuple[str, int] | None = None  # the user line the next physical line maps to
        self.loc: SourceLoc | None = None
        self.counter = 0

    def line(self, depth: int, text: str, *, sync: bool = True) -> None:
        loc = self.loc
        if sync and loc is not None and self.next != (loc.file, loc.line):
            file = loc.file.replace("\\", "\\\\").replace('"', '\\"')
            self.lines.append(f'#line {loc.line} "{file}"')
            self.next = (loc.file, loc.line)
        self.lines.append("    " * depth + text)
        if self.next is not None:
            self.next = (self.next[0], self.next[1] + 1)

    def at(self, op: Op) -> None:
        """Code lines from here on belong to ``op``'s user line."""
        if op.loc is not None:
            self.loc = op.loc

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}_{self.counter}"

    def expr(self, e: object) -> str:
        return cpp_expr(e)

    def args(self, op: Op) -> dict[str, str]:
        row = OPS[op.code]
        return {name: cpp_expr(value) for (name, _), value in zip(row.operands, op.args)}

    def body(self, depth: int, ops: tuple[Op, ...]) -> None:
        for op in ops:
            self.at(op)
            row = OPS.get(op.code)
            if row is None:
                raise ValueError(f"op {op.code!r} has no C++ form")
            if isinstance(row.cpp, str):
                self.line(depth, row.cpp.format(**self.args(op)))
            else:
                row.cpp(self, depth, op)


def _emit_function(w: _Writer, depth: int, fn: Function) -> None:
    """``static inline`` C++ of a raw IR function (accessors by reference, as templates)."""
    w.loc = None
    if fn.title:
        w.line(depth, f"// {fn.title}", sync=False)
    if fn.accessors:
        w.line(
            depth,
            "template <" + ", ".join(f"typename A{i}" for i in range(len(fn.accessors))) + ">",
            sync=False,
        )
    params = [f"{CPP_TYPE[p.ty]} {p.name}" for p in fn.params]
    params += [f"const A{i}& {a}" for i, a in enumerate(fn.accessors)]
    ret = CPP_TYPE[fn.result.ty] if fn.result is not None else "void"
    w.line(depth, f"static inline {ret} {fn.name}({', '.join(params)}) {{", sync=False)
    for v in fn.locals:
        w.line(depth + 1, f"[[maybe_unused]] {CPP_TYPE[v.ty]} {v.name} = {{}};", sync=False)
    w.body(depth + 1, fn.body)
    if fn.result is not None:
        w.line(depth + 1, f"return {cpp_expr(fn.result)};")
    w.line(depth, "}", sync=False)
    w.line(depth, "", sync=False)
    w.loc = None


def _used_codes(ops: tuple[Op, ...], out: set[str]) -> set[str]:
    for op in ops:
        out.add(op.code)
        for region in op.regions:
            _used_codes(region, out)
    return out


def emit_kernel(kernel: Kernel, *, title: str | None = None) -> str:
    """The C++ source of ``kernel`` (verified IR)."""
    codes = _used_codes(kernel.body, set())
    for fn in kernel.functions:
        _used_codes(fn.body, codes)
    compute = kernel.kind == "compute"
    src = os.path.basename(kernel.source)
    out = [
        f"// {title or f'{kernel.name}: the {kernel.kind} kernel of {src}'}",
        "// Generated by Tilewright's TT-Lang compiler from the kernel IR; do not edit.",
        "#include <cstdint>",
        "",
        '#include "ttlang/support.h"',
    ]
    needed = {h for h in (OPS[c].header for c in codes if c in OPS) if h is not None}
    if compute:
        out += [f'#include "{h}"' for h in sorted(needed | {"api/compute/cb_api.h"})]
    else:
        out += ['#include "api/dataflow/dataflow_api.h"']
        if kernel.accessors:
            out.append('#include "api/tensor/tensor_accessor.h"')
        out += [f'#include "{h}"' for h in sorted(needed)]
    out += [f'#include "{h}"' for h in kernel.headers]
    out.append("")
    w = _Writer(kernel)
    body_depth = 1
    if compute:
        w.line(0, "namespace NAMESPACE {")
    for fn in kernel.functions:
        _emit_function(w, 0, fn)
    if compute:
        w.line(0, "void MAIN {")
    else:
        w.line(0, "void kernel_main() {")
    for acc in kernel.accessors:
        w.line(body_depth, f"constexpr auto {acc.name}_args = TensorAccessorArgs<{acc.cta}>();")
        w.line(
            body_depth,
            f"const auto {acc.name} = TensorAccessor({acc.name}_args, "
            f"get_arg_val<uint32_t>({acc.addr_arg}), {acc.page_size});",
        )
    for v in kernel.locals:
        w.line(body_depth, f"[[maybe_unused]] {CPP_TYPE[v.ty]} {v.name} = {{}};")
    w.body(body_depth, kernel.body)
    if compute:
        w.line(0, "}")
        w.line(0, "}  // namespace NAMESPACE")
    else:
        w.line(0, "}")
    return "\n".join(out + w.lines) + "\n"
