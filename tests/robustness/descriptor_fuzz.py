"""Fuzz of check = run on extreme descriptor values (run by test_descriptor_fuzz.py).

Runs in a child process whose address space is capped (``RLIMIT_AS``), so a descriptor
that slipped through and made the device allocate without bound dies with MemoryError
here instead of taking the machine.  For every drawn descriptor:

* *check* = ``runnable_findings`` on its ``.ttsys`` bytes (what ``tilewright sysdesc
  check`` runs);
* *run* = decode the bytes and build a ``Device`` from them (what ``tilewright run
  --system-desc`` and ``ttnn.open_device`` do), then write and read back a DRAM and an
  L1 buffer and run a producer/consumer launch through a circular buffer on core (0, 0).

check rejects ⇔ the device refuses, with the same rule and message; when check accepts,
the run works or fails with a Tilewright error (e.g. out of memory); nothing else ever
escapes.  Prints one JSON line of counts.
"""

from __future__ import annotations

import dataclasses
import json
import resource
import sys
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilewright.device.buffer import Buffer, BufferType
from tilewright.device.cb import CircularBuffer
from tilewright.device.device import Device
from tilewright.device.engine import KernelRun
from tilewright.device.requirements import runnable_findings
from tilewright.errors import SystemDescError, TilewrightError
from tilewright.target import (
    Arch,
    Dim2d,
    board_preset,
    decode_ttsys,
    default_system_desc,
    encode_ttsys,
)
from tilewright.target.validate import first_error

U32 = [0, 1, 2, 3, 4, 7, 8, 12, 15, 16, 17, 31, 32, 63, 64, 65, 1024, 4096, 8192, 16384]
U32 += [16385, 65536, 98304, 103840, 1499136, 1572864, 2**30, 2**31 - 1, 2**31, 2**32 - 1]
U64 = U32 + [4278190080, 2**32, 2**40, 2**63 - 1, 2**64 - 1]
I32 = [-(2**31), -1, 0, 1, 2, 7, 8, 9, 10, 11, 13, 14, 15, 18, 45, 46, 63, 64, 2**31 - 1]

SCALARS = {
    "l1_size": U64,
    "dram_channel_size": U64,
    "num_dram_channels": U32,
    "noc_l1_address_align_bytes": U32,
    "pcie_address_align_bytes": U32,
    "noc_dram_address_align_bytes": U32,
    "l1_unreserved_base": U32,
    "erisc_l1_unreserved_base": U32,
    "dram_unreserved_base": U32,
    "dram_unreserved_end": U32,
    "dst_physical_size_tiles": U32,
    "num_cbs": U32,
    "num_compute_threads": U32,
    "num_datamovement_threads": U32,
}
DIMS = ("grid_size", "coord_translation_offsets", "dram_grid_size")
BASES = [board_preset("n150"), board_preset("p150"), default_system_desc("blackhole")]

COUNTS: Counter[str] = Counter()


@st.composite
def descriptors(draw):
    root = draw(st.sampled_from(BASES))
    chip = root.get_chip_desc(0)
    changes: dict = {}
    for name in draw(st.lists(st.sampled_from(sorted(SCALARS) + list(DIMS)), max_size=3)):
        if name in SCALARS:
            changes[name] = draw(st.sampled_from(SCALARS[name]))
        else:
            changes[name] = Dim2d(draw(st.sampled_from(I32)), draw(st.sampled_from(I32)))
    if draw(st.booleans()):
        changes["arch"] = draw(st.sampled_from(list(Arch)))
    chip = dataclasses.replace(chip, **changes)
    chips = draw(st.integers(1, 3))
    sd = dataclasses.replace(
        root.system_desc,
        chip_descs=(chip,),
        chip_desc_indices=(0,) * chips,
        chip_capabilities=(1,) * chips,
    )
    return dataclasses.replace(root, system_desc=sd)


def exercise(device: Device) -> None:
    """What a program does first: buffers in DRAM and L1, and a launch through a CB.

    One page, so one DRAM channel is mapped (channels are up to 4 GiB of address space).
    """
    pages = np.arange(64, dtype=np.uint8).reshape(1, 64)
    for kind in (BufferType.DRAM, BufferType.L1):
        buf = Buffer(device, pages.size, 64, kind)
        buf.write(pages)
        assert np.array_equal(buf.read(), pages)
        buf.deallocate()
    core = device.core(0, 0)
    cb = CircularBuffer(core, 0, device.l1_unreserved_base, 2 * 32, 32, name="cb")
    seen = []

    def producer():
        for _ in range(4):
            cb.reserve_back(1)
            cb.push_back(1)

    def consumer():
        for _ in range(4):
            cb.wait_front(1)
            seen.append(1)
            cb.pop_front(1)

    slots = device.slots
    device.engine.run(
        [
            KernelRun(core, "producer", slots["data_movement"][0], producer),
            KernelRun(core, "consumer", slots["compute"][0], consumer),
        ]
    )
    assert len(seen) == 4


@settings(
    derandomize=True,
    max_examples=int(sys.argv[1]) if len(sys.argv) > 1 else 300,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(descriptors())
def check_equals_run(root) -> None:
    data = encode_ttsys(root)
    error = first_error(runnable_findings(data))
    try:
        device = Device(decode_ttsys(data).system_desc)
    except SystemDescError as refused:
        assert error is not None, f"run refused what check accepted: {refused.message}"
        assert refused.rule == error.rule, (refused.rule, error.rule)
        assert refused.message == error.message.replace("system_desc.", "", 1)
        COUNTS["rejected: " + refused.rule] += 1
        return
    assert error is None, f"check rejected what run accepted: {error.message}"
    try:
        exercise(device)
        COUNTS["accepted: ran"] += 1
    except TilewrightError as failed:  # a clean error (out of memory, ...) is fine
        COUNTS[f"accepted: {type(failed).__name__}"] += 1
    finally:
        device.close()


def main() -> None:
    limit = 6 << 30  # address space: interpreter + L1 arenas + one lazily mapped DRAM channel
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    check_equals_run()
    print(json.dumps(dict(sorted(COUNTS.items()))))


if __name__ == "__main__":
    main()
