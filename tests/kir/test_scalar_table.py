"""The one scalar-operator table: constant folding, the IR interpreter and the compiled C++
agree on every operator at its edge values (overflow, INT64_MIN // -1, shifts of the width or
more, negative floor division, float floor division), and the passes read nothing else."""

from __future__ import annotations

import pytest

from tests.kir.interp_harness import (
    ENGINES,
    accessor,
    cb,
    f32_tensor,
    page_words,
    run_ir,
    write_ptr,
    writer,
)
from tests.native_fixtures import device  # noqa: F401
from tilewright.compiler.backend.emit import cpp_expr
from tilewright.compiler.backend.lower import scalars as S
from tilewright.errors import KernelError, SourceLoc
from tilewright.kir.builder import Builder
from tilewright.kir.interp import Env, eval_expr
from tilewright.kir.interp_scalar import fold
from tilewright.kir.ir import KIND_DM, BinOp, Cast, Const, Expr, Ty, UnOp, Var
from tilewright.kir.printer import print_expr
from tilewright.kir.scalar import OPERATORS, overflow_text

I64, U32, U64, F64, BOOL = Ty.I64, Ty.U32, Ty.U64, Ty.F64, Ty.BOOL
MIN, MAX = -(1 << 63), (1 << 63) - 1

# (operator, a, b, type, the value the IR defines)
EDGES: list[tuple[str, int | float, int | float, Ty, int | float]] = [
    ("mul", 1 << 62, 4, I64, 0),  # (1 << 62) * 4 wraps to 0 (it used to fold to 2^64)
    ("add", MAX, 1, I64, MIN),
    ("sub", MIN, 1, I64, MAX),
    ("mul", MAX, MAX, I64, 1),
    ("floordiv", MIN, -1, I64, MIN),  # the C++ division would trap; it wraps
    ("mod", MIN, -1, I64, 0),
    ("floordiv", -7, 2, I64, -4),
    ("mod", -7, 2, I64, 1),
    ("floordiv", 7, -2, I64, -4),
    ("mod", 7, -2, I64, -1),
    ("floordiv", MIN, 3, I64, -3074457345618258603),
    ("shl", 1, 63, I64, MIN),
    ("shl", 1, 64, I64, 0),  # a count of the width or more shifts every bit out
    ("shl", 3, 100, I64, 0),
    ("shl", 3, 62, I64, MIN + (1 << 62)),
    ("shr", -8, 1, I64, -4),  # arithmetic for signed
    ("shr", -8, 64, I64, -1),
    ("shr", 5, 70, I64, 0),
    ("bitand", -1, 0xFF, I64, 0xFF),
    ("bitor", 5, 2, I64, 7),
    ("bitxor", 6, -1, I64, -7),
    ("min", MIN, MAX, I64, MIN),
    ("max", -1, 1, I64, 1),
    ("add", 0xFFFFFFFF, 1, U32, 0),
    ("sub", 0, 1, U32, 0xFFFFFFFF),
    ("mul", 0x80000000, 2, U32, 0),
    ("floordiv", 0xFFFFFFFF, 7, U32, 0xFFFFFFFF // 7),
    ("mod", 0xFFFFFFFF, 7, U32, 0xFFFFFFFF % 7),
    ("shl", 1, 32, U32, 0),
    ("shr", 0x80000000, 31, U32, 1),  # logical for unsigned
    ("shr", 0x80000000, 33, U32, 0),
    ("shl", 1, 63, U64, 1 << 63),
    ("shl", 1, 64, U64, 0),
    ("sub", 0, 1, U64, (1 << 64) - 1),
    ("floordiv", 7.5, -2.0, F64, -4.0),  # Python's float floor division
    ("mod", -7.5, 2.0, F64, 0.5),
    ("mod", 7.5, -2.0, F64, -0.5),
    ("lt", -1, 1, I64, True),
    ("ge", 0xFFFFFFFF, 0, U32, True),
]
NEG: list[tuple[int, Ty, int]] = [(MIN, I64, MIN), (1, I64, -1), (1, U32, 0xFFFFFFFF)]


def _result(op: str, ty: Ty) -> Ty:
    return BOOL if OPERATORS[op].kind == "compare" else ty


def _expr(op: str, a, b, ty: Ty) -> BinOp:
    return BinOp(op, Const(a, ty), Const(b, ty), _result(op, ty))


@pytest.mark.parametrize(("op", "a", "b", "ty", "want"), EDGES)
def test_folding_and_the_interpreter_give_the_value_the_ir_defines(op, a, b, ty, want):
    e = _expr(op, a, b, ty)
    folded = fold(e)
    assert folded.value == want and type(folded.value) is type(want) and folded.ty is e.ty
    env = Env(values={"a": a, "b": b})
    live = BinOp(op, Var("a", ty), Var("b", ty), e.ty)  # not constants: computed at run time
    assert eval_expr(live, env) == want


_PY = {"add": int.__add__, "sub": int.__sub__, "mul": int.__mul__}


@pytest.mark.parametrize(("op", "a", "b", "ty", "want"), [e for e in EDGES if e[3] is I64])
def test_the_lowering_folds_with_the_same_evaluator(op, a, b, ty, want):
    """Python int arithmetic in kernel code folds through the table: ``+ - *`` are the
    checked rows (Python's exact result, or OverflowError: never a wrap-around)."""
    exact = _PY[op](a, b) if op in _PY else want
    if exact != want and not MIN <= exact <= MAX:
        with pytest.raises(OverflowError, match="does not fit in int64"):
            S.binary(op, Const(a, I64), Const(b, I64))
        return
    assert S.binary(op, Const(a, I64), Const(b, I64)) == Const(want, _result(op, I64))


def test_unary_and_cast_edges_fold_as_the_interpreter_computes():
    for a, ty, want in NEG:
        assert fold(UnOp("neg", Const(a, ty), ty)).value == want
        assert eval_expr(UnOp("neg", Var("a", ty), ty), Env(values={"a": a})) == want
    assert S.to_type(Const(-1, I64), U32) == Const(0xFFFFFFFF, U32)
    assert S.to_type(Const(float("nan"), F64), I64) == Const(MIN, I64)  # cvttsd2si
    assert fold(UnOp("neg", Const(MIN, I64), I64)) == Const(MIN, I64)  # the IR's neg wraps
    with pytest.raises(OverflowError):  # kernel code's -x is checked
        S.unary("neg", Const(MIN, I64))


def _edge_kernel():
    """Every edge computed at run time from locals set to its operands; each result's low
    and high words into CB 0 (float results times 4, as integers)."""
    out = cb(0, "edges", 1, "Float32")
    b = Builder("edges", KIND_DM, slot="ncrisc", cbs=(out,))
    words: list[Expr] = []
    for k, (op, a, bb, ty, _) in enumerate(EDGES):
        x, y = b.local(f"x{k}", ty), b.local(f"y{k}", ty)
        b.set(x, Const(a, ty))
        b.set(y, Const(bb, ty))
        e: Expr = BinOp(op, x, y, _result(op, ty))
        if ty is F64:
            e = Cast(BinOp("mul", e, Const(4.0, F64), F64), I64)
        wide = e.ty in (I64, U64)
        words.append(Cast(e, U32))
        if wide:
            words.append(Cast(BinOp("shr", e, Const(32, e.ty), e.ty), U32))
    b.op("cb.reserve_back", 0, 1)
    for k, w in enumerate(words):
        b.op("sem.set", BinOp("add", write_ptr(0), Const(4 * k, U32), U32), w)
    b.op("cb.push_back", 0, 1)
    return b.kernel(), out, len(words)


def _expected_words() -> list[int]:
    out = []
    for op, _, _, ty, want in EDGES:
        v = int(want * 4) if ty is F64 else int(want)
        out.append(v & 0xFFFFFFFF)
        if _result(op, ty) in (I64, U64, F64):
            out.append((v >> 32) & 0xFFFFFFFF)
    return out


def test_compiled_and_interpreted_kernels_compute_the_edges_alike(device):  # noqa: F811
    kernel, out_cb, count = _edge_kernel()
    results = {}
    for engine in ENGINES:
        out = f32_tensor(device)
        w = writer(accessor("out", out, 0, 0), out_cb, 1)
        run_ir(device, [kernel, w], [[], [out.buffer_address()]], engine)
        results[engine] = page_words(out)[:count]
    assert results["native"] == results["python"] == _expected_words()


@pytest.mark.parametrize(
    ("op", "message"),
    [
        ("floordiv", "floor division by zero in kernel code"),
        ("mod", "modulo by zero in kernel code"),
        ("shl", "shift by a negative count in kernel code"),
    ],
)
def test_division_by_zero_and_negative_shifts_are_one_error_on_both_engines(device, op, message):  # noqa: F811
    out = cb(0, "r", 1, "Float32")
    b = Builder("div", KIND_DM, slot="ncrisc", cbs=(out,), args=("n",))
    n = b.local("n", I64)
    b.loc = SourceLoc("/user/prog.py", 30)
    b.set(n, Const(0 if op != "shl" else -1, I64))  # a local: computed at run time
    b.loc = SourceLoc("/user/prog.py", 31)
    b.set(n, BinOp(op, Const(5, I64), n, I64))
    kernel = b.kernel()
    for engine in ENGINES:
        with pytest.raises(KernelError) as info:
            run_ir(device, [kernel], [[0]], engine)
        assert info.value.message == message, engine
        assert info.value.loc is not None and info.value.loc.line == 31, engine


def test_every_pass_reads_the_table():
    """The printer's symbol and the emitter's C++ come from each row (a new operator needs
    one row): every operator prints and renders."""
    for name, row in OPERATORS.items():
        x = Var("x", BOOL if row.kind in ("logic", "not") else I64)
        ty = BOOL if row.kind in ("logic", "not", "compare") else I64
        e = UnOp(name, x, ty) if row.arity == 1 else BinOp(name, x, x, ty)
        assert row.symbol in print_expr(e)
        cpp = cpp_expr(e)
        assert "x" in cpp and cpp != repr(e)
        form = row.cpp_signed or row.cpp
        assert form.split("(")[0].split("{")[0] in cpp


@pytest.mark.parametrize(
    ("op", "a", "b"),
    [("add_checked", MAX, 1), ("sub_checked", MIN, 1), ("mul_checked", 1 << 62, 4),
     ("neg_checked", MIN, None)],
)  # fmt: skip
def test_checked_operators_are_one_overflow_error_on_both_engines(device, op, a, b):  # noqa: F811
    """The operators compiled TT-Lang integers use: exact, or the same KernelError at the
    line (before, (1 << 62) * 4 wrapped to 0 and passed the slice check after it)."""
    symbol = {"add_checked": "+", "sub_checked": "-", "mul_checked": "*", "neg_checked": "-"}[op]
    out = cb(0, "r", 1, "Float32")
    b_ = Builder("ovf", KIND_DM, slot="ncrisc", cbs=(out,), args=("n",))
    n = b_.local("n", I64)
    b_.loc = SourceLoc("/user/prog.py", 40)
    b_.set(n, Const(a, I64))  # a local: computed at run time
    b_.loc = SourceLoc("/user/prog.py", 41)
    b_.set(n, UnOp(op, n, I64) if b is None else BinOp(op, n, Const(b, I64), I64))
    kernel = b_.kernel()
    for engine in ENGINES:
        with pytest.raises(KernelError) as info:
            run_ir(device, [kernel], [[0]], engine)
        assert info.value.message == overflow_text(symbol), engine
        assert info.value.loc is not None and info.value.loc.line == 41, engine


def test_true_division_by_zero_in_kernel_code_is_one_error_on_both_engines(device):  # noqa: F811
    out = cb(0, "r", 1, "Float32")
    b = Builder("div", KIND_DM, slot="ncrisc", cbs=(out,), args=("n",))
    x = b.local("x", F64)
    b.set(x, Const(0.0, F64))
    b.loc = SourceLoc("/user/prog.py", 7)
    b.set(x, BinOp("truediv_checked", Const(1.0, F64), x, F64))
    kernel = b.kernel()
    for engine in ENGINES:
        with pytest.raises(KernelError) as info:
            run_ir(device, [kernel], [[0]], engine)
        assert info.value.message == "division by zero in kernel code", engine
        assert info.value.loc is not None and info.value.loc.line == 7, engine


def test_a_for_loop_near_int64_max_ends_as_python_range_does(device):  # noqa: F811
    """``for i in range(MAX - 4, MAX, 3)``: i = MAX-4, MAX-1, then the increment leaves int64
    and the loop ends (the C++ ``it += 3`` wrapped to negative values and looped on)."""
    out = cb(0, "count", 1, "Float32")
    b = Builder("loop", KIND_DM, slot="ncrisc", cbs=(out,))
    i, count = b.local("i", I64), b.local("count", I64)
    b.set(count, Const(0, I64))
    with b.for_(i, Const(MAX - 4, I64), Const(MAX, I64), 3):
        b.set(count, BinOp("add", count, Const(1, I64), I64))
    b.op("cb.reserve_back", 0, 1)
    b.op("sem.set", write_ptr(0), Cast(count, U32))
    b.op("cb.push_back", 0, 1)
    kernel = b.kernel()
    for engine in ENGINES:
        res = f32_tensor(device)
        w = writer(accessor("out", res, 0, 0), out, 1)
        run_ir(device, [kernel, w], [[], [res.buffer_address()]], engine)
        assert page_words(res)[0] == 2, engine
