"""BLAS for block math: one thread per process, and where numpy's ``sgemm`` lives.

Block math (matmul tiles, ``@`` on blocks) calls numpy, which calls a multithreaded
BLAS.  Kernels are many small products on an already busy machine: OpenBLAS's
threads then fight each other and every other process (a 2048^3 blocked matmul took
10-16 s with default threading on a busy 2-core machine, 1.0 s with one thread).
:func:`use_one_blas_thread` limits every BLAS numpy loaded to one thread, once per
process (``threadpoolctl``); the first ``Device`` calls it.  Set
``TILEWRIGHT_BLAS_THREADS=N`` before starting Python to choose another count.

:func:`numpy_sgemm` finds the ``cblas_sgemm`` of the BLAS numpy uses, so native tile
matmuls compute exactly what numpy's ``@`` computes.
"""

from __future__ import annotations

import ctypes
import os

import numpy  # noqa: F401 - its BLAS must be loaded for threadpoolctl to see it

from tilewright.lazy import lazy_import

# threadpoolctl takes ~40 ms to import: only the first Device and the native runtime need it.
threadpoolctl = lazy_import("threadpoolctl")

__all__ = ["use_one_blas_thread", "numpy_sgemm", "blas_threads"]

_DONE: list[object] = []

_SGEMM_NAMES = (
    ("scipy_cblas_sgemm64_", 1),
    ("cblas_sgemm64_", 1),
    ("scipy_cblas_sgemm", 0),
    ("cblas_sgemm", 0),
)


def blas_threads() -> int:
    """The BLAS thread count Tilewright sets (``TILEWRIGHT_BLAS_THREADS``, default 1)."""
    try:
        return max(1, int(os.environ.get("TILEWRIGHT_BLAS_THREADS", "1")))
    except ValueError:
        return 1


def use_one_blas_thread() -> None:
    """Limit numpy's BLAS to :func:`blas_threads` threads (once per process)."""
    if _DONE:
        return
    _DONE.append(threadpoolctl.threadpool_limits(limits=blas_threads(), user_api="blas"))


def numpy_sgemm() -> tuple[int, int] | None:
    """(address of numpy's cblas_sgemm, 1 if it takes 64-bit ints), or None if not found."""
    for info in threadpoolctl.threadpool_info():
        if info.get("user_api") != "blas":
            continue
        try:
            lib = ctypes.CDLL(info["filepath"])
        except OSError:
            continue
        for name, ilp64 in _SGEMM_NAMES:
            fn = getattr(lib, name, None)
            if fn is not None:
                return ctypes.cast(fn, ctypes.c_void_p).value or 0, ilp64
    return None
