"""Native code on the virtual device: tt-metal kernel-API headers, JIT builds, ctypes bridge.

* ``include/`` -- headers emulating the tt-metal kernel API (both spellings:
  ``api/dataflow/dataflow_api.h`` / ``dataflow_api.h``, ``api/compute/...`` /
  ``compute_kernel_api/...``); each function calls back into
  ``tilewright.device.kernel_api`` through ``tilewright/bridge.h``.
* :mod:`.build` -- compiles a C++ translation unit into a shared object, cached by
  content hash in the user's cache directory.
* :mod:`.bridge` -- loads shared objects, runs their entry point inside a kernel's
  greenlet and routes the callbacks.
* :mod:`.isolate` -- runs a simulation in a child process so that a crashing native
  function is reported instead of killing the user's process.

``tilewright.compiler.extern`` generates the C++ around ``ttl.call_extern_func`` and
uses this package to run it.
"""

from tilewright.native.bridge import NativeLibrary, invoke, load, new_handle, prepare
from tilewright.native.build import (
    OPTIONS,
    BuildOptions,
    BuildResult,
    build_shared_object,
    configure,
    include_dir,
)

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
