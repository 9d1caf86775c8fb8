"""`--trace` / `--stats` on both engines: a compiled operation records the interpreter's events.

Each program runs once interpreted (``--engine python``) and once compiled (``--engine
native``); the Chrome traces must be equal event for event (names, tracks, modelled
timestamps, arguments) and the ``--stats`` tables line for line.  ``--engine auto`` with
``--trace`` compiles (it no longer falls back to the interpreter).
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

PROGRAMS = ["01_fused_eltwise.py", "02_matmul_bias.py", "03_broadcast_reduce.py", "signposts"]


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


@pytest.mark.parametrize("name", PROGRAMS)
def test_compiled_trace_equals_the_interpreted_trace(tmp_path, name):
    program = _program(tmp_path, name)
    traces = {}
    for engine in ("python", "native"):
        path = tmp_path / f"{engine}.json"
        _run(tmp_path, program, engine, "--trace", str(path))
        traces[engine] = json.loads(path.read_text())
    interpreted, compiled = traces["python"], traces["native"]
    names = {e["name"] for e in interpreted["traceEvents"] if e["ph"] == "X"}
    if name == "signposts":
        assert {"copy", "signpost load-tile", "signpost store"} <= names
    else:
        assert {"wait", "copy"} <= names
    pairs = zip(interpreted["traceEvents"], compiled["traceEvents"], strict=False)
    first = next((i for i, (a, b) in enumerate(pairs) if a != b), None)
    assert first is None, (
        f"event {first}: {interpreted['traceEvents'][first]} != {compiled['traceEvents'][first]}"
    )
    assert compiled == interpreted


@pytest.mark.parametrize("name", PROGRAMS)
def test_compiled_stats_equal_the_interpreted_stats(tmp_path, name):
    program = _program(tmp_path, name)
    out = {e: _run(tmp_path, program, e, "--stats").output for e in ("python", "native")}
    assert "cycles" in out["python"]
    assert out["native"] == out["python"]


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
