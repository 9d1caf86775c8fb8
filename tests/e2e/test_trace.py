"""`tilewright run --trace / --stats`: Chrome trace per node x kernel, statistics, determinism."""

import json

from click.testing import CliRunner

from tests.e2e.conftest import EXAMPLES
from tilewright.cli.main import cli
from tilewright.device import session


def run_traced(tmp_path, program, name="trace.json", extra=()):
    path = tmp_path / name
    result = CliRunner().invoke(cli, ["run", "--trace", str(path), *extra, str(EXAMPLES / program)])
    session.reset()
    return result, path


def test_trace_has_a_track_per_node_and_kernel(tmp_path):
    result, path = run_traced(tmp_path, "01_fused_eltwise.py")
    assert result.exit_code == 0, result.output
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    processes = {e["args"]["name"] for e in events if e.get("name") == "process_name"}
    threads = {(e["pid"], e["args"]["name"]) for e in events if e.get("name") == "thread_name"}
    assert processes == {f"node ({x}, {y})" for x in range(2) for y in range(2)}
    assert len(threads) == 4 * 3
    names = {e["name"] for e in events if e["ph"] == "X"}
    assert {"wait", "copy"} <= names
    waits = [e for e in events if e["name"] == "wait"]
    assert all("on" in e["args"] for e in waits)


def test_same_program_same_trace(tmp_path):
    _, first = run_traced(tmp_path, "05_pipe_multicast.py", "a.json")
    _, second = run_traced(tmp_path, "05_pipe_multicast.py", "b.json")
    assert first.read_bytes() == second.read_bytes()
    events = json.loads(first.read_text())["traceEvents"]
    multicasts = [e for e in events if e["name"] == "multicast"]
    assert len(multicasts) == 2  # one NoC write per row of the grid
    assert all(e["args"]["destinations"] == 3 for e in multicasts)


def test_signpost_zones_appear_in_the_trace(tmp_path):
    prog = tmp_path / "zones.py"
    prog.write_text(
        "import torch, ttl, ttnn\n"
        "@ttl.operation(grid=(1, 1))\n"
        "def op(a):\n"
        "    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)\n"
        "    @ttl.datamovement()\n"
        "    def dm():\n"
        "        with ttl.signpost('load-tile'):\n"
        "            with d.reserve() as b:\n"
        "                ttl.copy(a[0, 0], b).wait()\n"
        "dev = ttnn.open_device(device_id=0)\n"
        "op(ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev))\n"
    )
    path = tmp_path / "z.json"
    result = CliRunner().invoke(cli, ["run", "--trace", str(path), str(prog)])
    session.reset()
    assert result.exit_code == 0, result.output
    names = {e["name"] for e in json.loads(path.read_text())["traceEvents"]}
    assert "signpost load-tile" in names


def test_stats_lists_every_kernel(tmp_path):
    result = CliRunner().invoke(cli, ["run", "--stats", str(EXAMPLES / "01_fused_eltwise.py")])
    session.reset()
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("fused_relu_mul_add")]
    assert len(rows) == 12
    assert any("reader" in r for r in rows) and any("compute" in r for r in rows)
