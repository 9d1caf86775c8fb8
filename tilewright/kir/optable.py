"""The op table of the kernel IR: one row per op code, read by every pass.

A row says what the op's operands are (names and kinds, in order), how many regions
it has, which kernel kinds may run it, what it does to a circular buffer (for
:mod:`.effects`) and how it is written in C++ (a format over the operand names; the
control-flow ops and a few others have an emitter function instead).  The verifier
checks operands against ``operands``, the printer prints them in that order, the C++
emitter fills ``cpp``.

Operand kinds:

====== ================================================================
kind    value
====== ================================================================
``e``   a scalar expression of any type (``e:u32``, ``e:i64``, ``e:bool``,
        ``e:f64``, ``e:int`` any integer type, ``e:num`` any number)
``cb``  a static circular-buffer index declared by the kernel
``dst`` a static DST tile index below the kernel's DST capacity
``int`` a static int; ``float`` a static float; ``str`` a string
``var`` a local :class:`~.ir.Var`
``ex*`` a tuple of expressions; ``str*`` a tuple of strings
====== ================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from tilewright.device.ops import tile_ops
from tilewright.kir.ir import KIND_COMPUTE, KIND_DM, Ty

__all__ = ["OpInfo", "OPS", "INTRINSICS", "IntrinsicInfo", "SFPU", "BINARY", "SFPU_BINARY"]

ANY = (KIND_COMPUTE, KIND_DM)
CK = (KIND_COMPUTE,)
DM = (KIND_DM,)


@dataclass(frozen=True, slots=True)
class OpInfo:
    """One op code: operands, regions, where it may run, its CB effect and its C++."""

    operands: tuple[tuple[str, str], ...]
    kinds: tuple[str, ...] = ANY
    regions: int = 0
    effect: str | None = None  # "reserve" | "push" | "wait" | "pop" on operand "cb"
    cpp: str | None = None  # format over operand names; None: emit.py has a function
    doc: str = ""


def _o(*pairs: str) -> tuple[tuple[str, str], ...]:
    """``_o("cb:cb", "pages:int")`` -> (("cb", "cb"), ("pages", "int"))."""
    return tuple(tuple(p.split(":", 1)) for p in pairs)  # type: ignore[misc]


OPS: dict[str, OpInfo] = {
    # -- scalar code and structured control flow -------------------------------------------
    "set": OpInfo(_o("var:var", "value:e"), cpp="{var} = {value};", doc="assign a local"),
    "for": OpInfo(
        _o("var:var", "start:e:int", "stop:e:int", "step:int"),
        regions=1,
        doc="for var in range(start, stop, step): the bounds are evaluated once",
    ),
    "while": OpInfo(_o("cond:e:bool"), regions=1, doc="while cond"),
    "if": OpInfo(_o("cond:e:bool"), regions=2, doc="if cond: regions[0] else: regions[1]"),
    "failf": OpInfo(
        _o("error:str", "format:str", "values:ex*"),
        doc="raise the interpreter's error with run-time numbers (printf %lld) when reached",
    ),
    "break": OpInfo((), cpp="break;"),
    "continue": OpInfo((), cpp="continue;"),
    "fail": OpInfo(
        _o("error:str", "message:str"),
        doc="raise the interpreter's error (type, message) at this line when reached",
    ),
    # -- circular buffers (DFBs): cumulative page counts, as the tt-metal calls take them --
    "cb.reserve_back": OpInfo(
        _o("cb:cb", "pages:int"), effect="reserve", cpp="cb_reserve_back({cb}, {pages});"
    ),
    "cb.push_back": OpInfo(
        _o("cb:cb", "pages:int"), effect="push", cpp="cb_push_back({cb}, {pages});"
    ),
    "cb.wait_front": OpInfo(
        _o("cb:cb", "pages:int"), effect="wait", cpp="cb_wait_front({cb}, {pages});"
    ),
    "cb.pop_front": OpInfo(
        _o("cb:cb", "pages:int"), effect="pop", cpp="cb_pop_front({cb}, {pages});"
    ),
    # -- data movement: tensor accessors, NoC transfers, semaphores -----------------------
    "noc.read_page": OpInfo(
        _o("accessor:str", "page:e:u32", "l1:e:u32"),
        DM,
        cpp="noc_async_read_page({page}, {accessor}, {l1});",
    ),
    "noc.write_page": OpInfo(
        _o("accessor:str", "page:e:u32", "l1:e:u32"),
        DM,
        cpp="noc_async_write_page({page}, {accessor}, {l1});",
    ),
    "noc.read_barrier": OpInfo((), DM, cpp="noc_async_read_barrier();"),
    "noc.write_barrier": OpInfo((), DM, cpp="noc_async_write_barrier();"),
    "noc.write": OpInfo(
        _o("src:e:u32", "x:e:u32", "y:e:u32", "dst:e:u32", "size:e:u32"),
        DM,
        cpp="noc_async_write({src}, get_noc_addr({x}, {y}, {dst}), {size});",
    ),
    "noc.write_mcast": OpInfo(
        _o(
            "src:e:u32",
            "x0:e:u32",
            "y0:e:u32",
            "x1:e:u32",
            "y1:e:u32",
            "dst:e:u32",
            "size:e:u32",
            "dests:int",
        ),
        DM,
        cpp="noc_async_write_multicast({src}, get_noc_multicast_addr({x0}, {y0}, {x1}, {y1}, {dst}), {size}, {dests});",
    ),
    "noc.inline_write": OpInfo(
        _o("x:e:u32", "y:e:u32", "addr:e:u32", "value:e:u32"),
        DM,
        cpp="noc_inline_dw_write(get_noc_addr({x}, {y}, {addr}), {value});",
    ),
    "sem.wait": OpInfo(
        _o("addr:e:u32", "value:e:u32", "mode:str"),
        DM,
        doc="noc_semaphore_wait (mode eq) / noc_semaphore_wait_min (mode ge)",
    ),
    "sem.set": OpInfo(
        _o("addr:e:u32", "value:e:u32"),
        DM,
        cpp="noc_semaphore_set(reinterpret_cast<volatile tt_l1_ptr uint32_t*>({addr}), {value});",
    ),
    "sem.inc": OpInfo(
        _o("x:e:u32", "y:e:u32", "addr:e:u32", "value:e:u32"),
        DM,
        cpp="noc_semaphore_inc(get_noc_addr({x}, {y}, {addr}), {value});",
    ),
    "sem.set_remote": OpInfo(
        _o("src:e:u32", "x:e:u32", "y:e:u32", "addr:e:u32"),
        DM,
        cpp="noc_semaphore_set_remote({src}, get_noc_addr({x}, {y}, {addr}));",
    ),
    "sem.set_mcast": OpInfo(
        _o("src:e:u32", "x0:e:u32", "y0:e:u32", "x1:e:u32", "y1:e:u32", "addr:e:u32", "dests:int"),
        DM,
        cpp="noc_semaphore_set_multicast({src}, get_noc_multicast_addr({x0}, {y0}, {x1}, {y1}, {addr}), {dests});",
    ),
    # -- compute: DST handshake, unpack/math/SFPU, pack -----------------------------------
    "compute.init": OpInfo(
        _o("icb0:cb", "icb1:cb", "ocb:cb"),
        CK,
        cpp="compute_kernel_hw_startup({icb0}, {icb1}, {ocb});",
    ),
    "tile_regs.acquire": OpInfo((), CK, cpp="tile_regs_acquire();"),
    "tile_regs.commit": OpInfo((), CK, cpp="tile_regs_commit();"),
    "tile_regs.wait": OpInfo((), CK, cpp="tile_regs_wait();"),
    "tile_regs.release": OpInfo((), CK, cpp="tile_regs_release();"),
    "copy_tile": OpInfo(
        _o("cb:cb", "tile:e:u32", "dst:dst", "transpose:int"),
        CK,
        doc="copy_tile_to_dst_init_short(cb, transpose) + copy_tile(cb, tile, dst)",
    ),
    "binary_tiles": OpInfo(
        _o("op:str", "bcast:str", "cb0:cb", "cb1:cb", "t0:e:u32", "t1:e:u32", "dst:dst"), CK
    ),
    "binary_dest_reuse": OpInfo(_o("op:str", "reuse:str", "cb:cb", "tile:e:u32", "dst:dst"), CK),
    "sfpu": OpInfo(_o("op:str", "dst:dst", "params:ex*"), CK),
    "sfpu_binary": OpInfo(_o("op:str", "dst0:dst", "dst1:dst", "odst:dst"), CK),
    "fill_tile": OpInfo(_o("dst:dst", "value:e:num"), CK),
    "unary_bcast": OpInfo(_o("dim:str", "cb:cb", "tile:e:u32", "dst:dst"), CK),
    "matmul_tiles": OpInfo(
        _o("cb0:cb", "cb1:cb", "t0:e:u32", "t1:e:u32", "dst:dst", "transpose:int"), CK
    ),
    "matmul_block": OpInfo(
        _o(
            "cb0:cb",
            "cb1:cb",
            "t0:e:u32",
            "t1:e:u32",
            "dst:dst",
            "transpose:int",
            "ct:int",
            "rt:int",
            "kt:int",
        ),
        CK,
        doc="DST[dst + r*ct + c] += A[t0 + r*kt] @ B[t1 + c] for r < rt, c < ct",
    ),
    "reduce_tile": OpInfo(
        _o("pool:str", "dim:str", "cb:cb", "scaler:cb", "tile:e:u32", "dst:dst"), CK
    ),
    "transpose_tile": OpInfo(_o("cb:cb", "tile:e:u32", "dst:dst"), CK),
    "pack_tile": OpInfo(
        _o("dst:dst", "cb:cb", "slot:e:u32"), CK, cpp="pack_tile<true>({dst}, {cb}, {slot});"
    ),
    "pack_l1_acc": OpInfo(_o("enable:int"), CK, cpp="pack_reconfig_l1_acc({enable});"),
    # -- external C++ (reference C.8) -------------------------------------------------------
    "extern.call": OpInfo(
        _o(
            "callee:str",
            "template:str*",
            "args:arg*",
            "types:str*",
            "result:str",
            "result_type:str",
        ),
        doc="callee<template...>(args...): each argument an expression cast to its C++ type, or "
        "an accessor (type 'accessor'); the result ('' or a local) keeps result_type's value",
    ),
    "raw.call": OpInfo(
        _o("function:str", "args:ex*", "accessors:str*", "result:str"),
        doc="call the kernel's static inline function (a raw IR function, ttl.raw) with its "
        "run-time scalar arguments and accessors; the result ('' or a local) keeps its value",
    ),
    "comment": OpInfo(_o("text:str"), doc="a comment in the C++"),
}


@dataclass(frozen=True, slots=True)
class IntrinsicInfo:
    """A kernel-API query: argument types, result type, C++ format over ``{0}``, ``{1}``..."""

    args: tuple[Ty, ...]
    ty: Ty
    cpp: str
    kinds: tuple[str, ...] = ANY


INTRINSICS: dict[str, IntrinsicInfo] = {
    "logical_x": IntrinsicInfo((), Ty.U32, "get_absolute_logical_x()"),
    "logical_y": IntrinsicInfo((), Ty.U32, "get_absolute_logical_y()"),
    "write_ptr": IntrinsicInfo((Ty.U32,), Ty.U32, "get_write_ptr({0})"),
    "read_ptr": IntrinsicInfo((Ty.U32,), Ty.U32, "get_read_ptr({0})"),
    "semaphore": IntrinsicInfo((Ty.U32,), Ty.U32, "get_semaphore({0})", DM),
    "l1_word": IntrinsicInfo(
        (Ty.U32,), Ty.U32, "(*reinterpret_cast<volatile tt_l1_ptr uint32_t*>({0}))", DM
    ),
}

# The op names below are the op registry's (device/ops/tile_ops.py), the one list of the
# compute API's math: this module only names them for the IR.

# Binary FPU ops on two CB tiles (add_tiles ...): IR name -> tt-metal stem.
BINARY = {name: op.name for name, op in tile_ops.FPU_BINARY.items()}

# SFPU binary ops on two DST tiles (api/compute/eltwise_binary_sfpu.h).
SFPU_BINARY = {name: op.name for name, op in tile_ops.SFPU_BINARY.items()}

# SFPU unary ops: IR name -> (tt-metal tile function, init function, parameter kinds).
# Parameter kinds: "f" a float passed as its IEEE bits (tt-metal's host convention),
# "i" an integer.
SFPU: dict[str, tuple[str, str, str]] = {
    op.ir: (op.function, op.init, op.params)
    for op in tile_ops.SFPU_OPS.values()
    if op.ir is not None
}
