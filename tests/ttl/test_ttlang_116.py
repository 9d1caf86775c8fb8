"""TT-Lang 1.1.6 surface (tt-lang-sim 1.1.6): ttl.math comparisons, the spec's type aliases,
and the layouts named when a row-major and a tiled block meet (on both engines)."""

from __future__ import annotations

import operator
import typing

import pytest
import torch

from tests.ttl.conftest import line_of
from tilewright import ttl, ttnn
from tilewright.errors import KernelError
from tilewright.lang import types as lang_types

COMPARISONS = {
    "gt": operator.gt,
    "lt": operator.lt,
    "ge": operator.ge,
    "le": operator.le,
    "eq": operator.eq,
    "ne": operator.ne,
}


def comparison_op(fn):
    @ttl.operation(grid=(1, 1))
    def compare(a, b, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=1)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 2), block_count=1)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=1)

        @ttl.datamovement()
        def reader():
            with a_dfb.reserve() as x, b_dfb.reserve() as y:
                ttl.copy(a[0:1, 0:2], x).wait()
                ttl.copy(b[0:1, 0:2], y).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, b_dfb.wait() as y, o_dfb.reserve() as o:
                o.store(fn(x, y))

        @ttl.datamovement()
        def writer():
            with o_dfb.wait() as o:
                ttl.copy(o, out[0:1, 0:2]).wait()

    return compare


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_math_comparisons_are_the_operators_as_functions(to_dev, name):
    fn = getattr(ttl.math, name)
    a = torch.randint(-2, 3, (32, 64)).to(torch.bfloat16)
    b = torch.randint(-2, 3, (32, 64)).to(torch.bfloat16)
    out = to_dev(torch.zeros(32, 64))
    comparison_op(fn)(to_dev(a), to_dev(b), out)
    want = COMPARISONS[name](a.float(), b.float()).to(torch.bfloat16)
    assert torch.equal(ttnn.to_torch(out), want)


def test_the_spec_type_aliases():
    assert typing.get_args(ttl.Size) == (int, lang_types.Gt(0))
    assert ttl.Size is ttl.PositiveInt
    assert typing.get_args(ttl.Index) == (int, lang_types.Ge(0))
    assert set(typing.get_args(ttl.Shape)) == {ttl.Size, tuple[ttl.Size, ...]}
    assert set(typing.get_args(ttl.NodeCoord)) == {ttl.Index, tuple[ttl.Index, ...]}
    assert ttl.NodeRange == tuple[ttl.Index | slice, ...]
    assert isinstance(ttl.DstT, typing.TypeVar)
    assert ttl.DstT.__constraints__ == (ttl.NodeCoord, ttl.NodeRange)
    # ttl.Pipe[DstT](src, dst), as the spec writes it
    pipe = ttl.Pipe[ttl.NodeCoord](src=(0, 0), dst=(1, 0))
    assert isinstance(pipe, ttl.Pipe)
    assert ttl.PipeNet[ttl.NodeRange] is not None


def test_a_row_major_and_a_tiled_block_do_not_mix_and_both_layouts_are_named(program, device):
    ns = program(
        """
        from tilewright import ttl

        @ttl.operation(grid=(1, 1))
        def mix(a, b, out):
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
            b_dfb = ttl.make_dataflow_buffer_like(b, shape=(32, 32), block_count=1)
            o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

            @ttl.datamovement()
            def reader():
                with a_dfb.reserve() as x:
                    ttl.copy(a[0:1, 0:1], x).wait()
                with b_dfb.reserve() as y:
                    ttl.copy(b[0:32, 0:32], y).wait()

            @ttl.compute()
            def compute():
                with a_dfb.wait() as x, b_dfb.wait() as y, o_dfb.reserve() as o:
                    o.store(x + y)  # MIX

            @ttl.datamovement()
            def writer():
                with o_dfb.wait() as o:
                    ttl.copy(o, out[0:1, 0:1]).wait()
        """
    )

    def make(layout):
        return ttnn.from_torch(
            torch.ones(32, 32), dtype=ttnn.bfloat16, layout=layout, device=device
        )

    with pytest.raises(KernelError) as info:
        ns["mix"](make(ttnn.TILE_LAYOUT), make(ttnn.ROW_MAJOR_LAYOUT), make(ttnn.TILE_LAYOUT))
    err = info.value
    assert (
        "operator.add: operand 1 is a tiled block of (1, 1) tiles and operand 2 is a row-major "
        "block of (32, 32) elements; tiled and row-major blocks do not mix" in err.message
    )
    assert err.loc is not None and err.loc.line == line_of(ns, "# MIX")
    assert "ttnn.to_layout" in err.hint
