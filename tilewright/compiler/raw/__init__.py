"""The raw escape hatch (``ttl.raw``, TLE-Raw for TT-Lang): code below the language (docs/raw.md).

* :mod:`.types` -- the typed parameter markers (``i32`` ... ``DFB``, ``TensorAccessor``,
  ``RawAddr``) both flavours share;
* IR flavour: :mod:`.function` -- ``@ttl.raw.ir`` and its signature; :mod:`.trace` /
  :mod:`.ops` -- tracing a body: the builder ops it calls; :mod:`.frontend` --
  ``ttl.raw.call`` sites checked, traced, their DFB effects computed; :mod:`.lower` -- the
  call in the compiled engine (a ``static inline`` C++ function); :mod:`.runtime` -- the
  call on the Python engine (the kernel-IR interpreter), bound through the site by
  ``tilewright.lang.raw.call``, the kernel-time entry;
* C++ flavour: :mod:`.cpp` -- ``ttl.raw.cpp(...)``, built on ``call_extern_func`` (its call
  sites: :mod:`.cpp_calls`; its effects: :mod:`.cpp_effects`).
"""

from __future__ import annotations

from tilewright.compiler.raw.function import RawIRError, RawIRFunction, ir
from tilewright.lang.raw import call  # the kernel-time entry (``lang``: it runs in kernels)

__all__ = ["RawIRError", "RawIRFunction", "ir", "call"]
