"""The IR -> IR passes (compiler/backend/passes): each one's job, the list, `explain --after`."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.e2e.conftest import EXAMPLES
from tilewright.cli.main import cli
from tilewright.compiler.backend.emit import emit_kernel
from tilewright.compiler.backend.passes import pipeline
from tilewright.compiler.backend.passes.cbproto import expand_cb_protocol
from tilewright.compiler.backend.passes.dce import dce
from tilewright.compiler.backend.passes.dst import chunk_dst
from tilewright.compiler.backend.passes.fold import fold, fold_expr
from tilewright.compiler.backend.passes.tiles import Binary, Leaf, Unary
from tilewright.kir.interp_scalar import compile_expr
from tilewright.kir.ir import (
    BinOp,
    Cast,
    CBDecl,
    Const,
    Intrinsic,
    Kernel,
    Op,
    Ty,
    UnOp,
    Var,
    i64,
    u32,
)
from tilewright.kir.printer import print_kernel
from tilewright.kir.verify import verify

CBS = (
    CBDecl(0, "a", "Float16_b", 2048, 16, 8),
    CBDecl(1, "b", "Float16_b", 2048, 16, 8),
    CBDecl(2, "y", "Float16_b", 2048, 16, 8),
)


def _kernel(body, *, kind="compute", locals_=(), dst=4) -> Kernel:
    return Kernel(
        name="k",
        kind=kind,
        slot="trisc" if kind == "compute" else "brisc",
        source="prog.py",
        cbs=CBS,
        locals=tuple(locals_),
        body=tuple(body),
        dst_tiles=dst if kind == "compute" else 0,
    )


def _codes(ops) -> list[str]:
    out = []
    for op in ops:
        out.append(op.code)
        for region in op.regions:
            out.extend(_codes(region))
    return out


def test_the_passes_run_from_one_list_in_order():
    assert pipeline.PASS_NAMES == ("lower", "dst", "cb", "fold", "dce")
    for p in pipeline.PASSES:
        assert p.doc and p.run.__doc__, p.name
    with pytest.raises(ValueError, match="unknown pass 'nope'"):
        pipeline.run(_kernel([]), upto="nope")


def test_language_ops_are_not_kernel_ir_ops():
    """The ops lowering writes for the passes never reach the IR interpreter, the verifier or
    the emitter: they are no rows of the op table (whose every row the interpreter runs)."""
    from tilewright.compiler.backend.passes.ops import LANGUAGE_OPS
    from tilewright.kir.optable import OPS

    assert not set(LANGUAGE_OPS) & set(OPS)


def test_dst_chunks_a_store_to_the_dst_capacity():
    """8 output tiles, one DST tile each, 4 per acquire: two chunks in a loop."""
    tree = Binary((2, 4), "add", Leaf((2, 4), 1, 0, 0, 0), Leaf((2, 4), 2, 1, 0, 8))
    kernel = _kernel([Op("tile.store", (tree, 2, 0, 0, -1))])
    out = chunk_dst(kernel)
    (loop,) = out.body
    assert loop.code == "for" and loop.args[1:] == (u32(0), u32(8), 4)
    inner = _codes(loop.regions[0])
    assert inner.count("binary_tiles") == 4 and inner.count("pack_tile") == 4
    assert inner[0] == "tile_regs.acquire" and inner[-1] == "tile_regs.release"
    assert [v.name for v in out.locals] == ["tw_t"]
    verify(out)
    emit_kernel(out)


def test_dst_puts_each_output_tile_in_its_own_window():
    """An expression needing two DST tiles per output tile: 2 output tiles per acquire."""
    leaf = Leaf((1, 2), 1, 0, 0, 0)
    tree = Binary(
        (1, 2), "div", Unary((1, 2), (("exp", ()),), leaf), Unary((1, 2), (("exp", ()),), leaf)
    )
    out = chunk_dst(_kernel([Op("tile.store", (tree, 2, 0, 0, -1))]))
    slots = [op.args[1:] for op in out.body if op.code == "sfpu_binary"]
    assert slots == [(0, 1, 0), (2, 3, 2)]  # tile 0 in DST 0..1, tile 1 in DST 2..3


def test_cb_protocol_expansion_counts_cumulative_pages():
    blk = Var("blk", Ty.U32)
    kernel = _kernel(
        [
            Op("dfb.reserve", (0, 2, blk)),
            Op("dfb.wait", (1, 1, None)),
            Op("dfb.push", (0,)),
            Op("dfb.pop", (1,)),
        ],
        kind="data_movement",
        locals_=[blk],
    )
    out = expand_cb_protocol(kernel)
    assert [(op.code, op.args) for op in out.body] == [
        ("cb.reserve_back", (0, 16)),
        ("set", (blk, Intrinsic("write_ptr", (u32(0),), Ty.U32))),
        ("cb.wait_front", (1, 8)),
        ("cb.push_back", (0, 8)),
        ("cb.pop_front", (1, 8)),
    ]


def test_fold_computes_what_the_emitted_cpp_computes():
    """The IR interpreter's evaluator decides: int64 arithmetic wraps (the Python value
    2**64 used to be emitted as an out-of-range literal), uint32 wraps, casts convert."""
    x = Var("x", Ty.I64)
    big = BinOp("mul", Const(1 << 62, Ty.I64), Const(4, Ty.I64), Ty.I64)
    kernel = _kernel(
        [
            Op("set", (x, big)),
            Op("set", (x, Cast(BinOp("sub", u32(0), u32(1), Ty.U32), Ty.I64))),
            Op("set", (x, BinOp("add", x, UnOp("neg", i64(3), Ty.I64), Ty.I64))),
        ],
        kind="data_movement",
        locals_=[x],
    )
    out = fold(kernel)
    values = [op.args[1] for op in out.body]
    assert values[0] == Const(0, Ty.I64)
    assert values[1] == Const(4294967295, Ty.I64)
    assert values[2] == BinOp("add", x, Const(-3, Ty.I64), Ty.I64)
    for e in (big, values[1]):
        fn, _ = compile_expr(e)
        assert fold_expr(e).value == fn(None) or fold_expr(e) == e
    assert "INT64_C(18446744073709551616)" not in emit_kernel(out)


def test_fold_keeps_what_has_no_value():
    """An integer division by zero traps in the C++: it is left for the kernel to raise."""
    e = BinOp("floordiv", i64(1), i64(0), Ty.I64)
    assert fold_expr(e) is e


def test_dce_removes_what_never_runs():
    x = Var("x", Ty.I64)
    live = Op("set", (x, i64(1)))
    kernel = _kernel(
        [
            Op("if", (Const(True, Ty.BOOL),), ((live,), (Op("set", (x, i64(2))),))),
            Op("if", (BinOp("lt", x, i64(0), Ty.BOOL),), ((), ())),
            Op("fail", ("KernelError", "stop")),
            Op("set", (x, i64(3))),
        ],
        kind="data_movement",
        locals_=[x],
    )
    out = dce(kernel)
    assert [(op.code, op.args) for op in out.body] == [
        ("set", (x, i64(1))),
        ("fail", ("KernelError", "stop")),
    ]


def test_explain_prints_the_ir_after_each_pass():
    program = str(EXAMPLES / "01_fused_eltwise.py")
    texts = {}
    for name in pipeline.PASS_NAMES:
        result = CliRunner().invoke(cli, ["explain", "--after", name, program])
        assert result.exit_code == 0, result.output
        assert f"kernel IR after {name}:" in result.output
        texts[name] = result.output.split(f"kernel IR after {name}:", 1)[1]
    assert "tile.store" in texts["lower"] and "dfb.reserve" in texts["lower"]
    assert "<unknown op>" not in texts["lower"]
    assert "tile.store" not in texts["dst"] and "tile_regs.acquire" in texts["dst"]
    assert "dfb.reserve" in texts["dst"] and "dfb.reserve" not in texts["cb"]
    assert "cb.reserve_back" in texts["cb"]
    final = CliRunner().invoke(cli, ["explain", "--ir", program])
    assert final.output.split("kernel IR:", 1)[1] == texts["dce"]


def test_a_pass_prefix_is_what_the_compiler_compiled():
    """``Lowered.lowered`` through every pass is the compiled kernel, op for op."""
    from tilewright.cli.runner import run_program
    from tilewright.compiler.backend import engine as backend

    seen = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: seen.append(c))
    try:
        assert run_program(str(EXAMPLES / "03_broadcast_reduce.py"), []) == 0
    finally:
        backend.COMPILE_OBSERVERS.pop()
    for low in seen[0].lowered:
        assert print_kernel(pipeline.run(low.lowered)) == print_kernel(low.kernel)
