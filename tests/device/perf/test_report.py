"""Per-operation records, the bound, --stats and tt-metal's op-perf CSV (read by tt-perf-report)."""

import csv
import subprocess
import sys

import pytest
import torch

from tilewright import ttnn
from tilewright.device import session
from tilewright.device.perf.arch import WORMHOLE_B0
from tilewright.device.perf.report import CSV_COLUMNS, OpRecord, classify, format_stats, write_csv


def test_the_bound_is_what_fills_the_op():
    assert classify(1000, {"compute": 900, "NoC": 100, "DRAM": 50}, 10) == "compute"
    assert classify(1000, {"compute": 100, "NoC": 200, "DRAM": 800}, 10) == "DRAM"
    assert classify(1000, {"compute": 300, "NoC": 200, "DRAM": 100}, 10) == "DFB wait"
    assert classify(1000, {"compute": 300, "NoC": 200, "DRAM": 100}, 10, fill=0) == "compute"
    assert classify(1000, {"compute": 999, "NoC": 0, "DRAM": 0}, 5000) == "dispatch"


def _matmul_ops(device):
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    a = ttnn.from_torch(torch.randn(256, 512), **kw)
    b = ttnn.from_torch(torch.randn(512, 256), **kw)
    c = ttnn.matmul(a, b)
    ttnn.relu(c)


@pytest.fixture
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def test_ttnn_ops_get_device_time_records_in_order(device):
    session.reset(stats=True)
    _matmul_ops(device)
    ops = session.OPTIONS.ops
    assert [r.op_code for r in ops] == ["MatmulDeviceOperation", "UnaryDeviceOperation"]
    mm = ops[0]
    assert mm.call == 1 and mm.kernel_cycles > 0 and mm.math_fidelity == "LoFi"
    assert "in0_block_w=" in mm.attributes and mm.cores > 1
    assert ops[1].start_ns >= mm.start_ns + mm.kernel_ns  # laid end to end
    text = format_stats(ops)
    assert "MatmulDeviceOperation" in text and "modelled device time" in text


def test_recording_is_off_unless_asked(device):
    session.reset()
    _matmul_ops(device)
    assert session.OPTIONS.ops == []


def test_the_csv_has_tt_metals_columns(tmp_path):
    rec = OpRecord(op_code="X", arch=WORMHOLE_B0, cores=4, kernel_cycles=1000, call=1)
    path = tmp_path / "r.csv"
    write_csv([rec], path)
    rows = list(csv.DictReader(path.open()))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert rows[0]["DEVICE KERNEL DURATION [ns]"] == "1000"
    assert rows[0]["DEVICE ARCH"] == "wormhole_b0" and rows[0]["OP TYPE"] == "tt_dnn_device"


TTL_MATMUL = """
import torch, ttl, ttnn

@ttl.operation(grid=(2, 2))
def tl_matmul(a: ttnn.Tensor, b: ttnn.Tensor, y: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        x, yy = ttl.node(dims=2)
        for k in range(2):
            with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                ttl.copy(a[yy, k], ab).wait()
                ttl.copy(b[k, x], bb).wait()

    @ttl.compute()
    def compute():
        with y_dfb.reserve() as yb:
            for k in range(2):
                with a_dfb.wait() as ab, b_dfb.wait() as bb:
                    if k == 0:
                        yb.store(ab @ bb)
                    else:
                        yb += ab @ bb

    @ttl.datamovement()
    def writer():
        x, yy = ttl.node(dims=2)
        with y_dfb.wait() as yb:
            ttl.copy(yb, y[yy, x]).wait()

d = ttnn.open_device(device_id=0)
kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=d)
a = ttnn.from_torch(torch.randn(64, 64), **kw)
b = ttnn.from_torch(torch.randn(64, 64), **kw)
y = ttnn.from_torch(torch.zeros(64, 64), **kw)
tl_matmul(a, b, y)
ttnn.matmul(a, b)
ttnn.close_device(d)
print("ok")
"""


def test_tt_perf_report_reads_the_report_of_a_ttnn_and_a_tt_lang_matmul(tmp_path, run_tilewright):
    pytest.importorskip("tt_perf_report")
    prog = tmp_path / "prog.py"
    prog.write_text(TTL_MATMUL)
    report = tmp_path / "ops_perf_results.csv"
    code, out, err = run_tilewright("--perf-report", str(report), "--stats", str(prog))
    assert code == 0 and out == "ok\n", err
    assert "perf report:" in err and "tl_matmul" in err and "MatmulDeviceOperation" in err
    analysed = tmp_path / "analysed.csv"
    proc = subprocess.run(
        [sys.executable, "-m", "tt_perf_report.perf_report", str(report), "--csv", str(analysed)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(analysed.open()))
    codes = [r["OP Code"] for r in rows]
    assert codes[0] == "tl_matmul" and codes[1].startswith("MatmulDeviceOperation 64 x 64 x 64")
    ours = list(csv.DictReader(report.open()))
    for mine, theirs in zip(ours, rows):  # their device time is ours, in us
        assert float(theirs["Device Time"]) == pytest.approx(
            float(mine["DEVICE KERNEL DURATION [ns]"]) / 1000, abs=0.51
        )
