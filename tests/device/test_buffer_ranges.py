"""Page I/O over page ranges: one strided copy per bank, the same bytes as page-id arrays."""

from __future__ import annotations

import numpy as np
import pytest

from tilewright.device.buffer import Buffer, BufferType
from tilewright.device.device import Device
from tilewright.errors import DeviceError


@pytest.fixture(scope="module")
def chip():
    dev = Device()
    yield dev
    dev.close()


@pytest.mark.parametrize("buffer_type", [BufferType.DRAM, BufferType.L1])
@pytest.mark.parametrize(("first", "count"), [(0, 200), (7, 50), (150, 50)])
def test_ranges_match_page_arrays(chip, buffer_type, first, count):
    pages, size = 200, 64
    buf = Buffer(chip, pages * size, size, buffer_type)
    try:
        data = np.random.default_rng(first).integers(0, 256, (pages, size), dtype=np.uint8)
        buf.write(data)
        ids = range(first, first + count)
        assert np.array_equal(buf.read_pages(ids), data[first : first + count])
        out = np.empty((count, size), np.uint8)
        assert buf.read_pages(ids, out=out) is out and np.array_equal(
            out, data[first : first + count]
        )
        new = data[::-1][:count].copy()
        buf.write_pages(ids, new)
        assert np.array_equal(buf.read_pages(np.arange(first, first + count)), new)
    finally:
        buf.deallocate()


def test_range_errors(chip):
    buf = Buffer(chip, 64 * 32, 32)
    try:
        with pytest.raises(DeviceError, match="page ids outside 0..63"):
            buf.read_pages(range(40, 80))
        with pytest.raises(DeviceError, match="out must be uint8"):
            buf.read_pages(range(0, 40), out=np.empty((39, 32), np.uint8))
    finally:
        buf.deallocate()
