"""Diagnostics of statement placement and DFB transaction ownership (reference B.3, B.4)."""

from tests.compiler.helpers import expect_error
from tilewright.errors import SplitError

OP = """
@ttl.operation(grid=(1, 1))
def op(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
{body}
"""


def body(text: str) -> str:
    import textwrap

    return OP.format(body=textwrap.indent(textwrap.dedent(text).strip("\n"), "    "))


# -- B.3 placement -------------------------------------------------------------------------------


def test_unknown_ttl_call(tmp_path):
    expect_error(
        tmp_path,
        body("""
        x = ttl.frobnicate(a)  # <-
        """),
        SplitError,
        "unknown ttl.frobnicate(...) call; register its logical kernel classification",
    )


def test_unknown_ttl_namespace(tmp_path):
    expect_error(
        tmp_path,
        body("""
        x = ttl.linalg.solve(a)  # <-
        """),
        SplitError,
        "unknown ttl.linalg.solve(...) call; register namespace 'ttl.linalg'",
    )


def test_indivisible_expression_selecting_two_kernels(tmp_path):
    expect_error(
        tmp_path,
        body("""
        with a_dfb.wait() as blk:
            ttl.copy(ttl.math.exp(blk), out[0:1, 0:1]).wait()  # <-
        """),
        SplitError,
        "calls in one indivisible expression select different logical kernels (data_movement versus compute); "
        "split the calls into separate statements",
    )


def test_assigned_transfer_handle(tmp_path):
    expect_error(
        tmp_path,
        body("""
        with a_dfb.reserve() as blk:
            xf = ttl.copy(a[0:1, 0:1], blk)  # <-
            xf.wait()
        """),
        SplitError,
        "assigned transfer handle 'xf' is not supported yet; write `ttl.copy(...).wait()` as a single statement",
    )


def test_legacy_dfb_level_release(tmp_path):
    expect_error(
        tmp_path,
        body("""
        blk = a_dfb.reserve()
        ttl.copy(a[0:1, 0:1], blk).wait()
        a_dfb.push()  # <-
        """),
        SplitError,
        "a_dfb.push() is the legacy DFB-level release (spec < 0.7); a unified body releases",
    )


def test_block_used_by_source_and_destination_callbacks(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation(grid=(2, 1))
        def op(a, out):
            net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
            w_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1))
            with w_dfb.reserve() as w_blk:  # <-
                def send(pipe):
                    ttl.copy(w_blk, pipe).wait()
                def recv(pipe):
                    ttl.copy(pipe, w_blk).wait()
                net.if_src(send)
                net.if_dst(recv)
        """,
        SplitError,
        "DFB block 'w_blk' is used by multiple logical kernels (data_movement, data_movement kernel "
        "'<pipe_source>'); each .reserve()/.wait() must resolve to exactly one kernel",
    )


# -- B.4 ownership -------------------------------------------------------------------------------


def test_block_used_by_two_kernels(tmp_path):
    expect_error(
        tmp_path,
        body("""
        blk = a_dfb.reserve()  # <-
        ttl.copy(a[0:1, 0:1], blk).wait()
        blk.store(blk + blk)
        """),
        SplitError,
        "DFB block 'blk' is used by multiple logical kernels (compute, data_movement); each .reserve()/.wait() "
        "must resolve to exactly one kernel",
    )


def test_releases_assigned_to_two_kernels(tmp_path):
    expect_error(
        tmp_path,
        body("""
        blk = a_dfb.wait()  # <-
        blk.pop(kernel=ttl.KernelKind.COMPUTE)
        blk.pop(kernel=ttl.KernelKind.DATA_MOVEMENT)
        """),
        SplitError,
        "DFB block 'blk' has releases assigned to multiple logical kernels (compute, data_movement)",
    )


def test_explicit_release_conflicts_with_inferred_owner(tmp_path):
    expect_error(
        tmp_path,
        body("""
        blk = a_dfb.reserve()
        ttl.copy(a[0:1, 0:1], blk).wait()
        blk.push(kernel=ttl.KernelKind.COMPUTE)  # <-
        """),
        SplitError,
        "explicit compute release ownership conflicts with inferred data_movement ownership for DFB block 'blk'",
    )


def test_acquisition_without_uses_or_selector(tmp_path):
    expect_error(
        tmp_path,
        body("""
        blk = a_dfb.wait()  # <-
        blk.pop()
        """),
        SplitError,
        "result of a DFB wait/reserve bound to 'blk' has no uses; the splitter cannot infer a logical kernel and "
        "the release has no explicit kernel selector",
    )


def test_inline_acquisition_without_uses(tmp_path):
    expect_error(
        tmp_path,
        body("""
        shape = a_dfb.wait().shape  # <-
        """),
        SplitError,
        "result of a_dfb.wait() has no uses; the splitter cannot infer a logical kernel",
    )


def test_kernel_selector_on_reserve(tmp_path):
    expect_error(
        tmp_path,
        body("""
        blk = a_dfb.reserve(kernel=ttl.KernelKind.DATA_MOVEMENT)  # <-
        ttl.copy(a[0:1, 0:1], blk).wait()
        """),
        SplitError,
        "kernel= is not supported on DFB reserve(); select release ownership on push() or pop()",
    )


def test_kernel_selector_on_wait(tmp_path):
    expect_error(
        tmp_path,
        body("""
        with a_dfb.wait(kernel=ttl.KernelKind.COMPUTE) as blk:  # <-
            pass
        """),
        SplitError,
        "kernel= is not supported on DFB wait(); select release ownership on push() or pop()",
    )


def test_with_acquisitions_owned_by_two_kernels(tmp_path):
    expect_error(
        tmp_path,
        body("""
        with a_dfb.reserve() as src, o_dfb.reserve() as dst:  # <-
            ttl.copy(a[0:1, 0:1], src).wait()
            dst.store(ttl.math.exp(dst))
        """),
        SplitError,
        "DFB acquire statement resolves to multiple logical kernels (compute, data_movement); each "
        ".reserve()/.wait() must resolve to exactly one kernel",
    )


def test_statement_outside_the_acquire_owner(tmp_path):
    expect_error(
        tmp_path,
        body("""
        with o_dfb.reserve() as dst:
            dst.store(ttl.math.exp(dst))
            with a_dfb.reserve() as src:  # <-
                ttl.copy(a[0:1, 0:1], src).wait()
        """),
        SplitError,
        "statement selects logical kernels (data_movement) outside its enclosing DFB acquire owner (compute)",
    )


def test_unbound_with_acquisition(tmp_path):
    expect_error(
        tmp_path,
        body("""
        with a_dfb.reserve():  # <-
            pass
        """),
        SplitError,
        "a DFB acquisition in a with statement must bind its block",
    )


def test_acquisition_in_a_control_header(tmp_path):
    expect_error(
        tmp_path,
        body("""
        with o_dfb.reserve() as dst:
            dst.store(ttl.math.exp(dst))
        if a_dfb.wait() is None:  # <-
            pass
        """),
        SplitError,
        "a DFB acquisition in a control header cannot be placed",
    )
