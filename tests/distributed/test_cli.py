"""`tilewright run --workers N`: the same output and statistics as one process, a summary of
where launches ran, and a clear message without Ray."""

from __future__ import annotations

import sys

from click.testing import CliRunner

from tilewright.cli.main import cli
from tilewright.device import session
from tilewright.device.device import SHARE_MEMORY

from ..mesh.test_run import PROGRAM

# The mesh program of tests/mesh, its reader printing from the kernel (a DPRINT when compiled).
READER = "        with a_dfb.reserve() as blk:\n"
PRINTING = PROGRAM.replace(READER, '        print("reading", 1.5)\n' + READER, 1)
assert PRINTING != PROGRAM


def _run(tmp_path, *flags: str):
    path = tmp_path / "mesh_program.py"
    path.write_text(PRINTING)
    result = CliRunner().invoke(cli, ["run", *flags, str(path)])
    session.reset()
    return result


def test_workers_give_the_one_process_output_and_statistics(tmp_path):
    here = _run(tmp_path, "--stats")
    there = _run(tmp_path, "--workers", "2", "--stats")
    assert here.exit_code == 0, here.output
    assert there.exit_code == 0, there.output
    summary = (
        "tilewright: 2 worker processes ran 5 launches "
        "(1 of them mesh workloads across workers, 4 packet exchanges)"
    )
    lines = there.output.splitlines()
    assert summary in lines
    lines.remove(summary)
    assert lines == here.output.splitlines()  # the program's output and every statistic
    assert "PASS 32 devices, mesh 1x4" in here.output
    assert "[chip 3 node (0, 0) reader] reading 1.5" in lines  # a kernel's print, in order
    assert not SHARE_MEMORY["default"]  # the run's end stopped the workers


def test_a_traced_run_with_workers_writes_the_one_process_trace(tmp_path):
    """`--trace` with `--workers`: the launches run in the workers (SPMD and the split
    all-gather), recorded there and replayed in the driver -- the same file, byte for byte."""
    paths = [tmp_path / "here.json", tmp_path / "there.json"]
    here = _run(tmp_path, "--trace", str(paths[0]))
    there = _run(tmp_path, "--workers", "2", "--trace", str(paths[1]))
    assert here.exit_code == 0, here.output
    assert there.exit_code == 0, there.output
    assert "tilewright: 2 worker processes ran 5 launches" in there.output  # none in the driver
    assert "the driver ran" not in there.output
    data = paths[0].read_bytes()
    assert b'"chip 3 (mesh (0, 3))"' in data and b'"wait"' in data
    assert paths[1].read_bytes() == data


def test_workers_without_ray_say_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    result = _run(tmp_path, "--workers", "2")
    assert result.exit_code == 1
    assert "run on Ray, which is not installed" in result.output
    assert "pip install 'tilewright[distributed]'" in result.output


def test_ray_address_joins_a_running_cluster(tmp_path):
    """`--ray-address` runs the workers in a cluster started beforehand (`ray start`), here
    on this host; the run leaves the cluster up (it is not the run's to stop)."""
    import os
    import shutil
    import subprocess
    import tempfile

    ray_cli = shutil.which("ray", path=os.path.dirname(sys.executable))
    assert ray_cli is not None, "the test extra installs Ray's command line"
    env = dict(os.environ, RAY_DISABLE_FAILURE_SIGNAL_HANDLER="1")
    temp = tempfile.mkdtemp(prefix="twray")  # short: Ray's sockets live under it
    start = [ray_cli, "start", "--head", "--num-cpus", "2", "--include-dashboard=false"]
    started = subprocess.run(
        [*start, "--temp-dir", temp], capture_output=True, text=True, env=env, timeout=120
    )
    assert started.returncode == 0, started.stderr[-2000:]
    try:
        result = _run(tmp_path, "--ray-address", "auto", "--workers", "2")
        assert result.exit_code == 0, result.output
        assert "tilewright: 2 worker processes ran 5 launches" in result.output, result.output
        assert "[chip 3 node (0, 0) reader] reading 1.5" in result.output
        # More workers than the node has CPUs: a clear error, not workers pending for ever.
        from tilewright.distributed import pool

        saved, pool._START_SECONDS = pool._START_SECONDS, 5
        try:
            crowded = _run(tmp_path, "--ray-address", "auto", "--workers", "3")
        finally:
            pool._START_SECONDS = saved
        assert crowded.exit_code == 1, crowded.output
        assert "--workers 3: the workers did not start within 5 s" in crowded.output
        assert "ray start --num-cpus N" in crowded.output
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, env=env, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)


def test_isolate_with_workers_gives_the_same_output(tmp_path):
    """`--isolate` runs the simulation in a child process; with `--workers` that child is
    the driver of the workers, and the output is the one-process run's."""
    import subprocess

    path = tmp_path / "mesh_program.py"
    path.write_text(PRINTING)
    tilewright = [sys.executable, "-m", "tilewright"]
    runs = [
        subprocess.run(
            [*tilewright, "run", *flags, "--stats", str(path)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        for flags in ((), ("--isolate", "--workers", "2"))
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    here, there = runs
    assert there.stdout == here.stdout  # the program's output, the prints and every statistic
    assert "tilewright: 2 worker processes ran 5 launches" in there.stderr
