"""``tilewright run --stats / --perf-report / --dry-run``: the modelled device time, reported."""

import csv

from click.testing import CliRunner

from tilewright.cli.main import cli

MATMUL = """
import torch, ttnn
d = ttnn.open_device(device_id=0)
kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=d)
a = ttnn.from_torch(torch.ones(256, 256), **kw)
c = ttnn.matmul(a, a)
print("sum", float(ttnn.to_torch(c).float().sum()))
ttnn.close_device(d)
"""


def _program(tmp_path, text: str = MATMUL):
    prog = tmp_path / "prog.py"
    prog.write_text(text)
    return prog


def run(tmp_path, *options, program):
    """``tilewright run OPTIONS PROGRAM``: (exit code, stdout, stderr, whether it ran)."""
    result = CliRunner().invoke(cli, ["run", *map(str, options), str(program)])
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr, result.stdout.startswith("sum")


def test_stats_show_each_operations_device_time_and_bound(tmp_path):
    prog = _program(tmp_path)
    code, out, err, _ = run(tmp_path, "--stats", program=prog)
    assert code == 0 and out.startswith("sum 16777216")
    assert "device ns" in err and "bound" in err
    row = next(line for line in err.splitlines() if "MatmulDeviceOperation" in line)
    assert int(row.split()[4]) > 0  # cycles


def test_perf_report_writes_tt_metals_op_report(tmp_path):
    prog = _program(tmp_path)
    report = tmp_path / "ops.csv"
    code, _out, err, _ = run(tmp_path, "--perf-report", report, program=prog)
    assert code == 0 and f"perf report: {report} (1 operation)" in err
    rows = list(csv.DictReader(report.open()))
    assert rows[0]["OP CODE"] == "MatmulDeviceOperation"
    assert int(rows[0]["DEVICE KERNEL DURATION [ns]"]) > 0


def test_perf_report_into_a_missing_folder_fails_before_the_run(tmp_path):
    prog = _program(tmp_path)
    code, _out, err, ran = run(tmp_path, "--perf-report", tmp_path / "no" / "r.csv", program=prog)
    assert code == 2 and not ran and "--perf-report" in err and "does not exist" in err


def test_a_dry_run_keeps_the_time_and_skips_the_values(tmp_path):
    prog = _program(tmp_path)
    real = tmp_path / "real.csv"
    dry = tmp_path / "dry.csv"
    code, out, _err, _ = run(tmp_path, "--perf-report", real, program=prog)
    assert code == 0 and out.startswith("sum 16777216")
    code, out, _err, _ = run(tmp_path, "--dry-run", "--perf-report", dry, program=prog)
    assert code == 0 and out.startswith("sum 0")  # the product was not computed
    duration = "DEVICE KERNEL DURATION [ns]"
    assert (
        list(csv.DictReader(dry.open()))[0][duration]
        == list(csv.DictReader(real.open()))[0][duration]
    )
