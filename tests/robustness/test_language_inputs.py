"""Small TT-Lang mistakes get a clear error at the user's line.

Before: a bad ``grid=`` and too many semaphores carried no file:line, ``ttl.copy`` and
block operations outside a kernel carried none either, a generator or ``async`` kernel
surfaced as another kernel's deadlock, and the DFB-capacity error listed a loop's DFB
name once per iteration and did not say how to set the search limit.
"""

from __future__ import annotations

import inspect

import pytest
import torch

from tilewright import ttl, ttnn
from tilewright.errors import CapacityError, InterfaceError, KernelError


def line_of(fn, marker: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if marker in line)


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=1, board="n300")  # chip 0 stays free for the programs
    yield dev
    ttnn.close_device(dev)


@pytest.fixture
def tile(device):
    return ttnn.from_torch(torch.zeros(32, 32), layout=ttnn.TILE_LAYOUT, device=device)


@pytest.mark.parametrize("grid", [(0, 2), (2, -1), "nope", (1.5,), 3.0, (), True, [2, "x"]])
def test_a_bad_grid_is_reported_at_the_decorator(grid):
    def decorate():
        @ttl.operation(grid=grid)  # GRID
        def op(a):
            pass

    with pytest.raises(InterfaceError, match="grid") as info:
        decorate()
    assert info.value.loc is not None and info.value.loc.file == __file__
    assert info.value.loc.line == line_of(decorate, "# GRID")


@ttl.operation(grid=(1, 1))
def seventeen_semaphores(a: ttnn.Tensor) -> None:
    sems = [ttl.Semaphore(0) for _ in range(16)]  # noqa: F841 - declared, not used
    extra = ttl.Semaphore(1)  # noqa: F841 - SEMAPHORE 17

    @ttl.datamovement()
    def dm():
        pass


def test_too_many_semaphores_is_a_capacity_error_at_the_one_too_many(tile):
    with pytest.raises(CapacityError) as info:
        seventeen_semaphores(tile)
    err = info.value
    assert err.rule == "semaphore-capacity"
    assert "declares 17 semaphores per node; a core has 16" in err.message
    assert err.loc is not None and err.loc.file == __file__
    assert err.loc.line == line_of(seventeen_semaphores.fn, "SEMAPHORE 17")


def test_copy_and_block_math_outside_a_kernel_point_at_the_users_line(tile):
    def copy():
        ttl.copy(tile[0, 0], tile[0, 0])  # COPY

    def math():
        ttl.math.exp(tile)  # MATH

    for fn, marker, text in (
        (copy, "# COPY", "ttl.copy can only be used inside a kernel function"),
        (math, "# MATH", "'exp' can only be evaluated inside a compute kernel"),
    ):
        with pytest.raises(KernelError, match=text) as info:
            fn()
        assert info.value.loc is not None and info.value.loc.file == __file__
        assert info.value.loc.line == line_of(fn, marker)


def generator_kernel():
    @ttl.operation(grid=(1, 1))
    def op(a: ttnn.Tensor) -> None:
        @ttl.datamovement()
        def dm():  # GENERATOR
            yield 1


def async_kernel():
    @ttl.operation(grid=(1, 1))
    def op(a: ttnn.Tensor) -> None:
        @ttl.compute()
        async def compute():  # ASYNC
            pass


@pytest.mark.parametrize(
    ("decorate", "marker", "kind"),
    [
        (generator_kernel, "# GENERATOR", "a generator function"),
        (async_kernel, "# ASYNC", "an async function"),
    ],
)
def test_generator_and_async_kernels_are_refused_at_their_def(decorate, marker, kind):
    with pytest.raises(KernelError) as info:
        decorate()  # refused when the operation is decorated, before any call
    err = info.value
    assert err.rule == "kernel-function" and kind in err.message
    assert "its body would never run" in err.message
    assert err.loc is not None and err.loc.file == __file__
    assert err.loc.line == line_of(decorate, marker)


def test_the_kernel_decorators_refuse_a_generator_at_run_time_too():
    from tilewright.lang.declare import _check_plain_function

    def kernel():  # RUNTIME GENERATOR
        yield 1

    with pytest.raises(KernelError, match="is a generator function") as info:
        _check_plain_function(kernel, "@ttl.datamovement")
    assert info.value.loc is not None
    assert info.value.loc.line == line_of(kernel, "# RUNTIME GENERATOR")


@ttl.operation(grid=(1, 1))
def seventy_dfbs(a: ttnn.Tensor) -> None:
    dfbs = [ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1) for _ in range(70)]  # noqa: F841
    other = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)  # noqa: F841

    @ttl.datamovement()
    def dm():
        pass


def test_the_dfb_capacity_error_groups_repeated_names_and_names_the_real_option(tile):
    with pytest.raises(CapacityError) as info:
        seventy_dfbs(tile)
    err = info.value
    assert "needs 71 DFB indices but the target has 64" in err.message
    assert err.message.endswith("DFBs: dfbs ×70, other")
    assert err.message.count("dfbs ") == 1  # (the operation is seventy_dfbs)
    assert "declare fewer DFBs" in (err.hint or "")


def test_an_exhausted_search_names_the_option_as_operations_take_it(tmp_path):
    from tests.compiler.helpers import expect_error, program
    from tests.compiler.test_dfb_reuse import STAGGER, STAGGER_CALL

    err = expect_error(
        tmp_path,
        program(
            STAGGER.format(options=', options="--ttl-dfb-exact-coloring-search-limit=1"'),
            STAGGER_CALL,
        ),
        CapacityError,
        "exact search explored 1 states without finding a colouring with <= 64 indices",
    )
    assert err.message.endswith(
        "DFBs: f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, "
        + ", ".join(f"f{i}" for i in range(12, 62))
        + ", x1, x4, x2, x3"
    )
    assert '@ttl.operation(options="--ttl-dfb-exact-coloring-search-limit=N")' in (err.hint or "")


def test_grouping_keeps_first_seen_order():
    from tilewright.compiler.dfb_alloc import _grouped

    assert _grouped(["a", "b", "a", "a", "c", "b"]) == "a ×3, b ×2, c"
