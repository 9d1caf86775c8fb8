"""Python kernels' page transfers timed by the native runtime (a ``PageTimer``).

Collective kernels (``ttnn/ccl``) are Python functions that move whole pieces -- hundreds
of pages -- per call and time them as one NoC transfer per page
(``device/perf/kernel.py`` ``pages``).  The Python calendar costs about 10 us
a page; a 32-chip all-gather moves a million.  The runtime's ``twrt_perf_pages`` runs the
same transfers through its twin of the model (``runtime/perf.cpp``: the same integer
arithmetic on the same calendar, which ``tests/device/perf`` pins against the Python one),
so every clock and every reservation is the one the Python loop would produce.

Where there is no C++ compiler to build the runtime with, :func:`page_timer` is None and
the Python loop times the pages: the same figures, slower.  A runtime build that fails is
an error, as it is for any native kernel.
"""

from __future__ import annotations

import ctypes

import numpy as np

from tilewright.device.perf.kernel import PageTimer
from tilewright.errors import NativeBuildError
from tilewright.native import runtime, toolchain

__all__ = ["page_timer"]

_UNSET = object()
_TIMER: object = _UNSET


def page_timer() -> PageTimer | None:
    """The native page timer (the runtime is loaded, or built, on the first call), or None
    where this machine has no C++ compiler."""
    global _TIMER
    if _TIMER is _UNSET:
        try:
            toolchain.OPTIONS.resolved_compiler()
        except NativeBuildError:  # no compiler: the Python calendar (same figures)
            _TIMER = None
        else:
            _TIMER = _bind(runtime.library().perf_pages)
    return _TIMER  # type: ignore[return-value]


def _bind(perf_pages) -> PageTimer:
    def time_pages(model, pr, now, noc, core, owners: np.ndarray, length, write) -> int:
        # owners: Buffer.page_owner_codes' int32 array, contiguous
        return perf_pages(
            ctypes.addressof(model.state),
            ctypes.addressof(pr),
            now,
            noc,
            core,
            owners.ctypes.data,
            len(owners),
            length,
            1 if write else 0,
        )

    return time_pages
