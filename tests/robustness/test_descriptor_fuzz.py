"""check = run on extreme descriptor values, fuzzed (hypothesis, derandomized, memory-capped).

The property itself lives in ``descriptor_fuzz.py`` and runs in a child process with an
address-space limit; this test runs it and checks that it saw both accepted and
rejected descriptors.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_check_equals_run_on_extreme_values():
    proc = subprocess.run(
        [sys.executable, "-m", "tests.robustness.descriptor_fuzz", "500"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sum(counts.values()) >= 500
    accepted = sum(n for k, n in counts.items() if k.startswith("accepted"))
    rejected = sum(n for k, n in counts.items() if k.startswith("rejected"))
    assert accepted >= 30 and rejected >= 100, counts
    assert counts.get("accepted: ran", 0) >= 30, counts
    assert {"rejected: system-desc.26", "rejected: system-desc.27"} <= set(counts), counts
