"""Diagnostics of control-flow retention and scalar liveness (reference B.5)."""

from tests.compiler.helpers import expect_error
from tilewright.errors import SplitError

PRELUDE = """
@ttl.operation(grid=(1, 1))
def op(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    sem = ttl.Semaphore()
    with a_dfb.reserve() as src:
        ttl.copy(a[0:1, 0:1], src).wait()
"""


def test_value_produced_for_one_kernel_consumed_by_another(tmp_path):
    expect_error(
        tmp_path,
        PRELUDE
        + """
    blk = a_dfb.wait()
    v = ttl.raw_element_read(blk, 0, 0)  # <-
    blk.pop()
    with o_dfb.reserve() as dst:
        dst.store(ttl.block.fill(v, shape=(1, 1)))
""",
        SplitError,
        "value 'v' is produced for (data_movement) but consumed by excluded logical kernels (compute)",
    )


def test_value_defined_inside_an_acquisition(tmp_path):
    expect_error(
        tmp_path,
        PRELUDE
        + """
    with a_dfb.wait() as blk:  # <-
        v = ttl.raw_element_read(blk, 0, 0)
    with o_dfb.reserve() as dst:
        dst.store(ttl.block.fill(v, shape=(1, 1)))
""",
        SplitError,
        "values defined inside a selected DFB acquisition are used by excluded logical kernels (compute)",
    )


def test_control_header_excluding_its_body(tmp_path):
    expect_error(
        tmp_path,
        PRELUDE
        + """
    if sem.value() == 0:  # <-
        with a_dfb.wait() as blk, o_dfb.reserve() as dst:
            dst.store(blk)
""",
        SplitError,
        "selected control expression excludes logical kernels used by its body (compute)",
    )


def test_control_header_excluding_consumers_of_its_values(tmp_path):
    expect_error(
        tmp_path,
        PRELUDE
        + """
    if sem.value() == 0:  # <-
        scale = 2.0
    with a_dfb.wait() as blk, o_dfb.reserve() as dst:
        dst.store(blk * scale)
""",
        SplitError,
        "selected control expression excludes logical kernels that consume values defined by its body (compute)",
    )


def test_block_printed_by_an_unanchored_statement(tmp_path):
    """An unanchored statement runs on every kernel: it may not read another kernel's block."""
    expect_error(
        tmp_path,
        PRELUDE
        + """
    blk = a_dfb.wait()  # <-
    print(blk)
    with o_dfb.reserve() as dst:
        dst.store(blk)
    blk.pop()
""",
        SplitError,
        "value 'blk' is produced for (compute) but consumed by excluded logical kernels (data_movement)",
    )
