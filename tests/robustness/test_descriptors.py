"""Hostile system descriptors: one check for every descriptor that reaches the device.

``tilewright sysdesc check`` and the device run the same function
(``device.requirements.check_runnable``): tt-mlir's rules, the architecture's physical
limits (rule 26) and what the virtual device needs (rule 27).  Before, ``check``
accepted ``num_cbs`` = 2**31-1 (24 GB and the OOM killer at run time), thread counts of
2**31-1 (unbounded growth) and ``num_dram_channels`` = 0 (ZeroDivisionError); reads of
``/dev/zero`` or a FIFO never ended.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import time

import pytest
from click.testing import CliRunner

from tilewright.cli.main import cli
from tilewright.device.device import Device
from tilewright.device.requirements import check_runnable, runnable_findings
from tilewright.errors import SystemDescError
from tilewright.target import (
    BOARD_PRESETS,
    MAX_DESCRIPTOR_BYTES,
    PHYSICAL_LIMITS,
    Arch,
    Dim2d,
    board_preset,
    default_system_desc,
    read_system_desc,
    validate,
    write_system_desc,
)

N150 = board_preset("n150")


def with_chip(root=N150, **changes):
    chip = dataclasses.replace(root.get_chip_desc(0), **changes)
    return dataclasses.replace(
        root, system_desc=dataclasses.replace(root.system_desc, chip_descs=(chip,))
    )


def cli_run(*args: str):
    result = CliRunner().invoke(cli, list(map(str, args)))
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.stdout, result.stderr


# The values of the issue, and every count or size a real chip cannot have.
HOSTILE = [
    ("num_cbs", 2**31 - 1, 26, "num_cbs = 2147483647: a wormhole_b0 chip has at most 64"),
    ("num_dram_channels", 2**31 - 1, 26, "a wormhole_b0 chip has at most 12 DRAM channels"),
    ("num_dram_channels", 0, 27, "num_dram_channels = 0: the virtual device needs at least 1"),
    ("num_compute_threads", 2**31 - 1, 26, "at most 1 compute kernels per core"),
    ("num_datamovement_threads", 2**32 - 1, 26, "at most 2 data-movement kernels per core"),
    ("num_compute_threads", 0, 27, "num_compute_threads = 0"),
    ("num_cbs", 0, 27, "num_cbs = 0"),
    ("grid_size", Dim2d(2**31 - 1, 2**31 - 1), 26, "exceeds the 10x8 Tensix array"),
    ("grid_size", Dim2d(11, 8), 26, "grid 11x8 exceeds the 10x8 Tensix array of a wormhole_b0"),
    ("l1_size", 2**40, 26, "a wormhole_b0 chip has at most 1499136 L1 per core"),
    ("dram_channel_size", 2**63, 26, "at most 1073741824 bytes per DRAM channel"),
    ("dst_physical_size_tiles", 2**31, 26, "at most 16 physical DST tiles"),
    ("dst_physical_size_tiles", 2, 27, "a 32-bit DST would hold no tile"),
    ("coord_translation_offsets", Dim2d(60, 18), 26, "beyond NoC coordinate 63"),
    ("coord_translation_offsets", Dim2d(-1, 0), 26, "are negative"),
    ("noc_l1_address_align_bytes", 0, 27, "noc_l1_address_align_bytes = 0"),
    ("noc_dram_address_align_bytes", 2**20, 26, "exceeds the NoC's largest packet"),
    ("dram_grid_size", Dim2d(1000, 1000), 26, "more DRAM cores than a wormhole_b0 chip's 12"),
    ("l1_unreserved_base", 1024, 27, "leave no room for the 4384 B kernel-config region"),
]


@pytest.mark.parametrize(("field", "value", "rule", "message"), HOSTILE)
def test_check_and_device_refuse_the_same_way(field, value, rule, message):
    root = with_chip(**{field: value})
    findings = [f for f in runnable_findings(root) if f.is_error]
    assert findings and findings[0].rule == rule and message in findings[0].message
    with pytest.raises(SystemDescError) as checked:
        check_runnable(root)
    with pytest.raises(SystemDescError) as built:
        Device(root.system_desc)
    assert built.value.rule == checked.value.rule == f"system-desc.{rule}"
    assert built.value.message == checked.value.message.replace("system_desc.", "", 1)


def test_hostile_values_are_refused_before_any_memory_is_taken():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    for field, value, _rule, _message in HOSTILE:
        with pytest.raises(SystemDescError):
            Device(with_chip(**{field: value}).system_desc)
    assert time.monotonic() - start < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB


def test_physical_limits_hold_every_real_and_default_descriptor():
    for name in BOARD_PRESETS:
        assert [f for f in validate(board_preset(name), for_device=True) if f.is_error] == []
        check_runnable(board_preset(name))
    for arch in ("wormhole_b0", "blackhole"):
        assert [
            f for f in validate(default_system_desc(arch), for_device=True) if f.rule == 26
        ] == []
    wh = PHYSICAL_LIMITS[Arch.WORMHOLE_B0]
    assert (wh.grid.y, wh.grid.x, wh.num_cbs, wh.num_dram_channels) == (10, 8, 64, 12)


def test_tt_mlir_validation_alone_is_unchanged():
    # Physical and device rules are the device's: tt-mlir's view keeps its findings.
    assert validate(with_chip(num_cbs=2**31 - 1)) == []
    assert validate(default_system_desc("wormhole_b0")) == []


@pytest.mark.parametrize("arch", ["wormhole_b0", "blackhole", "quasar"])
def test_sysdesc_default_output_runs_or_says_why_and_how(tmp_path, arch):
    out = tmp_path / f"{arch}.ttsys"
    code, _stdout, err = cli_run("sysdesc", "default", "--arch", arch, "-o", out)
    assert code == 0
    check_code, _o, check_err = cli_run("sysdesc", "check", out)
    prog = tmp_path / "prog.py"
    prog.write_text("import ttnn\nttnn.open_device(device_id=0)\nprint('ran')\n")
    run_code, run_out, run_err = cli_run("run", "--system-desc", out, prog)
    if arch == "blackhole":
        assert "note:" not in err and check_code == 0 and run_code == 0 and "ran" in run_out
    else:  # refused by check and run alike, with why and how
        assert "note:" in err and "--board n150" in err
        assert check_code == 1 and "[rule 27]" in check_err and "--board n150" in check_err
        assert run_code == 1 and "ran" not in run_out
        assert f"--system-desc {out}:" in run_err and "--board n150" in run_err


def test_check_agrees_with_run_on_files(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text("import ttnn\nttnn.open_device(device_id=0)\nprint('ran')\n")
    cases = {
        "n150.ttsys": N150,
        "p150.json": board_preset("p150"),
        "cbs.ttsys": with_chip(num_cbs=2**31 - 1),
        "dram0.mlir": with_chip(num_dram_channels=0),
        "threads.json": with_chip(num_datamovement_threads=2**31 - 1),
        "wh_default.mlir": default_system_desc("wormhole_b0"),
    }
    for name, root in cases.items():
        path = tmp_path / name
        write_system_desc(root, path)
        check_code, _out, _err = cli_run("sysdesc", "check", path)
        run_code, run_out, _err = cli_run("run", "--system-desc", path, prog)
        assert check_code == run_code, name
        assert ("ran" in run_out) == (run_code == 0), name


# --- bounded reads ------------------------------------------------------------------------


def test_reads_refuse_fifos_devices_directories_and_huge_files(tmp_path):
    fifo = tmp_path / "pipe.ttsys"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.ttsys"
    zero.symlink_to("/dev/zero")
    folder = tmp_path / "folder.json"
    folder.mkdir()
    huge = tmp_path / "huge.mlir"
    huge.write_bytes(b" " * (MAX_DESCRIPTOR_BYTES + 1))
    cases = {
        fifo: "is a FIFO (named pipe), not a descriptor file",
        zero: "is a character device, not a descriptor file",
        folder: "is a directory, not a descriptor file",
        huge: f"larger than {MAX_DESCRIPTOR_BYTES} bytes",
        tmp_path / "missing.ttsys": "cannot read: No such file or directory",
    }
    start = time.monotonic()
    for path, message in cases.items():
        with pytest.raises(SystemDescError) as e:
            read_system_desc(path)
        assert e.value.message.startswith(f"{path}: ") and message in e.value.message
        code, _out, err = cli_run("sysdesc", "check", path)
        if path == folder:  # click's own check of the argument comes first (usage error)
            assert code == 2 and "is a directory" in err
        else:
            assert code == 1 and message in err
    assert time.monotonic() - start < 5  # nothing blocks on the FIFO


def test_a_file_whose_size_lies_is_still_read_bounded(tmp_path):
    # /proc files report st_size 0 but have content: reading stays bounded, errors are clean.
    status = tmp_path / "status.json"
    status.symlink_to("/proc/self/status")
    with pytest.raises(SystemDescError, match="not JSON|JSON"):
        read_system_desc(status)


def test_devices_from_many_different_descriptors_do_not_exhaust_low_memory():
    # Every worker's L1 lives below 2 GiB and closed arenas are recycled by size; devices
    # of 140 different grids (about 15 GiB of arenas in all) must still open one by one.
    p150 = board_preset("p150")
    for y in range(1, 11):
        for x in range(1, 15):
            Device(with_chip(p150, grid_size=Dim2d(y, x)).system_desc).close()
