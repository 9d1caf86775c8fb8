"""Diagnostics of DFB resets and reconfiguration boundaries (reference A.8, G.2)."""

from tests.compiler.helpers import expect_error
from tilewright.errors import InterfaceError, SplitError

PARTICIPANTS = "(ttl.KernelKind.COMPUTE, ttl.KernelKind.DATA_MOVEMENT, ttl.PIPE_SOURCE_KERNEL)"


def test_participants_must_be_a_nonempty_tuple(tmp_path):
    expect_error(
        tmp_path,
        """
        r = ttl.DFBReset(participants=[])  # <-
        """,
        InterfaceError,
        "DFBReset participants must be a nonempty tuple",
    )


def test_participants_must_be_kernels(tmp_path):
    expect_error(
        tmp_path,
        """
        r = ttl.DFBReset(participants=(ttl.KernelKind.COMPUTE, 3))  # <-
        """,
        InterfaceError,
        "DFBReset participants must contain only KernelKind or Kernel values, got int",
    )


def test_participants_must_be_distinct(tmp_path):
    expect_error(
        tmp_path,
        """
        r = ttl.DFBReset(participants=(ttl.KernelKind.COMPUTE, ttl.KernelKind.COMPUTE))  # <-
        """,
        InterfaceError,
        "DFBReset participants must be distinct",
    )


def test_participants_one_compute_two_data_movement(tmp_path):
    expect_error(
        tmp_path,
        """
        r = ttl.DFBReconfiguration(participants=(ttl.KernelKind.COMPUTE, ttl.KernelKind.DATA_MOVEMENT))  # <-
        """,
        InterfaceError,
        "DFBReconfiguration participants must contain one compute kernel and two data movement kernels",
    )


def test_discard_flag_must_be_a_bool(tmp_path):
    expect_error(
        tmp_path,
        f"""
        b = ttl.DFBReconfiguration(participants={PARTICIPANTS}, discard_dfb_state=1)  # <-
        """,
        InterfaceError,
        "DFBReconfiguration discard_dfb_state must be a bool, got int",
    )


def test_allocation_group_argument_type(tmp_path):
    from tests.compiler.helpers import program

    expect_error(
        tmp_path,
        program(
            """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), allocation_group=7)  # <-
            with x.reserve() as blk:
                ttl.copy(a[0:1, 0:1], blk).wait()
        """,
            """
        op(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32)))
        """,
        ),
        InterfaceError,
        "ttl.make_dataflow_buffer_like(allocation_group=...): expected a ttl.DFBAllocationGroup "
        "(ttl.make_dfb_allocation_group()), got int",
    )


FACTORY = f"""
def make():
    reset = ttl.DFBReset(participants={PARTICIPANTS})
    boundary = ttl.DFBReconfiguration(participants={PARTICIPANTS})

    @ttl.operation(grid=(1, 1))
    def op(a, out):
        x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        with x.reserve() as blk:
            ttl.copy(a[0:1, 0:1], blk).wait()
{{body}}
    return op

make()
"""


def factory(body: str) -> str:
    import textwrap

    return FACTORY.replace("{body}", textwrap.indent(textwrap.dedent(body).strip("\n"), "        "))


def test_reset_needs_the_declaration_first(tmp_path):
    expect_error(
        tmp_path,
        factory("""
        ttl.reset_dfbs(dfbs=[x])  # <-
        """),
        SplitError,
        "ttl.reset_dfbs(...) takes a ttl.DFBReset / ttl.DFBReconfiguration created by an enclosing",
    )


def test_reset_with_a_boundary_declaration(tmp_path):
    expect_error(
        tmp_path,
        factory("""
        ttl.reset_dfbs(boundary, dfbs=[x])  # <-
        """),
        SplitError,
        "ttl.reset_dfbs(...) takes a ttl.DFBReset, got DFBReconfiguration",
    )


def test_reset_dfbs_list_must_be_nonempty(tmp_path):
    expect_error(
        tmp_path,
        factory("""
        ttl.reset_dfbs(reset, dfbs=[])  # <-
        """),
        SplitError,
        "ttl.reset_dfbs(reset, dfbs=[...]): dfbs must be a nonempty list of distinct DFBs of the operation",
    )


def test_reset_dfbs_list_must_be_distinct(tmp_path):
    expect_error(
        tmp_path,
        factory("""
        ttl.reset_dfbs(reset, dfbs=[x, x])  # <-
        """),
        SplitError,
        "dfbs must be a nonempty list of distinct DFBs of the operation",
    )


def test_reset_all_takes_no_keywords(tmp_path):
    expect_error(
        tmp_path,
        factory("""
        ttl.reset_all_dfbs(reset, dfbs=[x])  # <-
        """),
        SplitError,
        "ttl.reset_all_dfbs(...) got unexpected keyword argument(s): dfbs",
    )


def test_reconfigure_takes_one_argument(tmp_path):
    expect_error(
        tmp_path,
        factory("""
        ttl.reconfigure_dfbs(boundary, boundary)  # <-
        """),
        SplitError,
        "ttl.reconfigure_dfbs(...) takes exactly one positional argument, the declaration",
    )


def test_reset_under_a_condition(tmp_path):
    expect_error(
        tmp_path,
        factory("""
        if ttl.node(dims=1) == 0:
            ttl.reset_all_dfbs(reset)  # <-
        """),
        SplitError,
        "ttl.reset_all_dfbs(...) may execute at most once per node, or once per iteration of one loop with a "
        "compile-time trip count; it cannot be under a condition, in a callback or in nested loops",
    )


def test_reset_in_nested_loops(tmp_path):
    expect_error(
        tmp_path,
        factory("""
        for i in range(2):
            for j in range(2):
                ttl.reset_all_dfbs(reset)  # <-
        """),
        SplitError,
        "ttl.reset_all_dfbs(...) may execute at most once per node",
    )


def test_reset_in_a_loop_without_static_trip_count(tmp_path):
    expect_error(
        tmp_path,
        factory("""
        for i in range(ttl.node(dims=1)):
            ttl.reset_all_dfbs(reset)  # <-
        """),
        SplitError,
        "ttl.reset_all_dfbs(...) may execute at most once per node",
    )


def test_declaration_executed_by_two_calls(tmp_path):
    expect_error(
        tmp_path,
        factory("""
        ttl.reset_all_dfbs(reset)
        ttl.reset_dfbs(reset, dfbs=[x])  # <-
        """),
        SplitError,
        "ttl.DFBReset 'reset' is executed by more than one call",
    )
