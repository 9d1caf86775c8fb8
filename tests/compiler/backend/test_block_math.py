"""Block math beyond arithmetic, compiled: comparisons, ``where`` / ``mask``, reductions,
rounding, ``threshold``, ``typecast``, ``%`` / ``//``, ``squeeze`` / ``unsqueeze``.

Each expression runs under ``--engine python`` (the interpreter, the reference) and
``--engine native`` (lowered to kernel IR, emitted as C++, run by the native engine); the
results must be equal bit for bit, and the native run must have compiled the operation.
"""

from __future__ import annotations

import pytest
import torch

from tests.compiler.helpers import load, load_compiling, program, write
from tilewright.errors import NotCompilableError

OP = """
@ttl.operation(grid=(1, 1), options="--tw-engine={engine}")
def op(a, b, c, out):
    da = ttl.make_dataflow_buffer_like(a, shape=({rows}, {cols}), block_count=2)
    db = ttl.make_dataflow_buffer_like(b, shape=({rows}, {cols}), block_count=2)
    dc = ttl.make_dataflow_buffer_like(c, shape=({rows}, {cols}), block_count=2)
    do = ttl.make_dataflow_buffer_like(out, shape={oshape}, block_count=2)

    @ttl.datamovement()
    def reader():
        with da.reserve() as x:
            ttl.copy(a[0:{rows}, 0:{cols}], x).wait()
        with db.reserve() as y:
            ttl.copy(b[0:{rows}, 0:{cols}], y).wait()
        with dc.reserve() as z:
            ttl.copy(c[0:{rows}, 0:{cols}], z).wait()

    @ttl.compute()
    def compute():
        with da.wait() as x, db.wait() as y, dc.wait() as z, do.reserve() as o:
            o.store({expr})
            {unused}

    @ttl.datamovement()
    def writer():
        with do.wait() as o:
            ttl.copy(o, out[0:{orows}, 0:{ocols}]).wait()
"""

CALL = """
g = torch.Generator().manual_seed(7)
def sample(scale):
    v = (torch.randn({rows} * 32, {cols} * 32, generator=g) * scale).to(torch.bfloat16)
    v[0, :8] = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5])
    return v
a, b = sample(3.0), sample(3.0)
b[1, :] = a[1, :]  # equal elements for the comparisons
c = (torch.rand({rows} * 32, {cols} * 32, generator=g) < 0.5).to(torch.bfloat16)  # a 0/1 mask
out = dev(torch.zeros({orows} * 32, {ocols} * 32))
op(dev(a), dev(b), dev(c), out)
result = ttnn.to_torch(out)
"""


def run(tmp_path, expr: str, engine: str, *, shape=(1, 2), oshape=None):
    rows, cols = shape
    # a waited block must be read: the blocks the expression leaves out are read (and dropped)
    unused = (
        "; ".join(
            f"_{n} = {n} + {n}"
            for n in "xyz"
            if n not in expr.replace("exp", "").replace("typecast", "")
        )
        or "pass"
    )
    orows, ocols = oshape or shape
    fields = dict(
        engine=engine, unused=unused, rows=rows, cols=cols, expr=expr, oshape=(orows, ocols), orows=orows,
        ocols=ocols,
    )  # fmt: skip
    ns, compiled = load_compiling(
        write(tmp_path, program(OP.format(**fields), CALL.format(**fields)))
    )
    return ns["result"], compiled


def same_on_both_engines(tmp_path, expr: str, **kw) -> torch.Tensor:
    ref, compiled_ref = run(tmp_path, expr, "python", **kw)
    got, compiled = run(tmp_path, expr, "native", **kw)
    assert compiled_ref == [] and compiled == ["op"]
    assert torch.equal(ref.view(torch.int16), got.view(torch.int16)), (expr, ref, got)
    return ref


COMPARISONS = [
    "x > y", "x < y", "x >= y", "x <= y", "x == y", "x != y",
    "ttl.math.gt(x, y)", "ttl.math.lt(x, y)", "ttl.math.ge(x, y)", "ttl.math.le(x, y)",
    "ttl.math.eq(x, y)", "ttl.math.ne(x, y)",
    "x > 0.5", "x < -0.5", "x >= 1.0", "x <= 0.0", "x == 1.0", "x != 0.0", "0.5 < x",
    "(x + y) > (x * y)", "ttl.math.exp(x) >= y",
]  # fmt: skip


@pytest.mark.parametrize("expr", COMPARISONS)
def test_comparisons_compile_bit_identically(tmp_path, expr):
    same_on_both_engines(tmp_path, expr)


DIVMOD = ["x % y", "x // y", "x % 0.75", "x // -0.75", "(x * y) % (x + 1.0)", "x % z", "x // z"]


@pytest.mark.parametrize("expr", DIVMOD)
def test_floored_mod_and_floordiv_compile_bit_identically(tmp_path, expr):
    """numpy's float32 divmod (remainder with the divisor's sign; ``z`` has zeros: NaN and
    infinities)."""
    same_on_both_engines(tmp_path, expr)


def test_a_number_mod_a_block_is_refused_as_the_interpreter_refuses_it(tmp_path):
    with pytest.raises(NotCompilableError) as info:
        run(tmp_path, "2.0 % x", "native")
    assert "a number % a block" in info.value.message
    assert info.value.loc is not None and info.value.loc.line == 23


def test_a_chained_block_comparison_is_refused(tmp_path):
    with pytest.raises(NotCompilableError) as info:
        run(tmp_path, "0.0 < x < 1.0", "native")
    assert "chained comparison of blocks" in info.value.message
    assert info.value.loc is not None and info.value.loc.line == 23


ROUNDING = ["ttl.math.round(x)", "ttl.math.round(x * 7.3, 1)", "ttl.math.round(x, decimals=2)"]


@pytest.mark.parametrize("expr", ROUNDING)
def test_round_compiles_bit_identically(tmp_path, expr):
    """``round_tile(idst, decimals)``: numpy's round (ties to even), on both engines."""
    same_on_both_engines(tmp_path, expr)


REDUCTIONS = [
    ("ttl.math.reduce_max(x, dims=[-1], shape=(2, 1))", (2, 2), (2, 1)),
    ("ttl.math.reduce_max(x, dims=[0], shape=(1, 2))", (2, 2), (1, 2)),
    ("ttl.math.reduce_max(x, dims=[0, 1], shape=(1, 1))", (2, 2), (1, 1)),
    ("ttl.math.reduce_max(x - 10.0, dims=[-1], shape=(2, 1))", (2, 2), (2, 1)),
    ("ttl.math.reduce_max(x, [1], (2, 1)) + ttl.math.reduce_sum(y, [1], (2, 1))", (2, 2), (2, 1)),
    ("ttl.math.reduce_max(x, dims=[-1], shape=(1, 1))", (1, 8), (1, 1)),
]


@pytest.mark.parametrize(("expr", "shape", "oshape"), REDUCTIONS)
def test_reductions_compile_bit_identically(tmp_path, expr, shape, oshape):
    """``reduce_max`` (all negative inputs included: the maximum starts from -inf, the rest
    of each result tile is zero) and ``reduce_sum`` beside it."""
    same_on_both_engines(tmp_path, expr, shape=shape, oshape=oshape)


SELECTIONS = [
    "ttl.block.where(z, x, y)",
    "ttl.block.where(x > y, x, y)",
    "ttl.block.where(x, y, z)",  # x is rarely exactly 1.0: mostly the false value
    "ttl.block.where(x >= 0.0, ttl.math.exp(x), y * 3.0)",
    "ttl.block.mask(x, z)",
    "ttl.block.mask_posinf(x, z)",
    "ttl.block.mask(x + y, z) * 2.0",
    "ttl.math.threshold(x, 0.5, -7.0)",
    "ttl.math.threshold(x * y, -1.0, 0.0)",
]


@pytest.mark.parametrize("expr", SELECTIONS)
def test_where_mask_and_threshold_compile_bit_identically(tmp_path, expr):
    """``where_tile`` (after ``condition == 1``): ``where``, ``mask``, ``mask_posinf`` and the
    spec's ``threshold`` (``x > threshold`` becomes ``value``)."""
    same_on_both_engines(tmp_path, expr)


EMITTED = [
    ("ttl.block.where(x > y, ttl.math.round(x % 1.5, 1), y // 0.5)", (1, 2), None),
    ("ttl.block.mask(x, z) + ttl.math.threshold(y, 0.0, 3.0)", (1, 2), None),
    ("ttl.math.reduce_max(x, dims=[-1], shape=(2, 1))", (2, 2), (2, 1)),
]
CALLS = ("where_tile(", "gt_binary_tile(", "remainder_binary_tile(", "round_tile(", "reduce_tile")


def test_the_new_ops_build_with_strict_warnings_and_rerun_through_generic_op(tmp_path):
    """The emitted C++ of every new op builds with -Wall -Wextra -Werror, and the
    ``tilewright emit`` rerun (a ``ttnn.generic_op`` program) gives the same bits."""
    import contextlib
    import io
    import os
    import subprocess

    from click.testing import CliRunner

    from tilewright.cli.main import cli
    from tilewright.cli.runner import run_program
    from tilewright.compiler.backend import engine as backend
    from tilewright.compiler.backend.build import INCLUDE_DIR
    from tilewright.compiler.backend.emit import emit_kernel
    from tilewright.native.kernels import kernel_source
    from tilewright.native.runtime import generated_dir
    from tilewright.native.toolchain import INCLUDE_DIR as API_DIR

    seen = ""
    for n, (expr, shape, oshape) in enumerate(EMITTED):
        unused = "; ".join(f"_{v} = {v} + {v}" for v in "xyz" if v not in expr) or "pass"
        fields = dict(
            engine="native", unused=unused, rows=shape[0], cols=shape[1], expr=expr,
            oshape=oshape or shape, orows=(oshape or shape)[0], ocols=(oshape or shape)[1],
        )  # fmt: skip
        path = write(tmp_path, program(OP.format(**fields), CALL.format(**fields)))
        kernels: list = []
        backend.COMPILE_OBSERVERS.append(lambda r, c, p, into=kernels: into.extend(c.kernels))
        try:
            load(path)
        finally:
            backend.COMPILE_OBSERVERS.pop()
        (compute,) = [k for k in kernels if k.kind == "compute"]
        cpp = tmp_path / "compute.cpp"
        cpp.write_text(
            kernel_source(None, compute.kind, compute.compile_args, text=emit_kernel(compute))
        )
        cmd = [
            "c++", "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
            "-isystem", str(API_DIR), "-isystem", str(generated_dir()), f"-I{INCLUDE_DIR}", str(cpp),
        ]  # fmt: skip
        built = subprocess.run(cmd, capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        seen += cpp.read_text()
        out = tmp_path / f"out{n}"
        result = CliRunner().invoke(cli, ["emit", "-o", str(out), str(path)])
        assert result.exit_code == 0, result.output
        folder = out / "op"
        printed = io.StringIO()
        cwd = os.getcwd()
        try:
            os.chdir(folder)
            with contextlib.redirect_stdout(printed):
                assert run_program(str(folder / "run.py"), []) == 0
        finally:
            os.chdir(cwd)
        assert printed.getvalue().splitlines() == ["PASS op"]
    assert all(call in seen for call in CALLS)


LEGACY_FILL = ["ttl.math.fill(o, 1.5) + x", "ttl.math.fill(o, -2.0)", "x * ttl.math.fill(o, 3)"]


@pytest.mark.parametrize("expr", LEGACY_FILL)
def test_the_legacy_math_fill_compiles_bit_identically(tmp_path, expr):
    """``ttl.math.fill(out_blk, value)`` (TT-Lang 1.1.1): ``ttl.block.fill(value,
    shape=out_blk.shape)``; out_blk gives its shape only, so reading a reserved block's
    shape is no block-state step on either engine."""
    with pytest.warns(DeprecationWarning, match="1.1.1 form"):
        same_on_both_engines(tmp_path, expr)


@pytest.mark.parametrize(
    "expr, message",
    [
        ("ttl.math.fill(x + y, 1.0)", "whose out_blk is not a block"),
        ("ttl.math.fill(o)", "takes exactly a block and a value"),
        ("ttl.math.fill(o, 1.0, 2.0)", "takes exactly a block and a value"),
    ],
)
def test_a_legacy_math_fill_without_a_block_is_refused_with_its_line(tmp_path, expr, message):
    with pytest.raises(NotCompilableError) as info:
        run(tmp_path, expr, "native")
    assert "ttl.math.fill(out_blk, value)" in info.value.message and message in info.value.message
    assert info.value.loc is not None and info.value.loc.line == 23


TYPECAST = [
    "ttl.math.typecast(x, ttnn.float32)",
    "ttl.math.typecast(x * y + z, ttnn.float32)",
    "ttl.math.typecast(ttl.math.exp(x), ttnn.float32) - y",
    "ttl.math.typecast(x, ttnn.bfloat16) * y",
    "ttl.math.typecast(x, 'bf16') + ttl.math.typecast(z, ttnn.float32)",
]


@pytest.mark.parametrize("expr", TYPECAST)
def test_a_typecast_that_changes_no_value_compiles_bit_identically(tmp_path, expr):
    """To float32 (a copy in the interpreter, float32 DST compiled) and to bfloat16 of a
    block of a bfloat16 DFB (exact): the operand's value, on both engines."""
    same_on_both_engines(tmp_path, expr)


@pytest.mark.parametrize(
    "expr",
    ["ttl.math.typecast(x * y, ttnn.bfloat16)", "ttl.math.typecast(x * y + z, 'bf16') - x * y"],
)
def test_a_rounding_typecast_compiles_bit_identically(tmp_path, expr):
    """To bfloat16 of a computed expression: ``typecast_tile<Float32, Float16_b>`` rounds
    as the interpreter's typecast (tests/compiler/backend/test_typecast.py: the corner
    cases)."""
    same_on_both_engines(tmp_path, expr)


@pytest.mark.parametrize(
    "expr, message",
    [
        ("ttl.math.typecast(x, ttnn.bfloat8_b)", "a block-float target quantises"),
        ("ttl.math.typecast(x, 'int7')", "a dtype the interpreter rejects"),
        ("ttl.math.typecast(x)", "takes exactly a block and a dtype"),
    ],
)
def test_a_typecast_that_changes_values_is_refused_with_its_line(tmp_path, expr, message):
    with pytest.raises(NotCompilableError) as info:
        run(tmp_path, expr, "native")
    assert "ttl.math.typecast" in info.value.message and message in info.value.message
    assert info.value.loc is not None and info.value.loc.line == 23
