"""Every field of a ``ttnn.generic_op`` call checked at the boundary, before anything is built.

docs/cpp-kernels.md promises a :class:`~tilewright.errors.DescriptorError` (rule
``program-descriptor``) at the ``generic_op`` line for a bad descriptor.  Before, values
of the wrong type or range went on into the program builder and escaped from inside
the project as ``ValueError`` / ``TypeError`` (a fidelity of 7, NoC 2, a core range of
strings, CB index 99, ``data_format=1.5`` taken as 1, a compile-time arg of 2^40
truncated, a deallocated tensor read).  :func:`check_generic_op` walks the whole call
once -- the tensors, then each kernel, circular buffer and semaphore -- against the
device it runs on and names the first bad field: where it is (``kernels[1].config.noc``),
what it is, and what it may be.  ``generic_op`` calls it in one place; the structural
rules that need the built program (overlapping CB indices, two kernels on one
processor, runtime args of cores outside a kernel's ranges) stay where the program is
built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any

import numpy as np

from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet, as_core_range_set
from tilewright.device.device import MAX_RUNTIME_ARGS, NUM_SEMAPHORES
from tilewright.device.formats import TtnnDataType
from tilewright.device.program import NOC, DataMovementProcessor, MathFidelity
from tilewright.errors import DescriptorError, user_location
from tilewright.ttnn.tensor import Tensor

__all__ = ["check_generic_op", "check_tensors"]

_RULE = "program-descriptor"
_U32 = (1 << 32) - 1


def _error(message: str, hint: str | None = None) -> DescriptorError:
    return DescriptorError(message, rule=_RULE, hint=hint, loc=user_location())


def _int(value: object, where: str, lo: int = 0, hi: int = _U32, what: str = "a uint32") -> int:
    """An integer field (numpy integers too, bools as 0 / 1); anything else, or one out of
    ``lo..hi``, is the error."""
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if not isinstance(value, (int, np.integer)):
        raise _error(f"{where} is {value!r} ({type(value).__name__}); it must be {what}")
    if not lo <= int(value) <= hi:
        raise _error(f"{where} is {int(value)}; it must be {what} ({lo}..{hi})")
    return int(value)


def _bool(value: object, where: str) -> None:
    if not isinstance(value, (bool, np.bool_)) and value not in (0, 1):
        raise _error(f"{where} is {value!r}; it must be True or False")


def _enum(value: object, cls: type[Enum], where: str) -> None:
    names = ", ".join(m.name for m in cls)
    if isinstance(value, cls):
        return
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        try:
            cls(int(value))
            return
        except ValueError:
            pass
    raise _error(f"{where} is {value!r}; it must be a ttnn.{cls.__name__} ({names})")


def _sequence(value: object, where: str) -> Sequence:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        if isinstance(value, np.ndarray):
            return list(value)
        raise _error(f"{where} is {value!r}; it must be a list")
    return value


def _uint32_list(value: object, where: str, limit: int | None = None) -> None:
    items = _sequence(value, where)
    if limit is not None and len(items) > limit:
        raise _error(f"{where} has {len(items)} values; at most {limit}")
    for i, v in enumerate(items):
        _int(v, f"{where}[{i}]")


def _cores(value: Any, where: str, device) -> CoreRangeSet:
    try:
        if isinstance(value, CoreCoord):
            cores = CoreRangeSet([CoreRange(value, value)])
        else:
            cores = as_core_range_set(value)
    except Exception as exc:  # noqa: BLE001 - a user value: name it
        raise _error(f"{where} {value!r} is not a core range set ({exc})") from None
    grid = (device.grid_x, device.grid_y) if device is not None else None
    for r in cores:
        lo, hi = r.start, r.end
        if lo.x < 0 or lo.y < 0 or hi.x < lo.x or hi.y < lo.y:
            raise _error(f"{where}: core range {r} is empty or negative")
        if grid is not None and (hi.x >= grid[0] or hi.y >= grid[1]):
            raise _error(
                f"{where}: core range {r} is outside the device's {grid[0]}x{grid[1]} worker grid"
            )
    return cores


# -- the parts ----------------------------------------------------------------------------------


def _pairs(value: object, where: str, value_check: Callable[[object, str], object]) -> None:
    items = value.items() if isinstance(value, Mapping) else _sequence(value, where)
    for i, item in enumerate(items):
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise _error(f"{where}[{i}] is {item!r}; it must be a (name, value) pair")
        name, v = item
        if not isinstance(name, str) or not name:
            raise _error(f"{where}[{i}]: the name {name!r} must be a non-empty string")
        value_check(v, f"{where}[{name!r}]")


def _runtime_args(value: Any, where: str) -> None:
    if value is None or hasattr(value, "items") and not isinstance(value, Mapping):
        if value is not None:  # ttnn.RuntimeArgs
            for coord, args in value.items():
                _uint32_list(args, f"{where}[{coord.x}][{coord.y}]", MAX_RUNTIME_ARGS)
        return
    if isinstance(value, Mapping):
        for coord, args in value.items():
            _uint32_list(args, f"{where}[{coord!r}]", MAX_RUNTIME_ARGS)
        return
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise _error(
            f"{where}: runtime_args must be indexed [x][y] -> list of integers (a nested list, "
            "a dict of CoreCoord -> list, or ttnn.RuntimeArgs)"
        )
    for x, column in enumerate(value):
        for y, args in enumerate(_sequence(column, f"{where}[{x}]")):
            if args is not None:
                _uint32_list(args, f"{where}[{x}][{y}]", MAX_RUNTIME_ARGS)


def _config(cfg: Any, where: str, compute_cls: type, dm_cls: type) -> None:
    compute, data_movement = isinstance(cfg, compute_cls), isinstance(cfg, dm_cls)
    if compute:
        _enum(cfg.math_fidelity, MathFidelity, f"{where}.math_fidelity")
        for name in (
            "fp32_dest_acc_en",
            "dst_full_sync_en",
            "math_approx_mode",
            "bfp8_pack_precise",
        ):
            _bool(getattr(cfg, name), f"{where}.{name}")
    elif data_movement:
        _enum(cfg.processor, DataMovementProcessor, f"{where}.processor")
        _enum(cfg.noc, NOC, f"{where}.noc")


def _kernel(kd: Any, where: str, device, compute_cls: type, dm_cls: type) -> None:
    if not hasattr(kd, "kernel_source"):
        raise _error(f"{where} is a {type(kd).__name__}; it must be a ttnn.KernelDescriptor")
    _cores(kd.core_ranges, f"{where}.core_ranges", device)
    _uint32_list(kd.compile_time_args, f"{where}.compile_time_args")
    _pairs(kd.defines, f"{where}.defines", lambda v, w: None)
    _pairs(kd.named_compile_time_args, f"{where}.named_compile_time_args", _int)
    _runtime_args(kd.runtime_args, f"{where}.runtime_args")
    _uint32_list(kd.common_runtime_args, f"{where}.common_runtime_args", MAX_RUNTIME_ARGS)
    _config(kd.config, f"{where}.config", compute_cls, dm_cls)


def _data_format(value: object, where: str) -> None:
    if isinstance(value, Enum):
        return  # a ttnn.DataType or a device DataFormat (the builder maps it)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        try:
            TtnnDataType(int(value))
            return
        except ValueError:
            pass
    raise _error(f"{where}: data format {value!r} is not a ttnn data type (ttnn.bfloat16, ...)")


def _cb(cb: Any, where: str, device) -> None:
    if not hasattr(cb, "format_descriptors"):
        raise _error(f"{where} is a {type(cb).__name__}; it must be a ttnn.CBDescriptor")
    l1 = int(device.l1_size) if device is not None else _U32
    _int(cb.total_size, f"{where}.total_size", 1, l1, "a size in bytes within L1")
    _cores(cb.core_ranges, f"{where}.core_ranges", device)
    num_cbs = int(device.capacity.num_cbs) if device is not None else 64
    for i, f in enumerate(_sequence(cb.format_descriptors, f"{where}.format_descriptors")):
        at = f"{where}.format_descriptors[{i}]"
        if not hasattr(f, "buffer_index"):
            raise _error(f"{at} is a {type(f).__name__}; it must be a ttnn.CBFormatDescriptor")
        _int(f.buffer_index, f"{at}.buffer_index", 0, num_cbs - 1, "a circular buffer index")
        _data_format(f.data_format, f"{at}.data_format")
        _int(f.page_size, f"{at}.page_size", 1, l1, "a page size in bytes within L1")


def _semaphore(sem: Any, where: str, device) -> None:
    if not hasattr(sem, "initial_value"):
        raise _error(f"{where} is a {type(sem).__name__}; it must be a ttnn.SemaphoreDescriptor")
    if sem.id is not None:
        _int(sem.id, f"{where}.id", 0, NUM_SEMAPHORES - 1, "a semaphore id")
    _cores(sem.core_ranges, f"{where}.core_ranges", device)
    _int(sem.initial_value, f"{where}.initial_value")


# -- the call -------------------------------------------------------------------------------------


def check_tensors(tensors: Sequence) -> object:
    """``generic_op``'s tensors: device tensors, allocated, on one device; that device."""
    if not tensors:
        raise _error("generic_op needs at least one tensor (the last one is the output)")
    device = None
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise _error(f"io_tensors[{i}] is a {type(t).__name__}; it must be a ttnn.Tensor")
        if not t.is_allocated():
            raise _error(
                f"io_tensors[{i}] was deallocated (ttnn.deallocate); its buffer may hold another "
                "tensor now",
                hint="pass a live tensor, or allocate it again",
            )
        if t.device() is None:
            raise _error(f"io_tensors[{i}] is on the host; generic_op runs on a device's tensors")
        if device is not None and t.device() is not device:
            raise _error("generic_op's tensors must all be on one device")
        device = t.device()
    return device


def check_generic_op(tensors: Sequence, desc: Any, compute_cls: type, dm_cls: type) -> Any:
    """Check the whole call (module docstring); the device it runs on."""
    device = check_tensors(tensors)
    if not all(hasattr(desc, n) for n in ("kernels", "cbs", "semaphores")):
        raise _error(f"generic_op needs a ttnn.ProgramDescriptor, got {type(desc).__name__}")
    # on a mesh the program runs on its chips: it must fit each of them
    for chip in getattr(device, "devices", None) or [device]:
        for i, kd in enumerate(_sequence(desc.kernels, "kernels")):
            _kernel(kd, f"kernels[{i}]", chip, compute_cls, dm_cls)
        for i, cb in enumerate(_sequence(desc.cbs, "cbs")):
            _cb(cb, f"cbs[{i}]", chip)
        for i, sem in enumerate(_sequence(desc.semaphores, "semaphores")):
            _semaphore(sem, f"semaphores[{i}]", chip)
    return device
