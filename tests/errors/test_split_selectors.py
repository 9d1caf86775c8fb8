"""Diagnostics of ``kernel=`` selectors (reference B.6, C.9 item 31).

External-call selections are checked by the splitter and (independently) by the
external-call front end; both raise a ``TTLangCompileError`` in the reference's words.
"""

import pytest

from tests.compiler.helpers import expect_error, line_of
from tilewright.errors import SplitError, TTLangCompileError

RELEASE = """
K = 42

def select_kernel():
    return ttl.KernelKind.COMPUTE

@ttl.operation(grid=(1, 1))
def op(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    reader = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
    blk = a_dfb.wait()
    blk.pop(kernel={selector})  # <-
"""


def release(selector: str) -> str:
    return RELEASE.replace("{selector}", selector)


def test_computed_selector(tmp_path):
    expect_error(
        tmp_path,
        release("select_kernel()"),
        SplitError,
        "kernel selector must be a KernelKind or Kernel declared as a top-level operation resource",
    )


def test_selector_of_the_wrong_type(tmp_path):
    expect_error(
        tmp_path,
        release("K"),
        SplitError,
        "kernel selector must be a KernelKind or Kernel declared as a top-level operation resource, got int",
    )


def test_unknown_kernel_kind_member(tmp_path):
    expect_error(
        tmp_path, release("ttl.KernelKind.READER"), SplitError, "unknown KernelKind member 'READER'"
    )


def test_release_with_a_tuple(tmp_path):
    expect_error(
        tmp_path,
        release("(ttl.KernelKind.COMPUTE, reader)"),
        SplitError,
        "blk.pop accepts one kernel selector, not a tuple",
    )


def test_release_with_a_union(tmp_path):
    expect_error(
        tmp_path,
        release("ttl.KernelKind.COMPUTE | ttl.KernelKind.DATA_MOVEMENT"),
        SplitError,
        "blk.pop accepts one kernel selector, not a kind union",
    )


EXTERN = """
@ttl.operation(grid=(2, 1))
def op(a, out):
    reader = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
    {body}
"""


def extern(body: str) -> str:
    return EXTERN.replace("{body}", body)


def test_union_with_a_kernel_handle(tmp_path):
    expect_error(
        tmp_path,
        extern('ttl.call_extern_func("h.hpp", "f", kernel=ttl.KernelKind.COMPUTE | reader)  # <-'),
        TTLangCompileError,
        "kernel kind union operands must be KernelKind members; use a tuple to include operation-local Kernel handles",
    )


def split_directly(tmp_path, body: str):
    """Run only the splitter on an operation (the external-call front end validates first
    in ``@ttl.operation``, with its own wording for these two rules)."""
    from tests.compiler.helpers import load, write
    from tilewright.compiler.interface import check_interface
    from tilewright.compiler.record import OperationRecord
    from tilewright.compiler.source import FunctionSource
    from tilewright.compiler.split import splitter as split
    from tilewright.compiler.split.identity import operation_identity

    path = write(tmp_path, "def op(a, out):\n" + body + "\n")
    fn = load(path)["op"]
    source = FunctionSource.of(fn)
    interface = check_interface(source, "op")
    op = OperationRecord(fn, "op", "op", source, interface, operation_identity(fn), has_grid=True)
    with pytest.raises(SplitError) as info:
        split.split_operation(op, None)
    return path, info.value


def test_empty_selection_tuple(tmp_path):
    path, err = split_directly(tmp_path, '    ttl.call_extern_func("h.hpp", "f", kernel=())  # <-')
    assert err.message == "call_extern_func kernel selection requires a nonempty tuple"
    assert err.loc.line == line_of(path)


def test_duplicate_selectors(tmp_path):
    path, err = split_directly(
        tmp_path,
        "    ttl.call_extern_func('h.hpp', 'f', kernel=(ttl.KernelKind.COMPUTE, ttl.KernelKind.COMPUTE))  # <-",
    )
    assert err.message == "call_extern_func kernel selection contains a duplicate kernel selector"
    assert err.loc.line == line_of(path)


def test_external_call_needs_a_selector(tmp_path):
    expect_error(
        tmp_path,
        extern('ttl.call_extern_func("h.hpp", "f")  # <-'),
        TTLangCompileError,
        "call_extern_func requires a kernel selector when its logical kernel cannot be inferred",
    )


def test_explicit_selection_conflicting_with_the_callback(tmp_path):
    expect_error(
        tmp_path,
        """
        @ttl.operation(grid=(2, 1))
        def op(a, out):
            net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
            def send(pipe):
                ttl.call_extern_func("h.hpp", "f", kernel=ttl.KernelKind.COMPUTE)  # <-
            net.if_src(send)
        """,
        TTLangCompileError,
        "explicit external-call kernel selection (compute) conflicts with inferred selection "
        "(data_movement kernel '<pipe_source>')",
    )
