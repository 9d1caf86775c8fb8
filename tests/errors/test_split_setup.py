"""Diagnostics of setup lifting and decoration checks (reference B.1, B.2, B.11, G.9).

Each test writes a small program to a file and asserts the error's type, its message
and the reported line (the line marked ``# <-``).
"""

from tests.compiler.helpers import expect_error
from tilewright.errors import InterfaceError, SplitError


def test_declaration_reading_a_local_value(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            n = 2
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(n, 1), block_count=2)  # <-
            with a_dfb.reserve() as blk:
                ttl.copy(a[0:2, 0:1], blk).wait()
        """,
        SplitError,
        "@ttl.operation 'op': resource declarations cannot depend on operation-local values ['n']",
    )


def test_declaration_under_control_flow(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            if True:
                scratch = ttl.make_dfb("bf16", shape=(1, 1), block_count=2)  # <-
        """,
        SplitError,
        "@ttl.operation 'op': resource declaration 'make_dfb' must be a simple top-level assignment in the "
        "operation body; declarations inside control flow, callbacks, or nested scopes are not supported",
    )


def test_declaration_in_a_callback(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation(grid=(2, 1))
        def op(a, out):
            net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
            def send(pipe):
                d = ttl.make_dataflow_buffer_like(a, shape=(1, 1))  # <-
            net.if_src(send)
        """,
        SplitError,
        "resource declaration 'make_dataflow_buffer_like' must be a simple top-level assignment",
    )


def test_declaration_with_several_targets(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            x = y = ttl.make_dataflow_buffer_like(a, shape=(1, 1))  # <-
        """,
        SplitError,
        "resource declaration 'make_dataflow_buffer_like' must be a simple top-level assignment",
    )


def test_semaphore_declaration_nested_in_an_expression(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            sems = [ttl.Semaphore()]  # <-
        """,
        SplitError,
        "resource declaration 'Semaphore' must be a simple top-level assignment",
    )


def test_kernel_declaration_needs_a_static_kind(tmp_path):
    expect_error(
        tmp_path,
        """
        KIND = "data_movement"

        @ttl.operation(grid=(1, 1))
        def op(a, out):
            reader = ttl.Kernel(KIND)  # <-
        """,
        SplitError,
        "ttl.Kernel(kind) declared in an operation body needs a static KernelKind member",
    )


def test_reset_declaration_constructed_in_the_body(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            r = ttl.DFBReset(participants=(ttl.KernelKind.COMPUTE,))  # <-
        """,
        SplitError,
        "ttl.DFBReset must be created by an enclosing factory and captured by the operation",
    )


def test_captured_dfb_is_rejected(tmp_path):
    expect_error(
        tmp_path,
        """
        def make(dfb):
            @ttl.operation(grid=(1, 1))
            def op(a, out):
                with dfb.wait() as blk:  # <-
                    pass
            return op

        from tilewright.lang.dfb import DataflowBuffer
        external_dfb = DataflowBuffer.__new__(DataflowBuffer)
        make(external_dfb)
        """,
        InterfaceError,
        "@ttl.operation 'op': external DFB 'dfb' is not supported; declare it as a top-level operation "
        "resource or pass it to an expand-only composed operation",
    )


def test_module_global_reset_declaration_is_rejected(tmp_path):
    expect_error(
        tmp_path,
        """
        RESET = ttl.DFBReset(participants=(ttl.KernelKind.COMPUTE, ttl.KernelKind.DATA_MOVEMENT,
                                           ttl.PIPE_SOURCE_KERNEL))

        @ttl.operation(grid=(1, 1))
        def op(a, out):
            ttl.reset_all_dfbs(RESET)  # <-
        """,
        InterfaceError,
        "ttl.DFBReset 'RESET' is a module global; it must be created by an enclosing factory",
    )


def test_module_global_allocation_group_is_rejected(tmp_path):
    expect_error(
        tmp_path,
        """
        GROUP = ttl.make_dfb_allocation_group()

        @ttl.operation(grid=(1, 1))
        def op(a, out):
            x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), allocation_group=GROUP)  # <-
        """,
        InterfaceError,
        "ttl.DFBAllocationGroup 'GROUP' is a module global",
    )


def test_decorator_below_operation(tmp_path):
    expect_error(
        tmp_path,
        """
        import functools

        def traced(fn):
            @functools.wraps(fn)
            def wrapper(*args):
                return fn(*args)
            return wrapper

        @ttl.operation(grid=(1, 1))
        @traced  # <-
        def op(a, out):
            with ttl.signpost("x"):
                pass
        """,
        SplitError,
        "decorator '@traced' is placed below @ttl.operation",
    )


def test_aliased_module_receiver(tmp_path):
    expect_error(
        tmp_path,
        """
        T = ttl

        @ttl.operation(grid=(1, 1))
        def op(a, out):
            d = ttl.make_dataflow_buffer_like(a, shape=(1, 1))
            with d.reserve() as blk:
                T.copy(a[0:1, 0:1], blk).wait()  # <-
        """,
        SplitError,
        "aliased TT-Lang receiver 'T': the splitter places calls written `ttl.<name>(...)`",
    )


def test_alias_assigned_in_the_body(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            T = ttl  # <-
        """,
        SplitError,
        "aliased TT-Lang receiver 'T'",
    )


def test_function_imported_by_name(tmp_path):
    expect_error(
        tmp_path,
        """
        from ttl import copy

        @ttl.operation(grid=(1, 1))
        def op(a, out):
            d = ttl.make_dataflow_buffer_like(a, shape=(1, 1))
            with d.reserve() as blk:
                copy(a[0:1, 0:1], blk).wait()  # <-
        """,
        SplitError,
        "'copy' is ttl.copy imported by name; call it as `ttl.copy(...)`",
    )


def test_no_work_after_classification(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            x = ttl.node(dims=1)
        """,
        SplitError,
        "@ttl.operation 'op': body contained no compute or data movement work after classification",
        marker="def op",
    )
