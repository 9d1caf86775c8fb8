"""The raw escape hatch (``ttl.raw``, TLE-Raw for TT-Lang): code below the language (docs/raw.md).

* the typed parameter markers (``i32`` ... ``DFB``, ``TensorAccessor``, ``RawAddr``) both
  flavours share are ``tilewright.lang.raw_types`` (kernel time range-checks with them);
* IR flavour: :mod:`.function` -- ``@ttl.raw.ir`` and its signature; :mod:`.trace` /
  :mod:`.ops` -- tracing a body: the builder ops it calls; :mod:`.frontend` --
  ``ttl.raw.call`` sites checked, traced, their DFB effects computed (the plan record:
  :mod:`.site`, which also retraces a call whose folded value changed); :mod:`.lower` --
  the call in the compiled engine (a ``static inline`` C++ function); the call on the
  Python engine (binding, the kernel-IR interpreter) is ``tilewright.lang.raw``, the
  kernel-time entry, which reaches the compiler only through the site;
* C++ flavour: :mod:`.cpp` -- ``ttl.raw.cpp(...)``, built on ``call_extern_func`` (its call
  sites: :mod:`.cpp_calls`; its effects: :mod:`.cpp_effects`).
"""

from __future__ import annotations

from tilewright.compiler.raw.function import RawIRError, RawIRFunction, ir
from tilewright.lang.raw import call  # the kernel-time entry (``lang``: it runs in kernels)

__all__ = ["RawIRError", "RawIRFunction", "ir", "call"]
