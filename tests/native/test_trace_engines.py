"""`--trace` / `--stats` on both engines: a compiled operation records the interpreter's events.

Each program runs once interpreted (``--engine python``) and once compiled (``--engine
native``).  A data-movement program gives equal traces event for event (names, tracks,
modelled timestamps, arguments) and equal ``--stats`` tables; the examples give, per
kernel, the same copies and pipe deliveries with the same arguments (their compute and
pipe timing differs between the engines: docs/running.md, "Traces").  ``--engine auto``
with ``--trace`` compiles (it no longer falls back to the interpreter).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.e2e.conftest import EXAMPLES
from tilewright.cli.main import cli
from tilewright.compiler.backend import engine as engines
from tilewright.device import session

SIGNPOSTS = """\
import torch, ttl, ttnn

@ttl.operation(grid=(1, 2))
def op(a, y):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    @ttl.datamovement()
    def reader():
        r = ttl.node(dims=2)[1]
        for j in range(2):
            with ttl.signpost('load-tile'):
                with d.reserve() as b:
                    ttl.copy(a[r, j], b).wait()
    @ttl.datamovement()
    def writer():
        r = ttl.node(dims=2)[1]
        for j in range(2):
            with d.wait() as b, ttl.signpost('store'):
                t = ttl.copy(b, y[r, j])
                t.wait()

dev = ttnn.open_device(device_id=0)
a = ttnn.from_torch(torch.arange(64 * 64.0).reshape(64, 64), dtype=ttnn.bfloat16,
                    layout=ttnn.TILE_LAYOUT, device=dev)
y = ttnn.from_torch(torch.zeros(64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
op(a, y)
assert (ttnn.to_torch(y) == ttnn.to_torch(a)).all()
print("PASS")
"""

EXAMPLE_PROGRAMS = ["01_fused_eltwise.py", "03_broadcast_reduce.py", "05_pipe_multicast.py"]


def _program(tmp_path, name):
    if name == "signposts":
        path = tmp_path / "signposts.py"
        path.write_text(SIGNPOSTS)
        return path
    return EXAMPLES / name


def _run(tmp_path, program, engine, *options):
    engines.NOTICES.clear()
    result = CliRunner().invoke(cli, ["run", "--engine", engine, *options, str(program)])
    session.reset()
    assert result.exit_code == 0, result.output
    return result


def _traces(tmp_path, program):
    out = {}
    for engine in ("python", "native"):
        path = tmp_path / f"{engine}.json"
        _run(tmp_path, program, engine, "--trace", str(path))
        out[engine] = json.loads(path.read_text())
    return out["python"], out["native"]


def test_data_movement_trace_and_stats_are_equal(tmp_path):
    """Data movement only (no compute cost model involved): every event and every
    timestamp, and the --stats table, are the interpreter's."""
    program = _program(tmp_path, "signposts")
    interpreted, compiled = _traces(tmp_path, program)
    names = {e["name"] for e in interpreted["traceEvents"] if e["ph"] == "X"}
    assert {"copy", "signpost load-tile", "signpost store"} <= names
    pairs = zip(interpreted["traceEvents"], compiled["traceEvents"], strict=False)
    first = next((i for i, (a, b) in enumerate(pairs) if a != b), None)
    assert first is None, (
        f"event {first}: {interpreted['traceEvents'][first]} != {compiled['traceEvents'][first]}"
    )
    assert compiled == interpreted
    stats = {e: _run(tmp_path, program, e, "--stats").output for e in ("python", "native")}
    assert "cycles" in stats["python"] and stats["native"] == stats["python"]


def _tracks(trace, names):
    """Per (process, thread) track and event name in ``names``: the events' arguments, in
    order.  (The interpreter records a pipe delivery when its last receiver matches, after
    the sender's later copies; compiled code when the sender's wait delivers: the kinds
    interleave differently, each kind's order is the same.)"""
    tracks: dict = {}
    for e in trace["traceEvents"]:
        if e["ph"] == "X" and e["name"] in names:
            tracks.setdefault((e["pid"], e["tid"], e["name"]), []).append(e.get("args"))
    return tracks


@pytest.mark.parametrize("name", EXAMPLE_PROGRAMS)
def test_compiled_trace_has_the_interpreted_events(tmp_path, name):
    """Every kernel records the same copies, pipe deliveries and signposts, in the same
    order with the same arguments.  Waits and timestamps follow each engine's clocks,
    which differ where the engines model compute or the pipe protocol differently
    (docs/running.md, "Traces")."""
    interpreted, compiled = _traces(tmp_path, _program(tmp_path, name))
    names = {"copy", "multicast", "pipe write"}
    assert _tracks(compiled, names) == _tracks(interpreted, names)
    waits = [e for e in compiled["traceEvents"] if e["name"] == "wait"]
    assert waits and all(e["args"]["on"] for e in waits)
    if name == "05_pipe_multicast.py":
        assert sum(e["name"] == "multicast" for e in compiled["traceEvents"]) == 2


def test_tracing_does_not_change_compiled_times(tmp_path):
    program = EXAMPLES / "01_fused_eltwise.py"
    plain = _run(tmp_path, program, "native", "--stats").output
    traced = _run(tmp_path, program, "native", "--stats", "--trace", str(tmp_path / "t.json"))
    assert traced.output.replace(f"trace: {tmp_path / 't.json'}\n", "") == plain


def test_auto_compiles_under_trace(tmp_path):
    program = _program(tmp_path, "signposts")
    auto, native = tmp_path / "auto.json", tmp_path / "native.json"
    result = _run(tmp_path, program, "auto", "--trace", str(auto))
    assert "runs interpreted" not in result.output
    _run(tmp_path, program, "native", "--trace", str(native))
    assert auto.read_bytes() == native.read_bytes()


def test_untraced_compiled_run_records_no_events(tmp_path):
    """Without --trace the runtime's trace requests stay off (the header's flag)."""
    from tilewright.native import requests

    calls = []
    saved = dict(requests.HANDLERS)
    for key in (b"trace_block", b"trace_wait", b"trace_span"):
        requests.HANDLERS[key] = lambda run, args, tables, _k=key: calls.append(_k) or 0
    try:
        _run(tmp_path, _program(tmp_path, "signposts"), "native")
    finally:
        requests.HANDLERS.clear()
        requests.HANDLERS.update(saved)
    assert calls == []
