"""``tilewright run --compare prog.py``: one program, both TT-Lang compilers, compared bit for bit.

The program runs twice, each time in a child ``tilewright run`` that records every tensor
value the program reads back (``ttnn.readback``): once with Tilewright's own compiler (this
interpreter), once with the real TT-Lang compiler (its Python 3.12 environment).  Readback
*k* of one run is compared with readback *k* of the other, bit for bit; a difference is
listed with its count, the largest difference and where it is.  Exit status 0 means both
runs succeeded and read back identical bits.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np

from tilewright.cli import ttlang_env
from tilewright.ttnn import readback

__all__ = ["compare_compilers", "compare_readbacks"]

_TAIL = 12  # lines of a failed run's output shown


def _start(cmd: list[str], variables: dict[str, str] | None) -> subprocess.Popen:
    return subprocess.Popen(
        cmd, env=variables, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _finish(proc: subprocess.Popen) -> subprocess.CompletedProcess:
    out, err = proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _tail(proc: subprocess.CompletedProcess) -> str:
    lines = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-_TAIL:]
    return "\n".join("    | " + line for line in lines)


def _describe(r: readback.Readback) -> str:
    return f"{r.where}, {r.dtype} {list(r.shape)}"


def compare_readbacks(ours: list[readback.Readback], theirs: list[readback.Readback]) -> list[str]:
    """One line per readback (and per missing one); empty differences say ``identical``."""
    lines = []
    for k in range(max(len(ours), len(theirs))):
        if k >= len(ours) or k >= len(theirs):
            have = ours[k] if k < len(ours) else theirs[k]
            who = "Tilewright's compiler" if k < len(ours) else "the real compiler"
            lines.append(f"readback {k + 1} ({_describe(have)}): only the run with {who} read it")
            continue
        a, b = ours[k], theirs[k]
        head = f"readback {k + 1} ({_describe(a)})"
        if (a.dtype, a.shape) != (b.dtype, b.shape):
            lines.append(f"{head}: the real compiler's run read {b.dtype} {list(b.shape)}")
            continue
        if a.data == b.data:
            lines.append(f"{head}: identical")
            continue
        va, vb = a.values(), b.values()
        differ = va.view(np.uint8).reshape(*va.shape, -1) != vb.view(np.uint8).reshape(
            *vb.shape, -1
        )
        differ = differ.any(axis=-1) if va.ndim else differ.any()
        count = int(np.count_nonzero(differ))
        with np.errstate(all="ignore"):
            delta = np.abs(va.astype(np.float64) - vb.astype(np.float64))
        delta = np.where(differ, np.nan_to_num(delta, nan=np.inf), 0.0)
        worst = np.unravel_index(int(np.argmax(delta)), delta.shape) if delta.ndim else ()
        where = list(int(i) for i in worst)
        lines.append(
            f"{head}: {count} of {va.size} elements differ; largest |difference| "
            f"{float(delta[worst]):.6g} at {where} (Tilewright {float(va[worst])!r}, real compiler "
            f"{float(vb[worst])!r})"
        )
    return lines


def compare_compilers(
    program: str, args: list[str], options: list[str], real_options: list[str] | None = None
) -> int:
    """Run ``program`` with both compilers and print the comparison; the exit status.

    ``options`` go to both runs, ``real_options`` (default ``options``) to the real
    compiler's instead."""
    real = ttlang_env.SPEC.tt_lang.replace("==", " ")
    with tempfile.TemporaryDirectory(prefix="tilewright-compare-") as tmp:
        ours_file, theirs_file = (
            os.path.join(tmp, "tilewright.npz"),
            os.path.join(tmp, "ttlang.npz"),
        )
        tail = [program, *args]
        # The two runs are independent processes: run them side by side.
        ours_proc = _start(
            [sys.executable, "-m", "tilewright", "run", *options, "--record", ours_file, *tail],
            None,
        )
        theirs_options = options if real_options is None else real_options
        real_argv = ["run", "--compiler", "ttlang", *theirs_options, "--record", theirs_file, *tail]
        if ttlang_env.in_real_compiler():
            cmd, variables = [sys.executable, "-m", "tilewright", *real_argv], None
        else:
            cmd, variables = ttlang_env.command(ttlang_env.require(), real_argv)
        theirs_proc = _start(cmd, variables)
        ours, theirs = _finish(ours_proc), _finish(theirs_proc)
        ours_records = readback.load(ours_file) if os.path.exists(ours_file) else []
        theirs_records = readback.load(theirs_file) if os.path.exists(theirs_file) else []
    print(f"compare: {program} with Tilewright's compiler and the real compiler ({real})")
    ok = True
    for who, proc, recs in (
        ("Tilewright's compiler", ours, ours_records),
        (f"the real compiler ({real})", theirs, theirs_records),
    ):
        print(f"  {who}: exit status {proc.returncode}, {len(recs)} readbacks")
        if proc.returncode != 0:
            ok = False
            print(_tail(proc))
    lines = compare_readbacks(ours_records, theirs_records)
    for line in lines:
        print("  " + line)
    if any(not line.endswith(": identical") for line in lines):
        ok = False
    print("compare: identical" if ok else "compare: the two compilers' runs differ (see above)")
    return 0 if ok else 1
