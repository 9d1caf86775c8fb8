"""Kernel capacity comes from the target's descriptor: Wormhole 1 + 2, a Quasar-style chip 4 + 6."""

from dataclasses import replace

import pytest
import torch

from tilewright import ttl, ttnn
from tilewright.errors import CapacityError
from tilewright.target import Arch, board_preset

SECOND_COMPUTE = ttl.Kernel(ttl.KernelKind.COMPUTE)
THIRD_MOVER = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)


@ttl.operation(grid=(2, 1))
def two_pipelines(a, b, out_a, out_b):
    # Two independent reader -> compute -> writer pipelines on every node: 2 compute and
    # 3 data-movement kernels (the writer of pipeline B shares the canonical reader's kernel
    # kind but is its own logical kernel).
    a_in = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    a_out = ttl.make_dataflow_buffer_like(out_a, shape=(1, 1), block_count=2)
    b_in = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    b_out = ttl.make_dataflow_buffer_like(out_b, shape=(1, 1), block_count=2)

    @ttl.datamovement(kernel=ttl.KernelKind.DATA_MOVEMENT)
    def readers():
        x = ttl.node(dims=1)
        with a_in.reserve() as blk:
            ttl.copy(a[0, x], blk).wait()
        with b_in.reserve() as blk:
            ttl.copy(b[0, x], blk).wait()

    @ttl.compute(kernel=ttl.KernelKind.COMPUTE)
    def double_a():
        with a_in.wait() as x, a_out.reserve() as y:
            y.store(x + x)

    @ttl.compute(kernel=SECOND_COMPUTE)
    def square_b():
        with b_in.wait() as x, b_out.reserve() as y:
            y.store(x * x)

    @ttl.datamovement(kernel=ttl.PIPE_SOURCE_KERNEL)
    def write_a():
        x = ttl.node(dims=1)
        with a_out.wait() as blk:
            ttl.copy(blk, out_a[0, x]).wait()

    @ttl.datamovement(kernel=THIRD_MOVER)
    def write_b():
        x = ttl.node(dims=1)
        with b_out.wait() as blk:
            ttl.copy(blk, out_b[0, x]).wait()


def quasar_like():
    sd = board_preset("n150").system_desc
    chip = replace(
        sd.chip_descs[0],
        arch=Arch.QUASAR,
        num_compute_threads=4,
        num_datamovement_threads=6,
        dram_bank_to_logical_worker_noc0=(),
        dram_bank_to_logical_worker_noc1=(),
    )
    return replace(sd, chip_descs=(chip,))


def tensors(device):
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    a = torch.rand(32, 64).to(torch.bfloat16)
    b = torch.rand(32, 64).to(torch.bfloat16)
    return (
        a,
        b,
        [
            ttnn.from_torch(a, **kw),
            ttnn.from_torch(b, **kw),
            ttnn.from_torch(torch.zeros(32, 64), **kw),
            ttnn.from_torch(torch.zeros(32, 64), **kw),
        ],
    )


def test_the_descriptor_counts_set_the_capacity():
    device = ttnn.open_device(device_id=0, system_desc=quasar_like())
    try:
        assert device.slots["compute"] == ("compute0", "compute1", "compute2", "compute3")
        assert len(device.slots["data_movement"]) == 6
        a, b, ts = tensors(device)
        two_pipelines(*ts)
        assert torch.equal(ttnn.to_torch(ts[2]), (a.float() * 2).to(torch.bfloat16))
        assert torch.equal(ttnn.to_torch(ts[3]), (b.float() * b.float()).to(torch.bfloat16))
        slots = two_pipelines.last_program.kernel_slots
        assert sorted(slots.values()) == ["compute0", "compute1", "dm0", "dm1", "dm5"]
    finally:
        ttnn.close_device(device)


def test_the_same_operation_exceeds_wormhole():
    device = ttnn.open_device(device_id=0)
    try:
        _, _, ts = tensors(device)
        with pytest.raises(
            CapacityError, match="requires 2 compute kernels, but the target supports 1"
        ):
            two_pipelines(*ts)
    finally:
        ttnn.close_device(device)
