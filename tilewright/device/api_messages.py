"""The kernel API's diagnostics, written once for the Python and the C++ kernel API.

Two tables:

* :data:`ERROR_CLASSES` -- the error classes a failed kernel run reports, by the code
  the native runtime stores (``twrt::ERR_*``) and the Tilewright exception Python
  raises for it; generated into ``twrt_errors.h`` (``twrt::ErrClass`` and the
  ``ttlang::ErrorClass`` of compiled TT-Lang);
* :data:`MESSAGES` -- every message a kernel-API argument or protocol check reports,
  with its exception class; generated into ``twrt_messages.h`` as one typed
  ``[[noreturn]] fail_<name>(run, loc, fields...)`` per message (and ``fmt_<name>`` for
  the fragments other messages embed), so the C++ runtime and the Python kernel API
  raise the same class with the same text at the caller's line.

A message is a text with typed fields, ``{name:kind}``:

======== ==================== ========================== ==================================
kind     Python value          C++ parameter              rendered as
======== ==================== ========================== ==================================
int      int                   ``int64_t``                decimal
hex      int                   ``uint64_t``               ``0x`` + lower-case hex
bool     bool                  ``bool``                   ``True`` / ``False`` (Python's)
str      str                   ``const char*``            the text (a fragment's, usually)
float    float                 ``double``                 ``%g``
xy       (x, y) / CoreCoord    ``uint32_t x, uint32_t y`` ``(x, y)``
cb       a CB (``.name``)      ``int32_t`` index          the CB's name (``{cb:N}`` in C++,
                                                          named by the driver)
format   ``DataFormat`` / int  ``uint32_t`` value         ``format_name`` (``{format:N}``)
chip     str (chips named)     ``uint32_t`` chip tag      the chips (``{chip:N}``)
kernel   the kernel's name     (none: the running one)    ``'name'`` (``{kernel}``)
======== ==================== ========================== ==================================

The placeholders of the last four kinds are rendered by :func:`render_placeholders`
from the failed run (the native driver) -- names only Python knows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tilewright.device.formats.dataformat import as_data_format, format_name
from tilewright.errors import (
    BlockStateError,
    DeadlockError,
    DeviceError,
    DFBContractError,
    FormatError,
    KernelError,
    NativeCrashError,
    NocError,
    TilewrightError,
)

__all__ = [
    "ApiMessage",
    "ERROR_CLASSES",
    "ErrorClass",
    "FIELD_KINDS",
    "MESSAGES",
    "error_class",
    "render_placeholders",
]


# -- error classes ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ErrorClass:
    """One error class of a failed kernel run.

    Attributes:
        code: the value the native runtime stores (``Run::err_class``).
        name: C++ ``twrt::ERR_<name>``.
        exception: what Python raises (special classes build their own message).
        raisable: kernels raise it themselves (``twrt_fail``, ``ttlang::ErrorClass``).
    """

    code: int
    name: str
    exception: type[TilewrightError]
    raisable: bool = False
    doc: str = ""


ERROR_CLASSES: tuple[ErrorClass, ...] = (
    ErrorClass(1, "KERNEL", KernelError, True, "a kernel-API misuse"),
    ErrorClass(2, "DFB", DFBContractError, True, "a circular-buffer protocol error"),
    ErrorClass(3, "NOC", NocError, True, "a NoC transfer error"),
    ErrorClass(4, "DEADLOCK", DeadlockError, doc="polling without progress"),
    ErrorClass(5, "FAULT", NativeCrashError, doc="a signal in native code (faults.py)"),
    ErrorClass(6, "FORMAT", FormatError, True, "a value a data format cannot hold"),
    ErrorClass(7, "CPP", KernelError, doc="a C++ exception escaped the kernel"),
    ErrorClass(8, "INTERRUPT", NativeCrashError, doc="stopped from outside (faults.py)"),
    ErrorClass(9, "EXIT", NativeCrashError, doc="exit / abort called (faults.py)"),
    ErrorClass(10, "ASSERT", NativeCrashError, doc="a failed assert()"),
    ErrorClass(11, "L1", NativeCrashError, doc="an L1 range beyond the core's L1"),
    ErrorClass(12, "BLOCK_STATE", BlockStateError, True, "compiled TT-Lang: a block rule"),
    ErrorClass(13, "DEVICE", DeviceError, True, "a device rule"),
)
"""Every error class of a failed run, by code (the native runtime's ``ErrClass``)."""

_BY_EXCEPTION: dict[type, ErrorClass] = {}
for _cls in ERROR_CLASSES:
    if _cls.raisable:
        _BY_EXCEPTION.setdefault(_cls.exception, _cls)


def error_class(exception: type[TilewrightError]) -> ErrorClass:
    """The error class kernels raise ``exception`` with (KeyError if they cannot)."""
    return _BY_EXCEPTION[exception]


# -- messages ------------------------------------------------------------------------------------

FIELD_KINDS = ("int", "hex", "bool", "str", "float", "xy", "cb", "format", "chip", "kernel")
_FIELD = re.compile(r"\{(\w+):(\w+)\}")
_PLACEHOLDER = re.compile(r"\{(cb|format|chip):(\d+)\}|\{kernel\}")


def _render(kind: str, value: Any) -> str:
    if kind == "int":
        return str(int(value))
    if kind == "hex":
        return f"0x{int(value):x}"
    if kind == "bool":
        return str(bool(value))
    if kind == "float":
        return f"{float(value):g}"
    if kind == "xy":
        x, y = (value.x, value.y) if hasattr(value, "x") else value
        return f"({int(x)}, {int(y)})"
    if kind == "cb":
        return value if isinstance(value, str) else str(value.name)
    if kind == "format":
        return format_name(as_data_format(value))
    if kind == "kernel":
        return repr(str(value))
    return str(value)  # str, chip


@dataclass(frozen=True, slots=True)
class ApiMessage:
    """One diagnostic of the kernel API (or, with ``error`` None, a fragment of one).

    ``message(**fields)`` is the exception to raise; ``message.text(**fields)`` the text.
    """

    name: str
    error: type[TilewrightError] | None
    template: str
    rule: str | None = None
    hint: str | None = None

    @property
    def fields(self) -> tuple[tuple[str, str], ...]:
        """(name, kind) of each field, in order of first appearance."""
        seen: dict[str, str] = {}
        for name, kind in _FIELD.findall(self.template):
            seen.setdefault(name, kind)
        return tuple(seen.items())

    def text(self, **values: Any) -> str:
        def field(m: re.Match) -> str:
            return _render(m.group(2), values[m.group(1)])

        return _FIELD.sub(field, self.template)

    def __call__(self, **values: Any) -> TilewrightError:
        if self.error is None:
            raise TypeError(f"message {self.name!r} is a fragment, not an error")
        return self.error(self.text(**values), rule=self.rule, hint=self.hint)


MESSAGES: dict[str, ApiMessage] = {}


def _m(
    name: str,
    error: type[TilewrightError] | None,
    template: str,
    *,
    rule: str | None = None,
    hint: str | None = None,
) -> ApiMessage:
    for _field, kind in _FIELD.findall(template):
        if kind not in FIELD_KINDS:
            raise AssertionError(f"message {name}: unknown field kind {kind!r}")
    if name in MESSAGES:
        raise AssertionError(f"duplicate message {name!r}")
    msg = MESSAGES[name] = ApiMessage(name, error, template, rule, hint)
    return msg


# -- kernel context ---------------------------------------------------------------------------

NOT_COMPUTE = _m(
    "not_compute",
    KernelError,
    "kernel {kernel:kernel} is a data-movement kernel; the compute API runs on compute kernels",
)
ARG_RANGE = _m(
    "arg_range",
    KernelError,
    "get_arg_val({index:int}): kernel {kernel:kernel} on core {core:xy} has {count:int} "
    "runtime args",
)
COMMON_ARG_RANGE = _m(
    "common_arg_range",
    KernelError,
    "get_common_arg_val({index:int}): kernel {kernel:kernel} has {count:int} common runtime args",
)
COMPILE_ARG_RANGE = _m(
    "compile_arg_range",
    KernelError,
    "get_compile_time_arg_val({index:int}): kernel {kernel:kernel} has {count:int} "
    "compile-time args",
)

# -- circular buffers -----------------------------------------------------------------------

CB_NOT_CONFIGURED = _m(
    "cb_not_configured",
    DFBContractError,
    "circular buffer {index:int} is not configured on core {core:xy}",
)
CB_RESERVE_NEVER = _m(
    "cb_reserve_never",
    DFBContractError,
    "cb_reserve_back({cb:cb}, {n:int}) can never succeed: the buffer has only {pages:int} pages",
)
CB_PUSH_OVERFLOW = _m(
    "cb_push_overflow",
    DFBContractError,
    "cb_push_back({cb:cb}, {n:int}) overflows the buffer: {filled:int} of {pages:int} pages are "
    "already filled",
)
CB_PUSH_UNRESERVED = _m(
    "cb_push_unreserved",
    DFBContractError,
    "cb_push_back({cb:cb}, {n:int}) pushes more pages than are reserved: cb_reserve_back "
    "reserved {reserved:int} (a push hands over reserved pages only)",
    rule="cb-push-reserved",
    hint="reserve every page before pushing it: cb_reserve_back(cb, n) then cb_push_back(cb, n)",
)
CB_PUSH_WRAP = _m(
    "cb_push_wrap",
    DFBContractError,
    "cb_push_back({cb:cb}, {n:int}) crosses the end of the FIFO: pushes must sum to exactly "
    "{pages:int} pages per cycle (write pointer {ptr:hex}, limit {limit:hex})",
)
CB_WAIT_NEVER = _m(
    "cb_wait_never",
    DFBContractError,
    "cb_wait_front({cb:cb}, {n:int}) can never succeed: the buffer has only {pages:int} pages",
)
CB_POP_UNPUSHED = _m(
    "cb_pop_unpushed",
    DFBContractError,
    "cb_pop_front({cb:cb}, {n:int}) pops pages that were never pushed: only {filled:int} pages "
    "are filled",
)
CB_POP_UNWAITED = _m(
    "cb_pop_unwaited",
    DFBContractError,
    "cb_pop_front({cb:cb}, {n:int}) pops more pages than were waited for: cb_wait_front waited "
    "for {waited:int} (a pop releases waited pages only)",
    rule="cb-pop-waited",
    hint="wait for every page before popping it: cb_wait_front(cb, n) then cb_pop_front(cb, n)",
)
CB_POP_WRAP = _m(
    "cb_pop_wrap",
    DFBContractError,
    "cb_pop_front({cb:cb}, {n:int}) crosses the end of the FIFO: pops must sum to exactly "
    "{pages:int} pages per cycle (read pointer {ptr:hex}, limit {limit:hex})",
)
TILE_NOT_WAITED = _m(
    "tile_not_waited",
    KernelError,
    "tile {itile:int} of {cb:cb} is not available: {waited:int} pages are waited at the front",
    rule="cb-read-waited",
)
SLOT_UNRESERVED = _m(
    "slot_unreserved",
    DFBContractError,
    "{what:str} into {cb:cb}: tile slot {slot:int} is outside the {reserved:int} reserved "
    "pages at the back",
    rule="cb-pack-reserved",
    hint="cb_reserve_back(cb, n) before packing; sequential pack_tile calls fill slots 0, 1, ... "
    "of the reservation",
)
SLOTS_UNRESERVED = _m(
    "slots_unreserved",
    DFBContractError,
    "{what:str} writes {count:int} pages into {cb:cb} from tile slot {slot:int}, beyond the "
    "{reserved:int} reserved pages at the back",
    rule="cb-pack-reserved",
    hint="cb_reserve_back(cb, n) for every page the call writes",
)
PAGES_NOT_WAITED = _m(
    "pages_not_waited",
    KernelError,
    "{what:str}: needs {need:int} tiles at the front of {cb:cb}, only {waited:int} are waited: "
    "a partial block",
    rule="cb-read-waited",
)

# -- DST and compute --------------------------------------------------------------------------

DST_RANGE = _m(
    "dst_range",
    KernelError,
    "DST index {idst:int} is out of range: this compute kernel has {capacity:int} DST tiles per "
    "acquire (fp32_dest_acc_en={fp32_dest_acc_en:bool}, dst_full_sync_en={dst_full_sync_en:bool})",
)
DST_BLOCK_RANGE = _m(
    "dst_block_range",
    KernelError,
    "{what:str} writes DST tiles {first:int}..{last:int}, beyond the {capacity:int} DST tiles of "
    "one acquire (fp32_dest_acc_en={fp32_dest_acc_en:bool}, "
    "dst_full_sync_en={dst_full_sync_en:bool})",
)
TILE_SHAPE = _m(
    "tile_shape",
    KernelError,
    "{what:str}: the compute API here handles 32x32 tiles; {cb:cb} has a {h:int}x{w:int} tile",
)
PAGE_SIZE = _m(
    "page_size",
    FormatError,
    "{what:str}: {cb:cb} has {page:int}-byte pages but a {format:format} tile takes "
    "{tile:int} bytes",
)
NO_TILE_FORM = _m(
    "no_tile_form",
    FormatError,
    "{what:str}: data format {format:format} of {cb:cb} has no tile form",
)
L1_ACC_FLAG = _m(
    "l1_acc_flag", KernelError, "pack_reconfig_l1_acc({flag:int}): the flag must be 0 or 1"
)
NTILES = _m("ntiles", KernelError, "pack_tile_block: ntiles must be at least 1, got {ntiles:int}")
MATMUL_BLOCK_WHAT = _m(
    "matmul_block_what",
    None,
    "matmul_block(ct_dim={ct:int}, rt_dim={rt:int}, kt_dim={kt:int})",
)
MATMUL_BLOCK_DIMS = _m(
    "matmul_block_dims", KernelError, "{what:str}: block dimensions must be at least 1"
)
MATMUL_BLOCK_CONFIG = _m(
    "matmul_block_config",
    KernelError,
    "{what:str}, transpose={transpose:int}: the last matmul_block_init / mm_block_init "
    "configured ct_dim={ct:int}, rt_dim={rt:int}, transpose={c_transpose:int}; the hardware runs "
    "the configured block (re-init before changing it)",
)
DEST_REUSE_NONE = _m(
    "dest_reuse_none",
    KernelError,
    "binary_dest_reuse_tiles needs EltwiseBinaryReuseDestType::DEST_TO_SRCA or DEST_TO_SRCB "
    "(NONE reuses nothing: use add_tiles / sub_tiles / mul_tiles)",
)
DEST_REUSE_OP = _m(
    "dest_reuse_op",
    KernelError,
    "binary_dest_reuse_tiles: {op:str} is not an FPU binary op (ELWADD, ELWSUB, ELWMUL)",
)
ENUM_VALUE = _m("enum_value", KernelError, "{what:str}: {value:int} is not a valid {type_name:str}")
SFPU_PARAMS = _m(
    "sfpu_params",
    KernelError,
    "{fn:str} takes {count:str} parameter(s) after idst, got {got:int}",
)

# -- layout: tilize, untilize, pack_untilize, pack_rows --------------------------------------

TILIZE_WHAT = _m("tilize_what", None, "{fn:str}({icb:cb}, block={block:int}, {ocb:cb})")
UNTILIZE_WHAT = _m(
    "untilize_what", None, "untilize_block({icb:cb}, full_ct_dim={full:int}, {ocb:cb})"
)
PACK_UNTILIZE_WHAT = _m(
    "pack_untilize_what",
    None,
    "pack_untilize_block<{block_ct:int}, {full:int}>({icb:cb}, {block_rt:int}, {ocb:cb})",
)
PACK_UNTILIZE_DEST_WHAT = _m(
    "pack_untilize_dest_what",
    None,
    "pack_untilize_dest<{block_ct:int}, {full:int}>({ocb:cb}, {block_rt:int})",
)
TILIZE_ARGS = _m(
    "tilize_args",
    KernelError,
    "{what:str}: block must be at least 1 and input_tile_index non-negative",
)
TILIZE_PARTIAL = _m(
    "tilize_partial",
    KernelError,
    "{what:str}: the row-major block is 32 rows of {width:int} {format:format} values "
    "({bytes:int} bytes, {pages:int} pages) but only {waited:int} pages ({available:int} bytes) "
    "are waited at the front of {cb:cb}: a partial block",
    rule="cb-read-waited",
)
TILIZE_WRAP = _m(
    "tilize_wrap",
    KernelError,
    "{what:str}: the row-major block wraps past the end of {cb:cb}'s FIFO",
)
ROW_MAJOR_BFP = _m(
    "row_major_bfp",
    KernelError,
    "{what:str}: {cb:cb} holds {format:format}, a block-float format, which has no row-major "
    "form (a row-major block needs a 16- or 32-bit format)",
)
ROW_MAJOR_SIZE = _m(
    "row_major_size",
    FormatError,
    "{what:str}: data format {format:format} of {cb:cb} has no element size",
)
ROW_MAJOR_FIT = _m(
    "row_major_fit",
    KernelError,
    "{what:str}: the row-major block ({rows:int} rows of {width:int} {format:format} values, "
    "{bytes:int} bytes) does not fit in {cb:cb} from tile slot {slot:int} ({pages:int} pages of "
    "{page:int} bytes)",
)
ROW_MAJOR_VALUE = _m(
    "row_major_value",
    FormatError,
    "{what:str}: value {value:float} cannot be stored in {format:format} ({cb:cb})",
)
UNTILIZE_DIMS = _m(
    "untilize_dims",
    KernelError,
    "{what:str}: full_ct_dim must be a positive multiple of block_ct_dim",
)
UNTILIZE_DST = _m(
    "untilize_dst",
    KernelError,
    "{what:str}: block_ct_dim={block_ct:int} tiles do not fit the {capacity:int} DST tiles of one "
    "acquire",
)
PACK_UNTILIZE_INDEX = _m(
    "pack_untilize_index",
    KernelError,
    "{what:str}: block_rt_dim must be >= 1 and block_c_index < {limit:int}",
)
PACK_ROWS_COUNT = _m(
    "pack_rows_count",
    KernelError,
    "pack_rows: num_rows must be 1..64 (a tile holds 64 rows of 16 datums), got {rows:int}",
)
PACK_ROWS_FIT = _m(
    "pack_rows_fit",
    KernelError,
    "pack_rows: {rows:int} rows of 16 datums ({bytes:int} bytes) do not fit a {page:int}-byte "
    "page of {cb:cb}",
)

# -- NoC --------------------------------------------------------------------------------------

NOC_SIZE = _m("noc_size", NocError, "{what:str}: transfer size must be positive, got {size:int}")
NOC_CROSS_CHIP = _m(
    "noc_cross_chip",
    NocError,
    "{what:str}: {target:str} targets {chips:chip} from chip {chip:int}; a NoC transaction stays "
    "on its chip",
    hint="reach another chip over the fabric (tilewright.device.fabric: "
    "fabric_unicast_noc_unicast_write / fabric_unicast_noc_unicast_atomic_inc)",
)
NOC_ADDRESS_WHAT = _m("noc_address_what", None, "NoC address {addr:hex}")
NOC_L1_RANGE = _m(
    "noc_l1_range",
    NocError,
    "{what:str}: [{start:hex}, {end:hex}) is outside the {l1:int} B L1 of core {core:xy}",
)
NOC_DRAM_RANGE = _m(
    "noc_dram_range",
    NocError,
    "{what:str}: [{start:hex}, {end:hex}) is outside DRAM bank {bank:int} ({size:int} B)",
)
NOC_TARGET = _m(
    "noc_target",
    NocError,
    "{what:str}: NoC address {addr:hex} targets ({x:int}, {y:int}), which is neither a worker core "
    "nor a DRAM bank",
)
NOC_LOCAL_RANGE = _m(
    "noc_local_range",
    NocError,
    "{what:str}: local L1 range [{start:hex}, {end:hex}) is invalid on core {core:xy}",
)
NOC_ALIGN = _m(
    "noc_align",
    NocError,
    "{what:str}: source {src:hex} and destination {dst:hex} are not aligned alike modulo "
    "{align:int} B (the NoC moves {align:int}-byte words)",
)
MCAST_NOT_WORKER = _m(
    "mcast_not_worker",
    NocError,
    "{what:str}: multicast rectangle ({x0:int}, {y0:int})..({x1:int}, {y1:int}) includes "
    "({x:int}, {y:int}), which is not a worker core",
)
MCAST_ONLY_SENDER = _m(
    "mcast_only_sender", NocError, "{what:str}: the multicast rectangle contains only the sender"
)
MCAST_DESTS = _m(
    "mcast_dests",
    NocError,
    "{what:str}: num_dests is {num_dests:int} but the rectangle reaches {count:int} cores{which:str}",
)
NOT_L1_ADDRESS = _m(
    "not_l1_address",
    DeviceError,
    "address {addr:hex} is not an L1 address of core {core:xy} (L1 is {l1:int} B)",
)
BANK_RANGE = _m(
    "bank_range", NocError, "{kind:str} bank {bank:int} does not exist ({count:int} banks)"
)
NO_DRAM_TARGET = _m("no_dram_target", NocError, "{what:str} cannot target DRAM")
NOC_STATE = _m(
    "noc_state",
    NocError,
    "noc_async_{kind:str}_with_state: no noc_async_{kind:str}_set_state on NoC {noc:int} before "
    "it; the command buffer holds no target (hardware would reuse whatever the last transfer left "
    "in it)",
)
TRID_RANGE = _m(
    "trid_range",
    NocError,
    "{what:str}: transaction id {trid:int} does not fit the NoC's 4-bit field (0..15)",
)

# -- semaphores -------------------------------------------------------------------------------

SEMAPHORE_ID = _m("semaphore_id", DeviceError, "semaphore id {id:int} out of range (0..{last:int})")
SEMAPHORE_WORD = _m(
    "semaphore_word", NocError, "semaphore address {addr:hex} is not a valid L1 word"
)
SEMAPHORE_ALIGN = _m(
    "semaphore_align", NocError, "{what:str}: address {addr:hex} is not word aligned"
)
WATCH_FULL = _m(
    "watch_full",
    KernelError,
    "more than {count:int} distinct L1 words are waited on at once on one core",
)

# -- tensor accessors -------------------------------------------------------------------------

ACCESSOR_ARGS = _m(
    "accessor_args",
    KernelError,
    "TensorAccessorArgs<{offset:int}>: the kernel's compile-time args do not hold a complete "
    "tensor-accessor description",
)
ACCESSOR_PAGE_SIZE = _m(
    "accessor_page_size", KernelError, "a sharded TensorAccessor needs its page size"
)
ACCESSOR_PAGE = _m(
    "accessor_page",
    NocError,
    "TensorAccessor: page {page:int} is outside the tensor ({count:int} pages)",
)
ACCESSOR_SHARD = _m(
    "accessor_shard",
    NocError,
    "TensorAccessor: shard {shard:int} is outside the tensor ({count:int} shards)",
)
ACCESSOR_INTERLEAVED = _m(
    "accessor_interleaved",
    KernelError,
    "{what:str}: the tensor accessor is interleaved; shards exist only for sharded tensors",
)


# -- placeholders the driver renders -----------------------------------------------------------


def render_placeholders(
    text: str,
    *,
    cb: Callable[[int], str],
    chip: Callable[[int], str],
    kernel: str,
) -> str:
    """``{cb:N}``, ``{format:N}``, ``{chip:N}`` and ``{kernel}`` in a message from C++,
    named as the Python kernel API names them (``cb(index)``, ``chip(tag)``)."""
    if "{" not in text:
        return text

    def one(m: re.Match) -> str:
        kind, value = m.group(1), m.group(2)
        if kind is None:
            return repr(kernel)
        if kind == "cb":
            return cb(int(value))
        if kind == "format":
            try:
                return format_name(as_data_format(int(value)))
            except FormatError:
                return f"format {value}"
        return chip(int(value))

    return _PLACEHOLDER.sub(one, text)


def message(name: str) -> ApiMessage:
    """The message called ``name`` (KeyError if none)."""
    return MESSAGES[name]


def _check_table(table: Mapping[str, ApiMessage]) -> None:
    for msg in table.values():
        if msg.error is not None and msg.error not in _BY_EXCEPTION:
            raise AssertionError(f"message {msg.name}: {msg.error.__name__} has no error class")


_check_table(MESSAGES)
