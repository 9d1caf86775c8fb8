"""Mesh workloads across worker processes (split runs): the collectives and fabric programs
give the one-process results, statistics and errors; a worker that dies mid-run ends the
call with a clear error and nothing waits at a barrier for ever."""

from __future__ import annotations

import json
import os
import signal
import sys

import numpy as np
import pytest
import torch
from ray import cloudpickle

from tilewright import distributed, ttnn
from tilewright.device import session
from tilewright.device.fabric import (
    FabricError,
    fabric_unicast_noc_fused_unicast_with_atomic_inc,
    fabric_unicast_noc_unicast_atomic_inc,
)
from tilewright.device.kernel_api.dataflow import (
    get_arg_val,
    get_semaphore,
    noc_semaphore_wait_min,
    read_l1,
    write_l1,
)
from tilewright.device.noc import noc_xy_addr
from tilewright.device.program import DataMovementConfig, Program, portable
from tilewright.errors import DeadlockError, DeviceError, format_error

from .test_host import stats_key
from .test_workers import _in_the_driver

# The test's own portable kernels cross by value (the workers do not import the tests).
cloudpickle.register_pickle_by_value(sys.modules[__name__])

ADDR = 200 * 1024  # an L1 address above every preset's unreserved base


@pytest.fixture
def line(workers):
    """A 1x4 mesh on a 1-D fabric (chips 0-1 in worker 0, 2-3 in worker 1), its chip ids."""
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 4))
    return mesh, mesh.get_device_ids()


@pytest.fixture(autouse=True)
def _no_fabric_after():
    yield
    session.OPTIONS.fabric = ttnn.FabricConfig.DISABLED  # the workers fixture closed the meshes


def _bf16(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (2 * torch.rand(*shape, generator=g) - 1).to(torch.bfloat16)


def _recorded(call):
    """``call()``'s result shards and the statistics of every launch it made."""
    saved = session.OPTIONS.stats
    session.OPTIONS.stats = True
    session.OPTIONS.launches.clear()
    try:
        out = call()
        launches = [
            (rec.name, rec.result.makespan, [stats_key(s) for s in rec.result.stats])
            for rec in session.OPTIONS.launches
        ]
    finally:
        session.OPTIONS.stats = saved
        session.OPTIONS.launches.clear()
    shards = [ttnn.to_torch(s).view(torch.int16).numpy() for s in ttnn.get_device_tensors(out)]
    return shards, launches


COLLECTIVES = {
    "all_gather on a 1x8 ring": (
        (1, 8),
        ttnn.FabricConfig.FABRIC_1D_RING,
        (8, 1, 64, 96),
        lambda t: ttnn.all_gather(t, 3),
    ),
    "all_gather on 2x4, rows then columns": (
        (2, 4),
        ttnn.FabricConfig.FABRIC_1D,
        (8, 64, 32),
        lambda t: ttnn.all_gather(t, 0),
    ),
    "reduce_scatter on a 1x8 line": (
        (1, 8),
        ttnn.FabricConfig.FABRIC_1D,
        (8, 1, 64, 512),
        lambda t: ttnn.reduce_scatter(t, 3, topology=ttnn.Topology.Linear),
    ),
    "all_reduce on 2x4": (
        (2, 4),
        ttnn.FabricConfig.FABRIC_2D,
        (8, 1, 64, 256),
        lambda t: ttnn.all_reduce(t),
    ),
}


def _both_processes(workers, case: str, seed: int, observe):
    """``observe(call)`` of collective ``case`` across the workers, then in the driver."""
    shape, fabric, tensor, collective = COLLECTIVES[case]
    ttnn.set_fabric_config(fabric)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape), board="t3k")
    t = ttnn.from_torch(
        _bf16(*tensor, seed=seed),
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )
    split_before = workers.split_runs
    there = observe(lambda: collective(t))
    assert workers.split_runs > split_before  # it did run across the workers
    saved = _in_the_driver(mesh)
    try:
        here = observe(lambda: collective(t))
    finally:
        for d, r in zip(mesh.devices, saved):
            d.remote = r
    return there, here


@pytest.mark.parametrize("case", list(COLLECTIVES))
def test_a_collective_gives_the_one_process_results_and_statistics(workers, case):
    there, here = _both_processes(workers, case, 3, _recorded)
    assert all(np.array_equal(a, b) for a, b in zip(here[0], there[0]))
    assert here[1] == there[1]  # every launch's makespan and every run's statistics


def _traced(call) -> str:
    """The trace file ``call()`` writes (a fresh trace)."""
    saved = session.OPTIONS.trace
    session.OPTIONS.trace, session.OPTIONS.tracer = True, None
    try:
        call()
        tracer = session.OPTIONS.tracer
        assert tracer is not None and tracer.launches
        return json.dumps(tracer.to_chrome())
    finally:
        session.OPTIONS.trace, session.OPTIONS.tracer = saved, None


@pytest.mark.parametrize("case", ["all_gather on a 1x8 ring", "all_reduce on 2x4"])
def test_a_traced_collective_records_the_one_process_trace(workers, case):
    """Recorded in the workers, replayed in the driver: the trace of one process."""
    there, here = _both_processes(workers, case, 5, _traced)
    assert '"name":"wait"' in here.replace(" ", "")
    assert there == here


def _send(incr_to_chip: int, payload: bytes | None = None):
    """A portable kernel: one increment (with a payload write, if given) to core (0, 0) of
    chip ``incr_to_chip`` (its NoC coordinates are the runtime args)."""

    def send():
        x, y = get_arg_val(0), get_arg_val(1)
        sem = noc_xy_addr(x, y, get_semaphore(0))
        if payload is None:
            fabric_unicast_noc_unicast_atomic_inc(incr_to_chip, sem, 1)
        else:
            write_l1(ADDR, np.frombuffer(payload, np.uint8))
            fabric_unicast_noc_fused_unicast_with_atomic_inc(
                incr_to_chip, ADDR, len(payload), noc_xy_addr(x, y, ADDR), sem
            )

    return portable(send)


def _wait(count: int, seen: list | None = None):
    def wait():
        noc_semaphore_wait_min(get_semaphore(0), count)
        if seen is not None:
            seen.append(bytes(read_l1(ADDR, 8)))

    return portable(wait)


def _die():
    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    return portable(die)


def _workload(mesh, kernels: dict):
    """A program per chip: ``kernels[chip]`` is (kernel, destination chip or None)."""
    workload = ttnn.MeshWorkload("fabric test")
    core = ttnn.CoreCoord(0, 0)
    for chip, (kernel, to) in kernels.items():
        program = Program(f"chip {chip}")
        program.create_semaphore((0, 0), 0)
        k = program.create_kernel(kernel, (0, 0), DataMovementConfig(), name=kernel.__name__)
        if to is not None:
            peer = mesh.get_device(to).worker_core_from_logical_core(core)
            program.set_runtime_args(k, (0, 0), [peer.x, peer.y])
        workload.add_program(mesh.coordinate_of(mesh.get_device(chip)), program)
    return workload


def _both_ways(mesh, make):
    """What ``make()``'s workload raises across the workers, then in the driver."""
    raised = []
    for here in (False, True):
        saved = _in_the_driver(mesh) if here else None
        try:
            with pytest.raises(Exception) as info:
                mesh.enqueue_mesh_workload(make())
            raised.append(info.value)
        finally:
            if saved is not None:
                for d, r in zip(mesh.devices, saved):
                    d.remote = r
    return raised


def test_a_deadlock_across_workers_is_reported_as_one_process_reports_it(workers, line):
    """Chip 0 waits for an increment nobody sends, chip 3 for two of which chip 1 sends one:
    one report over every chip of both workers, word for word."""
    mesh, ids = line
    assert workers.host_chips == [ids[:2], ids[2:]]
    there, here = _both_ways(
        mesh,
        lambda: _workload(
            mesh,
            {ids[0]: (_wait(1), None), ids[1]: (_send(ids[3]), ids[3]), ids[3]: (_wait(2), None)},
        ),
    )
    assert isinstance(there, DeadlockError) and isinstance(here, DeadlockError)
    assert format_error(there) == format_error(here)
    assert "(2 of 3 kernels blocked, 1 finished)" in str(there)
    # traced: the launch that deadlocked is in the trace (without an end), the same both ways
    traces = []
    for here in (False, True):
        saved = _in_the_driver(mesh) if here else None

        def deadlocks():
            with pytest.raises(DeadlockError):
                mesh.enqueue_mesh_workload(
                    _workload(
                        mesh,
                        {
                            ids[0]: (_wait(1), None),
                            ids[1]: (_send(ids[3]), ids[3]),
                            ids[3]: (_wait(2), None),
                        },
                    )
                )

        try:
            traces.append(_traced(deadlocks))
        finally:
            for d, r in zip(mesh.devices, saved or []):
                d.remote = r
    assert traces[0] == traces[1]
    assert '"chip 3 (mesh (0, 3))"' in traces[0] and "end of" not in traces[0]


def test_a_bad_packet_is_the_same_error_at_the_same_line(workers, line):
    mesh, ids = line

    def make():  # chip 2 increments a word of chip 0's DRAM, not L1
        workload = _workload(mesh, {ids[0]: (_wait(1), None), ids[2]: (_send(ids[0]), ids[0])})
        program = workload.programs[mesh.coordinate_of(mesh.get_device(ids[2]))]
        dram = mesh.get_device(ids[0]).dram_noc_coord(0)
        program.set_runtime_args(0, (0, 0), list(dram))
        return workload

    there, here = _both_ways(mesh, make)
    assert isinstance(there, FabricError)
    assert format_error(there) == format_error(here)
    assert "targets L1, not DRAM bank 0" in str(there)
    # traced, the same error; the failing share's chip is in the trace
    traced: list = []
    trace = _traced(lambda: traced.extend(_both_ways(mesh, make)))
    assert [format_error(e) for e in traced] == [format_error(there)] * 2
    assert f'"chip {ids[2]} (mesh (0, 2))"' in trace


def test_a_payload_crosses_between_workers(workers, line):
    mesh, ids = line
    result = mesh.enqueue_mesh_workload(
        _workload(mesh, {ids[0]: (_send(ids[3], b"8 bytes!"), ids[3]), ids[3]: (_wait(1), None)})
    )
    core = mesh.get_device(ids[3]).core(0, 0)
    assert bytes(core.l1[ADDR : ADDR + 8]) == b"8 bytes!"
    assert {s.kernel for s in result.stats} == {"send", "wait"}


def test_a_worker_killed_mid_run_ends_the_call_naming_its_chips(workers, line):
    """Chip 3's kernel kills its worker while chip 0's waits at a barrier for a packet that
    will never come: the call ends with the worker's chips named, at the call's line."""
    mesh, ids = line
    workload = _workload(mesh, {ids[0]: (_wait(1), None), ids[3]: (_die(), None)})
    with pytest.raises(DeviceError) as info:
        mesh.enqueue_mesh_workload(workload)  # the line the error names
    err = info.value
    assert err.rule == "worker-died"
    assert f"chip {ids[2]} died during the launch of 'fabric test'" in str(err)
    assert f"(worker 1, chips {ids[2]}, {ids[3]})" in str(err)
    assert err.loc is not None and err.loc.file == __file__
    with pytest.raises(DeviceError, match="worker 1"):  # the chips stay gone, clearly
        mesh.enqueue_mesh_workload(_workload(mesh, {ids[0]: (_wait(0), None)}))


def test_a_native_generic_op_on_mesh_tensors_runs_across_the_workers(workers, capsys):
    """ttnn.generic_op with mesh tensors is one mesh workload; with C++ kernels it splits
    across the workers: every chip's result, and its kernel's DPRINT in chip order."""
    from pathlib import Path

    from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet

    kernel = Path(__file__).resolve().parents[1] / "native" / "kernels" / "add_ints.cpp"
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 4))
    kw = dict(
        dtype=ttnn.uint32,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )
    ids = mesh.get_device_ids()
    a = ttnn.from_torch(torch.tensor([[i] for i in ids], dtype=torch.int32), **kw)
    b = ttnn.from_torch(torch.full((4, 1), 1000, dtype=torch.int32), **kw)
    l1 = [
        ttnn.from_torch(
            torch.zeros(4, 1, dtype=torch.int32), memory_config=ttnn.L1_MEMORY_CONFIG, **kw
        )
        for _ in range(3)
    ]

    def call():
        out = ttnn.from_torch(torch.zeros(4, 1, dtype=torch.int32), **kw)
        rt = ttnn.RuntimeArgs()
        rt[0][0] = [t.buffer_address() for t in (a, b, out, *l1)]
        desc = ttnn.KernelDescriptor(
            kernel_source=str(kernel),
            core_ranges=CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(0, 0))]),
            runtime_args=rt,
            config=ttnn.ReaderConfigDescriptor(),
        )
        ttnn.generic_op([a, b, *l1, out], ttnn.ProgramDescriptor(kernels=[desc]))
        values = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
        return values.flatten().tolist(), capsys.readouterr().out

    split_before = workers.split_runs
    there = call()
    assert workers.split_runs == split_before + 1
    saved = _in_the_driver(mesh)
    here = call()
    for d, r in zip(mesh.devices, saved):
        d.remote = r
    assert there == here
    assert there[0] == [i + 1000 for i in ids]
    assert [line.split(":")[0] for line in there[1].splitlines()] == [str(i) for i in ids]


def test_a_portable_program_launched_alone_runs_in_the_driver(workers, line):
    """One chip's program may send packets to chips that run nothing; only a split run
    exchanges packets, so such a launch stays in the driver (and says so)."""
    mesh, ids = line
    workload = _workload(mesh, {ids[0]: (_send(ids[3], b"alone!!!"), ids[3])})
    (program,) = workload.programs.values()
    mesh.get_device(ids[0]).command_queue.enqueue_program(program)
    core = mesh.get_device(ids[3]).core(0, 0)
    assert bytes(core.l1[ADDR : ADDR + 8]) == b"alone!!!"
    assert "1 x program with Python kernels, launched alone" in distributed.report()
