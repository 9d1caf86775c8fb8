"""Multi-device programs under `tilewright run`: no flags needed, traces with chips as processes."""

from __future__ import annotations

import json
import textwrap

from click.testing import CliRunner

from tilewright.cli.main import cli
from tilewright.device import session

PROGRAM = textwrap.dedent(
    """
    import torch
    import ttl
    import ttnn

    @ttl.operation(grid=(1, 1))
    def double(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            with a_dfb.reserve() as blk:
                ttl.copy(a[0, 0], blk).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, o_dfb.reserve() as y:
                y.store(x + x)

        @ttl.datamovement()
        def writer():
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    count = ttnn.GetNumAvailableDevices()
    chips = min(count, 4)
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, chips))
    try:
        x = torch.arange(chips * 32 * 32, dtype=torch.float32).reshape(chips * 32, 32) / 64
        shard = ttnn.ShardTensorToMesh(mesh, dim=0)
        a = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=shard)
        out = ttnn.from_torch(torch.zeros_like(x), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, mesh_mapper=shard)
        double(a, out)
        gathered = ttnn.all_gather(out, 0)
        y = ttnn.to_torch(ttnn.get_device_tensors(gathered)[chips - 1])
        assert torch.equal(y.float(), (x * 2).bfloat16().float())
        print(f"PASS {count} devices, mesh 1x{chips}")
    finally:
        ttnn.close_mesh_device(mesh)
    """
)


def run(tmp_path, *flags: str):
    path = tmp_path / "mesh_program.py"
    path.write_text(PROGRAM)
    result = CliRunner().invoke(cli, ["run", *flags, str(path)])
    session.reset()
    return result


def test_a_multi_device_program_runs_without_flags(tmp_path):
    result = run(tmp_path)
    assert result.exit_code == 0, result.output
    assert "PASS 32 devices, mesh 1x4" in result.output


def test_board_chooses_the_system(tmp_path):
    result = run(tmp_path, "--board", "n300")
    assert result.exit_code == 0, result.output
    assert "PASS 2 devices, mesh 1x2" in result.output


def test_trace_shows_chips_as_process_groups(tmp_path):
    trace_path = tmp_path / "trace.json"
    result = run(tmp_path, "--trace", str(trace_path), "--stats")
    assert result.exit_code == 0, result.output
    events = json.loads(trace_path.read_text())["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert sorted(processes.values()) == [f"chip {i} (mesh (0, {i}))" for i in range(4)]
    sort = {
        e["pid"]: e["args"]["sort_index"] for e in events if e.get("name") == "process_sort_index"
    }
    assert {processes[p]: i for p, i in sort.items()} == {
        f"chip {i} (mesh (0, {i}))": i for i in range(4)
    }
    threads = [e["args"]["name"] for e in events if e.get("name") == "thread_name"]
    assert (
        "node (0, 0) reader (ncrisc)" in threads
        and "core (0, 0) gather_receiver+ (ncrisc)" in threads
    )
    # The TT-Lang operation's four per-chip launches start together (chips run in parallel).
    starts = {}
    for e in events:
        if e.get("ph") == "X" and e["name"] == "copy" and processes[e["pid"]].startswith("chip"):
            starts.setdefault(e["pid"], e["ts"])
    assert len(set(starts.values())) == 1 and len(starts) == 4
    fabric = [e for e in events if e.get("name") == "fabric write"]
    assert fabric and all(e["args"]["hops"] == 1 for e in fabric)
    assert "chip 3 node (0, 0)" in result.output  # --stats names the chip
