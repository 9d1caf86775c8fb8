"""--dry-run: the protocol, block states, deadlock detection and the time model, no payload."""

import pytest
import torch

import tilewright.ttl as ttl
from tilewright import ttnn
from tilewright.device import session
from tilewright.errors import DeadlockError

from .test_ttl_engines import _scale_op


def _run_scale(dry: bool):
    session.reset(dry_run=dry)
    dev = ttnn.open_device(device_id=0)
    try:
        kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
        torch.manual_seed(0)
        a = ttnn.from_torch(torch.randn(128, 128), **kw)
        y = ttnn.from_torch(torch.zeros(128, 128), **kw)
        _scale_op("python")(a, y)
        r = dev.command_queue.last_launch
        return [(s.place, s.kernel, s.cycles) for s in r.stats], ttnn.to_torch(y)
    finally:
        ttnn.close_device(dev)


def test_a_dry_run_keeps_the_modelled_times_and_moves_no_bytes():
    real_times, real_y = _run_scale(False)
    dry_times, dry_y = _run_scale(True)
    assert dry_times == real_times
    assert real_y.abs().sum() > 0 and dry_y.abs().sum() == 0  # the copies moved nothing


def test_a_dry_run_still_finds_deadlocks():
    @ttl.operation(grid=(1, 1), options="--tw-engine=python")
    def stuck(a: ttnn.Tensor) -> None:
        dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def waiter():
            with dfb.wait() as blk:
                ttl.copy(blk, a[0, 0]).wait()

    session.reset(dry_run=True)
    dev = ttnn.open_device(device_id=0)
    try:
        a = ttnn.from_torch(
            torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev
        )
        with pytest.raises(DeadlockError, match="deadlock"):
            stuck(a)
    finally:
        ttnn.close_device(dev)


def test_a_dry_run_times_a_large_ttnn_matmul_without_computing_it():
    session.reset(dry_run=True, stats=True)
    dev = ttnn.open_device(device_id=0)
    try:
        kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
        a = ttnn.zeros((2048, 4096), **kw)
        b = ttnn.zeros((4096, 1024), **kw)
        c = ttnn.matmul(a, b)
        assert tuple(c.shape) == (2048, 1024)
        rec = session.OPTIONS.ops[-1]
        assert rec.op_code == "MatmulDeviceOperation" and rec.kernel_cycles > 100_000
    finally:
        ttnn.close_device(dev)
