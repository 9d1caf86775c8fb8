"""Compiler coverage (issue 21): the share of the repo's TT-Lang operations that compile.

Prints one JSON object.  It measures coverage, not time.  Every program of the
corpus (``tests/corpus.py``: ``examples/``, ``/work/shared/examples/`` when present, the
compiler's test programs and the end-to-end test programs; the same list
``tests/compiler/backend/test_emit_all.py`` emits) runs once, in its own process, under
``--engine auto`` with the analysis of ``tilewright explain --coverage`` (each kernel
lowered on its own, so one refused kernel does not hide another's reason).

Per program: its exit status and, per distinct operation outcome, compiled or
interpreted, the reason (``message`` and ``where``, file:line) and each kernel's verdict.
Totals: operations and kernels compiled, the share compiled, and the interpreted
reasons by frequency (the operation's reason, and each refused kernel's first construct,
counted by message; the file:line examples are kept).

``--one PROGRAM`` is the child: it runs one program and prints its record.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TIMEOUT_S = 600

from tests import corpus  # noqa: E402  (the program list, shared with tests/compiler/backend/test_emit_all.py)


def run_one(program: str) -> dict:
    """Child: run one program under ``auto`` with the coverage analysis."""
    sys.path.insert(0, str(ROOT))
    from tilewright.cli import explain
    from tilewright.device import session

    session.reset(engine="auto")
    base = os.path.dirname(os.path.abspath(program))
    status, calls = explain.run_with_coverage(program, [])
    return {"status": status, "operations": explain.coverage_records(calls, base)}


def measure(program: corpus.Program, scratch: Path) -> dict:
    group, rel = program.group, program.name
    path = program.materialise(scratch)
    proc = subprocess.run(
        [sys.executable, __file__, "--one", str(path)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=path.parent,
    )
    line = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"group": group, "program": rel, "error": "\n".join(tail), "operations": []}
    ops = record["operations"]
    return {
        "group": group,
        "program": rel,
        "status": record["status"],
        "operations_compiled": sum(o["compiled"] for o in ops),
        "operations_interpreted": sum(not o["compiled"] for o in ops),
        "operations": ops,
    }


def summarise(results: list[dict]) -> dict:
    ops = [o for r in results for o in r["operations"]]
    kernels = [k for o in ops for k in o["kernels"]]
    op_reasons: collections.Counter[str] = collections.Counter()
    kernel_reasons: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    for r in results:
        for o in r["operations"]:
            if o["reason"] is not None:
                op_reasons[o["reason"]["message"]] += 1
            for k in o["kernels"]:
                if k["reason"] is not None:
                    msg = k["reason"]["message"]
                    kernel_reasons[msg] += 1
                    examples.setdefault(msg, f"{r['program']} ({k['reason']['where']})")
    n_ok = sum(o["compiled"] for o in ops)
    k_ok = sum(k["reason"] is None for k in kernels)
    return {
        "programs": len(results),
        "programs_failed_to_run": [r["program"] for r in results if "error" in r],
        "operations": len(ops),
        "operations_compiled": n_ok,
        "share_compiled": round(n_ok / len(ops), 3) if ops else None,
        "kernels": len(kernels),
        "kernels_compile": k_ok,
        "kernel_share_compiles": round(k_ok / len(kernels), 3) if kernels else None,
        "interpreted_reasons": [{"count": c, "message": m} for m, c in op_reasons.most_common()],
        "kernel_reasons": [
            {"count": c, "message": m, "first_seen": examples[m]}
            for m, c in kernel_reasons.most_common()
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", help="(child) run one program and print its record")
    ns = parser.parse_args()
    if ns.one:
        record = run_one(ns.one)
        sys.stdout.flush()
        print(json.dumps(record))
        return
    with tempfile.TemporaryDirectory(prefix="tw-coverage-") as tmp:
        scratch = Path(tmp)
        listed, note = corpus.listing()
        results = [measure(program, scratch) for program in listed]
    print(
        json.dumps(
            {"shared_examples": note, **summarise(results), "per_program": results}, indent=1
        )
    )


if __name__ == "__main__":
    main()
