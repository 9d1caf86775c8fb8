"""The raw escape hatch, IR flavour (``ttl.raw``; see docs/raw.md).

* :mod:`.types` -- the typed parameter markers (``i32`` ... ``DFB``, ``TensorAccessor``,
  ``RawAddr``), shared with the C++ flavour;
* :mod:`.function` -- ``@ttl.raw.ir`` and its signature;
* :mod:`.trace` / :mod:`.ops` -- tracing a body: the builder ops it calls;
* :mod:`.frontend` -- ``ttl.raw.call`` sites checked, traced, their DFB effects computed;
* :mod:`.lower` -- the call in the compiled engine (a ``static inline`` C++ function);
* :mod:`.runtime` -- the call on the Python engine (the kernel-IR interpreter), bound
  through the site by ``tilewright.lang.raw.call``, the kernel-time entry.
"""

from __future__ import annotations

from tilewright.compiler.raw.function import RawIRError, RawIRFunction, ir
from tilewright.lang.raw import call  # the kernel-time entry (``lang``: it runs in kernels)

__all__ = ["RawIRError", "RawIRFunction", "ir", "call"]
