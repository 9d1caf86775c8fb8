"""Ctrl-C while a split run's shares wait at their barriers: the driver stops every worker
at once and the interrupt goes on (nothing waits for a share that will not answer)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("ray")

SCRIPT = r"""
import time
from tilewright import distributed, ttnn
from tilewright.device.fabric import fabric_unicast_noc_unicast_atomic_inc
from tilewright.device.kernel_api.dataflow import get_arg_val, get_semaphore, noc_semaphore_wait_min
from tilewright.device.noc import noc_xy_addr
from tilewright.device.program import DataMovementConfig, Program, portable


def kernel(first):
    def ping_pong():
        peer, x, y = get_arg_val(0), get_arg_val(1), get_arg_val(2)
        far = noc_xy_addr(x, y, get_semaphore(0))
        for i in range(10**7):  # an exchange each: hours across two workers
            if first:
                fabric_unicast_noc_unicast_atomic_inc(peer, far, 1)
            noc_semaphore_wait_min(get_semaphore(0), i + 1)
            if not first:
                fabric_unicast_noc_unicast_atomic_inc(peer, far, 1)

    return portable(ping_pong)


pool = distributed.start(workers=2)
ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D)
mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
workload = ttnn.MeshWorkload("ping pong")
ids = mesh.get_device_ids()
for k, chip in enumerate(ids):
    program = Program(f"ping pong {chip}")
    program.create_semaphore((0, 0), 0)
    handle = program.create_kernel(kernel(k == 0), (0, 0), DataMovementConfig())
    xy = mesh.get_device(ids[1 - k]).worker_core_from_logical_core(ttnn.CoreCoord(0, 0))
    program.set_runtime_args(handle, (0, 0), [ids[1 - k], xy.x, xy.y])
    workload.add_program(mesh.coordinate_of(mesh.get_device(chip)), program)
print("running", flush=True)
start = time.monotonic()
try:
    mesh.enqueue_mesh_workload(workload)
except KeyboardInterrupt:
    print("interrupted", round(time.monotonic() - start), sorted(set(pool.dead.values())), flush=True)
"""


def test_ctrl_c_during_a_split_run_stops_the_workers(tmp_path):
    path = tmp_path / "ping_pong.py"
    path.write_text(SCRIPT)
    proc = subprocess.Popen(
        [sys.executable, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "running", proc.stderr.read()
        time.sleep(3)  # deep in the exchanges
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert "interrupted" in out, err[-3000:]
    assert "['interrupted (Ctrl-C)']" in out  # both workers were stopped
