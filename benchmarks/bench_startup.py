"""Start-up as a user feels it (issue 22 item 1): what Tilewright adds to a program's imports.

Prints one JSON object.  Each case runs in fresh interpreters, ``--runs`` times (cases
alternate, so a load change hits all of them alike), after one warm-up run of each (it
writes the bytecode caches and the native build cache, as a user's second run finds them):

* ``torch``: ``python -c "import torch"`` -- a TT-Lang program's own imports;
* ``torch_ttl``: ``python -c "import torch, tilewright.ttl"``;
* ``torch_ttl_ttnn``: ``python -c "import torch; from tilewright import ttl, ttnn"``;
* ``run``: ``python -m tilewright run benchmarks/programs/eltwise_add.py``, a whole run of a
  tutorial-shaped program (imports torch, one 256x256 elementwise operation on one node,
  the check against torch).

For each: ``wall_s`` (median wall time of the process), ``cpu_s`` (median user + system CPU
time of the process: steadier than wall time on a busy machine) and ``added_wall_s`` /
``added_cpu_s`` (the median minus the ``torch`` case's: what Tilewright adds; the goal is
0.3 s for the imports and for the run's start-up).  ``run`` adds the operation's own work
too (decoration, the call, reading back).

``importtime``: from one ``python -X importtime -c "import torch, tilewright.ttl"``: how many
Tilewright modules load, whether the compiler / native build / kernel IR / ``ml_dtypes``
are among them (``tests/test_startup.py`` asserts they are not), and the ten modules with
the largest self time beyond torch's.

``full_gc``: the full (generation 2) garbage collections that run during
``from tilewright import ttl, ttnn`` after ``import torch``, and their wall time (median of
the runs): the objects the import creates make Python's collector walk torch's whole heap
(about 165k objects) once, a cost that scales with what the import allocates.

``bytecode_cache``: false when ``PYTHONDONTWRITEBYTECODE`` is set in this process's
environment.  The children run without it either way: with it every run compiles every
Tilewright module from source again (about a second on 2 cores), which a user's installed
package never does.

Run: ``python benchmarks/bench_startup.py [--runs N]`` on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "benchmarks" / "programs" / "eltwise_add.py"
HEAVY = ("tilewright.compiler", "tilewright.native.build", "tilewright.kir", "ml_dtypes")

CASES = {
    "torch": ["-c", "import torch"],
    "torch_ttl": ["-c", "import torch, tilewright.ttl"],
    "torch_ttl_ttnn": ["-c", "import torch; from tilewright import ttl, ttnn"],
    "run": ["-m", "tilewright", "run", str(PROGRAM)],
}


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process running ``python args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def importtime(env: dict[str, str]) -> dict:
    """Modules ``import torch, tilewright.ttl`` loads beyond torch, from ``-X importtime``."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import torch, tilewright.ttl"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = line[len("import time:") :].split("|")
        rows.append((name.strip(), int(self_us), int(cumulative_us)))
    torch_us = next(cum for name, _, cum in rows if name == "torch")
    ttl_us = next(cum for name, _, cum in rows if name == "tilewright.ttl")
    tilewright = [name for name, _, _ in rows if name.startswith("tilewright")]
    beyond_torch = rows[next(i for i, (name, _, _) in enumerate(rows) if name == "torch") + 1 :]
    top = sorted(beyond_torch, key=lambda row: -row[1])[:10]
    return {
        "torch_ms": round(torch_us / 1e3, 1),
        "tilewright_ttl_ms": round(ttl_us / 1e3, 1),
        "tilewright_modules": len(tilewright),
        "heavy_modules_loaded": sorted(
            {h for h in HEAVY for name, _, _ in rows if name == h or name.startswith(h + ".")}
        ),
        "largest_self_ms": {name: round(us / 1e3, 1) for name, us, _ in top},
    }


GC_PROBE = """
import gc, json, time, torch
state = {"n": 0, "s": 0.0}
def watch(phase, info):
    if info["generation"] == 2:
        if phase == "start":
            state["t"] = time.perf_counter()
        else:
            state["n"] += 1
            state["s"] += time.perf_counter() - state["t"]
gc.callbacks.append(watch)
from tilewright import ttl, ttnn
print(json.dumps([state["n"], state["s"]]))
"""


def full_gc(env: dict[str, str], runs: int) -> dict:
    """Full collections during ``from tilewright import ttl, ttnn`` after torch (median)."""
    counts, seconds = [], []
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-c", GC_PROBE], cwd=ROOT, env=env, capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise SystemExit(f"the GC probe failed:\n{proc.stderr[-2000:]}")
        n, s = json.loads(proc.stdout.splitlines()[-1])
        counts.append(n)
        seconds.append(s)
    return {
        "collections": statistics.median(counts),
        "wall_s": round(statistics.median(seconds), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7, help="runs of each case (median)")
    args = parser.parse_args()
    env = child_env()
    for case in CASES.values():  # warm-up: bytecode caches, the native build cache
        timed(case, env)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in CASES}
    for _ in range(args.runs):
        for name, case in CASES.items():
            samples[name].append(timed(case, env))
    wall = {name: statistics.median(w for w, _ in s) for name, s in samples.items()}
    cpu = {name: statistics.median(c for _, c in s) for name, s in samples.items()}
    result = {
        "runs": args.runs,
        "bytecode_cache": "PYTHONDONTWRITEBYTECODE" not in os.environ,
        "goal_added_s": 0.3,
        "cases": {
            name: {
                "wall_s": round(wall[name], 3),
                "cpu_s": round(cpu[name], 3),
                "added_wall_s": round(wall[name] - wall["torch"], 3),
                "added_cpu_s": round(cpu[name] - cpu["torch"], 3),
            }
            for name in CASES
        },
        "importtime": importtime(env),
        "full_gc": full_gc(env, args.runs),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
