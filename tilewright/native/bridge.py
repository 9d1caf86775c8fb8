"""The ctypes bridge between native code and the virtual device.

Native code reaches the device through one C callback (``tilewright/bridge.h``)::

    int64_t call(const char* name, int32_t argc, const int64_t* argv);

``name`` is a tt-metal kernel-API name; :data:`CALLS` maps it to the Python
implementation Python kernels use (``tilewright.device.kernel_api``), with the few
conversions native code needs: L1 addresses handed *to* native code are in host form
(``core.host_base + local``, a valid pointer below 2 GiB), tensor accessors and
address generators are integer handles into a per-kernel table, and circular-buffer
protocol actions are reported to the running call's observer (contract checking).

Shared objects are loaded with ``ctypes.PyDLL`` (the GIL stays held: native code
runs inside a kernel's greenlet and the callback may switch greenlets when a call
blocks).  A callback that raises stores the exception on the running native call,
sets ``Api.error`` and returns; the C++ side throws ``tw::Abort``, the entry point
returns 1 and :func:`invoke` re-raises the stored exception -- including
``GreenletExit`` when the engine aborts a kernel blocked inside native code.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from tilewright.device.engine import ACTIVE, current_run
from tilewright.device.kernel_api import accessor as _acc
from tilewright.device.kernel_api import compute as _compute
from tilewright.device.kernel_api import dataflow as _df
from tilewright.errors import KernelError, NativeBuildError

__all__ = [
    "CALLS",
    "NativeLibrary",
    "NativeCall",
    "load",
    "invoke",
    "prepare",
    "new_handle",
    "host_address",
    "CrashContext",
    "CRASH",
]

API_VERSION = 1
CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int64, ctypes.c_char_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64)
)
ENTRY = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64)
)


class Api(ctypes.Structure):
    """``tw::Api`` (tilewright/bridge.h): version, error flag, the callback."""

    _fields_ = [("version", ctypes.c_uint32), ("error", ctypes.c_int32), ("call", CALLBACK)]


# -- per-kernel and per-call state -------------------------------------------------------------


class RunNative:
    """Native-side state of one kernel run: handles of accessors / address generators."""

    __slots__ = ("handles", "addrgens")

    def __init__(self) -> None:
        self.handles: list = [None]  # handle 0 is never valid
        self.addrgens: dict = {}


class NativeCall:
    """A native entry point prepared for one kernel run: reused by every call it makes.

    Holds the run's handle table, the protocol ``observer(kind, cb, n)``, the crash
    ``token`` (site id, node x, node y) and, while a call is in progress, the first
    exception a callback raised (``pending``).
    """

    __slots__ = ("run", "state", "entry", "pending", "observer", "token")

    def __init__(self, run, state: RunNative, entry, observer, token) -> None:
        self.run = run
        self.state = state
        self.entry = entry
        self.pending: BaseException | None = None
        self.observer = observer
        self.token = token


_RUNS: dict = {}
_RUNS_KEY: list = [None]
_CALLS: dict = {}


def _run_state(run) -> RunNative:
    engine = ACTIVE.engine
    key = (id(engine), engine.launch_count if engine is not None else 0)
    if _RUNS_KEY[0] != key:  # a new launch: drop the previous launch's handles
        _RUNS.clear()
        _RUNS_KEY[0] = key
    state = _RUNS.get(run)
    if state is None:
        state = _RUNS[run] = RunNative()
    return state


def new_handle(obj) -> int:
    """Register ``obj`` (an accessor / address generator) for the running kernel; its handle."""
    handles = _run_state(ACTIVE.run).handles
    handles.append(obj)
    return len(handles) - 1


def _handle(h: int):
    handles = _run_state(ACTIVE.run).handles
    if 0 < h < len(handles):
        return handles[h]
    raise KernelError(
        f"native code used tensor-accessor handle {h}, which is not valid here: accessors live only "
        "for the external call that created or received them"
    )


def host_address(local: int) -> int:
    """A local L1 address of the running kernel's core, in host (pointer) form."""
    return current_run().core.host_base + local


class CrashContext:
    """Where native code is running, for crash reports of isolated runs (``--isolate``).

    ``slot`` is a shared-memory int32 array ``[site id, node x, node y]`` the parent
    process reads after a crash; it is None unless the simulation runs isolated.
    """

    __slots__ = ("slot",)

    def __init__(self) -> None:
        self.slot: ctypes.Array[ctypes.c_int32] | None = None

    def enter(self, token) -> None:
        slot = self.slot
        if slot is not None and token is not None:
            site, x, y = token
            slot[1], slot[2], slot[0] = x, y, site

    def leave(self) -> None:
        if self.slot is not None:
            self.slot[0] = 0


CRASH = CrashContext()


# -- the callback table --------------------------------------------------------------------------


def _dispatch(name: bytes, argc: int, argv) -> int:
    run = ACTIVE.run
    try:
        if CRASH.slot is not None:
            CRASH.leave()
        fn = CALLS.get(name)
        if fn is None:
            raise KernelError(
                f"native code called {name.decode()!r}, which the bridge does not provide"
            )
        result = fn(*argv[:argc])
        value = int(result) if result else 0
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the caller's kernel
        call = _CALLS.get(run)
        if call is not None and call.pending is None:
            call.pending = exc
        elif call is None:  # not inside invoke(): nothing can re-raise it later
            import traceback

            traceback.print_exception(exc)
        API.error = 1
        value = 0
    if CRASH.slot is not None:
        call = _CALLS.get(run)
        if call is not None:
            CRASH.enter(call.token)
    return value


def _observed(kind: str, fn: Callable) -> Callable:
    """A circular-buffer protocol action, reported to the running call's observer first."""

    def action(cb: int, n: int) -> None:
        call = _CALLS.get(ACTIVE.run)
        if call is not None and call.observer is not None:
            call.observer(kind, cb, n)
        fn(cb, n)

    action.__name__ = f"observed_{kind}"
    return action


def _host(fn: Callable) -> Callable:
    """A call returning a local L1 address, returned to native code in host form."""

    def to_host(*args):
        return current_run().core.host_base + fn(*args)

    to_host.__name__ = f"host_{fn.__name__}"
    return to_host


def _addrgen_noc_addr(dram, base, page_size, page_id, offset, noc=0) -> int:
    gens = _run_state(ACTIVE.run).addrgens
    key = (bool(dram), base, page_size)
    gen = gens.get(key)
    if gen is None:
        gen = gens[key] = _acc.InterleavedAddrGen(base, page_size, bool(dram))
    return gen.get_noc_addr(page_id, offset)


def _accessor_from_args(cta: int, crta: int, base: int, page_size: int) -> int:
    args = _acc.TensorAccessorArgs(cta, crta)
    return new_handle(_acc.TensorAccessor(args, base, page_size))


def _accessor_args_words(cta: int, crta: int) -> int:
    return _acc.TensorAccessorArgs(cta, crta).next_compile_time_args_offset()


def _shard_noc_addr(h: int, shard_id: int, offset: int = 0, noc: int = 0) -> int:
    return _handle(h).get_shard_noc_addr(shard_id, offset)


def _accessor_query(h: int, what: int) -> int:
    acc = _handle(h)
    if what == 0:
        return acc.page_size_bytes()
    if what == 1:
        return acc.aligned_page_size
    if what == 2:
        return acc.bank_base_address
    raise KernelError(f"accessor query {what} is not defined")


def _dprint(ptr: int) -> None:
    """DPRINT text: one line per ENDL(), prefixed like TT-Lang's debug print."""
    import sys

    text = ctypes.string_at(ptr).decode("utf-8", "replace")
    run = current_run()
    for line in text.splitlines() or [""]:
        sys.stdout.write(f"[{run.place} {run.name}] {line}\n")


def _compute_calls() -> dict[bytes, Callable]:
    names = [
        "tile_regs_acquire",
        "tile_regs_commit",
        "tile_regs_wait",
        "tile_regs_release",
        "acquire_dst",
        "release_dst",
        "compute_kernel_hw_startup",
        "copy_tile_to_dst_init_short",
        "copy_tile",
        "add_tiles",
        "sub_tiles",
        "mul_tiles",
        "mm_init",
        "matmul_tiles",
        "matmul_block_init",
        "matmul_block",
        "binary_dest_reuse_tiles_init",
        "binary_dest_reuse_tiles",
        "transpose_wh_init",
        "transpose_wh_tile",
        "transpose_wh_dest_init_short",
        "transpose_wh_dest",
        "tilize_init_short_with_dt",
        "tilize_uninit_with_dt",
        "tilize_block",
        "untilize_block",
        "pack_untilize_init",
        "pack_untilize_block",
        "pack_untilize_dest",
        "reconfig_data_format",
        "reconfig_data_format_srca",
        "reconfig_data_format_srcb",
        "pack_reconfig_data_format",
        "pack_reconfig_l1_acc",
        "pack_tile",
        "pack_tile_block",
        "reduce_tile",
        *[
            f"{op}_tiles_bcast_{kind}"
            for op in ("add", "sub", "mul")
            for kind in ("rows", "cols", "scalar")
        ],
        *_compute.SFPU_UNARY,
        *_compute.SFPU_UNARY_PARAM,
    ]
    return {n.encode(): getattr(_compute, n) for n in names}


def _dataflow_calls() -> dict[bytes, Callable]:
    names = [
        "get_tile_hw",
        "get_tile_num_faces",
        "noc_async_read_set_state",
        "noc_async_read_with_state",
        "noc_async_read_one_packet_set_state",
        "noc_async_read_one_packet_with_state",
        "noc_async_write_set_state",
        "noc_async_write_with_state",
        "noc_async_write_one_packet_set_state",
        "noc_async_write_one_packet_with_state",
        "noc_async_read_set_trid",
        "noc_async_write_set_trid",
        "noc_async_read_barrier_with_trid",
        "noc_async_write_barrier_with_trid",
        "noc_async_write_one_packet_with_trid",
        "noc_async_write_one_packet_with_trid_set_state",
        "noc_async_write_one_packet_with_trid_with_state",
    ]
    return {n.encode(): getattr(_df, n) for n in names}


CALLS: dict[bytes, Callable] = {
    # identity and arguments
    b"my_x": _df.my_x,
    b"my_y": _df.my_y,
    b"get_absolute_logical_x": _df.get_absolute_logical_x,
    b"get_absolute_logical_y": _df.get_absolute_logical_y,
    b"get_relative_logical_x": _df.get_relative_logical_x,
    b"get_relative_logical_y": _df.get_relative_logical_y,
    b"get_arg_val": _df.get_arg_val,
    b"get_common_arg_val": _df.get_common_arg_val,
    b"get_arg_addr": _host(_df.get_arg_addr),
    b"get_common_arg_addr": _host(_df.get_common_arg_addr),
    b"get_compile_time_arg_val": _df.get_compile_time_arg_val,
    # circular buffers
    b"cb_reserve_back": _observed("reserve", _df.cb_reserve_back),
    b"cb_push_back": _observed("push", _df.cb_push_back),
    b"cb_wait_front": _observed("wait", _df.cb_wait_front),
    b"cb_pop_front": _observed("pop", _df.cb_pop_front),
    b"get_write_ptr": _host(_df.get_write_ptr),
    b"get_read_ptr": _host(_df.get_read_ptr),
    b"cb_pages_reservable_at_back": _df.cb_pages_reservable_at_back,
    b"cb_pages_available_at_front": _df.cb_pages_available_at_front,
    b"get_tile_size": _df.get_tile_size,
    b"get_dataformat": lambda cb: 0xFF if (f := _df.get_dataformat(cb)) is None else int(f),
    # NoC addresses and address generators
    b"get_noc_addr.xy": lambda x, y, addr, noc=0: _df.get_noc_addr(x, y, addr),
    b"get_noc_addr.local": lambda addr, noc=0: _df.get_noc_addr(addr),
    b"get_noc_addr_from_bank_id": lambda bank, offset, dram, noc=0: _df.get_noc_addr_from_bank_id(
        bank, offset, bool(dram)
    ),
    b"get_noc_multicast_addr": _df.get_noc_multicast_addr,
    b"InterleavedAddrGen.get_noc_addr": _addrgen_noc_addr,
    b"TensorAccessor": _accessor_from_args,
    b"TensorAccessorArgs.num_words": _accessor_args_words,
    b"accessor.get_noc_addr": lambda h, page, offset=0, noc=0: _handle(h).get_noc_addr(
        page, offset
    ),
    b"accessor.get_shard_noc_addr": _shard_noc_addr,
    b"accessor.query": _accessor_query,
    b"accessor.read_page": lambda h, page, dst, offset=0, noc=0: _df.noc_async_read_page(
        page, _handle(h), dst, offset
    ),
    b"accessor.write_page": lambda h, page, src, size=0, offset=0, noc=0: _df.noc_async_write_page(
        page, _handle(h), src, size, offset
    ),
    b"accessor.read_shard": lambda h, shard, dst, noc=0: _df.noc_async_read_shard(
        shard, _handle(h), dst
    ),
    b"accessor.write_shard": lambda h, shard, src, noc=0: _df.noc_async_write_shard(
        shard, _handle(h), src
    ),
    # NoC transfers
    b"noc_async_read": _df.noc_async_read,
    b"noc_async_write": _df.noc_async_write,
    b"noc_async_write_multicast": _df.noc_async_write_multicast,
    b"noc_async_write_multicast_loopback_src": _df.noc_async_write_multicast_loopback_src,
    b"noc_async_read_barrier": _df.noc_async_read_barrier,
    b"noc_async_write_barrier": _df.noc_async_write_barrier,
    b"noc_async_writes_flushed": _df.noc_async_writes_flushed,
    b"noc_async_posted_writes_flushed": _df.noc_async_posted_writes_flushed,
    b"noc_async_atomic_barrier": _df.noc_async_atomic_barrier,
    b"noc_async_full_barrier": _df.noc_async_full_barrier,
    b"noc_inline_dw_write": _df.noc_inline_dw_write,
    # semaphores
    b"get_semaphore": _host(_df.get_semaphore),
    b"noc_semaphore_set": _df.noc_semaphore_set,
    b"noc_semaphore_wait": _df.noc_semaphore_wait,
    b"noc_semaphore_wait_min": _df.noc_semaphore_wait_min,
    b"noc_semaphore_inc": lambda addr, incr, noc=0: _df.noc_semaphore_inc(addr, incr),
    b"noc_semaphore_inc_multicast": _df.noc_semaphore_inc_multicast,
    b"noc_semaphore_set_remote": _df.noc_semaphore_set_remote,
    b"noc_semaphore_set_multicast": _df.noc_semaphore_set_multicast,
    b"noc_semaphore_set_multicast_loopback_src": _df.noc_semaphore_set_multicast_loopback_src,
    # debug print
    b"dprint": _dprint,
    **_dataflow_calls(),
    # compute
    **_compute_calls(),
    b"sfpu.init": _compute.sfpu_init,
}
"""tt-metal kernel-API name (as the headers spell it) -> Python implementation."""

_CALLBACK = CALLBACK(_dispatch)
API = Api(API_VERSION, 0, _CALLBACK)


# -- loading and calling -------------------------------------------------------------------------


class NativeLibrary:
    """A loaded shared object with its generated entry point ``tw_entry``."""

    __slots__ = ("path", "lib", "entry", "last_error")

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self.lib = ctypes.PyDLL(path)
        except OSError as exc:
            raise NativeBuildError(f"cannot load the native object {path}: {exc}") from None
        try:
            bind = self.lib.tw_bind
            entry = self.lib.tw_entry
            last_error = self.lib.tw_last_error
        except AttributeError as exc:
            raise NativeBuildError(f"{path} has no Tilewright entry point: {exc}") from None
        bind.argtypes = [ctypes.POINTER(Api)]
        bind.restype = None
        bind(ctypes.byref(API))
        entry.argtypes = [ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64)]
        entry.restype = ctypes.c_int32
        last_error.restype = ctypes.c_char_p
        self.entry = entry
        self.last_error = last_error


_LOADED: dict[str, NativeLibrary] = {}


def load(path: str) -> NativeLibrary:
    """Load (once per process) a shared object built by ``build_shared_object``."""
    lib = _LOADED.get(path)
    if lib is None:
        lib = _LOADED[path] = NativeLibrary(path)
    return lib


def prepare(lib: NativeLibrary, *, observer=None, token=None) -> NativeCall:
    """Prepare ``lib``'s entry point for calls from the running kernel (see :func:`invoke`).

    ``observer(kind, cb, n)`` sees every circular-buffer protocol action before it runs;
    ``token`` = (site id, node x, node y) names the call in crash reports.
    """
    run = ACTIVE.run
    if run is not None:  # native code casts L1 addresses to 32-bit pointers: low L1 only
        run.core.device.l1.require_pointer_form(f"chip {run.core.device.device_id}")
    return NativeCall(run, _run_state(run), lib.entry, observer, token)


def invoke(call: NativeCall, argv, result) -> int:
    """Run a prepared entry point (``argv`` / ``result``: ctypes int64 arrays / references).

    Re-raises the first exception a callback raised (including ``GreenletExit`` when
    the engine aborts a kernel blocked inside native code).  Returns the entry's status:
    0 normal, 2 a C++ exception escaped (message: ``NativeLibrary.last_error()``).
    Accessor handles the call created are dropped when it returns.
    """
    run = call.run
    handles = call.state.handles
    mark = len(handles)
    call.pending = None
    _CALLS[run] = call
    crash = CRASH.slot is not None
    if crash:
        CRASH.enter(call.token)
    try:
        rc = call.entry(argv, result)
    finally:
        if crash:
            CRASH.leave()
        del _CALLS[run]
        if len(handles) != mark:
            del handles[mark:]
    if call.pending is not None:
        raise call.pending
    return rc
