"""`tilewright run --isolate`: a crashing external function is reported, not fatal."""

from __future__ import annotations

from pathlib import Path

CPP = Path(__file__).resolve().parent / "cpp"

PROGRAM = """\
import torch
import ttl
import ttnn

CPP = {cpp!r}


@ttl.operation(grid=(2, 1))
def crasher(a: ttnn.Tensor) -> None:
    @ttl.datamovement()
    def dm():
        how = {how}
        if ttl.node(dims=1) == 1:
            ttl.call_extern_func("failures.hpp", "crash_now", func_args=[how], include_paths=[CPP])


device = ttnn.open_device(device_id=0)
print("before the call", flush=True)
crasher(ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device))
print("PASS after the call")
"""

CALL_LINE = 14


def write(tmp_path, how: int) -> Path:
    path = tmp_path / f"crash_{how}.py"
    path.write_text(PROGRAM.format(cpp=str(CPP), how=how))
    assert "call_extern_func" in path.read_text().splitlines()[CALL_LINE - 1]
    return path


def test_segfault_in_external_code_is_reported_with_its_call_site(tmp_path, run_tilewright):
    path = write(tmp_path, 1)
    rc, out, err = run_tilewright("--isolate", str(path))
    assert rc != 0
    assert "before the call" in out and "PASS" not in out
    assert "NativeCrashError" in err
    assert "ttl.call_extern_func('failures.hpp', 'crash_now') crashed with SIGSEGV" in err
    assert "on node (1, 0)" in err
    assert f"{path}:{CALL_LINE}:" in err


def test_abort_in_external_code_is_reported(tmp_path, run_tilewright):
    path = write(tmp_path, 2)
    rc, out, err = run_tilewright("--isolate", str(path))
    assert rc != 0 and "NativeCrashError" in err and "crashed with SIGILL" in err
    assert f"{path}:{CALL_LINE}:" in err


def test_isolated_run_of_a_good_program_passes_through(run_tilewright):
    rc, out, err = run_tilewright(
        "--isolate",
        str(Path(__file__).resolve().parents[2] / "examples" / "07_extern_reader" / "program.py"),
    )
    assert rc == 0, err
    assert out.strip() == "PASS 07_extern_reader"
