"""Categories that run ``tilewright`` / ``pytest`` in processes of their own (package doc)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
Case = tuple[str, Callable[[], object]]


def _tests():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def _tilewright(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tilewright", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        **kw,
    )


def _clean(text: str):
    from tilewright.errors import TilewrightError

    return TilewrightError(text.strip().splitlines()[-1] if text.strip() else "no message")


def emit_reruns(wrong: type[Exception], quick: bool) -> Iterator[Case]:
    """``tilewright emit`` of programs (interleaved, height-sharded, int32, raw IR, raw C++),
    then every emitted ``run.py``: it must print PASS (it checks itself bit for bit)."""
    programs = [
        ROOT / "tests/robustness/data/emit_sharded.py",
        ROOT / "examples/01_fused_eltwise.py",
    ]
    if not quick:
        programs += [ROOT / "examples" / n for n in
                     ("raw_scale_copy.py", "raw_sfpu.py", "raw_cpp_template.py", "04_unified_add.py")]  # fmt: skip
    for program in programs:

        def case(program=program):
            out = Path(tempfile.mkdtemp())
            proc = _tilewright("emit", "-o", str(out), str(program))
            _, err = proc.communicate(timeout=170)
            if proc.returncode != 0:
                if "Traceback" in err:
                    raise RuntimeError(err[-300:])
                raise _clean(err)
            folders = sorted(p for p in out.iterdir() if (p / "run.py").is_file())
            for folder in folders:
                run = _tilewright("run", str(folder / "run.py"))
                got, err = run.communicate(timeout=170)
                if run.returncode != 0 or "PASS" not in got:
                    if "FAIL" in err:
                        raise wrong(f"{folder.name}: {err.strip()[-160:]}")
                    raise RuntimeError(f"{folder.name}: exit {run.returncode}: {err[-200:]}")
            shutil.rmtree(out)
            return f"{len(folders)} reruns PASS"

        yield f"emit {program.name}", case


def signals(wrong: type[Exception], quick: bool) -> Iterator[Case]:
    """SIGTERM / SIGINT during a launch (Python and native kernels, with and without
    --isolate): a report of where the kernels were, the right status, the trace written."""
    _tests()
    from tests.robustness.programs import SPIN
    from tests.robustness.test_isolate import PROGRAM

    tmp = Path(tempfile.mkdtemp())
    spin = tmp / "spin.py"
    spin.write_text(SPIN)
    stuck = tmp / "stuck.py"
    stuck.write_text(PROGRAM.format(fn="spin_forever", cpp=str(ROOT / "tests/robustness/cpp")))
    warm = _tilewright("run", "--engine", "native", "--watchdog", "0.5", str(spin))
    warm.communicate(timeout=300)  # the native kernels built: signals reach the launch
    plans = [
        ("SIGTERM, Python kernels", ["--engine", "python"], spin, signal.SIGTERM, 143, False),
        ("SIGTERM, native kernels", ["--engine", "native"], spin, signal.SIGTERM, 143, False),
        ("SIGINT, Python kernels", ["--engine", "python"], spin, signal.SIGINT, 130, False),
        ("SIGINT to an isolating parent", ["--isolate"], stuck, signal.SIGINT, 130, True),
        ("SIGTERM to an isolating parent", ["--isolate"], stuck, signal.SIGTERM, 143, True),
    ]
    for name, args, program, sig, status, isolated in plans:

        def case(args=args, program=program, sig=sig, status=status, isolated=isolated):
            trace = tmp / "trace.json"
            trace.unlink(missing_ok=True)
            extra = [] if isolated else ["--trace", str(trace)]
            proc = _tilewright("run", "--watchdog", "0", *extra, *args, str(program),
                               start_new_session=True)  # fmt: skip
            assert proc.stdout is not None
            proc.stdout.readline()
            time.sleep(2.0)
            start = time.monotonic()
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=90)
            took = time.monotonic() - start
            if "Traceback" in err:
                raise RuntimeError(err[-300:])
            if proc.returncode != status or "(0, 0)" not in err:
                raise wrong(f"exit {proc.returncode} after {took:.1f} s, no report: {err[-160:]}")
            if not isolated:
                json.loads(trace.read_text())
            return f"reported, exit {status} after {took:.1f} s"

        yield name, case


def plugin_options(wrong: type[Exception], quick: bool) -> Iterator[Case]:
    """``pytest -p tilewright`` with bad options: one usage error at start-up."""
    suite = ROOT / "tests/data/ttlang_suite"
    option_sets = [
        ["--tilewright-board", "n9000"],
        ["--tilewright-board", ""],
        ["--tilewright-system-desc", "/nonexistent.ttsys"],
        ["--tilewright-system-desc", "/dev/zero"],
        ["--tilewright-system-desc", str(ROOT / "README.md")],
        ["--tilewright-board", "n150", "--tilewright-system-desc", "x.ttsys"],
        ["--tilewright-board", "n300"],  # a good one: the suite runs
    ]
    for options in option_sets:

        def case(options=options):
            work = Path(tempfile.mkdtemp()) / "suite"
            shutil.copytree(suite, work)
            env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
            proc = subprocess.run(
                [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-p",
                 "tilewright", *options],
                cwd=work, capture_output=True, text=True, timeout=110, env=env, check=False,
            )  # fmt: skip
            out = proc.stdout + proc.stderr
            if proc.returncode == 4 and "tilewright" in out and "fixtures.py" not in out:
                raise _clean(out)
            if proc.returncode in (0, 1) and "passed" in out:
                return "the suite ran"
            raise wrong(f"exit {proc.returncode}: {out.strip()[-160:]}")

        yield f"pytest -p tilewright {' '.join(options)}", case


def threads_one_device(wrong: type[Exception], quick: bool) -> Iterator[Case]:
    """Two threads calling one compiled operation on one device: each call right or the
    documented busy-device error."""
    _tests()
    import torch

    from tests.robustness.test_threads import add_quiet
    from tilewright import ttnn
    from tilewright.device import session
    from tilewright.errors import DeviceError

    for engine in ("native", "auto", "python"):

        def case(engine=engine):
            session.OPTIONS.engine = engine
            device = ttnn.open_device(device_id=0)
            kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
            outcomes: list[str] = []

            def worker(seed: int) -> None:
                for k in range(8):
                    a_host, b_host = (
                        torch.full((64, 64), float(seed)),
                        torch.full((64, 64), float(k)),
                    )
                    a, b = ttnn.from_torch(a_host, **kw), ttnn.from_torch(b_host, **kw)
                    out = ttnn.from_torch(torch.zeros(64, 64), **kw)
                    try:
                        add_quiet(a, b, out)
                    except DeviceError as exc:
                        outcomes.append("busy" if "another thread" in exc.message else exc.message)
                        continue
                    except Exception as exc:  # noqa: BLE001 - what the case reports
                        outcomes.append(f"{type(exc).__name__}: {exc}")
                        continue
                    ok = torch.equal(ttnn.to_torch(out).float(), a_host + b_host)
                    outcomes.append("right" if ok else "wrong")

            ts = [threading.Thread(target=worker, args=(s,)) for s in (1, 2)]
            try:
                for t in ts:
                    t.start()
                for t in ts:
                    t.join(100)
            finally:
                ttnn.close_device(device)
                session.OPTIONS.engine = "auto"
            if "wrong" in outcomes:
                raise wrong(f"{outcomes.count('wrong')} wrong results")
            bad = [o for o in outcomes if o not in ("right", "busy")]
            if bad:
                raise RuntimeError(bad[0][:200])
            return f"{outcomes.count('right')} right, {outcomes.count('busy')} busy"

        yield f"two threads, one device, {engine} engine", case
