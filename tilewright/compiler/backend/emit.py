"""C++ emission: a verified kernel IR becomes one readable tt-metal kernel source.

The source uses only the public tt-metal kernel API (the headers tt-metal kernels
include) plus ``ttlang/support.h`` (Python's integer division, float bits, the
``ttlang::DFBDescriptor`` of external calls, the run-time checks).  Its layout follows
reference C.8: ``#include <cstdint>``, the support header, the API headers the ops
need, the user's external headers, then ``kernel_main`` (data movement) or
``namespace NAMESPACE { void MAIN { ... } }`` (compute).  Each statement is preceded
by a ``#line`` directive naming the user's Python line when it changes, so compiler
messages, kernel-API errors, deadlock reports and the block-state checks point at the
Python source.

Most ops render from their ``optable.OPS[code].cpp`` format; control flow and the
compute ops that pair an init with the call have a function in ``_EMITTERS``.
"""

from __future__ import annotations

import math
import os

from tilewright.errors import SourceLoc, untag_rule
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
    seq,
)
from tilewright.kir.optable import BINARY, INTRINSICS, OPS, SFPU, SFPU_BINARY

__all__ = ["emit_kernel", "cpp_expr", "CPP_TYPE", "EMITTER_VERSION"]

EMITTER_VERSION = "3"
"""Part of the build-cache key: bump when the same IR must give different C++."""

CPP_TYPE = {
    Ty.I64: "int64_t",
    Ty.U32: "uint32_t",
    Ty.U64: "uint64_t",
    Ty.F64: "double",
    Ty.F32: "float",
    Ty.BOOL: "bool",
}
_INFIX = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "and": "&&",
    "or": "||",
}
# Headers a compute op needs (tt-metal's api/compute/... layout).
_HEADERS = {
    "copy_tile": "api/compute/tile_move_copy.h",
    "binary_tiles": "api/compute/eltwise_binary.h",
    "binary_dest_reuse": "api/compute/eltwise_binary.h",
    "sfpu": "api/compute/eltwise_unary/eltwise_unary.h",
    "sfpu_binary": "api/compute/eltwise_binary_sfpu.h",
    "fill_tile": "api/compute/eltwise_unary/fill.h",
    "unary_bcast": "api/compute/bcast.h",
    "matmul_tiles": "api/compute/matmul.h",
    "matmul_block": "api/compute/matmul.h",
    "reduce_tile": "api/compute/reduce.h",
    "transpose_tile": "api/compute/transpose_wh.h",
    "pack_tile": "api/compute/pack.h",
    "pack_l1_acc": "api/compute/pack.h",
    "tile_regs.acquire": "api/compute/reg_api.h",
    "compute.init": "api/compute/compute_kernel_hw_startup.h",
}
_BCAST = {"rows": "ROW", "cols": "COL", "scalar": "SCALAR"}
_REUSE = {"srca": "DEST_TO_SRCA", "srcb": "DEST_TO_SRCB"}
_ELW = {"add": "ELWADD", "sub": "ELWSUB", "mul": "ELWMUL"}
_POOL = {"sum": "SUM", "max": "MAX"}
_RDIM = {"row": "REDUCE_ROW", "col": "REDUCE_COL", "scalar": "REDUCE_SCALAR"}


def _float_literal(v: float) -> str:
    if math.isnan(v):
        return '__builtin_nan("")'
    if math.isinf(v):
        return "__builtin_inf()" if v > 0 else "(-__builtin_inf())"
    text = repr(float(v))
    return text if any(c in text for c in ".e") else text + ".0"


def cpp_expr(e: object) -> str:
    """A scalar expression as C++."""
    if isinstance(e, Const):
        if e.ty is Ty.BOOL:
            return "true" if e.value else "false"
        if e.ty is Ty.F64:
            return _float_literal(float(e.value))
        if e.ty is Ty.F32:
            return _float_literal(float(e.value)) + "f"
        if e.ty is Ty.U32:
            return f"{int(e.value) & 0xFFFFFFFF}u"
        if e.ty is Ty.U64:
            return f"{int(e.value)}ull"
        v = int(e.value)
        return f"INT64_C({v})" if not -(1 << 31) <= v < 1 << 31 else str(v)
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
        a, b = cpp_expr(e.a), cpp_expr(e.b)
        if e.op in _INFIX:
            return f"({a} {_INFIX[e.op]} {b})"
        if e.op == "floordiv":
            return f"ttlang::floordiv<{CPP_TYPE[e.ty]}>({a}, {b})"
        if e.op == "mod":
            return f"ttlang::mod<{CPP_TYPE[e.ty]}>({a}, {b})"
        if e.op == "truediv":
            return f"(static_cast<double>({a}) / static_cast<double>({b}))"
        if e.op in ("min", "max"):
            return f"({a} {'<' if e.op == 'min' else '>'} {b} ? {a} : {b})"
        raise ValueError(f"no C++ for operator {e.op!r}")
    if isinstance(e, UnOp):
        return f"(-{cpp_expr(e.a)})" if e.op == "neg" else f"(!{cpp_expr(e.a)})"
    if isinstance(e, Intrinsic):
        return INTRINSICS[e.name].cpp.format(*(cpp_expr(a) for a in e.args))
    if isinstance(e, Cast):
        return f"static_cast<{CPP_TYPE[e.ty]}>({cpp_expr(e.a)})"
    if isinstance(e, str):
        return e
    return repr(e)


def _param(e: object) -> str:
    """An SFPU parameter: a float as its IEEE bits, an integer as itself."""
    if isinstance(e, Const) and e.ty.is_float:
        return f"ttlang::f32_bits({cpp_expr(e)})"
    if not isinstance(e, (int, str)) and hasattr(e, "ty") and e.ty.is_float:
        return f"ttlang::f32_bits({cpp_expr(e)})"
    return f"static_cast<uint32_t>({cpp_expr(e)})"


class _Writer:
    """Lines of C++ with ``#line`` directives that keep every code line at its op's user line.

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

    def at(self, depth: int, op: Op) -> None:
        """Code lines from here on belong to ``op``'s user line."""
        if op.loc is not None:
            self.loc = op.loc

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}_{self.counter}"


def _args(op: Op) -> dict[str, str]:
    info = OPS[op.code]
    return {name: cpp_expr(value) for (name, _), value in zip(info.operands, op.args)}


def _emit_for(w: _Writer, depth: int, op: Op) -> None:
    var, start, stop, step = op.args
    assert isinstance(var, Var) and isinstance(step, int)
    ty = CPP_TYPE[var.ty]
    it, end = w.fresh("it"), w.fresh("end")
    cmp = "<" if step > 0 else ">"
    w.line(depth, "{", sync=False)
    w.line(depth + 1, f"const {ty} {end} = {cpp_expr(stop)};")
    w.line(depth + 1, f"for ({ty} {it} = {cpp_expr(start)}; {it} {cmp} {end}; {it} += {step}) {{")
    w.line(depth + 2, f"{var.name} = {it};")
    _body(w, depth + 2, op.regions[0])
    w.line(depth + 1, "}", sync=False)
    w.line(depth, "}", sync=False)


def _emit_while(w: _Writer, depth: int, op: Op) -> None:
    w.line(depth, f"while ({cpp_expr(op.args[0])}) {{")
    _body(w, depth + 1, op.regions[0])
    w.line(depth, "}", sync=False)


def _emit_if(w: _Writer, depth: int, op: Op) -> None:
    w.line(depth, f"if ({cpp_expr(op.args[0])}) {{")
    _body(w, depth + 1, op.regions[0])
    if op.regions[1]:
        w.line(depth, "} else {", sync=False)
        _body(w, depth + 1, op.regions[1])
    w.line(depth, "}", sync=False)


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _fail_text(cls: object, message: object) -> str:
    """``cls, "message"``, or ``cls, "rule", "message"`` for a rule's message (the
    ``_RULE`` macros put the ``errors.tag_rule`` tag back in front)."""
    rule, text = untag_rule(str(message))
    if rule is None:
        return f"{cls}, {_c_string(text)}"
    return f"{cls}, {_c_string(rule)}, {_c_string(text)}"


def _emit_fail(w: _Writer, depth: int, op: Op) -> None:
    cls, message = op.args
    macro = "TTLANG_FAIL_RULE" if untag_rule(str(message))[0] else "TTLANG_FAIL"
    w.line(depth, f"{macro}({_fail_text(cls, message)});")


def _emit_failf(w: _Writer, depth: int, op: Op) -> None:
    cls, fmt, values = op.args
    args = "".join(f", static_cast<long long>({cpp_expr(v)})" for v in seq(values))
    macro = "TTLANG_FAILF_RULE" if untag_rule(str(fmt))[0] else "TTLANG_FAILF"
    w.line(depth, f"{macro}({_fail_text(cls, fmt)}{args});")


def _emit_sem_wait(w: _Writer, depth: int, op: Op) -> None:
    a = _args(op)
    fn = "noc_semaphore_wait" if op.args[2] == "eq" else "noc_semaphore_wait_min"
    w.line(
        depth,
        f"{fn}(reinterpret_cast<volatile tt_l1_ptr uint32_t*>({a['addr']}), {a['value']});",
    )


def _emit_copy(w: _Writer, depth: int, op: Op) -> None:
    a = _args(op)
    tr = ", 1" if op.args[3] else ""
    w.line(depth, f"copy_tile_to_dst_init_short({a['cb']}{tr});")
    w.line(depth, f"copy_tile({a['cb']}, {a['tile']}, {a['dst']});")


def _emit_binary(w: _Writer, depth: int, op: Op) -> None:
    a = _args(op)
    stem, bcast = BINARY[str(op.args[0])], str(op.args[1])
    if bcast == "none":
        w.line(depth, f"{stem}_tiles_init({a['cb0']}, {a['cb1']});")
        call = f"{stem}_tiles"
    else:
        w.line(depth, f"{stem}_bcast_{bcast}_init_short({a['cb0']}, {a['cb1']});")
        call = f"{stem}_tiles_bcast_{bcast}"
    w.line(depth, f"{call}({a['cb0']}, {a['cb1']}, {a['t0']}, {a['t1']}, {a['dst']});")


def _emit_reuse(w: _Writer, depth: int, op: Op) -> None:
    a = _args(op)
    tmpl = f"<{_ELW[str(op.args[0])]}, EltwiseBinaryReuseDestType::{_REUSE[str(op.args[1])]}>"
    w.line(depth, f"binary_dest_reuse_tiles_init{tmpl}({a['cb']});")
    w.line(depth, f"binary_dest_reuse_tiles{tmpl}({a['cb']}, {a['tile']}, {a['dst']});")


def _emit_sfpu(w: _Writer, depth: int, op: Op) -> None:
    name, dst, params = op.args
    fn, init, _kinds = SFPU[str(name)]
    w.line(depth, f"{init}();")
    extra = "".join(f", {_param(p)}" for p in seq(params))
    w.line(depth, f"{fn}({dst}{extra});")


def _emit_sfpu_binary(w: _Writer, depth: int, op: Op) -> None:
    name, d0, d1, od = op.args
    fn = SFPU_BINARY[str(name)]
    w.line(depth, f"{fn}_init();")
    w.line(depth, f"{fn}({d0}, {d1}, {od});")


def _emit_fill(w: _Writer, depth: int, op: Op) -> None:
    a = _args(op)
    w.line(depth, "fill_tile_init();")
    w.line(depth, f"fill_tile({a['dst']}, static_cast<float>({a['value']}));")


def _emit_unary_bcast(w: _Writer, depth: int, op: Op) -> None:
    a = _args(op)
    t = f"<BroadcastType::{_BCAST[str(op.args[0])]}>"
    w.line(depth, f"unary_bcast_init{t}({a['cb']}, {a['cb']});")
    w.line(depth, f"unary_bcast{t}({a['cb']}, {a['tile']}, {a['dst']});")


def _emit_matmul(w: _Writer, depth: int, op: Op) -> None:
    a = _args(op)
    tr = int(op.args[5])  # type: ignore[call-overload]
    w.line(depth, f"mm_init_short({a['cb0']}, {a['cb1']}, {tr});")
    w.line(depth, f"matmul_tiles({a['cb0']}, {a['cb1']}, {a['t0']}, {a['t1']}, {a['dst']}, {tr});")


def _emit_matmul_block(w: _Writer, depth: int, op: Op) -> None:
    a = _args(op)
    tr, ct, rt, kt = (int(x) for x in op.args[5:9])  # type: ignore[call-overload]
    w.line(depth, f"mm_block_init_short({a['cb0']}, {a['cb1']}, {tr}, {ct}, {rt}, {kt});")
    w.line(
        depth,
        f"matmul_block({a['cb0']}, {a['cb1']}, {a['t0']}, {a['t1']}, {a['dst']}, {tr}, {ct}, {rt}, {kt});",
    )


def _emit_reduce(w: _Writer, depth: int, op: Op) -> None:
    a = _args(op)
    t = f"<PoolType::{_POOL[str(op.args[0])]}, ReduceDim::{_RDIM[str(op.args[1])]}>"
    w.line(depth, f"reduce_init{t}({a['cb']}, {a['scaler']}, {a['cb']});")
    w.line(depth, f"reduce_tile{t}({a['cb']}, {a['scaler']}, {a['tile']}, 0, {a['dst']});")


def _emit_transpose(w: _Writer, depth: int, op: Op) -> None:
    a = _args(op)
    w.line(depth, f"transpose_wh_init_short({a['cb']});")
    w.line(depth, f"transpose_wh_tile({a['cb']}, {a['tile']}, {a['dst']});")


def _emit_extern(w: _Writer, depth: int, op: Op) -> None:
    callee, template, args, types, result, rtype = op.args
    targs = f"<{', '.join(seq(template))}>" if template else ""
    values = [
        str(x) if t == "accessor" else f"static_cast<{t}>({cpp_expr(x)})"
        for x, t in zip(seq(args), seq(types))
    ]
    call = f"{callee}{targs}({', '.join(values)})"
    if result:
        w.line(depth, f"{result} = static_cast<int64_t>(static_cast<{rtype}>({call}));")
    else:
        w.line(depth, f"{call};")


def _emit_raw_call(w: _Writer, depth: int, op: Op) -> None:
    name, args, accessors, result = op.args
    fn = w.kernel.function(str(name))
    assert fn is not None
    values = [f"static_cast<{CPP_TYPE[p.ty]}>({cpp_expr(a)})" for a, p in zip(seq(args), fn.params)]
    call = f"{name}({', '.join(values + [str(a) for a in seq(accessors)])})"
    w.line(depth, f"{result} = {call};" if result else f"{call};")


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
    _body(w, depth + 1, fn.body)
    if fn.result is not None:
        w.line(depth + 1, f"return {cpp_expr(fn.result)};")
    w.line(depth, "}", sync=False)
    w.line(depth, "", sync=False)
    w.loc = None


def _emit_comment(w: _Writer, depth: int, op: Op) -> None:
    w.line(depth, f"// {op.args[0]}")


_EMITTERS = {
    "for": _emit_for,
    "while": _emit_while,
    "if": _emit_if,
    "fail": _emit_fail,
    "failf": _emit_failf,
    "sem.wait": _emit_sem_wait,
    "copy_tile": _emit_copy,
    "binary_tiles": _emit_binary,
    "binary_dest_reuse": _emit_reuse,
    "sfpu": _emit_sfpu,
    "sfpu_binary": _emit_sfpu_binary,
    "fill_tile": _emit_fill,
    "unary_bcast": _emit_unary_bcast,
    "matmul_tiles": _emit_matmul,
    "matmul_block": _emit_matmul_block,
    "reduce_tile": _emit_reduce,
    "transpose_tile": _emit_transpose,
    "extern.call": _emit_extern,
    "raw.call": _emit_raw_call,
    "comment": _emit_comment,
}


def _body(w: _Writer, depth: int, ops: tuple[Op, ...]) -> None:
    for op in ops:
        w.at(depth, op)
        fn = _EMITTERS.get(op.code)
        if fn is not None:
            fn(w, depth, op)
            continue
        fmt = OPS[op.code].cpp
        if fmt is None:
            raise ValueError(f"op {op.code!r} has no C++ form")
        w.line(depth, fmt.format(**_args(op)))


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
    if compute:
        headers = sorted({h for c, h in _HEADERS.items() if c in codes} | {"api/compute/cb_api.h"})
        out += [f'#include "{h}"' for h in headers]
    else:
        out += ['#include "api/dataflow/dataflow_api.h"']
        if kernel.accessors:
            out.append('#include "api/tensor/tensor_accessor.h"')
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
    _body(w, body_depth, kernel.body)
    if compute:
        w.line(0, "}")
        w.line(0, "}  // namespace NAMESPACE")
    else:
        w.line(0, "}")
    return "\n".join(out + w.lines) + "\n"
