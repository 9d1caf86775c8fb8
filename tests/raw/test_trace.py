"""Tracing raw IR functions: the IR the builder ops emit, and builder misuse at trace time
(each error located at the line inside the raw function)."""

from __future__ import annotations

import inspect

import pytest

from tilewright import ttl
from tilewright.compiler.raw import RawIRError
from tilewright.compiler.raw.trace import Bind, trace
from tilewright.errors import IRVerifyError
from tilewright.kir.ir import KIND_COMPUTE, KIND_DM, CBDecl, Const, Ty
from tilewright.kir.printer import print_kernel

raw = ttl.raw
CBS = (
    CBDecl(0, "src", "Float16_b", 2048, 2, 1),
    CBDecl(1, "dst", "Float16_b", 2048, 2, 1),
)
TWO_DFBS = [Bind("dfb", 0), Bind("dfb", 1)]


def run(fn, binds=TWO_DFBS, kind=KIND_COMPUTE, dst_tiles=4):
    return trace(fn, kind, binds, dst_tiles=dst_tiles, cbs=CBS, source=__file__)


def line_in(fn, marker: str) -> int:
    lines, start = inspect.getsourcelines(fn.fn)
    return start + next(i for i, t in enumerate(lines) if marker in t)


def expect(fn, message: str, marker: str, **kw) -> RawIRError:
    with pytest.raises(RawIRError) as info:
        run(fn, **kw)
    assert message in info.value.message, info.value.message
    assert info.value.loc.file == __file__
    assert info.value.loc.line == line_in(fn, marker)
    return info.value


# -- what tracing builds ---------------------------------------------------------------------------


@ttl.raw.ir
def scale(src: ttl.raw.DFB, dst: ttl.raw.DFB, factor: ttl.raw.f32, n: ttl.raw.index) -> ttl.raw.i32:
    with raw.for_(n):
        raw.dfb_wait(src, 1)
        raw.dfb_reserve(dst, 1)
        raw.tile_regs_acquire()
        raw.copy_tile(src, 0, 0)
        raw.mul_scalar(0, factor)
        raw.tile_regs_commit()
        raw.tile_regs_wait()
        raw.pack_tile(0, dst)
        raw.tile_regs_release()
        raw.dfb_push(dst, 1)
        raw.dfb_pop(src, 1)
    return n * 2 + 1


def test_trace_folds_constants_and_keeps_run_time_parameters():
    t = run(scale, [*TWO_DFBS, Bind("const", 2.0), Bind("param")])
    assert [p.name for p in t.params] == ["p_n"] and t.param_positions == (3,)
    loop = t.body[0]
    assert loop.code == "for" and loop.args[2].name == "p_n"  # the run-time trip count
    assert [op.code for op in loop.regions[0]] == [
        "cb.wait_front", "cb.reserve_back", "tile_regs.acquire", "copy_tile", "sfpu",
        "tile_regs.commit", "tile_regs.wait", "pack_tile", "tile_regs.release", "cb.push_back",
        "cb.pop_front",
    ]  # fmt: skip
    sfpu = loop.regions[0][4]
    assert sfpu.args == ("mul_scalar", 0, (Const(2.0, Ty.F32),))
    assert sfpu.loc.line == line_in(scale, "raw.mul_scalar")
    assert t.result is not None and t.result.ty is Ty.I64
    t2 = run(scale, [*TWO_DFBS, Bind("const", 2.0), Bind("const", 3)])
    assert t2.params == () and t2.body[0].args[2] == Const(3, Ty.I64)


@ttl.raw.ir
def branchy(src: ttl.raw.DFB, dst: ttl.raw.DFB, n: ttl.raw.i32):
    x = raw.local(0, ttl.raw.i32)
    with raw.while_(x < n):
        x.set(x + 1)
    with raw.if_((x > 2) & (n != 0)):
        raw.dfb_wait(src, 1)
    with raw.else_():
        raw.dfb_reserve(dst, 1)


def test_control_flow_ops():
    t = run(branchy, [*TWO_DFBS, Bind("param")])
    codes = [op.code for op in t.body]
    assert codes == ["set", "while", "if"]
    assert [o.code for o in t.body[2].regions[1]] == ["cb.reserve_back"]


# -- builder misuse --------------------------------------------------------------------------------


@ttl.raw.ir
def compute_op_on_dm(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    raw.tile_regs_acquire()  # compute only


def test_an_op_of_the_wrong_kernel_kind():
    expect(
        compute_op_on_dm,
        "raw.tile_regs_acquire runs on compute kernels; 'compute_op_on_dm' is traced for a "
        "data-movement kernel",
        "compute only",
        kind=KIND_DM,
    )


@ttl.raw.ir
def dst_out_of_range(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    raw.tile_regs_acquire()
    raw.copy_tile(src, 0, 4)  # DST 4 of 4


def test_a_dst_index_out_of_range():
    expect(
        dst_out_of_range,
        "raw.copy_tile: DST index 4 is outside the 4 DST tiles of one acquire",
        "DST 4 of 4",
    )


@ttl.raw.ir
def dfb_as_scalar(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    raw.tile_regs_acquire()
    raw.copy_tile(src, 0, 0)
    raw.mul_scalar(0, src)  # a DFB is not a scalar


def test_a_dfb_parameter_used_as_a_scalar():
    expect(
        dfb_as_scalar,
        "raw.mul_scalar: expected a scalar (a traced value or a Python number), got DFB "
        "parameter 'src'",
        "a DFB is not a scalar",
    )


@ttl.raw.ir
def scalar_as_dfb(src: ttl.raw.DFB, dst: ttl.raw.DFB, n: ttl.raw.i32):
    raw.dfb_wait(n, 1)  # n is not a DFB


def test_a_scalar_used_as_a_dfb():
    expect(
        scalar_as_dfb,
        "raw.dfb_wait: expected a DFB parameter, got a traced i64 scalar",
        "n is not a DFB",
        binds=[*TWO_DFBS, Bind("param")],
    )


@ttl.raw.ir
def math_before_acquire(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    raw.copy_tile(src, 0, 0)  # no acquire


@ttl.raw.ir
def pack_before_wait(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    raw.tile_regs_acquire()
    raw.tile_regs_commit()
    raw.pack_tile(0, dst)  # no tile_regs_wait


@ttl.raw.ir
def release_twice(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    raw.tile_regs_acquire()
    raw.tile_regs_commit()
    raw.tile_regs_wait()
    raw.tile_regs_release()
    raw.tile_regs_release()  # again


@ttl.raw.ir
def loop_moves_handshake(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    with raw.for_(4):  # acquires every iteration
        raw.tile_regs_acquire()


@ttl.raw.ir
def returns_holding_dst(src: ttl.raw.DFB, dst: ttl.raw.DFB):  # the def line
    raw.tile_regs_acquire()


@pytest.mark.parametrize(
    "fn, message, marker",
    [
        (math_before_acquire, "raw.copy_tile outside tile_regs_acquire .. tile_regs_commit (DST state 'idle')", "no acquire"),
        (pack_before_wait, "raw.pack_tile outside tile_regs_wait .. tile_regs_release (DST state 'committed')", "no tile_regs_wait"),
        (release_twice, "raw.tile_regs_release in DST state 'idle'; it needs 'pack'", "again"),
        (loop_moves_handshake, "the body of this raw.for_ moves the DST handshake from 'idle' to 'math'", "acquires every"),
        (returns_holding_dst, "returns in DST state 'math'; release DST (tile_regs_release)", "the def line"),
    ],
)  # fmt: skip
def test_an_unbalanced_dst_handshake(fn, message, marker):
    expect(fn, message, marker)


@ttl.raw.ir
def python_if(src: ttl.raw.DFB, dst: ttl.raw.DFB, n: ttl.raw.i32):
    if n > 0:  # a traced value
        raw.dfb_wait(src, 1)


@ttl.raw.ir
def python_range(src: ttl.raw.DFB, dst: ttl.raw.DFB, n: ttl.raw.i32):
    for _ in range(n):  # a traced bound
        raw.dfb_wait(src, 1)


@ttl.raw.ir
def traced_tiles(src: ttl.raw.DFB, dst: ttl.raw.DFB, n: ttl.raw.i32):
    raw.dfb_wait(src, n)  # tile counts are static


@ttl.raw.ir
def mixed_types(src: ttl.raw.DFB, dst: ttl.raw.DFB, n: ttl.raw.i32, f: ttl.raw.f32):
    return n + f  # i64 + f32


@pytest.mark.parametrize(
    "fn, message, marker",
    [
        (python_if, "a traced value has no Python truth value", "a traced value"),
        (python_range, "use raw.for_(start, stop) instead of range()", "a traced bound"),
        (traced_tiles, "tile counts of DFB operations are static positive ints", "are static"),
        (mixed_types, "'add' of a i64 and a f32 value; convert one with raw.cast", "i64 + f32"),
    ],
)
def test_traced_values_used_as_python_values(fn, message, marker):
    expect(fn, message, marker, binds=[*TWO_DFBS, Bind("param"), Bind("param")][: len(fn.params)])


@ttl.raw.ir
def result_undeclared(src: ttl.raw.DFB, dst: ttl.raw.DFB):  # no result type
    return 1


def test_a_result_the_signature_does_not_declare():
    expect(result_undeclared, "returns a value but declares no result", "no result type")


@ttl.raw.ir
def over_capacity(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    raw.dfb_reserve(dst, 4)  # the CB has 2 pages


def test_a_verifier_failure_prints_the_ir_with_the_op_marked():
    with pytest.raises(IRVerifyError) as info:
        run(over_capacity)
    text = info.value.message
    assert "kernel IR of 'over_capacity' is invalid: 'cb.reserve_back' of 4 pages" in text
    assert ">>>" in text and "cb.reserve_back 1, 4" in text
    assert info.value.loc.line == line_in(over_capacity, "the CB has 2 pages")


def test_printer_shows_functions():
    from tilewright.kir.ir import Function, Kernel, Op

    t = run(scale, [*TWO_DFBS, Bind("const", 2.0), Bind("param")])
    fn = Function("raw_scale_1", t.params, (), t.locals, t.body, t.result, "raw IR function scale")
    k = Kernel(
        "k", KIND_COMPUTE, "trisc", __file__, cbs=CBS, dst_tiles=4, functions=(fn,),
        body=(Op("raw.call", ("raw_scale_1", (Const(3, Ty.I64),), (), "")),),
    )  # fmt: skip
    text = print_kernel(k)
    assert "func raw_scale_1(%p_n : i64) -> i64 {  # raw IR function scale" in text
    assert "raw.call raw_scale_1, [3], [], " in text


@ttl.raw.ir
def buggy(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    tiles = 4 // 0  # a bug in the body
    raw.dfb_wait(src, tiles)


def test_a_python_exception_in_the_body_is_an_error_at_its_line():
    err = expect(
        buggy,
        "raw IR function 'buggy' raised ZeroDivisionError while it was traced: integer division "
        "or modulo by zero",
        "a bug in the body",
    )
    assert isinstance(err.__cause__, ZeroDivisionError)
