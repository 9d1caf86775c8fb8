"""Splitting unified bodies: placement, generated kernels, auto-sync, locations (reference B.1-B.5, B.10)."""

import ast
import dataclasses

import pytest

from tests.compiler.helpers import line_of, load, program, write
from tilewright.errors import BlockStateError, DeadlockError
from tilewright.lang.selectors import COMPUTE, DATA_MOVEMENT, PIPE_SOURCE

# The spec's unified add (reference B.10), verbatim apart from the tensor sizes.
UNIFIED_ADD = """
@ttl.operation(grid=(1, 1))
def add(a, b, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    ad = a_dfb.reserve(); ttl.copy(a[0:1, 0:1], ad).wait(); ad.push()
    bd = b_dfb.reserve(); ttl.copy(b[0:1, 0:1], bd).wait(); bd.push()
    ob = o_dfb.reserve(); ab = a_dfb.wait(); bb = b_dfb.wait()
    ob.store(ab + bb); ab.pop(); bb.pop()
    ttl.copy(o_dfb.wait(), out[0:1, 0:1])
    ob.push()
"""


def run_add(tmp_path):
    path = write(
        tmp_path,
        program(
            UNIFIED_ADD,
            """
        ah, bh = torch.rand(32, 32).to(torch.bfloat16), torch.rand(32, 32).to(torch.bfloat16)
        out = dev(torch.zeros(32, 32))
        add(dev(ah), dev(bh), out)
        result = ttnn.to_torch(out)
        expected = (ah.float() + bh.float()).to(torch.bfloat16)
        """,
        ),
    )
    return load(path)


def test_spec_unified_add_runs(tmp_path):
    ns = run_add(tmp_path)
    assert torch_equal(ns["result"], ns["expected"])


def torch_equal(a, b) -> bool:
    import torch

    return torch.equal(a, b)


def test_placement_of_the_unified_add(tmp_path):
    plan = run_add(tmp_path)["add"].split_plan
    assert plan.kernels == (COMPUTE, DATA_MOVEMENT)
    owners = {t.block: t.owner for t in plan.transactions}
    assert owners == {
        "ad": DATA_MOVEMENT,
        "bd": DATA_MOVEMENT,
        "ob": COMPUTE,
        "ab": COMPUTE,
        "bb": COMPUTE,
    }
    assert [s.name for s in plan.setup] == ["a_dfb", "b_dfb", "o_dfb"]
    assert plan.requirements == (("compute", 1), ("data_movement", 1))


def test_auto_sync_inserts_waits_and_releases(tmp_path):
    """A bare copy gets its wait; an inline ``o_dfb.wait()`` gets its pop (reference B.10 note)."""
    plan = run_add(tmp_path)["add"].split_plan
    dm = dict(plan.kernel_sources)["data_movement"]
    assert "ttl.copy((_ttl_acq_0 := o_dfb.wait()), out[0:1, 0:1]).wait()" in dm
    assert "_ttl_acq_0.pop()" in dm
    assert [a.dfb for a in plan.inline_acquisitions] == ["o_dfb"]
    assert plan.inline_acquisitions[0].owner == DATA_MOVEMENT


def test_kernel_bodies_keep_source_order_and_original_lines(tmp_path):
    path = write(tmp_path, UNIFIED_ADD)
    op = load(path)["add"]
    generated = op.body.__code__
    kernels = {c.co_name: c for c in generated.co_consts if hasattr(c, "co_name")}
    assert set(kernels) == {"compute", "data_movement"}
    assert generated.co_filename == str(path)
    compute_lines = {line for _, _, line in kernels["compute"].co_lines() if line}
    assert line_of(path, "ob.store(ab + bb)") in compute_lines
    assert line_of(path, "ttl.copy(o_dfb.wait()") not in compute_lines


def test_plan_is_frozen_and_the_source_tree_untouched(tmp_path):
    path = write(tmp_path, UNIFIED_ADD)
    op = load(path)["add"]
    before = ast.dump(op.source.tree)
    with pytest.raises(dataclasses.FrozenInstanceError):
        op.split_plan.kernels = ()
    assert ast.dump(op.source.tree) == before
    assert all(dataclasses.is_dataclass(s) for s in op.split_plan.statements)


def test_control_flow_is_retained_in_every_kernel_that_needs_it(tmp_path):
    path = write(
        tmp_path,
        """
        @ttl.operation(grid=(2, 1))
        def op(a, out):
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
            o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
            x = ttl.node(dims=1)
            if x == 0:
                scale = 2.0
            else:
                scale = 3.0
            with a_dfb.reserve() as src:
                ttl.copy(a[0:1, x:x + 1], src).wait()
            with a_dfb.wait() as blk, o_dfb.reserve() as dst:
                dst.store(blk * scale)
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0:1, x:x + 1]).wait()
        """,
    )
    op = load(path)["op"]
    sources = dict(op.split_plan.kernel_sources)
    assert "scale = 2.0" in sources["compute"]
    assert "scale" not in sources["data_movement"]  # liveness: no DM statement reads it
    assert "x = ttl.node(dims=1)" in sources["data_movement"]


def test_pipe_callbacks_run_on_the_pipe_source_and_canonical_kernels(tmp_path):
    path = write(
        tmp_path,
        program(
            """
        @ttl.operation(grid=(4, 1))
        def bcast(x, out):
            net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(1, 4), 0))])
            send_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
            recv_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
            out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
            node_x, _ = ttl.node(dims=2)

            def send(pipe):
                with send_dfb.reserve() as s_blk:
                    ttl.copy(x[0:1, 0:1], s_blk).wait()
                    ttl.copy(s_blk, pipe).wait()

            def recv(pipe):
                with recv_dfb.reserve() as r_blk:
                    ttl.copy(pipe, r_blk).wait()

            net.if_src(send)
            net.if_dst(recv)
            if node_x != 0:
                with recv_dfb.wait() as r, out_dfb.reserve() as o:
                    o.store(r * 2.0)
                with out_dfb.wait() as ob:
                    ttl.copy(ob, out[0:1, node_x : node_x + 1]).wait()
        """,
            """
        xh = torch.rand(32, 32).to(torch.bfloat16)
        out = dev(torch.zeros(32, 128))
        bcast(dev(xh), out)
        result = ttnn.to_torch(out)
        expected = (xh.float() * 2).to(torch.bfloat16).repeat(1, 3)
        """,
        ),
    )
    ns = load(path)
    assert torch_equal(ns["result"][:, 32:], ns["expected"])
    op = ns["bcast"]
    assert op.split_plan.kernels == (COMPUTE, DATA_MOVEMENT, PIPE_SOURCE)
    assert op.last_program.kernel_slots == {
        "compute": "trisc",
        "data_movement": "ncrisc",
        "pipe_source": "brisc",
    }
    assert "net.if_src(send)" in dict(op.split_plan.kernel_sources)["pipe_source"]


def test_block_state_error_points_at_the_users_line(tmp_path):
    path = write(
        tmp_path,
        program(
            """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            acc_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
            with acc_dfb.reserve() as acc:
                acc.store(acc + acc)  # <-
        """,
            """
        op(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32)))
        """,
        ),
    )
    with pytest.raises(BlockStateError) as info:
        load(path)
    assert info.value.loc.file == str(path)
    assert info.value.loc.line == line_of(path)


def test_deadlock_report_names_the_generated_kernels_and_user_lines(tmp_path):
    path = write(
        tmp_path,
        program(
            """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
            o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
            with o_dfb.wait() as ob:  # <- dm
                ttl.copy(ob, out[0:1, 0:1]).wait()
            with a_dfb.wait() as ab, o_dfb.reserve() as dst:  # <- compute
                dst.store(ab)
        """,
            """
        op(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32)))
        """,
        ),
    )
    with pytest.raises(DeadlockError) as info:
        load(path)
    text = str(info.value)
    assert f"{path}:{line_of(path, '# <- dm')}" in text and "kernel data_movement" in text
    assert f"{path}:{line_of(path, '# <- compute')}" in text and "kernel compute" in text


def test_setup_declarations_of_every_kind(tmp_path):
    op = load(
        write(
            tmp_path,
            """
        @ttl.operation(grid=(2, 1))
        def op(a, out):
            pipes = [ttl.Pipe(src=(0, 0), dst=(1, 0)) for _ in range(1)]
            net = ttl.PipeNet(pipes)
            flag = ttl.Semaphore()
            root_flag = flag.get_remote((0, 0))
            group = ttl.make_dfb_allocation_group()
            reader = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
            x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), allocation_group=group)
            with x.reserve() as blk:
                ttl.copy(a[0:1, 0:1], blk).wait()
        """,
        )
    )["op"]
    kinds = [(d.name, d.factory, d.kind, d.group) for d in op.split_plan.setup]
    assert kinds == [
        ("pipes", "Pipe", "pipe", None),
        ("net", "PipeNet", "pipe", None),
        ("flag", "Semaphore", "semaphore", None),
        ("root_flag", "get_remote", "semaphore", None),
        ("group", "make_dfb_allocation_group", "group", None),
        ("reader", "Kernel", "kernel", None),
        ("x", "make_dataflow_buffer_like", "dfb", "group"),
    ]
    assert "reader = ttl.Kernel" not in op.split_plan.generated_source  # evaluated at decoration


def test_semaphores_run_on_data_movement(tmp_path):
    ns = load(
        write(
            tmp_path,
            program(
                """
        @ttl.operation(grid=(2, 1))
        def op(a, out):
            flag = ttl.Semaphore()
            root_flag = flag.get_remote((0, 0))
            x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
            n = ttl.node(dims=1)
            compute = 3  # a user name equal to a kernel's name
            if n == 1:
                root_flag.inc(1)
            else:
                flag.wait_ge(1)
            with x.reserve() as b:
                ttl.copy(a[0:1, n : n + 1], b).wait()
            with x.wait() as b:
                ttl.copy(b, out[0:1, n : n + 1]).wait()
        """,
                """
        ah = torch.rand(32, 64).to(torch.bfloat16)
        out = dev(torch.zeros(32, 64))
        op(dev(ah), out)
        same = torch.equal(ttnn.to_torch(out), ah)
        """,
            ),
        )
    )
    assert ns["same"]
    assert ns["op"].split_plan.kernels == (DATA_MOVEMENT,)


def test_kernel_function_names_never_shadow_user_names(tmp_path):
    ns = load(
        write(
            tmp_path,
            program(
                """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            compute = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
            o = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
            with compute.reserve() as b:
                ttl.copy(a[0:1, 0:1], b).wait()
            with compute.wait() as b, o.reserve() as ob:
                ob.store(b + b)
            with o.wait() as b:
                ttl.copy(b, out[0:1, 0:1]).wait()
        """,
                """
        ah = torch.rand(32, 32).to(torch.bfloat16)
        out = dev(torch.zeros(32, 32))
        op(dev(ah), out)
        same = torch.equal(ttnn.to_torch(out), (ah.float() * 2).to(torch.bfloat16))
        """,
            ),
        )
    )
    assert ns["same"]
    assert "def __ttl_compute():" in ns["op"].split_plan.generated_source
    assert ns["op"].last_program.kernel_slots == {"compute": "trisc", "data_movement": "ncrisc"}
