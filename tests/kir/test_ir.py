"""The kernel IR: building, printing, verifying (each rule fails with the op marked), effects."""

from __future__ import annotations

import pytest

from tilewright.errors import IRVerifyError, SourceLoc
from tilewright.kir.effects import dfb_effects
from tilewright.kir.ir import (
    CBDecl,
    Const,
    Intrinsic,
    Kernel,
    Op,
    Ty,
    Var,
    u32,
)
from tilewright.kir.printer import print_kernel
from tilewright.kir.verify import verify

LOC = SourceLoc("prog.py", 7)
CB0 = CBDecl(0, "in_dfb", "Float16_b", 2048, 4, 2)
CB1 = CBDecl(1, "out_dfb", "Float16_b", 2048, 4, 2)


def compute(*body: Op, locals_=(), dst=4) -> Kernel:
    return Kernel(
        name="compute",
        kind="compute",
        slot="trisc",
        source="prog.py",
        cbs=(CB0, CB1),
        locals=tuple(locals_),
        body=tuple(body),
        dst_tiles=dst,
    )


def eltwise_copy() -> Kernel:
    i = Var("i", Ty.I64)
    loop = (
        Op("cb.wait_front", (0, 2), (), LOC),
        Op("cb.reserve_back", (1, 2), (), LOC),
        Op("tile_regs.acquire", (), (), LOC),
        Op("copy_tile", (0, u32(0), 0, 0), (), LOC),
        Op("sfpu", ("relu", 0, ()), (), LOC),
        Op("tile_regs.commit", (), (), LOC),
        Op("tile_regs.wait", (), (), LOC),
        Op("pack_tile", (0, 1, u32(0)), (), LOC),
        Op("tile_regs.release", (), (), LOC),
        Op("cb.push_back", (1, 2), (), LOC),
        Op("cb.pop_front", (0, 2), (), LOC),
    )
    return compute(Op("for", (i, Const(0, Ty.I64), Const(3, Ty.I64), 1), (loop,), LOC), locals_=[i])


def test_a_well_formed_kernel_verifies_and_prints():
    k = verify(eltwise_copy())
    text = print_kernel(k)
    assert text.splitlines()[0] == "kernel compute : compute @ trisc  dst=4 fp32"
    assert 'cb 0 "in_dfb" Float16_b pages=4 page_size=2048 block=2 tile=32x32' in text
    assert "for %i = 0, 3, 1 {" in text
    assert "copy_tile 0, 0:u32, 0, 0" in text and "# prog.py:7" in text


def test_the_ir_is_hashable_plain_data():
    assert eltwise_copy() == eltwise_copy()
    assert hash(eltwise_copy()) == hash(eltwise_copy())


def _fails(kernel: Kernel, message: str, marked: str) -> IRVerifyError:
    with pytest.raises(IRVerifyError) as info:
        verify(kernel)
    err = info.value
    assert message in err.message, err.message
    marked_lines = [ln for ln in err.message.splitlines() if ln.startswith(">>>")]
    assert len(marked_lines) == 1 and marked in marked_lines[0], err.message
    return err


def test_unknown_op():
    _fails(compute(Op("frobnicate", (), (), LOC)), "unknown op 'frobnicate'", "frobnicate")


def test_op_of_the_wrong_kernel_kind():
    err = _fails(
        compute(Op("noc.read_barrier", (), (), LOC)),
        "does not run on compute kernels",
        "noc.read_barrier",
    )
    assert err.loc == LOC


def test_operand_count():
    _fails(
        compute(Op("cb.wait_front", (0,), (), LOC)), "takes 2 operand(s), got 1", "cb.wait_front"
    )


def test_undeclared_cb():
    _fails(
        compute(Op("cb.wait_front", (5, 1), (), LOC)),
        "circular buffer 5 is not declared",
        "cb.wait_front",
    )


def test_cb_pages_beyond_capacity():
    _fails(compute(Op("cb.wait_front", (0, 5), (), LOC)), "has 4 pages", "cb.wait_front 0, 5")


def test_dst_index_beyond_capacity():
    ops = (
        Op("tile_regs.acquire", (), (), LOC),
        Op("copy_tile", (0, u32(0), 4, 0), (), LOC),
        Op("tile_regs.commit", (), (), LOC),
        Op("tile_regs.wait", (), (), LOC),
        Op("tile_regs.release", (), (), LOC),
    )
    _fails(compute(*ops), "DST index 4 is outside the 4 DST tiles", "copy_tile")


def test_math_outside_the_dst_handshake():
    _fails(
        compute(Op("copy_tile", (0, u32(0), 0, 0), (), LOC)),
        "outside tile_regs_acquire",
        "copy_tile",
    )


def test_pack_before_wait():
    ops = (Op("tile_regs.acquire", (), (), LOC), Op("pack_tile", (0, 1, u32(0)), (), LOC))
    _fails(compute(*ops), "outside tile_regs_wait .. tile_regs_release", "pack_tile")


def test_a_kernel_must_release_dst():
    _fails(
        compute(Op("tile_regs.acquire", (), (), LOC)),
        "ends in DST state 'math'",
        "tile_regs.acquire",
    )


def test_undeclared_local_and_type_mismatch():
    x = Var("x", Ty.I64)
    _fails(compute(Op("set", (x, Const(1, Ty.I64)), (), LOC)), "local %x is not declared", "set %x")
    _fails(
        compute(Op("set", (x, Const(1.5, Ty.F64)), (), LOC), locals_=[x]),
        "is i64, assigned a f64",
        "set %x",
    )


def test_expression_types():
    x = Var("x", Ty.I64)
    bad = Op("if", (Const(1, Ty.I64),), ((), ()), LOC)
    _fails(compute(bad, locals_=[x]), "operand cond is i64, expected bool", "if 1")
    dm_only = Op("set", (Var("a", Ty.U32), Intrinsic("semaphore", (u32(0),), Ty.U32)), (), LOC)
    _fails(
        compute(dm_only, locals_=[Var("a", Ty.U32)]),
        "@semaphore does not run on compute kernels",
        "set %a",
    )


def test_break_outside_a_loop():
    _fails(compute(Op("break", (), (), LOC)), "'break' outside a loop", "break")


def test_the_branches_must_agree_on_the_handshake():
    branch = Op("if", (Const(True, Ty.BOOL),), ((Op("tile_regs.acquire", (), (), LOC),), ()), LOC)
    _fails(compute(branch), "the branches leave the DST handshake", "if true")


def test_dfb_effects_expand_static_loops():
    effects = dfb_effects(eltwise_copy())
    assert effects is not None
    assert [(e.kind, e.cb, e.pages) for e in effects[:4]] == [
        ("wait", 0, 2),
        ("reserve", 1, 2),
        ("push", 1, 2),
        ("pop", 0, 2),
    ]
    assert len(effects) == 12


def test_dfb_effects_of_data_dependent_control_flow_are_unknown():
    branch = Op("if", (Var("c", Ty.BOOL),), ((Op("cb.wait_front", (0, 2), (), LOC),), ()), LOC)
    assert dfb_effects(compute(branch, locals_=[Var("c", Ty.BOOL)])) is None


def test_a_builder_constructs_verified_ir_that_emits_cpp():
    from tilewright.compiler.backend.emit import emit_kernel
    from tilewright.kir.builder import Builder

    b = Builder("scale", "compute", slot="trisc", dst_tiles=4, cbs=(CB0, CB1), loc=LOC)
    i = b.local("i", Ty.I64)
    with b.for_(i, 0, 8):
        b.op("cb.wait_front", 0, 2)
        b.op("cb.reserve_back", 1, 2)
        b.op("tile_regs.acquire")
        b.op("copy_tile", 0, u32(0), 0, 0)
        b.op("sfpu", "mul_scalar", 0, (Const(2.0, Ty.F64),))
        b.op("tile_regs.commit")
        b.op("tile_regs.wait")
        b.op("pack_tile", 0, 1, u32(0))
        b.op("tile_regs.release")
        b.op("cb.push_back", 1, 2)
        b.op("cb.pop_front", 0, 2)
    kernel = b.kernel()
    source = emit_kernel(kernel)
    assert "mul_unary_tile(0, ttlang::f32_bits(2.0));" in source
    assert '#line 7 "prog.py"' in source
    with pytest.raises(IRVerifyError):
        bad = Builder("bad", "compute", slot="trisc", dst_tiles=4, cbs=(CB0,), loc=LOC)
        bad.op("copy_tile", 0, u32(0), 0, 0)
        bad.kernel()
