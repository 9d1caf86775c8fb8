"""Warm calls (compiler/warm.py): a repeated compiled call reuses its program, never a stale one.

Every test calls operations more than once with something changed between calls --
tensors at other addresses, shapes, dtypes, a captured scalar (closure and global), a
mutable object the body reads, the device, the engine, two operations alternating --
and checks each result against torch.  The reuse itself is observed through
``op.last_program`` (the same program object on a warm call).
"""

from __future__ import annotations

import ast
import textwrap

import pytest
import torch

from tilewright import ttl, ttnn
from tilewright.compiler import warm
from tilewright.device import session


@pytest.fixture
def device():
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = "native"
    dev = ttnn.open_device(device_id=0)
    yield dev
    if not dev.closed:
        ttnn.close_device(dev)
    session.OPTIONS.engine = saved


def _dev(device, t: torch.Tensor, dtype=ttnn.bfloat16):
    return ttnn.from_torch(
        t,
        dtype=dtype,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.DRAM_MEMORY_CONFIG,
    )


def scaled_copy(grid: int = 2):
    """``y = a * SCALE + OFFSET`` over every tile; the grid's nodes split the tiles.

    ``SCALE`` is a module global read by the compute kernel; ``OFFSET`` a closure cell
    (``set_offset`` rebinds it); the tile count comes from ``a.shape`` in the body."""
    offset = 1.0

    @ttl.operation(grid=(grid, 1))
    def op(a, y):
        tiles = (a.shape[0] // 32) * (a.shape[1] // 32)
        cols = a.shape[1] // 32
        per = tiles // ttl.grid_size(dims=1)  # the grid of the call (a callable may change it)
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                with a_dfb.reserve() as ab:
                    ttl.copy(a[t // cols, t % cols], ab).wait()

        @ttl.compute()
        def compute():
            for _ in range(per):
                with a_dfb.wait() as x, y_dfb.reserve() as o:
                    o.store(x * SCALE + offset)

        @ttl.datamovement()
        def writer():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                with y_dfb.wait() as ob:
                    ttl.copy(ob, y[t // cols, t % cols]).wait()

    def set_offset(value: float) -> None:
        nonlocal offset
        offset = value

    return op, set_offset


SCALE = 2.0


def _check(op, device, shape=(64, 64), dtype=ttnn.bfloat16, scale=None, offset=1.0):
    x = torch.rand(*shape)
    a = _dev(device, x, dtype)
    y = _dev(device, torch.zeros(*shape), dtype)
    op(a, y)
    got = ttnn.to_torch(y).float()
    s = SCALE if scale is None else scale
    expected = (
        x.to(torch.bfloat16).float() * s + offset if dtype == ttnn.bfloat16 else x * s + offset
    )
    torch.testing.assert_close(got, expected, atol=0.07, rtol=0.02)
    return op.last_program


def test_a_repeated_call_reuses_its_program_with_the_new_addresses(device):
    op, _ = scaled_copy()
    first = _check(op, device)
    second = _check(op, device)  # fresh tensors: other addresses
    assert second is first
    third = _check(op, device)
    assert third is first


def test_a_shape_change_builds_a_new_program(device):
    op, _ = scaled_copy()
    small = _check(op, device, (64, 64))
    big = _check(op, device, (64, 128))
    assert big is not small
    assert _check(op, device, (64, 64)) is small  # both shapes stay warm, alternating
    assert _check(op, device, (64, 128)) is big


def test_a_dtype_change_builds_a_new_program(device):
    op, _ = scaled_copy()
    bf16 = _check(op, device, dtype=ttnn.bfloat16)
    f32 = _check(op, device, dtype=ttnn.float32)
    assert f32 is not bf16
    assert _check(op, device, dtype=ttnn.bfloat16) is bf16


def test_a_captured_scalar_change_is_seen(device, monkeypatch):
    op, set_offset = scaled_copy()
    first = _check(op, device, offset=1.0)
    set_offset(3.0)  # a closure cell the kernel reads
    assert _check(op, device, offset=3.0) is not first
    monkeypatch.setattr(__import__(__name__, fromlist=["SCALE"]), "SCALE", 4.0)  # a global
    _check(op, device, scale=4.0, offset=3.0)


def test_two_operations_alternate(device):
    one, _ = scaled_copy(grid=1)
    two, set_offset = scaled_copy(grid=2)
    set_offset(5.0)
    p1 = _check(one, device, offset=1.0)
    p2 = _check(two, device, offset=5.0)
    for _ in range(2):
        assert _check(one, device, offset=1.0) is p1
        assert _check(two, device, offset=5.0) is p2


def test_another_device_builds_a_new_program(device):
    op, _ = scaled_copy()
    first = _check(op, device)
    ttnn.close_device(device)
    other = ttnn.open_device(device_id=0)
    try:
        second = _check(op, other)
        assert second is not first
        assert _check(op, other) is second
    finally:
        ttnn.close_device(other)


def test_the_python_engine_and_back(device):
    op, _ = scaled_copy()
    first = _check(op, device)
    session.OPTIONS.engine = "python"
    assert _check(op, device) is not first
    session.OPTIONS.engine = "native"
    assert _check(op, device) is first


CONFIG = {"blocks": 2}
NESTED = ([2],)


def _set_blocks(container: str, blocks: int) -> None:
    if container == "dict":
        CONFIG["blocks"] = blocks
    else:
        NESTED[0][0] = blocks


@pytest.mark.parametrize("container", ["dict", "tuple of a list"])
def test_a_body_reading_a_mutable_object_runs_every_call(device, container):
    @ttl.operation(grid=(1, 1))
    def op(a, y):
        # a dict, a list in a tuple: their contents are not in the key
        n = CONFIG["blocks"] if container == "dict" else NESTED[0][0]
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            for i in range(n):
                with a_dfb.reserve() as ab:
                    ttl.copy(a[0, i], ab).wait()

        @ttl.compute()
        def compute():
            for _ in range(n):
                with a_dfb.wait() as x, y_dfb.reserve() as o:
                    o.store(x + x)

        @ttl.datamovement()
        def writer():
            for i in range(n):
                with y_dfb.wait() as ob:
                    ttl.copy(ob, y[0, i]).wait()

    x = torch.rand(32, 96).to(torch.bfloat16)
    for blocks in (2, 3, 1):
        _set_blocks(container, blocks)
        y = _dev(device, torch.zeros(32, 96))
        op(_dev(device, x), y)
        got = ttnn.to_torch(y).float()
        width = 32 * blocks
        torch.testing.assert_close(got[:, :width], x[:, :width].float() * 2)
        assert not got[:, width:].any()


def test_a_body_that_prints_prints_on_every_call(device, capsys):
    @ttl.operation(grid=(1, 1))
    def op(a, y):
        print("setting up")
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            with a_dfb.reserve() as ab:
                ttl.copy(a[0, 0], ab).wait()

        @ttl.datamovement()
        def writer():
            with a_dfb.wait() as ob:
                ttl.copy(ob, y[0, 0]).wait()

    x = torch.rand(32, 32)
    for _ in range(2):
        op(_dev(device, x), _dev(device, torch.zeros(32, 32)))
    assert capsys.readouterr().out.count("setting up") == 2


def _body(src: str):
    tree = ast.parse(textwrap.dedent(src)).body[0]
    assert isinstance(tree, ast.FunctionDef)
    return warm.declarative(tree)


def test_declarative_bodies():
    found = _body(
        """
        def op(a, y):
            n = len(a.shape) + K
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, n), block_count=2)

            @ttl.compute()
            def compute():
                helper(a_dfb)
        """
    )
    assert found is not None
    assert found.called == {"ttl", "len"}  # kernel code is not setup code
    assert found.read == {"K"}
    found = _body(
        """
        def op(a, y):
            sem = ttl.Semaphore()
            remote = sem.get_remote((0, 0))
        """
    )
    assert found is not None and found.called == {"ttl"}  # methods of declared resources


@pytest.mark.parametrize(
    "line",
    [
        "print(a)",
        "global G",
        "CFG.x = 1",
        "CFG[0] = 1",
        "import math",
        "f = lambda: 1",
        "def helper(): pass",
        "make()()",
        "del a",
        "n = int(a.to_torch()[0, 0])",  # a method of a tensor argument reads its data
        "b = a\n    b.fill(0)",
        "s = ttl.Semaphore()\n    s = a\n    s.fill(0)",
    ],
)
def test_non_declarative_bodies(line):
    assert _body(f"def op(a, y):\n    {line}\n") is None or line == "print(a)"
    if line == "print(a)":  # declarative syntax; the call is checked against its value
        found = _body(f"def op(a, y):\n    {line}\n")
        assert found is not None and "print" in found.called
        assert not warm._callable_ok("print", {})


WARM_EXAMPLES = [
    "01_fused_eltwise.py",  # multi-kernel
    "04_unified_add.py",  # unified (split), a composed operation
    "05_pipe_multicast.py",  # pipes
    "06_semaphore_barrier.py",  # semaphores
    "07_extern_reader/program.py",  # external C++ calls
]


@pytest.mark.parametrize("program", WARM_EXAMPLES)
def test_examples_give_their_results_from_a_warm_call(program, monkeypatch):
    """Every operation call is made first on copies of its tensors (which warms it), then
    on the example's own tensors: the results the example checks come from warm calls."""
    import contextlib
    import io

    from tests.e2e.conftest import EXAMPLES
    from tilewright.cli.runner import run_program
    from tilewright.compiler.operation import Operation

    original = Operation.__call__
    warm_calls: list[bool] = []

    def twice(self, *args, **kwargs):
        copies = [
            ttnn.from_torch(
                ttnn.to_torch(t),
                dtype=t.dtype,
                layout=t.layout,
                device=t.device(),
                memory_config=t.memory_config(),
            )
            for t in args
        ]
        original(self, *copies, **kwargs)
        first = self.last_program
        original(self, *args, **kwargs)
        warm_calls.append(self.last_program is first)

    monkeypatch.setattr(Operation, "__call__", twice)
    monkeypatch.setattr(session.OPTIONS, "engine", "native")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = run_program(str(EXAMPLES / program), [])
    assert status == 0, out.getvalue()
    assert "PASS" in out.getvalue()
    assert warm_calls and all(warm_calls)


GRID = [(1, 1)]


def test_a_grid_callable_is_asked_on_every_call(device):
    op, _ = scaled_copy(grid=1)
    op.grid = lambda a, y: GRID[0]
    first = _check(op, device)
    assert _check(op, device) is first
    GRID[0] = (2, 1)
    second = _check(op, device)
    assert second is not first
    GRID[0] = (1, 1)
    assert _check(op, device) is first


def test_an_l1_buffer_allocated_between_calls_builds_a_new_program(device):
    op, _ = scaled_copy()
    first = _check(op, device)
    l1 = ttnn.from_torch(
        torch.zeros(32, 32),
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )
    assert _check(op, device) is not first  # where the CBs may go has changed
    del l1
