"""Operation identity and Kernel-handle binding (reference B.9, B.2)."""

import re

import pytest

from tests.compiler.helpers import expect_error, load, write
from tilewright.compiler.split.identity import encode_capture
from tilewright.errors import InterfaceError

FACTORY = """
def make(scale, rows):
    @ttl.operation(grid=(1, 1))
    def op(a, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(rows, 1), block_count=2)
        with a_dfb.reserve() as blk:
            ttl.copy(a[0:rows, 0:1], blk).wait()
        with a_dfb.wait() as blk:
            ttl.copy(blk, out[0:rows, 0:1]).wait()
        x = scale
    return op
"""


def test_identity_of_a_module_level_operation(tmp_path):
    path = write(
        tmp_path,
        """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
            with a_dfb.reserve() as blk:
                ttl.copy(a[0:1, 0:1], blk).wait()
        """,
    )
    op = load(path)["op"]
    assert op.identity == f"{path.stem}.op"
    assert op.split_plan.identity == op.identity


def test_factory_operations_share_identity_exactly_when_captures_match(tmp_path):
    ns = load(write(tmp_path, FACTORY))
    first, same, other = ns["make"](0.5, 1), ns["make"](0.5, 1), ns["make"](0.25, 1)
    assert re.fullmatch(r".*\.make\.<locals>\.op\[captures=[0-9a-f]{16}\]", first.identity)
    assert first.identity == same.identity
    assert first.identity != other.identity


def test_capture_encoding_is_canonical():
    assert encode_capture(0.1) == b"float:" + (0.1).hex().encode()
    assert encode_capture((1, "a")) == encode_capture((1, "a"))
    assert encode_capture((1, "a")) != encode_capture([1, "a"])
    assert encode_capture(True) != encode_capture(1)
    assert encode_capture(object()) is None


def test_captured_kernel_handle_is_bound_to_the_operation(tmp_path):
    ns = load(
        write(
            tmp_path,
            """
        reader = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)

        @ttl.operation(grid=(1, 1))
        def op(a, out):
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
            with a_dfb.reserve() as blk:
                ttl.copy(a[0:1, 0:1], blk).wait()
            got = a_dfb.wait()
            got.pop(kernel=reader)
        """,
        )
    )
    reader = ns["reader"]
    assert (reader.name, reader.operation) == ("reader", ns["op"].identity)
    assert [k.name for k in ns["op"].split_plan.kernels if k.role == "explicit"] == ["reader"]


def test_declared_kernel_handle_is_bound_by_its_assignment(tmp_path):
    op = load(
        write(
            tmp_path,
            """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            writer = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
            with a_dfb.reserve() as blk:
                ttl.copy(a[0:1, 0:1], blk).wait()
            got = a_dfb.wait()
            got.pop(kernel=writer)
        """,
        )
    )["op"]
    handle = dict(op.split_plan.injected)["writer"]
    assert (handle.name, handle.operation) == ("writer", op.identity)
    assert "def writer():" in dict(op.split_plan.kernel_sources)["writer"]


def test_handle_bound_to_another_operation(tmp_path):
    expect_error(
        tmp_path,
        """
        reader = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)

        @ttl.operation(grid=(1, 1))
        def first(a, out):
            @ttl.datamovement(kernel=reader)
            def k():
                pass

        @ttl.operation(grid=(1, 1))
        def second(a, out):  # <-
            @ttl.datamovement(kernel=reader)
            def k():
                pass
        """,
        InterfaceError,
        "logical Kernel 'reader' is already bound as 'reader' to operation",
    )


def test_one_handle_under_two_names(tmp_path):
    expect_error(
        tmp_path,
        """
        reader = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
        alias = reader

        @ttl.operation(grid=(1, 1))
        def op(a, out):  # <-
            @ttl.datamovement(kernel=reader)
            def k():
                pass

            @ttl.datamovement(kernel=alias)
            def k2():
                pass
        """,
        InterfaceError,
        "one logical Kernel handle reached operation 'op' under multiple names: 'alias' and 'reader'",
    )


def test_unbound_handle_has_no_equality():
    from tilewright.lang.selectors import Kernel, KernelKind

    with pytest.raises(InterfaceError, match="unbound"):
        _ = Kernel(KernelKind.COMPUTE) == Kernel(KernelKind.COMPUTE)
