"""Device memory: the DRAM allocator's allocated runs and the huge pages behind them."""

from __future__ import annotations

import numpy as np
import pytest

from tilewright.device import memory
from tilewright.device.allocator import FreeListAllocator
from tilewright.device.memory import DramChannels

MIB = 1 << 20


def test_an_allocated_run_spans_the_neighbouring_allocations_up_to_the_free_blocks():
    alloc = FreeListAllocator("DRAM", 0x1000, 0x100000, 32)
    a = alloc.allocate(0x1000)
    b = alloc.allocate(0x2000)
    c = alloc.allocate(0x1000)
    assert alloc.allocated_run(b) == (0x1000, 0x5000)
    alloc.free(b)
    assert alloc.allocated_run(a) == (0x1000, 0x2000)
    assert alloc.allocated_run(c) == (0x4000, 0x5000)
    whole = FreeListAllocator("DRAM", 0, 0x2000, 32)
    x = whole.allocate(0x2000)
    assert whole.allocated_run(x) == (0, 0x2000)  # no free block on either side


def test_covered_ranges_merge_and_reach_channels_mapped_later(monkeypatch):
    advised: list[tuple[int, int, int]] = []
    channels = DramChannels(3, 16 * MIB)
    monkeypatch.setattr(
        memory,
        "_back_with_huge_pages",
        lambda m, lo, hi: advised.append((channels._maps.index(m), lo, hi)),
    )
    channels.channel(0)
    channels.cover(1 * MIB, 3 * MIB)
    channels.cover(3 * MIB, 5 * MIB)  # touches the first: one run
    channels.cover(2 * MIB, 4 * MIB)  # inside it: nothing new
    channels.cover(9 * MIB, 12 * MIB)
    assert advised == [(0, 1 * MIB, 3 * MIB), (0, 1 * MIB, 5 * MIB), (0, 9 * MIB, 12 * MIB)]
    advised.clear()
    channels.channel(2)
    assert advised == [(2, 1 * MIB, 5 * MIB), (2, 9 * MIB, 12 * MIB)]
    channels.close()


def test_huge_pages_keep_the_bytes_written_before():
    """Covering collapses pages already written (MADV_COLLAPSE) without changing them; the
    advice is only a hint, so this holds with or without transparent huge pages."""
    channels = DramChannels(1, 8 * MIB)
    view = channels.channel(0)
    data = np.random.default_rng(3).integers(0, 256, 5 * MIB, dtype=np.uint8)
    view[MIB // 2 : MIB // 2 + data.size] = data
    channels.cover(0, 8 * MIB)
    assert np.array_equal(view[MIB // 2 : MIB // 2 + data.size], data)
    assert not view[: MIB // 2].any() and not view[MIB // 2 + data.size :].any()
    channels.close()


@pytest.mark.parametrize(
    "base, lo, hi, pages",
    [
        (0, 0, 2 * MIB, (0, 2 * MIB)),
        (0, MIB // 2, 5 * MIB // 2, None),  # 2 MiB long, no whole page
        (0, 1, 6 * MIB - 1, (2 * MIB, 4 * MIB)),
        (MIB, 0, 4 * MIB, (MIB, 3 * MIB)),  # the mapping starts mid-page
        (0, 0, MIB, None),
    ],
)
def test_only_whole_huge_pages_of_a_range_are_advised(base, lo, hi, pages):
    assert memory.whole_huge_pages(base, lo, hi) == pages
