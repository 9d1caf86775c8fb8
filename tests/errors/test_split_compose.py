"""Diagnostics of composition and expand-only operations (reference B.8)."""

from tests.compiler.helpers import expect_error, program
from tilewright.errors import InterfaceError, SplitError

STAGE = """
@ttl.operation()
def stage(x, y):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    with x_dfb.reserve() as blk:
        ttl.copy(x[0:1, 0:1], blk).wait()
    with x_dfb.wait() as blk:
        ttl.copy(blk, y[0:1, 0:1]).wait()

"""


def compose(body: str) -> str:
    return STAGE + body


def test_call_used_as_a_value(tmp_path):
    expect_error(
        tmp_path,
        compose("""
@ttl.operation(grid=(1, 1))
def caller(a, b):
    result = stage(a, b)  # <-
"""),
        SplitError,
        "@ttl.operation: composed call to 'stage' in 'caller' must be a standalone statement",
    )


def test_qualified_reference(tmp_path):
    expect_error(
        tmp_path,
        compose("""
class ops:
    pass
ops.stage = stage

@ttl.operation(grid=(1, 1))
def caller(a, b):
    ops.stage(a, b)  # <-
"""),
        SplitError,
        "@ttl.operation: compose 'ops.stage' through a captured name instead of a qualified reference",
    )


def test_multi_kernel_callee(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation(grid=(1, 1))
        def explicit(x, y):
            @ttl.compute()
            def k():
                pass

        @ttl.operation(grid=(1, 1))
        def caller(a, b):
            explicit(a, b)  # <-
        """,
        SplitError,
        "@ttl.operation: cannot compose multi-kernel operation 'explicit' into 'caller'",
    )


def test_self_composition(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation(grid=(1, 1))
        def caller(a, b):
            caller(a, b)  # <-
        """,
        SplitError,
        "@ttl.operation 'caller' cannot compose itself",
    )


def test_star_unpacking(tmp_path):
    expect_error(
        tmp_path,
        compose("""
@ttl.operation(grid=(1, 1))
def caller(a, b):
    stage(*[a, b])  # <-
"""),
        SplitError,
        "@ttl.operation: composing 'stage' into 'caller' does not support *-unpacking",
    )


def test_double_star_unpacking(tmp_path):
    expect_error(
        tmp_path,
        compose("""
@ttl.operation(grid=(1, 1))
def caller(a, b):
    stage(**{"x": a, "y": b})  # <-
"""),
        SplitError,
        "@ttl.operation: composing 'stage' into 'caller' does not support **-unpacking",
    )


def test_too_many_positional_arguments(tmp_path):
    expect_error(
        tmp_path,
        compose("""
@ttl.operation(grid=(1, 1))
def caller(a, b, c):
    stage(a, b, c)  # <-
"""),
        SplitError,
        "@ttl.operation: composing 'stage' into 'caller' received too many positional arguments",
    )


def test_unknown_keyword(tmp_path):
    expect_error(
        tmp_path,
        compose("""
@ttl.operation(grid=(1, 1))
def caller(a, b):
    stage(a, b, z=a)  # <-
"""),
        SplitError,
        "@ttl.operation: composing 'stage' into 'caller' received unknown arguments ['z']",
    )


def test_argument_passed_twice(tmp_path):
    expect_error(
        tmp_path,
        compose("""
@ttl.operation(grid=(1, 1))
def caller(a, b):
    stage(a, b, x=a)  # <-
"""),
        SplitError,
        "@ttl.operation: argument 'x' was passed twice",
    )


def test_missing_argument(tmp_path):
    expect_error(
        tmp_path,
        compose("""
@ttl.operation(grid=(1, 1))
def caller(a, b):
    stage(a)  # <-
"""),
        SplitError,
        "@ttl.operation: missing argument 'y' while composing 'stage' into 'caller'",
    )


def test_argument_that_is_not_a_name(tmp_path):
    expect_error(
        tmp_path,
        compose("""
@ttl.operation(grid=(1, 1))
def caller(a, b):
    stage(ttl.exp(a), b)  # <-
"""),
        SplitError,
        "@ttl.operation: argument 'x' while composing 'stage' into 'caller' must be a tensor or resource name",
    )


def test_callee_assigning_to_a_parameter(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation()
        def rebinding(x, y):
            x = y
            x_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
            with x_dfb.reserve() as blk:
                ttl.copy(y[0:1, 0:1], blk).wait()

        @ttl.operation(grid=(1, 1))
        def caller(a, b):
            rebinding(a, b)  # <-
        """,
        SplitError,
        "@ttl.operation: composing 'rebinding' into 'caller' cannot assign to parameter 'x'",
    )


def test_nested_binding_capturing_an_argument(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation()
        def stage(block):
            def callback(pipe):
                pass

        @ttl.operation(grid=(1, 1))
        def caller(pipe):
            stage(pipe)  # <-
        """,
        SplitError,
        "@ttl.operation: composing 'stage' into 'caller' would capture or rebind ['pipe']; rename the nested binding",
    )


def test_hoisted_declaration_depending_on_a_local(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation()
        def scaled(x: ttl.DFB, y):
            tmp = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
            with x.wait() as blk, tmp.reserve() as dst:
                dst.store(blk)

        @ttl.operation(grid=(1, 1))
        def caller(a, b):
            src = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
            for i in range(2):
                local = b
                scaled(src, local)  # <-
        """,
        SplitError,
        "@ttl.operation 'caller': composed resource declaration cannot be hoisted because it depends on "
        "operation-local values ['local']",
    )


def test_direct_call_of_an_operation_with_a_dfb_parameter(tmp_path):
    expect_error(
        tmp_path,
        program(
            """
        @ttl.operation(grid=(1, 1))
        def invalid(buf: ttl.DFB):
            with buf.wait() as blk:
                ttl.copy(blk, blk).wait()
        """,
            """
        invalid(dev(torch.zeros(32, 32)))  # <-
        """,
        ),
        InterfaceError,
        "@ttl.operation 'invalid' is expand-only because it has DFB or PipeNet parameter(s): 'buf'; it cannot be "
        "called directly",
    )


def test_direct_call_of_an_operation_without_grid(tmp_path):
    expect_error(
        tmp_path,
        program(
            STAGE,
            """
        stage(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32)))  # <-
        """,
        ),
        InterfaceError,
        "@ttl.operation 'stage' has no grid and is expand-only; it cannot be called directly",
    )
