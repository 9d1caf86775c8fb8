"""The worker side without Ray: replicas over the driver's memory, programs as data."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from tilewright import ttl, ttnn
from tilewright.device import memory
from tilewright.device.device import Device
from tilewright.device.engine import stats_from_raw
from tilewright.distributed import wire
from tilewright.distributed.host import ChipHost, ChipSpec


def test_a_peer_maps_the_same_l1_and_dram_bytes():
    own_l1 = memory.L1Arena(4, 1 << 16)
    own_dram = memory.DramChannels(3, 1 << 20, share=True)
    peer_l1 = memory.L1Arena(4, 1 << 16, (os.getpid(), own_l1.fd))
    peer_dram = memory.DramChannels(3, 1 << 20, peer=(os.getpid(), own_dram.fd))
    own_l1.slot(2)[100:104] = [1, 2, 3, 4]
    own_dram.channel(1)[5000:5002] = [7, 9]
    assert list(peer_l1.slot(2)[100:104]) == [1, 2, 3, 4]
    assert list(peer_dram.channel(1)[5000:5002]) == [7, 9]
    peer_dram.channel(2)[0] = 42  # a peer's writes are the owner's too
    assert own_dram.channel(2)[0] == 42
    assert own_dram.channel(0)[0] == 0  # channels do not alias
    peer_l1.close()
    peer_dram.close()
    assert list(own_l1.slot(2)[100:104]) == [1, 2, 3, 4]  # a peer closing drops nothing
    own_l1.close()
    own_dram.close()


def test_private_dram_cannot_be_mapped_by_a_worker():
    device = Device(share_memory=False)
    try:
        assert device.memory_ref() is None
    finally:
        device.close()


def test_mapping_a_missing_peer_is_a_clear_error():
    with pytest.raises(Exception, match="cannot map the DRAM memory of process"):
        memory.DramChannels(1, 1 << 20, peer=(2**22 + 12345, 3))


@ttl.operation(grid=(2, 2))
def _scale(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        node = ttl.node(dims=1)
        with a_dfb.reserve() as blk:
            ttl.copy(a[node // 2, node % 2], blk).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, o_dfb.reserve() as y:
            y.store(x * x + x)

    @ttl.datamovement()
    def writer():
        node = ttl.node(dims=1)
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[node // 2, node % 2]).wait()


def stats_key(s) -> tuple:
    """Every field of a run's statistics (the device-time model's record as bytes)."""
    perf = None if s.perf is None else bytes(s.perf)
    return (s.place, s.kernel, s.slot, s.cycles, s.blocked_cycles, s.waits, s.ops, perf)


def _spec(device):
    return ChipSpec(
        device.system_desc,
        device.chip,
        device.device_id,
        device.l1_small_size,
        device.engine.options,
        device.memory_ref(),
        device.place_prefix,
    )


def test_a_replica_runs_the_program_as_the_driver_does():
    """The compiled operation's program, shipped as data to an in-process ChipHost whose
    replica maps the device's memory: same output bytes, same statistics, and the second
    (warm) launch reuses the replica's program and launch plan."""
    device = Device(share_memory=True)
    try:
        x = torch.linspace(-2, 2, 64 * 64).reshape(64, 64)
        kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        a = ttnn.from_torch(x, **kw)
        out = ttnn.from_torch(torch.zeros(64, 64), **kw)
        _scale(a, out)
        expected = ttnn.to_torch(out).clone()
        program = _scale.last_program
        stats = [stats_key(s) for s in _scale.last_launch.stats]
        out2 = ttnn.from_torch(torch.zeros(64, 64), **kw)
        _scale(a, out2)  # a warm call: same program, the output's address in the args
        assert _scale.last_program is program

        host = ChipHost()
        host.add_chip(_spec(device))
        blob, digest = wire.structure_of(program)
        args = wire.args_of(program)
        lowest = device.l1_allocator.lowest_allocated_address()
        assert host.run(device.device_id, digest, None, args, lowest, "node") == ("missing",)
        for blob_sent in (blob, None):  # the second launch finds the structure kept
            out2.buffer.write(np.zeros_like(out2.buffer.read()))
            outcome = host.run(device.device_id, digest, blob_sent, args, lowest, "node")
            assert outcome[0] == "ok", outcome
            assert torch.equal(ttnn.to_torch(out2), expected)
            assert [stats_key(s) for s in stats_from_raw(outcome[1])] == stats
        assert host.usage()["launch_plan_hits"] >= 1
        host.close()
    finally:
        device.close()


def test_programs_with_python_kernels_stay_in_the_driver():
    """Unmarked Python kernels never leave the driver; ``portable`` ones only in a mesh
    workload (a chip launched alone may send fabric packets, which only split runs
    exchange)."""
    from tilewright.device.program import DataMovementConfig, Program, portable

    program = Program("p")
    program.create_kernel(lambda: None, (0, 0), DataMovementConfig(), name="mover")
    assert wire.ineligible(program) == "program with Python kernels"
    assert wire.ineligible(program, in_workload=True) == "program with Python kernels"
    marked = Program("q")
    marked.create_kernel(portable(lambda: None), (0, 0), DataMovementConfig(), name="mover")
    assert wire.ineligible(marked, in_workload=True) is None
    assert "launched alone" in str(wire.ineligible(marked))
