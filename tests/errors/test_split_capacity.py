"""Kernel capacity against the target's slot table (reference B.7), both operation forms."""

from tests.compiler.helpers import expect_error, program
from tilewright.errors import CapacityError, InterfaceError


def test_unified_operation_over_data_movement_capacity(tmp_path):
    expect_error(
        tmp_path,
        program(
            """
        @ttl.operation(grid=(2, 1))
        def op(a, out):
            reader = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
            net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
            s_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
            with a_dfb.reserve() as blk:
                ttl.copy(a[0:1, 0:1], blk).wait()
            def send(pipe):
                with s_dfb.reserve() as sb:
                    ttl.copy(a[0:1, 0:1], sb).wait()
                    ttl.copy(sb, pipe).wait()
            net.if_src(send)
            b = a_dfb.wait()  # <-
            b.pop(kernel=reader)
        """,
            """
        op(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32)))
        """,
        ),
        CapacityError,
        "operation requires 3 data_movement kernels, but the target supports 2; selected kernels: data_movement, "
        "data_movement kernel '<pipe_source>', data_movement kernel 'reader'",
    )


def test_unified_operation_over_compute_capacity(tmp_path):
    expect_error(
        tmp_path,
        program(
            """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            extra = ttl.Kernel(ttl.KernelKind.COMPUTE)
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
            with a_dfb.reserve() as blk:
                ttl.copy(a[0:1, 0:1], blk).wait()
            with a_dfb.wait() as w:
                ttl.math.exp(w)
            b = a_dfb.wait()  # <-
            b.pop(kernel=extra)
        """,
            """
        op(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32)))
        """,
        ),
        CapacityError,
        "operation requires 2 compute kernels, but the target supports 1; selected kernels: compute, "
        "compute kernel 'extra'",
    )


def test_explicit_operation_with_two_compute_handles(tmp_path):
    expect_error(
        tmp_path,
        program(
            """
        h1 = ttl.Kernel(ttl.KernelKind.COMPUTE)
        h2 = ttl.Kernel(ttl.KernelKind.COMPUTE)

        @ttl.operation(grid=(1, 1))
        def op(a, out):
            @ttl.compute(kernel=h1)
            def first():
                pass

            @ttl.compute(kernel=h2)  # <-
            def second():
                pass
        """,
            """
        op(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32)))
        """,
        ),
        CapacityError,
        "operation requires 2 compute kernels, but the target supports 1; selected kernels: compute kernel 'h1', "
        "compute kernel 'h2'",
    )


def test_explicit_selector_of_the_wrong_kind(tmp_path):
    expect_error(
        tmp_path,
        program(
            """
        reader = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)

        @ttl.operation(grid=(1, 1))
        def op(a, out):
            @ttl.compute(kernel=reader)  # <-
            def first():
                pass
        """,
            """
        op(dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32)))
        """,
        ),
        InterfaceError,
        "@ttl.compute(kernel=...) selects ttl.Kernel(DATA_MOVEMENT) 'reader', a data_movement kernel",
    )
