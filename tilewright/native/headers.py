"""The C++ headers generated from Python tables: one truth, two kernel APIs.

The native runtime and the kernel headers include these headers instead of keeping
their own copies of what the Python side defines (each is written into the runtime's
build directory, which is on every kernel's include path, and hashed into the
runtime's build key):

================== ====================================================================
header             from
================== ====================================================================
twrt_errors.h      ``device/api_messages.py`` ``ERROR_CLASSES``: ``twrt::ErrClass``,
                   ``ttlang::ErrorClass`` (compiled TT-Lang), ``TW_ERR_*``
twrt_messages.h    ``device/api_messages.py`` ``MESSAGES``: one ``fail_<name>(run, loc,
                   fields...)`` per diagnostic and ``fmt_<name>`` per fragment
twrt_dataformat.h  ``device/formats/dataformat.py`` ``DataFormat``: ``tt::DataFormat``
twrt_format_table.h the same module's descriptors (element size, block-float shape,
                   integer range, tile bytes): ``twrt::format_info(fmt)``
twrt_sfpu_ops.h    ``device/ops/tile_ops.py``: the SFPU / FPU op enums of the runtime
twrt_sfpu_api.h    the same table: every ``<op>_tile`` / ``<op>_tile_init`` of the compute
                   API (and the SFPU binary ops), forwarding to the runtime
twrt_fidelity.h    ``device/ops/numerics.py``: the MathFidelity values and the FPU's
                   mantissa-slice masks (``FIDELITY_PHASES``, ``SLICE_MASKS``)
twrt_sfpu_math.h   ``device/ops/sfpu_algorithms.py`` ``CONSTANTS``: every constant of the
                   SFPU programs (``runtime/sfpu_math.h``), as float32 bit patterns
================== ====================================================================
"""

from __future__ import annotations

import re

import numpy as np

from tilewright.device.api_messages import ERROR_CLASSES, MESSAGES, ApiMessage
from tilewright.device.formats.codec import ELEMENT_CODEC_FORMATS
from tilewright.device.formats.dataformat import (
    BLOCK_FLOAT,
    ELEMENT_SIZE,
    INTEGER_DTYPE,
    DataFormat,
    ExponentKind,
)
from tilewright.device.formats.tile import TILE_32x32, tile_size_bytes
from tilewright.device.ops.numerics import (
    FIDELITY_CHOICES,
    FIDELITY_NAMES,
    FIDELITY_PHASES,
    SLICE_MASKS,
)
from tilewright.device.ops.sfpu_algorithms import CONSTANTS, INTEGER_CONSTANTS, constant_bits
from tilewright.device.ops.tile_ops import FPU_BINARY, SFPU_BINARY, SFPU_OPS, SFPU_TERNARY

__all__ = ["generated", "message_ids"]

_DO_NOT_EDIT = "-- do not edit."


def _head(source: str) -> list[str]:
    return [f"// Generated from {source} {_DO_NOT_EDIT}", "#pragma once"]


# -- error classes -----------------------------------------------------------------------------


def errors_header() -> str:
    lines = _head("tilewright/device/api_messages.py ERROR_CLASSES")
    lines += ["#include <cstdint>", ""]
    lines += [f"#define TW_ERR_{c.name} {c.code}" for c in ERROR_CLASSES]
    lines += ["", "namespace twrt {", "/** Error classes of a failed run (what Python raises). */"]
    lines.append("enum ErrClass : int32_t {")
    lines += [
        f"    ERR_{c.name} = {c.code},  // {c.exception.__name__}: {c.doc}" for c in ERROR_CLASSES
    ]
    lines += ["};", "}  // namespace twrt", ""]
    lines += [
        "namespace ttlang {",
        "/** Error classes of run-time checks (the interpreter raises the same types). */",
    ]
    lines.append("enum ErrorClass : int32_t {")
    lines += [f"    {c.exception.__name__} = {c.code}," for c in ERROR_CLASSES if c.raisable]
    lines += ["};", "}  // namespace ttlang"]
    return "\n".join(lines) + "\n"


# -- messages ----------------------------------------------------------------------------------

_FIELD = re.compile(r"\{(\w+):(\w+)\}")

_C_PARAM = {
    "int": ("int64_t {n}",),
    "hex": ("uint64_t {n}",),
    "bool": ("bool {n}",),
    "str": ("const char* {n}",),
    "float": ("double {n}",),
    "xy": ("uint32_t {n}_x", "uint32_t {n}_y"),
    "cb": ("int32_t {n}",),
    "format": ("uint32_t {n}",),
    "chip": ("uint32_t {n}",),
    "kernel": (),
}
_C_CONV = {
    "int": '%" PRId64 "',
    "hex": '0x%" PRIx64 "',
    "bool": "%s",
    "str": "%s",
    "float": "%g",
    "xy": "(%u, %u)",
    "cb": "{cb:%d}",
    "format": "{format:%u}",
    "chip": "{chip:%u}",
    "kernel": "{kernel}",
}
_C_ARG = {
    "int": ("{n}",),
    "hex": ("{n}",),
    "bool": ('{n} ? "True" : "False"',),
    "str": ("{n}",),
    "float": ("{n}",),
    "xy": ("{n}_x", "{n}_y"),
    "cb": ("{n}",),
    "format": ("{n}",),
    "chip": ("{n}",),
    "kernel": (),
}


def message_ids() -> dict[str, int]:
    """Message name -> the id the runtime reports with a failure (1-based, table order)."""
    return {name: i for i, name in enumerate(MESSAGES, 1)}


def _c_literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")


def _c_format(msg: ApiMessage) -> tuple[str, list[str]]:
    """The printf format of ``msg`` and its arguments, in text order."""
    out, args, pos = [], [], 0
    for m in _FIELD.finditer(msg.template):
        out.append(_c_literal(msg.template[pos : m.start()]))
        name, kind = m.group(1), m.group(2)
        out.append(_C_CONV[kind])
        args += [a.format(n=name) for a in _C_ARG[kind]]
        pos = m.end()
    out.append(_c_literal(msg.template[pos:]))
    return '"' + "".join(out) + '"', args


_CPP_KEYWORDS = frozenset(
    "and auto bool break case char class const default delete do double else enum explicit "
    "extern false float for friend goto if inline int long namespace new not operator or "
    "private protected public register return short signed sizeof static struct switch "
    "template this throw true try typedef typename union unsigned using virtual void "
    "volatile while".split()
)


def _c_params(msg: ApiMessage) -> list[str]:
    for name, _kind in msg.fields:
        if name in _CPP_KEYWORDS or name in ("r", "loc", "buf", "size_t"):
            raise AssertionError(
                f"message {msg.name}: field {name!r} cannot be a C++ parameter name"
            )
    return [p.format(n=name) for name, kind in msg.fields for p in _C_PARAM[kind]]


def messages_header() -> str:
    ids = message_ids()
    lines = _head("tilewright/device/api_messages.py MESSAGES")
    lines += [
        "// One fail_<name> per kernel-API diagnostic: the Python kernel API raises the same",
        "// class with the same text (named fields in Python, typed parameters here).",
        "#include <cinttypes>",
        "#include <cstddef>",
        "#include <cstdio>",
        "",
        "namespace twrt {",
        "",
        "enum tw_msg : int32_t {",
    ]
    lines += [f"    MSG_{name} = {i}," for name, i in ids.items()]
    lines += ["};", ""]
    classes = {c.exception: c for c in ERROR_CLASSES if c.raisable}
    for name, msg in MESSAGES.items():
        fmt, args = _c_format(msg)
        params = _c_params(msg)
        call_args = "".join(f", {a}" for a in args)
        if msg.error is None:
            sig = ", ".join(["char* buf", "size_t size", *params])
            lines.append(f"inline const char* fmt_{name}({sig}) {{")
            lines.append(f"    std::snprintf(buf, size, {fmt}{call_args});")
            lines.append("    return buf;")
        else:
            sig = ", ".join(["Run* r", "tw::Loc loc", *params])
            cls = classes[msg.error]
            lines.append(f"[[noreturn]] inline void fail_{name}({sig}) {{")
            lines.append(f"    fail_msg(r, ERR_{cls.name}, MSG_{name}, loc, {fmt}{call_args});")
        lines.append("}")
    lines.append("}  // namespace twrt")
    return "\n".join(lines) + "\n"


# -- data formats ------------------------------------------------------------------------------


def dataformat_header() -> str:
    lines = _head("tilewright/device/formats/dataformat.py DataFormat")
    lines += ["#include <cstdint>", "", "namespace tt {"]
    lines.append(
        "/** tt::DataFormat with the device's numeric values (tt_backend_api_types.hpp). */"
    )
    lines.append("enum class DataFormat : uint8_t {")
    lines += [f"    {f.name} = {f.value}," for f in DataFormat]
    lines += ["};", "}  // namespace tt"]
    return "\n".join(lines) + "\n"


def _tile_bytes(fmt: DataFormat) -> int:
    if fmt not in ELEMENT_CODEC_FORMATS and fmt not in BLOCK_FLOAT:
        return -1
    return tile_size_bytes(fmt, TILE_32x32)


def format_table_header() -> str:
    lines = _head("tilewright/device/formats/dataformat.py (the format descriptors)")
    lines += ["#include <cstdint>", "", "namespace twrt {", "", "enum Fmt : uint32_t {"]
    lines += [f"    {f.name} = {f.value}," for f in DataFormat if f is not DataFormat.Invalid]
    lines += [
        "};",
        "",
        "/** What a data format is: element size (0: no per-element form), block-float mantissa",
        " *  bits (0: not block float) and exponent kind, integer range, bytes of a 32x32 tile",
        " *  (-1: no tile codec). */",
        "struct FormatInfo {",
        "    uint8_t element_size;",
        "    uint8_t bfp_mantissa;",
        "    uint8_t bfp_exp_a;",
        "    uint8_t integer;",
        "    double int_min;",
        "    double int_max;",
        "    int32_t tile_bytes;",
        "};",
        "",
        "constexpr FormatInfo format_info(uint32_t fmt) {",
        "    switch (fmt) {",
    ]
    for fmt in DataFormat:
        if fmt is DataFormat.Invalid:
            continue
        bfp = BLOCK_FLOAT.get(fmt)
        dtype = INTEGER_DTYPE.get(fmt)
        esize = ELEMENT_SIZE.get(fmt, 0) if fmt in ELEMENT_CODEC_FORMATS else 0
        lo, hi = (float(np.iinfo(dtype).min), float(np.iinfo(dtype).max)) if dtype else (0.0, 0.0)
        exp_a = int(bool(bfp and bfp.exponent is ExponentKind.A))
        lines.append(
            f"        case {fmt.name}: return {{{esize}, {bfp.mantissa_bits if bfp else 0}, {exp_a}, "
            f"{int(dtype is not None)}, {lo!r}, {hi!r}, {_tile_bytes(fmt)}}};"
        )
    lines += [
        "        default: return {0, 0, 0, 0, 0.0, 0.0, -1};",
        "    }",
        "}",
        "}  // namespace twrt",
    ]
    return "\n".join(lines) + "\n"


# -- SFPU / FPU ops ----------------------------------------------------------------------------


def sfpu_ops_header() -> str:
    lines = _head("tilewright/device/ops/tile_ops.py")
    lines.append("enum tw_sfpu_op : int {")
    lines += [f"    TW_SFPU_{name} = {i}," for i, name in enumerate(SFPU_OPS)]
    lines += [f"    TW_SFPU_COUNT = {len(SFPU_OPS)},", "};"]
    lines.append("enum tw_sfpu_binary_op : int {")
    lines += [f"    TW_SFPU_BINARY_{op.op} = {op.code}," for op in SFPU_BINARY.values()]
    lines.append("};")
    lines.append("enum tw_fpu_binary_op : int {")
    lines += [f"    TW_FPU_{op.op} = {op.code}," for op in FPU_BINARY.values()]
    lines.append("};")
    lines.append("/** Name of each SFPU op (diagnostics). */")
    names = ", ".join(f'"{n}_tile"' for n in SFPU_OPS)
    lines.append(f"inline constexpr const char* kSfpuNames[{len(SFPU_OPS)}] = {{{names}}};")
    return "\n".join(lines) + "\n"


_C_KIND = {"f": "uint32_t", "i": "int32_t"}


def sfpu_api_header() -> str:
    """Every SFPU function of the compute API (``api/compute/eltwise_unary/sfpu.h``)."""
    lines = _head("tilewright/device/ops/tile_ops.py")
    lines += [
        "// Included by api/compute/eltwise_unary/sfpu.h (compute_kernel_api.h first).",
        '#include "twrt_sfpu_ops.h"',
        "",
        "namespace ckernel {",
        "",
    ]
    inits: set[str] = set()

    def init(name: str) -> None:
        if name in inits:
            return
        inits.add(name)
        lines.append(
            f"template <auto... flags> inline void {name}(uint32_t = 0, uint32_t = 0, TW_LOC) "
            "{ twrt_init(5, 0, 0, 0, 0, 0, loc); }"
        )

    for name, op in SFPU_OPS.items():
        init(f"{name}_tile_init")
        init(op.init)
        kinds = op.params
        if op.template:  # typecast_tile<IN_DTYPE, OUT_DTYPE>(idst): tt-metal's template form
            names = [f"P{i}" for i in range(len(kinds))]
            values = ", ".join([*(f"uint32_t({n})" for n in names), "0", "0", "0"][:3])
            lines.append(
                f"template <{', '.join(f'auto {n}' for n in names)}> inline void "
                f"{op.function}(uint32_t idst, TW_LOC) "
                f"{{ twrt_sfpu(TW_SFPU_{name}, idst, {values}, loc); }}"
            )
            continue
        if not kinds:  # tt-metal's optional vector mode / scale arguments are accepted
            params = "uint32_t idst, int32_t = 0, uint32_t = 0, uint32_t = 0"
            values = "0, 0, 0"
        else:
            default = " = 0" if op.required == 0 else ""
            params = ", ".join(
                ["uint32_t idst", *(f"{_C_KIND[k]} param{i}{default}" for i, k in enumerate(kinds))]
            )
            values = ", ".join(
                [*(f"uint32_t(param{i})" for i in range(len(kinds))), "0", "0", "0"][:3]
            )
        lines.append(
            f"template <auto... flags> inline void {op.function}({params}, TW_LOC) "
            f"{{ twrt_sfpu(TW_SFPU_{name}, idst, {values}, loc); }}"
        )
    lines.append("")
    for binary in SFPU_BINARY.values():
        init(f"{binary.name}_init")
        lines.append(
            f"inline void {binary.name}(uint32_t idst0, uint32_t idst1, uint32_t odst, TW_LOC) "
            f"{{ twrt_sfpu_binary(TW_SFPU_BINARY_{binary.op}, idst0, idst1, odst, loc); }}"
        )
    for name in SFPU_TERNARY.values():  # where_tile(cond, true, false, out)
        init(f"{name}_init")
        lines.append(
            f"template <auto... flags> inline void {name}(uint32_t idst0, uint32_t idst1, "
            "uint32_t idst2, uint32_t odst, TW_LOC) "
            "{ twrt_where_tile(idst0, idst1, idst2, odst, loc); }"
        )
    lines.append("}  // namespace ckernel")
    return "\n".join(lines) + "\n"


def _camel(stem: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in stem.split("_"))


def kernel_lib_ops_header() -> str:
    """compute_kernel_lib's SFPU chain elements (``Exp<>``, ``Relu<Dst::D1>``, ``LeakyRelu<>{slope}``,
    ``AddBinary<Dst::D0, Dst::D1>``, ...), one per function of the op table, each calling
    that function of ``twrt_sfpu_api.h`` (``ttnn/cpp/ttnn/kernel_lib/eltwise_chain.hpp``)."""
    lines = _head("tilewright/device/ops/tile_ops.py")
    lines += [
        "// Included by ttnn/cpp/ttnn/kernel_lib/eltwise_chain.hpp (after the compute API).",
        "namespace compute_kernel_lib {",
        "",
    ]
    for name, op in SFPU_OPS.items():
        cls = _camel(name)
        kinds = op.params
        if op.template:  # Typecast<IN, OUT>: the parameters are template arguments, as the call's
            names = ", ".join(f"auto P{i}" for i in range(len(kinds)))
            targs = ", ".join(f"P{i}" for i in range(len(kinds)))
            lines += [
                f"template <{names}, auto... Flags> struct {cls} : detail::SfpuUnary<Flags...> {{",
                f"    void init(::tw::Loc loc) const {{ ckernel::{op.init}(0, 0, loc); }}",
                f"    void call(uint32_t d, ::tw::Loc loc) const "
                f"{{ ckernel::{op.function}<{targs}>(d, loc); }}",
                "};",
            ]
            continue
        args = ", ".join(f"uint32_t p{i} = 0" for i in range(len(kinds)))
        fields = " ".join(f"uint32_t p{i};" for i in range(len(kinds)))
        call = ", ".join([*(f"{_C_KIND[k]}(p{i})" for i, k in enumerate(kinds))] or ["0, 0, 0"])
        lines.append(f"template <auto... Flags> struct {cls} : detail::SfpuUnary<Flags...> {{")
        if kinds:
            inits = ", ".join(f"p{i}(p{i})" for i in range(len(kinds)))
            lines.append(f"    {fields}")
            lines.append(f"    constexpr {cls}({args}) : {inits} {{}}")
        lines.append(f"    void init(::tw::Loc loc) const {{ ckernel::{op.init}(0, 0, loc); }}")
        lines.append(
            f"    void call(uint32_t d, ::tw::Loc loc) const {{ ckernel::{op.function}(d, {call}, loc); }}"
        )
        lines.append("};")
    for binary in SFPU_BINARY.values():
        cls = _camel(binary.name.removesuffix("_tile"))
        lines += [
            "template <Dst In0 = Dst::D0, Dst In1 = Dst::D1, Dst Out = In0>",
            f"struct {cls} : detail::SfpuBinary<In0, In1, Out> {{",
            f"    void init(::tw::Loc loc) const {{ ckernel::{binary.name}_init(0, 0, loc); }}",
            "    void call(uint32_t a, uint32_t b, uint32_t o, ::tw::Loc loc) const "
            f"{{ ckernel::{binary.name}(a, b, o, loc); }}",
            "};",
        ]
    lines.append("}  // namespace compute_kernel_lib")
    return "\n".join(lines) + "\n"


def fidelity_header() -> str:
    lines = _head("tilewright/device/ops/numerics.py FIDELITY_PHASES, SLICE_MASKS")
    lines += ["#include <cstdint>", ""]
    lines += [
        f"#define TW_FIDELITY_{FIDELITY_NAMES[v].upper()} {v}  // {p} phase(s)"
        for v, p in FIDELITY_PHASES.items()
    ]
    lines.append("/** The valid values, as every guard names them (numerics.FIDELITY_CHOICES). */")
    lines.append(
        f'#define TW_FIDELITY_CHOICES "{_c_literal(FIDELITY_CHOICES)}"  // a printf format'
    )
    lines.append("/** float32 bit masks of SrcA's / SrcB's mantissa slices (numerics.py). */")
    lines += [
        f"inline constexpr uint32_t kSlice_{name} = 0x{mask:08X}u;"
        for name, mask in SLICE_MASKS.items()
    ]
    return "\n".join(lines) + "\n"


def sfpu_math_header() -> str:
    lines = _head("tilewright/device/ops/sfpu_algorithms.py CONSTANTS")
    lines += ["#include <bit>", "#include <cstdint>", ""]
    for name, value in CONSTANTS.items():
        bits = constant_bits(name)
        if name in INTEGER_CONSTANTS:
            lines.append(f"inline constexpr uint32_t kSfpuBits_{name} = 0x{bits:08X}u;")
        else:
            lines.append(
                f"inline constexpr float kSfpu_{name} = std::bit_cast<float>(0x{bits:08X}u);"
                f"  // {value!r}"
            )
    return "\n".join(lines) + "\n"


def generated() -> dict[str, str]:
    """File name -> text of every header generated from the Python tables (here)."""
    return {
        "twrt_errors.h": errors_header(),
        "twrt_messages.h": messages_header(),
        "twrt_dataformat.h": dataformat_header(),
        "twrt_format_table.h": format_table_header(),
        "twrt_sfpu_ops.h": sfpu_ops_header(),
        "twrt_sfpu_api.h": sfpu_api_header(),
        "twrt_fidelity.h": fidelity_header(),
        "twrt_kernel_lib_ops.h": kernel_lib_ops_header(),
        "twrt_sfpu_math.h": sfpu_math_header(),
    }
