"""The native engine: tt-metal C++ kernels on the virtual device at native speed.

* ``include/`` -- the tt-metal kernel API headers (both spellings, ``api/...`` and
  ``compute_kernel_api/...`` / ``dataflow_api.h``, plus ``experimental/``,
  ``hostdevcommon/``, ``debug/``); every function calls the runtime library directly.
* ``runtime/`` + :mod:`.runtime` -- the runtime library (libtwrt): fibers, the native
  scheduler on the state shared with Python (``device/shared.py``), the identity-mapped
  L1 window and fault handler, the data-movement and compute kernel API.
* :mod:`.driver` -- the engine's native driver; :mod:`.requests` -- what native code
  asks Python for; :mod:`.faults` -- native fault reports; :mod:`.accessors`.
* :mod:`.build` -- compiles a translation unit into a shared object, cached by content.
* :mod:`.kernels` -- whole C++ kernels (``NativeKernel``) for Programs and ``generic_op``.
* :mod:`.bridge` -- native code called by Python kernels (``ttl.call_extern_func``).
* :mod:`.isolate` -- runs a simulation in a child process (``--isolate``).

docs/cpp-kernels.md describes the architecture.
"""

from tilewright.native import toolchain
from tilewright.native.bridge import NativeLibrary, invoke, load, new_handle, prepare
from tilewright.native.build import BuildResult, build_shared_object
from tilewright.native.toolchain import BuildOptions, configure, include_dir

__all__ = [
    "OPTIONS",
    "BuildOptions",
    "BuildResult",
    "build_shared_object",
    "configure",
    "include_dir",
    "NativeLibrary",
    "invoke",
    "load",
    "new_handle",
    "prepare",
]


def __getattr__(name: str):
    # OPTIONS is rebound by configure(): always the current value, never an import-time copy.
    if name == "OPTIONS":
        return toolchain.OPTIONS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
