"""Per-program dispatch and launch time (reference ``perf-model.md`` section 5).

In trace mode (the device replaying a captured command stream) tt-metal measures 2.6-3.5 us
for a data-movement-only program, 2.9-5.2 us compute-only and 3.0-6.0 us for both, growing
with the kernel binaries' size (256 B -> 12 KiB).  Here a program's dispatch is the base
figure of its kernel kinds plus a share per kernel (the binaries it must load; a kernel
is taken as ~4 KiB), capped at the measured maximum.  Without trace the host's enqueue
(tens of us per op) dominates; that is host time, not modelled.
"""

from __future__ import annotations

from tilewright.device.perf.arch import ArchPerf

__all__ = ["dispatch_ns", "program_dispatch_ns", "DISPATCH_MAX_NS"]

DISPATCH_MAX_NS = 6000
"""The measured maximum (a program with both kinds and 12 KiB binaries)."""
_KERNEL_KIB = 4


def dispatch_ns(arch: ArchPerf, n_dm: int, n_compute: int) -> int:
    """Dispatch of one program with ``n_dm`` data-movement and ``n_compute`` compute kernels
    (distinct kernel binaries, not cores: a binary is multicast to its cores)."""
    dm_only, compute_only, both = arch.dispatch_ns
    if n_dm and n_compute:
        base = both
    elif n_compute:
        base = compute_only
    else:
        base = dm_only
    grow = arch.dispatch_ns_per_kernel_kib * _KERNEL_KIB * max(0, n_dm + n_compute - 1)
    return min(DISPATCH_MAX_NS, base + grow)


def program_dispatch_ns(arch: ArchPerf, program) -> int:
    """The dispatch of a ``device.Program`` (anything with ``kernels``), by its kernels'
    ``kind`` ("compute" or a data-movement processor)."""
    kernels = getattr(program, "kernels", ())
    n_compute = sum(1 for k in kernels if k.kind == "compute")
    return dispatch_ns(arch, len(kernels) - n_compute, n_compute)
