"""Rejected TT-Lang programs: interface, grid, capacity, DFB, copy and block rules (one test each).

Each test asserts the error type, the message and the reported line of the user's file.
"""

import re

import pytest
import torch

from tests.ttl.conftest import bf16, line_of
from tilewright import ttnn
from tilewright.errors import (
    BlockStateError,
    CapacityError,
    DeadlockError,
    DFBContractError,
    InterfaceError,
    KernelError,
)

HEADER = "from tilewright import ttl, ttnn\n"


def expect(err_type, fn, match, ns=None, marker=None):
    with pytest.raises(err_type) as info:
        fn()
    # Match the message only: str() also holds the caret excerpt of the user's line, which
    # may be the test's own line and would make the check vacuous.
    assert re.search(match, info.value.message), info.value.message
    if marker is not None:
        assert info.value.loc is not None, str(info.value)
        assert info.value.loc.line == line_of(ns, marker), str(info.value)
        assert info.value.loc.file == ns["__file__"]
    return info.value


# -- the operation interface (reference A.2) ----------------------------------------------


@pytest.mark.parametrize(
    "signature, marker, match",
    [
        ("def op(a, b=None):", "b=None", "parameter 'b' has a default value"),
        ("def op(a, *rest):", "*rest", r"takes \*rest"),
        ("def op(a, **kw):", "**kw", r"\*\*kwargs is not allowed"),
        ("def op(a, *, b):", "*, b", "keyword-only"),
    ],
)
def test_parameter_rules(program, signature, marker, match):
    src = (
        HEADER
        + "def make():\n    @ttl.operation(grid=(1, 1))\n    "
        + signature
        + "\n        pass\n    return op\n"
    )
    ns = program(src)
    expect(InterfaceError, ns["make"], match, ns, marker)


def test_operation_body_must_not_return(program):
    ns = program(
        HEADER
        + """
def make():
    @ttl.operation(grid=(1, 1))
    def op(a):
        return a  # RETURN
    return op
"""
    )
    expect(InterfaceError, ns["make"], "must not return", ns, "# RETURN")


def test_kernel_functions_take_no_arguments(program):
    ns = program(
        HEADER
        + """
def make():
    @ttl.operation(grid=(1, 1))
    def op(a):
        @ttl.datamovement()
        def reader(x):  # KARGS
            pass
    return op
"""
    )
    expect(
        InterfaceError, ns["make"], "kernel function 'reader' must take no arguments", ns, "# KARGS"
    )


@pytest.fixture
def simple(program):
    return program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def op(a, b):
    @ttl.datamovement()
    def dm():
        pass
"""
    )


def test_runtime_arguments_must_be_device_tensors(simple, to_dev):
    t = to_dev(bf16(32, 32))
    expect(
        InterfaceError, lambda: simple["op"](t, 3), "runtime argument 'b' must be a TT-NN tensor"
    )
    expect(InterfaceError, lambda: simple["op"](t), r"takes 2 tensor\(s\) \(a, b\), got 1")
    expect(InterfaceError, lambda: simple["op"](t, t, extra=1), "unexpected keyword")


def test_async_operation_is_rejected(program):
    # An async body used to be accepted: each call made a coroutine and ran nothing.
    src = (
        HEADER
        + "def make():\n    @ttl.operation(grid=(1, 1))\n    async def op(a):  # ASYNC\n"
        + "        pass\n    return op\n"
    )
    ns = program(src)
    expect(InterfaceError, ns["make"], r"'op' is an async function", ns, "# ASYNC")


@pytest.mark.parametrize(
    "grid, match", [((9, 1), r"does not fit the device's 8x8"), ((1, 1, 2), "2-D grids")]
)
def test_grid_must_fit_the_device(program, to_dev, grid, match):
    ns = program(
        HEADER
        + f"""
@ttl.operation(grid={grid!r})
def op(a):
    @ttl.datamovement()
    def dm():
        pass
"""
    )
    expect(CapacityError, lambda: ns["op"](to_dev(bf16(32, 32))), match)


@pytest.mark.parametrize("grid", ["(0, 1)", "'huge'", "(1.5, 2)"])
def test_grid_spec_is_validated(program, grid):
    src = (
        HEADER
        + f"def make():\n    @ttl.operation(grid={grid})\n    def op(a):\n        pass\n    return op\n"
    )
    ns = program(src)
    expect(InterfaceError, ns["make"], "expected a tuple of positive ints|expected a tuple, 'auto'")


@pytest.mark.parametrize("result", ["None", "lambda: (1, 1)", "(0, 1)"])
def test_grid_callable_result_is_validated(program, to_dev, result):
    # A callable returning None or another callable used to fail with a bare TypeError.
    ns = program(
        HEADER
        + f"""
@ttl.operation(grid=lambda a: {result})
def op(a):
    @ttl.datamovement()
    def dm():
        pass
"""
    )
    expect(
        InterfaceError,
        lambda: ns["op"](to_dev(bf16(32, 32))),
        r"grid callable result .*: expected a tuple of positive ints \(columns, rows\), 'auto' or 'full'$",
    )


def test_grid_forms_auto_full_callable_and_node_dims(program, to_dev):
    ns = program(
        HEADER
        + """
seen = []

def make(grid):
    @ttl.operation(grid=grid)
    def op(a):
        setup_node = ttl.node(dims=2)

        @ttl.datamovement()
        def dm():
            seen.append((ttl.grid_size(dims=2), ttl.grid_size(dims=1), ttl.grid_size(dims=3),
                         ttl.node(dims=2), ttl.node(dims=1), ttl.node(dims=3), setup_node))
    return op
"""
    )
    t = to_dev(bf16(32, 32))
    ns["make"]("auto")(t)
    assert len(ns["seen"]) == 64 and ns["seen"][0][0] == (8, 8)
    ns["seen"].clear()
    ns["make"](lambda a: (3, 2))(t)
    assert len(ns["seen"]) == 6
    for gs2, gs1, gs3, n2, n1, n3, setup_node in ns["seen"]:
        assert (gs2, gs1, gs3) == ((3, 2), 6, (3, 2, 1))
        x, y = n2
        assert n1 == x * 2 + y and n3 == (x, y, 0) and setup_node == n2
    ns["seen"].clear()
    ns["make"]("full")(t)
    assert len(ns["seen"]) == 64


# -- kernel capacity (reference B.7) ------------------------------------------------------


def test_three_data_movement_kernels_exceed_capacity(program, to_dev):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def op(a):
    @ttl.datamovement()
    def r():
        pass

    @ttl.datamovement()
    def w():
        pass

    @ttl.datamovement()  # THIRD
    def extra():
        pass
"""
    )
    expect(
        CapacityError,
        lambda: ns["op"](to_dev(bf16(32, 32))),
        "operation requires 3 data_movement kernels, but the target supports 2; selected kernels: "
        "data_movement kernel 'r', data_movement kernel 'w', data_movement kernel 'extra'",
        ns,
        "# THIRD",
    )


def test_two_compute_kernels_exceed_capacity(program, to_dev):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def op(a):
    @ttl.compute()
    def c1():
        pass

    @ttl.compute()  # SECOND
    def c2():
        pass
"""
    )
    expect(
        CapacityError,
        lambda: ns["op"](to_dev(bf16(32, 32))),
        "requires 2 compute kernels, but the target supports 1",
        ns,
        "# SECOND",
    )


# -- DFB declarations and capacity -----------------------------------------------------------


@pytest.mark.parametrize(
    "call, match",
    [
        (
            "ttl.make_dataflow_buffer_like(a, shape=(1,), block_count=2)",
            "needs at least 2 dimensions",
        ),
        ("ttl.make_dataflow_buffer_like(a, shape=(1, 0), block_count=2)", "positive ints"),
        (
            "ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=0)",
            r"block_count must be an int in 1\.\.32",
        ),
        ("ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=33)", r"1\.\.32"),
        ("ttl.make_dataflow_buffer_like(3, shape=(1, 1))", "first argument must be a TT-NN tensor"),
        ("ttl.make_dfb('f16x', shape=(1, 1))", "is not a TT-Lang data type"),
        ("ttl.make_dfb('bf16', shape=(1, 1), tile=(3, 32))", r"tile \(3, 32\) is not supported"),
    ],
)
def test_dfb_declaration_rules(program, to_dev, call, match):
    ns = program(
        HEADER
        + f"""
@ttl.operation(grid=(1, 1))
def op(a):
    d = {call}  # DECL

    @ttl.datamovement()
    def dm():
        pass
"""
    )
    expect(InterfaceError, lambda: ns["op"](to_dev(bf16(32, 32))), match, ns, "# DECL")


def test_too_many_dfbs_for_the_target(program, to_dev):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def op(a):
    dfbs = [ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1) for _ in range(65)]

    @ttl.datamovement()
    def dm():
        pass
"""
    )
    expect(
        CapacityError,
        lambda: ns["op"](to_dev(bf16(32, 32))),
        "needs 65 DFB indices but the target has 64 \\(num_cbs\\); exact search proved that at "
        "least 65 indices are needed",
    )


def test_dfbs_beyond_l1_name_the_dfbs_and_bytes(program, to_dev):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def op(a):
    big = ttl.make_dataflow_buffer_like(a, shape=(16, 16), block_count=2)
    huge = ttl.make_dataflow_buffer_like(a, shape=(16, 16), block_count=2)

    @ttl.datamovement()
    def dm():
        pass
"""
    )
    err = expect(
        CapacityError, lambda: ns["op"](to_dev(bf16(32, 32))), "need 2097152 B of L1 per node"
    )
    assert "big 1048576 B" in str(err) and "huge 1048576 B" in str(err)


def test_dfb_resources_outside_an_operation(program):
    program(HEADER + "import torch\n")
    from tilewright import ttl

    expect(
        InterfaceError,
        lambda: ttl.make_dfb("bf16", shape=(1, 1)),
        "in the body of an @ttl.operation",
    )


# -- copies ------------------------------------------------------------------------------------


@pytest.fixture
def copy_prog(program):
    def make(kernel_body, kind="datamovement", shape="(2, 2)"):
        body = "\n".join("        " + line for line in kernel_body.strip().splitlines())
        return program(
            HEADER
            + f"""
@ttl.operation(grid=(1, 1))
def op(a):
    d = ttl.make_dataflow_buffer_like(a, shape={shape}, block_count=2)

    @ttl.{kind}()
    def k():
{body}
"""
        )

    return make


def test_copy_slice_must_match_the_block(copy_prog, to_dev):
    ns = copy_prog("""
with d.reserve() as blk:
    ttl.copy(a[0:1, 0:1], blk).wait()  # COPY
""")
    expect(
        KernelError,
        lambda: ns["op"](to_dev(bf16(64, 64))),
        r"Tensor shape \(32, 32\) does not match Block shape \(2, 2\) \(tile counts: 1 vs 4\)",
        ns,
        "# COPY",
    )


def test_copy_into_a_waited_block_is_rejected(copy_prog, program, to_dev):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def op(a):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def producer():
        with d.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()

    @ttl.datamovement()
    def consumer():
        with d.wait() as blk:
            ttl.copy(a[0, 0], blk).wait()  # INTO-WAITED
"""
    )
    expect(
        KernelError,
        lambda: ns["op"](to_dev(bf16(32, 32))),
        "must come from reserve",
        ns,
        "# INTO-WAITED",
    )


def test_copy_on_a_compute_kernel_is_rejected(copy_prog, to_dev):
    ns = copy_prog(
        """
with d.reserve() as blk:
    ttl.copy(a[0:2, 0:2], blk)  # CK-COPY
""",
        kind="compute",
    )
    expect(
        KernelError,
        lambda: ns["op"](to_dev(bf16(64, 64))),
        "ttl.copy runs on data-movement kernels",
        ns,
        "# CK-COPY",
    )


def test_store_on_a_data_movement_kernel_is_rejected(copy_prog, to_dev):
    ns = copy_prog("""
with d.reserve() as blk:
    blk.store(ttl.block.fill(1.0, shape=(2, 2)))  # DM-STORE
""")
    expect(
        KernelError,
        lambda: ns["op"](to_dev(bf16(64, 64))),
        "runs on compute kernels",
        ns,
        "# DM-STORE",
    )


def test_copy_needs_exactly_one_block(copy_prog, to_dev):
    ns = copy_prog("""
ttl.copy(a[0:2, 0:2], a[0:2, 0:2])  # NO-BLOCK
""")
    expect(
        KernelError,
        lambda: ns["op"](to_dev(bf16(64, 64))),
        "exactly one side must be a block",
        ns,
        "# NO-BLOCK",
    )


def test_copy_lock_writing_a_block_while_a_read_is_in_flight(copy_prog, to_dev):
    ns = copy_prog("""
with d.reserve() as blk:
    ttl.copy(a[0:2, 0:2], blk).wait()
    ttl.copy(blk, a[0:2, 0:2])
    ttl.copy(a[0:2, 0:2], blk)  # LOCK
""")
    expect(BlockStateError, lambda: ns["op"](to_dev(bf16(64, 64))), "copy lock error", ns, "# LOCK")


def test_transfer_handle_is_single_use(copy_prog, to_dev):
    ns = copy_prog("""
with d.reserve() as blk:
    xf = ttl.copy(a[0:2, 0:2], blk)
    xf.wait()
    xf.wait()  # TWICE
""")
    expect(DFBContractError, lambda: ns["op"](to_dev(bf16(64, 64))), "single-use", ns, "# TWICE")


def test_unwaited_copy_completes_at_push(program, to_dev):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def op(a, out):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        with d.reserve() as blk:
            ttl.copy(a[0, 0], blk)  # never waited: completed when the block is pushed

    @ttl.datamovement()
    def writer():
        with d.wait() as blk:
            ttl.copy(blk, out[0, 0])
"""
    )
    x = bf16(32, 32)
    out = to_dev(torch.zeros(32, 32))
    ns["op"](to_dev(x), out)
    assert torch.equal(ttnn.to_torch(out), x)


# -- DFB protocol -----------------------------------------------------------------------------


def test_two_producers_break_the_spsc_rule(program, to_dev):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def op(a):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=4)

    @ttl.datamovement()
    def one():
        with d.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()

    @ttl.datamovement()
    def two():
        with d.reserve() as blk:  # SECOND-PRODUCER
            ttl.copy(a[0, 0], blk).wait()
"""
    )
    expect(
        DFBContractError,
        lambda: ns["op"](to_dev(bf16(32, 32))),
        "DFB 'd' has two producers on node \\(0, 0\\): kernels 'one' and 'two'",
        ns,
        "# SECOND-PRODUCER",
    )


def test_data_movement_kernel_holds_one_block_per_dfb(copy_prog, to_dev):
    ns = copy_prog("""
x = d.reserve()
y = d.reserve()  # SECOND-HOLD
""")
    expect(
        DFBContractError,
        lambda: ns["op"](to_dev(bf16(64, 64))),
        "push each block before the next acquisition",
        ns,
        "# SECOND-HOLD",
    )


def test_blocks_release_in_acquisition_order(program, to_dev):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def op(a):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    e = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.compute()
    def c():
        x = d.reserve()
        y = d.reserve()
        y.store(ttl.block.fill(1.0, shape=(1, 1)))
        y.push()  # OUT-OF-ORDER
"""
    )
    expect(
        DFBContractError,
        lambda: ns["op"](to_dev(bf16(32, 32))),
        "in the order they were acquired",
        ns,
        "# OUT-OF-ORDER",
    )


def test_reserve_takes_no_kernel_keyword(copy_prog, to_dev):
    from tilewright import ttl

    ns = copy_prog("""
blk = d.reserve(kernel=ttl.KernelKind.DATA_MOVEMENT)  # KW
""")
    expect(
        DFBContractError,
        lambda: ns["op"](to_dev(bf16(64, 64))),
        "kernel= is not supported on DFB reserve",
        ns,
        "# KW",
    )
    _ = ttl


def test_store_shape_must_match(copy_prog, to_dev):
    ns = copy_prog(
        """
with d.reserve() as blk:
    blk.store(ttl.block.fill(1.0, shape=(1, 2)))  # SHAPE
""",
        kind="compute",
    )
    expect(
        BlockStateError,
        lambda: ns["op"](to_dev(bf16(64, 64))),
        r"store: expression of shape \(1, 2\) does not match .* of shape \(2, 2\)",
        ns,
        "# SHAPE",
    )


def test_elementwise_operands_must_have_equal_shapes(program, to_dev):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def op(a):
    d = ttl.make_dataflow_buffer_like(a, shape=(2, 2), block_count=2)

    @ttl.compute()
    def c():
        with d.reserve() as blk:
            blk.store(ttl.block.fill(1.0, shape=(2, 2)) + ttl.block.fill(1.0, shape=(2, 1)))  # MISMATCH
"""
    )
    expect(
        KernelError, lambda: ns["op"](to_dev(bf16(64, 64))), r"\(2, 2\).*\(2, 1\)", ns, "# MISMATCH"
    )


def test_forgotten_release_deadlocks_the_consumer_with_dfb_state(program, to_dev):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def op(a):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)

    @ttl.datamovement()
    def reader():
        for i in range(2):
            with d.reserve() as blk:  # SECOND-RESERVE
                ttl.copy(a[0, 0], blk).wait()

    @ttl.compute()
    def c():
        with d.wait() as blk:  # WAIT
            pass
"""
    )
    with pytest.raises((DeadlockError, BlockStateError)) as info:
        ns["op"](to_dev(bf16(32, 32)))
    # The compute kernel may not pop a block it never read (MR): the block-state rule fires first.
    assert "next allowed: reading the block" in str(info.value) or "deadlock" in str(info.value)


def test_unsupported_names_raise_errors_that_name_them():
    from tilewright import ttl
    from tilewright.lang.unsupported import UNSUPPORTED

    for name in UNSUPPORTED:
        with pytest.raises(InterfaceError, match=f"ttl.{name}: "):
            getattr(ttl, name)()


def test_deadlock_report_lists_held_blocks_with_their_states(program, to_dev):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def op(a):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    e = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)

    @ttl.datamovement()
    def reader():
        with d.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()

    @ttl.compute()
    def c():
        with d.wait() as x:
            x2 = x + x
            with e.wait() as never:  # nobody produces e
                pass
"""
    )
    with pytest.raises(DeadlockError) as info:
        ns["op"](to_dev(bf16(32, 32)))
    msg = str(info.value)
    assert "e.wait(): e holds 0 filled blocks" in msg
    assert "holds block 'x' (waited from DFB 'd') in state RW" in msg
