"""Composition: in-place expansion, renaming, shared resources, hoisting (reference B.8, B.9)."""

import re
import sys

import pytest

from tests.compiler.helpers import line_of, load, program, write
from tilewright.errors import BlockStateError
from tilewright.lang.resets import DFBReset
from tilewright.lang.selectors import DATA_MOVEMENT

STAGE = """
@ttl.operation()
def stage(x, y):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    with x_dfb.reserve() as blk:
        ttl.copy(x[0:1, 0:1], blk).wait()
    with x_dfb.wait() as blk:
        ttl.copy(blk, y[0:1, 0:1]).wait()
"""


def test_callee_locals_get_the_inline_suffix(tmp_path):
    ns = load(
        write(
            tmp_path,
            STAGE
            + """
@ttl.operation(grid=(1, 1))
def caller(a, b):
    stage(a, b)
    stage(a, b)
""",
        )
    )
    names = [d.name for d in ns["caller"].split_plan.setup]
    assert len(names) == 2
    assert re.fullmatch(r"x_dfb__stage_inl_[0-9a-f]{12}_0", names[0])
    assert names[1] == names[0][:-1] + "1"  # the same call twice: same digest, next occurrence


def test_suffix_is_deterministic(tmp_path):
    path = write(
        tmp_path, STAGE + "\n@ttl.operation(grid=(1, 1))\ndef caller(a, b):\n    stage(a, b)\n"
    )
    first, second = load(path), load(path)
    assert first["caller"].split_plan.setup[0].name == second["caller"].split_plan.setup[0].name


def test_literal_captures_become_constants(tmp_path):
    ns = load(
        write(
            tmp_path,
            """
        ROWS = 1

        @ttl.operation()
        def stage(x):
            x_dfb = ttl.make_dataflow_buffer_like(x, shape=(ROWS, 1), block_count=2)
            with x_dfb.reserve() as blk:
                ttl.copy(x[0:ROWS, 0:1], blk).wait()

        @ttl.operation(grid=(1, 1))
        def caller(a):
            stage(a)
        """,
        )
    )
    assert "shape=(1, 1)" in ns["caller"].split_plan.generated_source
    assert "ROWS" not in ns["caller"].split_plan.generated_source


def test_resource_declarations_are_hoisted_out_of_loops(tmp_path):
    ns = load(
        write(
            tmp_path,
            STAGE
            + """
@ttl.operation(grid=(1, 1))
def caller(a, b):
    for i in range(2):
        stage(a, b)
""",
        )
    )
    source = ns["caller"].split_plan.generated_source
    decl = next(line for line in source.splitlines() if "make_dataflow_buffer_like" in line)
    assert decl.startswith("    x_dfb__stage_inl_")  # op top level, before the kernels


def test_shared_kernel_handle_is_one_logical_kernel(tmp_path):
    ns = load(
        write(
            tmp_path,
            program(
                """
        def make():
            reader = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)

            @ttl.operation()
            def stage(x):
                x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
                with x_dfb.reserve() as blk:
                    ttl.copy(x[0:1, 0:1], blk).wait()
                got = x_dfb.wait()
                got.pop(kernel=reader)

            return stage, reader

        stage, reader = make()

        @ttl.operation(grid=(1, 1))
        def caller(a, b):
            stage(a)
            stage(b)
        """,
                """
        # pop(kernel=reader) declares the unread block an unused transaction (reference C.10)
        caller(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32)))
        """,
            ),
        )
    )
    plan = ns["caller"].split_plan
    explicit = [k for k in plan.kernels if k.role == "explicit"]
    assert len(explicit) == 1 and explicit[0].name == "reader"
    assert plan.kernels == (DATA_MOVEMENT, explicit[0])
    logical = ns["caller"].last_program.logical_kernels
    assert any(lk.handle is ns["reader"] for lk in logical)


def test_reset_declarations_are_fresh_per_call_site(tmp_path):
    ns = load(
        write(
            tmp_path,
            """
        def make():
            reset = ttl.DFBReset(participants=(ttl.KernelKind.COMPUTE, ttl.KernelKind.DATA_MOVEMENT,
                                               ttl.PIPE_SOURCE_KERNEL))

            @ttl.operation()
            def stage(x):
                x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
                with x_dfb.reserve() as blk:
                    ttl.copy(x[0:1, 0:1], blk).wait()
                ttl.reset_all_dfbs(reset)

            return stage, reset

        stage, reset = make()

        @ttl.operation(grid=(1, 1))
        def caller(a):
            stage(a)
            stage(a)
        """,
        )
    )
    resets = [v for _, v in ns["caller"].split_plan.injected if isinstance(v, DFBReset)]
    assert len(resets) == 2 and resets[0] is not resets[1]
    assert all(r is not ns["reset"] and r.participants == ns["reset"].participants for r in resets)


def test_expand_only_callee_with_dfb_parameters(tmp_path):
    ns = load(
        write(
            tmp_path,
            program(
                """
        @ttl.operation()
        def double(src: ttl.DFB, dst: ttl.DFB):
            with src.wait() as s, dst.reserve() as d:
                d.store(s + s)

        @ttl.operation(grid=(1, 1))
        def caller(a, out):
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
            o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
            with a_dfb.reserve() as blk:
                ttl.copy(a[0:1, 0:1], blk).wait()
            double(a_dfb, o_dfb)
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0:1, 0:1]).wait()
        """,
                """
        ah = torch.rand(32, 32).to(torch.bfloat16)
        out = dev(torch.zeros(32, 32))
        caller(dev(ah), out)
        same = torch.equal(ttnn.to_torch(out), (ah.float() * 2).to(torch.bfloat16))
        """,
            ),
        )
    )
    assert ns["same"]
    assert ns["double"].split_plan.expand_only


def test_statements_from_another_file_point_at_the_call(tmp_path, monkeypatch):
    lib = write(
        tmp_path,
        """
        @ttl.operation()
        def broken(x):
            acc_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
            with acc_dfb.reserve() as acc:
                acc.store(acc + acc)
        """,
        name="composelib.py",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("composelib", None)
    path = write(
        tmp_path,
        program(
            """
        from composelib import broken

        @ttl.operation(grid=(1, 1))
        def caller(a):
            broken(a)  # <-
        """,
            """
        caller(dev(torch.zeros(32, 32)))
        """,
        ),
    )
    from tilewright.cli.runner import install_aliases

    install_aliases()
    with pytest.raises(BlockStateError) as info:
        load(path)
    assert info.value.loc.file == str(path)
    assert info.value.loc.line == line_of(path)
    assert lib.exists()
