"""The fabric: configurations, routing over Ethernet links, writes and semaphores across chips."""

from __future__ import annotations

import numpy as np
import pytest

from tilewright import ttnn
from tilewright.device.fabric import (
    ETH_HOP_LATENCY,
    FabricError,
    fabric_hops,
    fabric_unicast_noc_fused_unicast_with_atomic_inc,
    fabric_unicast_noc_unicast_atomic_inc,
    fabric_unicast_noc_unicast_write,
)
from tilewright.device.kernel_api.dataflow import (
    get_arg_val,
    get_semaphore,
    noc_async_write,
    noc_semaphore_wait_min,
    read_l1,
    write_l1,
)
from tilewright.device.noc import noc_xy_addr
from tilewright.device.program import DataMovementConfig, Program
from tilewright.device.topology import MeshError
from tilewright.errors import NocError

from .conftest import opened

ADDR = 200 * 1024  # an L1 address above every preset's unreserved base


def _sender(payload: bytes):
    def send():
        dst, x, y = get_arg_val(0), get_arg_val(1), get_arg_val(2)
        write_l1(ADDR, np.frombuffer(payload, np.uint8))
        fabric_unicast_noc_fused_unicast_with_atomic_inc(
            dst, ADDR, len(payload), noc_xy_addr(x, y, ADDR), noc_xy_addr(x, y, get_semaphore(0))
        )

    return send


def _receiver(seen: list):
    def receive():
        noc_semaphore_wait_min(get_semaphore(0), 1)
        seen.append(bytes(read_l1(ADDR, 8)))

    return receive


def _workload(mesh, src, dst, payload, seen):
    """chip ``src`` core (0, 0) sends ``payload`` to core (0, 0) of chip ``dst``."""
    workload = ttnn.MeshWorkload("ping")
    tx, rx = Program("tx"), Program("rx")
    for program in (tx, rx):
        program.create_semaphore((0, 0), 0)
    k = tx.create_kernel(_sender(payload), (0, 0), DataMovementConfig(), name="send")
    peer = mesh.get_device(dst).worker_core_from_logical_core(ttnn.CoreCoord(0, 0))
    tx.set_runtime_args(k, (0, 0), [dst, peer.x, peer.y])
    rx.create_kernel(_receiver(seen), (0, 0), DataMovementConfig(), name="receive")
    workload.add_program(mesh.coordinate_of(mesh.get_device(src)), tx)
    workload.add_program(mesh.coordinate_of(mesh.get_device(dst)), rx)
    return workload


def test_a_write_and_a_semaphore_increment_cross_the_fabric():
    with opened((1, 2), board="n300") as mesh:
        seen: list = []
        # chip 0's receiver runs first and blocks; chip 1's sender wakes it.
        result = mesh.enqueue_mesh_workload(_workload(mesh, 1, 0, b"fabric!!", seen))
        assert seen == [b"fabric!!"]
        places = {s.place for s in result.stats}
        assert places == {"chip 0 core (0, 0)", "chip 1 core (0, 0)"}
        # The receiver resumes when the packet arrives: one hop of Ethernet later.
        receive = next(s for s in result.stats if s.kernel == "receive")
        assert receive.waits == 1 and receive.cycles > ETH_HOP_LATENCY


def test_per_hop_cost():
    def clock_of(hops_to: int) -> int:
        with opened((1, 8), board="t3k") as mesh:
            ids = mesh.get_device_ids()
            result = mesh.enqueue_mesh_workload(
                _workload(mesh, ids[0], ids[hops_to], b"x" * 16, [])
            )
            return next(s.cycles for s in result.stats if s.kernel == "send")

    assert clock_of(3) - clock_of(1) == 2 * ETH_HOP_LATENCY


def test_routes():
    with opened((2, 4), board="t3k", fabric=ttnn.FabricConfig.FABRIC_1D) as mesh:
        grid = [[mesh.get_device_id(ttnn.MeshCoordinate(r, c)) for c in range(4)] for r in range(2)]
        assert mesh.fabric.route(grid[0][0], grid[0][3]) == tuple(grid[0][1:])
        assert mesh.fabric.route(grid[1][2], grid[0][2]) == (grid[0][2],)
        with pytest.raises(
            FabricError, match="share no row or column, and a FABRIC_1D fabric routes"
        ):
            mesh.fabric.route(grid[0][0], grid[1][3])
    with opened((2, 4), board="t3k", fabric=ttnn.FabricConfig.FABRIC_2D) as mesh:
        grid = [[mesh.get_device_id(ttnn.MeshCoordinate(r, c)) for c in range(4)] for r in range(2)]
        # Along the row first, then along the column.
        assert mesh.fabric.route(grid[0][0], grid[1][3]) == (*grid[0][1:], grid[1][3])
    with opened((1, 8), board="t3k", fabric=ttnn.FabricConfig.FABRIC_1D_RING) as mesh:
        ids = mesh.get_device_ids()
        assert mesh.fabric.route(ids[0], ids[7]) == (ids[7],)  # the ring's closing link
        assert len(mesh.fabric.route(ids[1], ids[6])) == 3
    with opened((1, 8), board="t3k", fabric=ttnn.FabricConfig.FABRIC_1D) as mesh:
        ids = mesh.get_device_ids()
        assert len(mesh.fabric.route(ids[0], ids[7])) == 7  # no ring: along the line


def test_fabric_hops_from_a_kernel():
    hops = []

    def kernel():
        hops.append(fabric_hops(get_arg_val(0)))

    with opened((1, 4), board="quietbox") as mesh:
        ids = mesh.get_device_ids()
        program = Program("hops")
        k = program.create_kernel(kernel, (0, 0), DataMovementConfig())
        program.set_runtime_args(k, (0, 0), [ids[3]])
        mesh.get_device(ids[0]).command_queue.enqueue_program(program)
    assert hops == [3]


def test_cross_chip_access_without_a_fabric_names_both_chips():
    with opened((1, 2), board="n300", fabric=ttnn.FabricConfig.DISABLED) as mesh:
        with pytest.raises(
            FabricError,
            match="cross-chip access from chip 0 to chip 1 needs the fabric, which is disabled",
        ) as err:
            mesh.enqueue_mesh_workload(_workload(mesh, 0, 1, b"12345678", []))
        assert "ttnn.set_fabric_config" in str(err.value)
        assert any("chip 0 core (0, 0), kernel send" in n for n in err.value.__notes__)


def test_a_noc_write_never_leaves_its_chip():
    def kernel():
        write_l1(ADDR, np.zeros(16, np.uint8))
        noc_async_write(ADDR, noc_xy_addr(18, 18, ADDR, chip=1), 16)

    with opened((1, 2), board="n300") as mesh:
        program = Program("stray")
        program.create_kernel(kernel, (0, 0), DataMovementConfig())
        with pytest.raises(
            NocError, match="targets chip 1 from chip 0; a NoC transaction stays on its chip"
        ):
            mesh.get_devices()[0].command_queue.enqueue_program(program)


def test_fabric_from_a_chip_opened_alone():
    def kernel():
        fabric_unicast_noc_unicast_atomic_inc(1, noc_xy_addr(18, 18, ADDR))

    dev = ttnn.open_device(device_id=0, board="n300")
    try:
        program = Program("alone")
        program.create_kernel(kernel, (0, 0), DataMovementConfig())
        with pytest.raises(FabricError, match="chip 0 was opened alone"):
            dev.command_queue.enqueue_program(program)
    finally:
        ttnn.close_device(dev)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda d: fabric_unicast_noc_unicast_write(d, ADDR, 0, noc_xy_addr(18, 18, ADDR)),
            "source .* is not inside",
        ),
        (
            lambda d: fabric_unicast_noc_unicast_write(
                d, ADDR, 16, noc_xy_addr(18, 18, ADDR, chip=0)
            ),
            "names chip 0, but the packet goes to chip 1",
        ),
        (
            lambda d: fabric_unicast_noc_unicast_atomic_inc(d, noc_xy_addr(18, 18, ADDR + 2)),
            "is not word aligned",
        ),
        (
            lambda d: fabric_unicast_noc_unicast_atomic_inc(0, noc_xy_addr(18, 18, ADDR)),
            "chip 0 sends to itself",
        ),
        (
            lambda d: fabric_unicast_noc_unicast_atomic_inc(5, noc_xy_addr(18, 18, ADDR)),
            "chip 5 is not part of this mesh device",
        ),
    ],
)
def test_bad_fabric_calls(call, message):
    def kernel():
        call(1)

    with opened((1, 2), board="n300") as mesh:
        program = Program("bad")
        program.create_kernel(kernel, (0, 0), DataMovementConfig())
        with pytest.raises(FabricError, match=message):
            mesh.get_devices()[0].command_queue.enqueue_program(program)


def test_fabric_configuration_rules():
    assert ttnn.get_fabric_config() == ttnn.FabricConfig.DISABLED
    with opened((1, 2), board="n300", fabric=ttnn.FabricConfig.FABRIC_1D) as mesh:
        assert mesh.fabric.config == ttnn.FabricConfig.FABRIC_1D
        with pytest.raises(
            MeshError, match="set_fabric_config\\(FABRIC_2D\\) while a mesh device is open"
        ):
            ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_2D)
    with pytest.raises(
        MeshError, match="FABRIC_2D_DYNAMIC\\): this fabric configuration is not modelled"
    ):
        ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_2D_DYNAMIC)
    ttnn.set_fabric_config(
        ttnn.FabricConfig.FABRIC_1D_RING,
        ttnn.FabricReliabilityMode.RELAXED_SYSTEM_HEALTH_SETUP_MODE,
    )
    assert ttnn.get_fabric_config() == ttnn.FabricConfig.FABRIC_1D_RING


def test_packets_land_at_the_next_quiescent_point_in_arrival_order():
    """Chip 0 (three hops away) issues first, chip 2 (one hop) second: chip 2's packet
    arrives first, so chip 0's lands last and its bytes stay.  A kernel that reads the
    destination without waiting runs before any packet lands and sees none."""
    with opened((1, 8), board="t3k") as mesh:
        ids = mesh.get_device_ids()
        far, near, dst = ids[0], ids[2], ids[3]
        seen: list = []
        peeked: list = []

        def receive():
            noc_semaphore_wait_min(get_semaphore(0), 2)
            seen.append(bytes(read_l1(ADDR, 8)))

        def peek():
            peeked.append(bytes(read_l1(ADDR, 8)))

        workload = ttnn.MeshWorkload("two writers")
        peer = mesh.get_device(dst).worker_core_from_logical_core(ttnn.CoreCoord(0, 0))
        for chip, payload in ((far, b"far away"), (near, b"near by!")):
            tx = Program(f"tx {chip}")
            tx.create_semaphore((0, 0), 0)
            k = tx.create_kernel(_sender(payload), (0, 0), DataMovementConfig(), name="write")
            tx.set_runtime_args(k, (0, 0), [dst, peer.x, peer.y])
            workload.add_program(mesh.coordinate_of(mesh.get_device(chip)), tx)
        rx = Program("rx")
        rx.create_semaphore((0, 0), 0)
        rx.create_kernel(receive, (0, 0), DataMovementConfig(), name="receive")
        rx.create_kernel(peek, (0, 0), DataMovementConfig(processor=1), name="peek")
        workload.add_program(mesh.coordinate_of(mesh.get_device(dst)), rx)
        rounds = mesh.engine.mail.rounds
        result = mesh.enqueue_mesh_workload(workload)
        assert peeked == [bytes(8)]
        assert seen == [b"far away"]
        assert mesh.engine.mail.rounds == rounds + 1  # both landed at one quiescent point
        writes = {s.place: s.cycles for s in result.stats if s.kernel == "write"}
        receive = next(s for s in result.stats if s.kernel == "receive")
        assert receive.cycles == max(writes.values())  # woken when the last one arrived
        assert writes[f"chip {far} core (0, 0)"] > writes[f"chip {near} core (0, 0)"]
