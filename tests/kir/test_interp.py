"""The kernel-IR interpreter: its table covers the op table, unsupported IR is a clear error,
and scalar code (C++ types and conversions, loops, fail / failf) gives the compiled kernel's
bytes and errors.  Kernel-API ops: test_interp_ops.py."""

from __future__ import annotations

import pytest

from tests.kir.interp_harness import (
    ENGINES,
    accessor,
    cb,
    f32_tensor,
    page_words,
    read_ptr,
    run_ir,
    write_ptr,
    writer,
)
from tests.native_fixtures import device  # noqa: F401
from tilewright.errors import DeviceError, DFBContractError, KernelError, NocError, SourceLoc
from tilewright.kir import interp
from tilewright.kir.builder import Builder
from tilewright.kir.interp import Env, eval_expr, python_kernel, run
from tilewright.kir.ir import (
    KIND_COMPUTE,
    KIND_DM,
    Arg,
    BinOp,
    Cast,
    Const,
    ContractNote,
    Expr,
    Intrinsic,
    Op,
    Ty,
    UnOp,
    Var,
    const,
    u32,
)
from tilewright.kir.ops.compute import BINARY_CALLS, SFPU_BINARY_CALLS, SFPU_CALLS
from tilewright.kir.optable import BINARY, INTRINSICS, OPS, SFPU, SFPU_BINARY

# -- coverage and unsupported IR ---------------------------------------------------------------


def test_every_op_row_has_every_rule_and_every_intrinsic_a_call():
    for code, row in OPS.items():
        assert row.code == code and callable(row.run), code
        assert isinstance(row.cpp, str) or callable(row.cpp), code
        assert not (row.effect and row.effects), code  # one way to say its DFB actions
    assert all(callable(info.call) for info in INTRINSICS.values())


def test_every_tile_op_of_the_op_table_has_a_kernel_api_call():
    assert set(SFPU_CALLS) == set(SFPU)
    assert set(SFPU_BINARY_CALLS) == set(SFPU_BINARY)
    assert {op for op, _ in BINARY_CALLS} == set(BINARY)
    assert {b for _, b in BINARY_CALLS} == {"none", "rows", "cols", "scalar"}


def test_extern_call_is_rejected_with_the_op_and_rule():
    op = Op("extern.call", ("scale", (), (), (), "", "void", 0), loc=SourceLoc("raw.py", 7))
    with pytest.raises(KernelError) as info:
        run((op,), Env())
    err = info.value
    assert err.rule == "raw-ir-extern" and err.loc == SourceLoc("raw.py", 7)
    assert "cannot run 'extern.call' a call of the C++ function 'scale'" in err.message
    assert "--engine native" in str(err)


def test_an_op_code_without_a_handler_is_rejected():
    with pytest.raises(KernelError, match="cannot run 'cb.peek' this op code") as info:
        run((Op("cb.peek", (0,), loc=SourceLoc("raw.py", 3)),), Env())
    assert info.value.rule == "raw-ir-unknown-op" and info.value.loc.line == 3


def test_bit_operators_of_floats_have_no_cpp_form():
    e = BinOp("shl", const(7.0), const(2.0), Ty.F64)
    with pytest.raises(KernelError, match="'shl' of f64 operands: it takes integers") as info:
        eval_expr(e, Env())
    assert info.value.rule == "raw-ir-no-cpp-form"


@pytest.mark.parametrize(
    "fmt, values, match",
    [
        ("x is %f", (const(1),), "only integer conversions"),
        ("x is %lld and %lld", (const(1),), "with 1 value\\(s\\): it converts 2"),
    ],
)
def test_failf_formats_are_checked_before_running(fmt, values, match):
    op = Op("failf", ("KernelError", fmt, values), loc=SourceLoc("raw.py", 9))
    with pytest.raises(KernelError, match=match) as info:
        run((op,), Env())
    assert info.value.rule == "raw-ir-failf-format" and info.value.loc.line == 9


def test_unknown_error_class_is_rejected():
    with pytest.raises(KernelError, match="error class 'OopsError'"):
        run((Op("fail", ("OopsError", "no")),), Env())


def test_division_by_zero_names_the_rule():
    e = BinOp("mod", Var("x", Ty.I64), const(0), Ty.I64)
    with pytest.raises(KernelError, match="modulo by zero in kernel code") as info:
        eval_expr(e, Env(values={"x": 3}))
    assert info.value.rule == "kir-division-by-zero"


# -- scalar semantics without a device -----------------------------------------------------------

I64, U32 = Ty.I64, Ty.U32


def _v(name: str, ty: Ty) -> Var:
    return Var(name, ty)


@pytest.mark.parametrize(
    "expr, want",
    [
        (BinOp("floordiv", const(-7), const(2), I64), -4),
        (BinOp("mod", const(-7), const(2), I64), 1),
        (BinOp("floordiv", const(7), const(-2), I64), -4),
        (BinOp("mod", const(7), const(-2), I64), -1),
        (BinOp("add", u32(0xFFFFFFF0), u32(0x20), U32), 0x10),
        (UnOp("neg", u32(1), U32), 0xFFFFFFFF),
        (BinOp("mul", _v("big", I64), const(2), I64), -(1 << 63)),  # 2^63 wraps
        (Cast(const(-1), U32), 0xFFFFFFFF),
        (Cast(const(-2.7), I64), -2),
        (Cast(const(float("nan")), I64), -(1 << 63)),
        (Cast(const(3.9), U32), 3),
        (Cast(Const(0.1, Ty.F32), Ty.F64), 0.10000000149011612),
        (Cast(Const((1 << 60) + (1 << 36) + 1, I64), Ty.F32), float((1 << 60) + (1 << 37))),
        # an i64 constant is an int64_t (INT64_C against a uint32_t): the compare is signed
        (BinOp("lt", const(-1), u32(5), Ty.BOOL), True),
        (BinOp("lt", const(-(1 << 40)), u32(5), Ty.BOOL), True),
        (BinOp("truediv", const(-7.0), const(2.0), Ty.F64), -3.5),
        (BinOp("min", const(float("nan")), const(1.0), Ty.F64), 1.0),
        (BinOp("and", const(True), UnOp("not", const(False), Ty.BOOL), Ty.BOOL), True),
        (Cast(Arg(0, "a", I64), I64), -7),
        (Arg(1, "c", U32), 0xFFFFFFF0),
    ],
)
def test_scalar_semantics_follow_cpp(expr: Expr, want):
    env = Env(values={"big": 1 << 62}, args=[(-7) & 0xFFFFFFFF, 0xFFFFFFF0])
    got = eval_expr(expr, env)
    assert got == want and type(got) is type(want)


def test_eval_expr_caches_by_identity_and_reads_current_values():
    e = BinOp("add", _v("x", I64), const(1), I64)
    env = Env(values={"x": 1})
    assert eval_expr(e, env) == 2
    env.values["x"] = 41
    assert eval_expr(e, env) == 42


def test_loops_break_continue_while_and_if_without_a_device():
    b = Builder("k", KIND_DM)
    i, s, n, steps = b.local("i", I64), b.local("s", I64), b.local("n", I64), b.local("steps", I64)
    with b.for_(i, 0, 10):
        with b.if_(BinOp("eq", i, const(3), Ty.BOOL)):
            b.op("continue")
        with b.if_(BinOp("eq", i, const(7), Ty.BOOL)):
            b.op("break")
        b.set(s, BinOp("add", s, BinOp("mul", i, i, I64), I64))
    b.set(n, 27)
    body = _collatz(n, steps)
    b.op("while", BinOp("ne", n, const(1), Ty.BOOL), regions=(body,))
    k = b.kernel()
    env = Env(values={"i": 0, "s": 0, "n": 0, "steps": 0})
    run(k.body, env)
    assert env.values == {"i": 7, "s": 82, "n": 1, "steps": 111}


def _collatz(n: Var, steps: Var) -> tuple[Op, ...]:
    even = BinOp("eq", BinOp("mod", n, const(2), I64), const(0), Ty.BOOL)
    half = Op("set", (n, BinOp("floordiv", n, const(2), I64)))
    triple = Op("set", (n, BinOp("add", BinOp("mul", n, const(3), I64), const(1), I64)))
    return (
        Op("if", (even,), ((half,), (triple,))),
        Op("set", (steps, BinOp("add", steps, const(1), I64))),
    )


def test_python_kernel_rejects_unsupported_ops_before_the_program_runs():
    b = Builder("k", KIND_COMPUTE, dst_tiles=4)
    b.contracts = (
        ContractNote((5, 5, 4, 20), None, (), "helper('h.hpp', 'helper')", "h.hpp", "raw.py"),
    )
    b.loc = SourceLoc("raw.py", 5)
    b.op("extern.call", "helper", (), (), (), "", "void", 0)
    with pytest.raises(KernelError, match="'extern.call'"):
        python_kernel(b.kernel())


# -- differential: scalar code compiled vs interpreted ------------------------------------------

A, B = Arg(0, "a", I64), Arg(1, "b", I64)
C, D = Arg(2, "c", U32), Arg(3, "d", U32)
ARGS = [(-7) & 0xFFFFFFFF, 2, 0xFFFFFFF0, 3]


def _i(op: str, a: Expr, b: Expr, ty: Ty = I64) -> BinOp:
    return BinOp(op, a, b, ty)


INT_RESULTS: list[Expr] = [
    _i("floordiv", A, B),
    _i("mod", A, B),
    _i("floordiv", UnOp("neg", A, I64), UnOp("neg", B, I64)),
    _i("mod", UnOp("neg", A, I64), UnOp("neg", B, I64)),
    _i("add", C, u32(0x20), U32),
    _i("mul", C, C, U32),
    UnOp("neg", C, U32),
    _i("floordiv", C, D, U32),
    _i("mod", C, u32(7), U32),
    _i("mul", A, const(10**12)),
    Cast(A, U32),
    Cast(C, I64),
    Cast(const(-2.7), I64),
    Cast(_i("truediv", Cast(A, Ty.F64), Cast(B, Ty.F64), Ty.F64), I64),
    Cast(const(3.9), U32),
    _i("lt", const(-1), C, Ty.BOOL),
    _i("lt", A, Cast(D, I64), Ty.BOOL),
    _i("min", A, B),
    _i("max", C, D, U32),
    _i("or", _i("gt", A, B, Ty.BOOL), UnOp("not", _i("eq", C, C, Ty.BOOL), Ty.BOOL), Ty.BOOL),
    Intrinsic("logical_x", (), U32),
    Intrinsic("logical_y", (), U32),
    _i("sub", write_ptr(0), read_ptr(0), U32),
    Intrinsic("l1_word", (Intrinsic("semaphore", (u32(0),), U32),), U32),
    Cast(Cast(Const((1 << 60) + (1 << 36) + 1, I64), Ty.F32), Ty.U64),
]


def _scalars_kernel(loc: SourceLoc | None = None):
    """Each result's low word (and high word of 64-bit ones) into CB 0 with noc_semaphore_set,
    then the loops' results."""
    out = cb(0, "scalars", 1, "Float32")
    b = Builder("scalars", KIND_DM, slot="ncrisc", cbs=(out,), args=("a", "b", "c", "d"))
    words: list[Expr] = []
    for e in INT_RESULTS:
        ty = getattr(e, "ty", I64)
        if ty in (I64, Ty.U64):
            words += [Cast(e, U32), Cast(_i("floordiv", e, Const(1 << 32, ty), ty), U32)]
        else:
            words.append(Cast(e, U32))
    i, s, j, t = b.local("i", I64), b.local("s", I64), b.local("j", U32), b.local("t", U32)
    n, steps = b.local("n", I64), b.local("steps", I64)
    with b.for_(i, 0, 10):
        with b.if_(_i("eq", i, const(3), Ty.BOOL)):
            b.op("continue")
        with b.if_(_i("eq", i, const(7), Ty.BOOL)):
            b.op("break")
        b.set(s, _i("add", s, _i("mul", i, i)))
    with b.for_(j, u32(5), u32(0), -1):
        b.set(t, _i("add", _i("mul", t, u32(3), U32), j, U32))
    b.set(n, A)
    b.op(
        "while", _i("ne", UnOp("neg", n, I64), const(1), Ty.BOOL), regions=(_collatz_neg(n, steps),)
    )
    words += [Cast(x, U32) for x in (i, s, j, t, n, steps)]
    b.op("cb.reserve_back", 0, 1)
    for k, w in enumerate(words):
        b.op("sem.set", _i("add", write_ptr(0), u32(4 * k), U32), w)
    b.op("cb.push_back", 0, 1)
    return b.kernel(), out, len(words)


def _collatz_neg(n: Var, steps: Var) -> tuple[Op, ...]:
    """Collatz on -n (n starts at -7): floor division and modulo of negative numbers."""
    even = _i("eq", _i("mod", n, const(2)), const(0), Ty.BOOL)
    half = Op("set", (n, _i("floordiv", n, const(2))))
    triple = Op("set", (n, _i("sub", _i("mul", n, const(3)), const(1))))
    return (
        Op("if", (even,), ((half,), (triple,))),
        Op("set", (steps, _i("add", steps, const(1)))),
    )


def test_scalar_code_gives_the_compiled_kernels_words(device):  # noqa: F811
    kernel, out_cb, count = _scalars_kernel()
    results = {}
    for engine in ENGINES:
        out = f32_tensor(device)
        w = writer(accessor("out", out, 0, 0), out_cb, 1)
        run_ir(device, [kernel, w], [ARGS, [out.buffer_address()]], engine, semaphores=[42])
        results[engine] = page_words(out)[:count]
    assert results["native"] == results["python"]
    words = results["python"]
    m = 0xFFFFFFFF
    assert words[0:2] == [(-4) & m, m]  # -7 // 2, low and high word
    assert words[2:4] == [1, 0]  # -7 % 2
    assert words[4:6] == [(-4) & m, m]  # 7 // -2
    assert words[6:8] == [(-1) & m, m]  # 7 % -2
    assert words[8:11] == [0x10, (0xFFFFFFF0**2) & m, 0x10]  # u32 wraps
    assert words[23:25] == [1, 1]  # -1 < c (int64_t against uint32_t: signed); -7 < 3
    assert words[28:33] == [0, 0, 0, 0, 42]  # or; logical x, y; write - read ptr; semaphore
    assert words[33:35] == [0, (1 << 28) + (1 << 5)]  # float(2^60 + 2^36 + 1) rounds up
    assert words[-6:] == [7, 82, 1, 5 * 81 + 4 * 27 + 3 * 9 + 2 * 3 + 1, (-1) & m, 16]


# -- fail / failf: the compiled kernel's error class, message and line --------------------------


def _failing_kernel(kind: str):
    out = cb(0, "results", 1, "Float32")
    b = Builder("fails", KIND_DM, slot="ncrisc", cbs=(out,), args=("a", "b", "c", "d"))
    b.loc = SourceLoc("/user/prog.py", 40)
    b.op("cb.reserve_back", 0, 1)
    b.loc = SourceLoc("/user/prog.py", 41)
    if kind == "failf":
        fmt = "value %lld is below zero (as unsigned %llu, low word %u, hex %llx) in {cb:0}"
        with b.if_(_i("lt", A, const(0), Ty.BOOL)):
            b.loc = SourceLoc("/user/prog.py", 42)
            b.op("failf", "DeviceError", fmt, (A, A, A, C))
    elif kind == "fail":
        with b.if_(_i("lt", A, const(0), Ty.BOOL)):
            b.loc = SourceLoc("/user/prog.py", 43)
            b.op("fail", "NocError", "the page of {cb:0} is gone")
    else:  # a kernel-API error: pops a page nobody pushed
        b.loc = SourceLoc("/user/prog.py", 44)
        b.op("cb.pop_front", 0, 1)
    return b.kernel()


@pytest.mark.parametrize(
    "kind, cls, line",
    [("failf", DeviceError, 42), ("fail", NocError, 43), ("api", DFBContractError, 44)],
)
def test_fail_failf_and_api_errors_match_the_compiled_kernel(device, kind, cls, line):  # noqa: F811
    kernel = _failing_kernel(kind)
    errors = {}
    for engine in ENGINES:
        with pytest.raises(cls) as info:
            run_ir(device, [kernel], [ARGS], engine)
        errors[engine] = info.value
    native, python = errors["native"], errors["python"]
    assert type(native) is type(python)
    assert python.loc is not None and (python.loc.file, python.loc.line) == ("/user/prog.py", line)
    assert (native.loc.file, native.loc.line) == (python.loc.file, python.loc.line)
    assert native.message == python.message
    if kind == "failf":
        assert python.message == (
            "value -7 is below zero (as unsigned 18446744073709551609, low word 4294967289, "
            "hex fffffff0) in cb 0"
        )


def test_interp_module_exports_the_agreed_api():
    assert {"Env", "run", "eval_expr"} <= set(interp.__all__)
    env = Env(kind=KIND_DM, args=[1], dst_tiles=4, fp32_dest_acc=False)
    assert env.values == {} and env.cbs == {} and env.accessors == {} and env.kind == KIND_DM


def test_bind_converts_a_parameter_to_its_cpp_type():
    env = Env()
    x, n, flag = Var("x", Ty.F32), Var("n", U32), Var("flag", Ty.BOOL)
    env.bind(x, 0.1)
    env.bind(n, -1)
    env.bind(flag, 2)
    assert env.values == {"x": 0.10000000149011612, "n": 0xFFFFFFFF, "flag": True}
    assert eval_expr(BinOp("mul", x, Const(3.0, Ty.F32), Ty.F32), env) == 0.30000001192092896


def test_an_unset_local_reads_zero_as_the_cpp_declaration_gives():
    assert eval_expr(BinOp("add", Var("fresh", I64), const(5), I64), Env()) == 5


def test_a_page_transfer_through_an_unbound_accessor_is_an_error():
    op = Op("noc.read_page", ("t_acc", u32(0), u32(0)), loc=SourceLoc("raw.py", 11))
    with pytest.raises(KernelError, match="accessor 't_acc': the environment binds no") as info:
        run((op,), Env(kind=KIND_DM, accessors={"other": object()}))
    assert info.value.rule == "raw-ir-accessor" and info.value.loc.line == 11


# -- debug.print: TT-Lang's print line, the same from both engines ------------------------------


def test_debug_print_prints_the_same_line_from_both_engines(device, capsys):  # noqa: F811
    b = Builder("printer", KIND_DM, slot="ncrisc", args=("a", "b", "c", "d"))
    b.loc = SourceLoc("/user/prog.py", 50)
    neg = _i("lt", A, const(0), Ty.BOOL)
    third = BinOp("truediv", Cast(A, Ty.F64), const(3.0), Ty.F64)
    b.op("debug.print", "L: a=%lld 50%% c=%lld %B %F", (A, C, neg, third))
    b.op("debug.print", "", ())
    out = {}
    for engine in ENGINES:
        capsys.readouterr()
        run_ir(device, [b.kernel()], [ARGS], engine)
        out[engine] = capsys.readouterr().out
    assert out["native"] == out["python"]
    lines = out["python"].splitlines()
    assert len(lines) == 2 and lines[0].endswith(f"] L: a=-7 50% c=4294967280 True {-7 / 3!r}"), (
        lines
    )
    assert lines[0].startswith("[") and lines[1].endswith("] ")


def test_debug_print_formats_other_than_lld_are_rejected():
    op = Op("debug.print", ("x is %llx", (const(1),)), loc=SourceLoc("raw.py", 11))
    with pytest.raises(KernelError, match="only %lld \\(a long long\\), %B") as info:
        run((op,), Env())
    assert info.value.rule == "raw-ir-print-format" and info.value.loc.line == 11
    op = Op("debug.print", ("x is %lld %B", (const(1),)), loc=SourceLoc("raw.py", 12))
    with pytest.raises(KernelError, match="with 1 value\\(s\\): it has 2 slots"):
        run((op,), Env())
