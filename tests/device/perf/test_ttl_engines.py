"""TT-Lang on both engines: the interpreter times copies and DFB hand-offs as the compiled
kernel's NoC and CB calls (identical cycles); block math as the compiled kernel's tile ops."""

import pytest
import torch

import tilewright.ttl as ttl
from tilewright import ttnn


def _copy_op(engine: str):
    @ttl.operation(grid=(2, 1), options=f"--tw-engine={engine}")
    def copy_through(a: ttnn.Tensor, y: ttnn.Tensor) -> None:
        dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)

        @ttl.datamovement()
        def reader():
            x, _ = ttl.node(dims=2)
            for i in range(4):
                with dfb.reserve() as blk:
                    xf = ttl.copy(a[i : i + 1, 2 * x : 2 * x + 2], blk)
                    xf.wait()

        @ttl.datamovement()
        def writer():
            x, _ = ttl.node(dims=2)
            for i in range(4):
                with dfb.wait() as blk:
                    xf = ttl.copy(blk, y[i : i + 1, 2 * x : 2 * x + 2])
                    xf.wait()

    return copy_through


def _scale_op(engine: str):
    @ttl.operation(grid=(2, 1), options=f"--tw-engine={engine}")
    def scale(a: ttnn.Tensor, y: ttnn.Tensor) -> None:
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 2), block_count=2)

        @ttl.datamovement()
        def reader():
            x, _ = ttl.node(dims=2)
            for i in range(4):
                with a_dfb.reserve() as blk:
                    ttl.copy(a[i : i + 1, 2 * x : 2 * x + 2], blk).wait()

        @ttl.compute()
        def compute():
            for _ in range(4):
                with a_dfb.wait() as ab, y_dfb.reserve() as yb:
                    yb.store(ttl.math.exp(ab) * ab + ab)

        @ttl.datamovement()
        def writer():
            x, _ = ttl.node(dims=2)
            for i in range(4):
                with y_dfb.wait() as blk:
                    ttl.copy(blk, y[i : i + 1, 2 * x : 2 * x + 2]).wait()

    return scale


@pytest.fixture
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def _times(device, make_op):
    torch.manual_seed(0)
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    a = ttnn.from_torch(torch.randn(128, 128), **kw)
    out = {}
    for engine in ("python", "native"):
        y = ttnn.from_torch(torch.zeros(128, 128), **kw)
        make_op(engine)(a, y)
        r = device.command_queue.last_launch
        out[engine] = (
            [(s.place, s.kernel, s.cycles) for s in r.stats],
            r.makespan,
            ttnn.to_torch(y),
        )
    return out


def test_copies_and_dfb_handoffs_take_identical_cycles_on_both_engines(device):
    out = _times(device, _copy_op)
    assert out["python"][0] == out["native"][0]
    assert torch.equal(out["python"][2], out["native"][2])


def test_block_math_is_timed_like_the_compiled_kernels_tile_ops(device):
    out = _times(device, _scale_op)
    py, native = out["python"][1], out["native"][1]
    assert abs(py / native - 1) < 0.05, (py, native)


@pytest.mark.parametrize("make_op", [_copy_op, _scale_op], ids=["copy", "scale"])
def test_the_interpreters_pages_time_the_same_on_either_calendar(device, monkeypatch, make_op):
    """The interpreter's copies timed by the native runtime's calendar (native/noc_pages.py,
    where it can be built) and by the Python one: the same cycles for every kernel run."""
    from tilewright.lang import copy

    native = copy.noc_pages.page_timer()
    assert native is not None  # this machine builds the runtime
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    torch.manual_seed(1)
    a = ttnn.from_torch(torch.randn(128, 128), **kw)
    runs = {}
    for name, timer in (("python", None), ("native", native)):
        monkeypatch.setattr(copy.noc_pages, "page_timer", lambda timer=timer: timer)
        y = ttnn.from_torch(torch.zeros(128, 128), **kw)
        make_op("python")(a, y)
        r = device.command_queue.last_launch
        runs[name] = (
            [(s.place, s.kernel, s.cycles, s.blocked_cycles) for s in r.stats],
            r.makespan,
        )
    assert runs["native"] == runs["python"] and runs["python"][1] > 0
