"""Launching a Program on a device: per-core setup, then the engine.

What a program launch writes on hardware (tt-metal digest §7): runtime args, CB
configurations with counters reset, semaphore initial values, then a go signal so
that all kernels of a core start together.  Here: circular buffers are placed
upward from ``l1_unreserved_base`` (the same address on every core of a config's
range, tt-metal's program CB allocator) unless globally allocated over an L1
buffer, semaphores and runtime args are written into each core's config region,
and one ``KernelRun`` per (core, kernel) goes to the engine, cores in row-major
order and kernels in program order (deterministic).

The launch cache: what a launch sets up is a function of the program's kernels, circular
buffers and semaphores, the device and where its lowest L1 buffer starts -- everything
but the runtime-argument *values*.  A launch keeps it as the program's
:class:`LaunchPlan` on the device (``Device.launch_plans``); the next launch of the same
program whose :func:`_plan_key` (and native kernel objects, and runtime-argument counts
per core) are equal reuses it: the CB table is copied back, the kernel runs and their
contexts are reset, and only the runtime args (tensor addresses change between calls)
and semaphore initial values are written again.  Anything else that differs builds a
new plan (docs/device.md "Launch cache").
"""

from __future__ import annotations

import ctypes
import operator
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from tilewright.device.cb import CircularBuffer
from tilewright.device.coords import CoreCoord
from tilewright.device.engine import KernelRun, LaunchResult, LaunchReuse, busy_error
from tilewright.device.perf import dispatch
from tilewright.device.program import ComputeConfig, DataMovementProcessor, KernelSpec, Program
from tilewright.errors import DeviceError

if TYPE_CHECKING:
    from tilewright.device.device import Core, Device

__all__ = [
    "KernelContext",
    "LAUNCH_CACHE",
    "LaunchPlan",
    "device_claim",
    "launch_program",
    "prepare_launch",
    "program_dispatch_ns",
    "release_launch",
    "slot_of",
]


class KernelContext:
    """Per-(core, kernel) state that the kernel API reads: args, NoC, DST registers."""

    __slots__ = (
        "device",
        "core",
        "kernel",
        "slot",
        "args",
        "common_args",
        "compile_args",
        "noc",
        "rta_addr",
        "crta_addr",
        "dst",
        "dst_pending",
        "compute",
        "extra",
        "api",
    )

    def __init__(
        self,
        device: Device,
        core: Core,
        kernel: KernelSpec,
        slot: str,
        args: list[int],
        common_args: list[int],
    ) -> None:
        self.device = device
        self.core = core
        self.kernel = kernel
        self.slot = slot
        self.args = args
        self.common_args = common_args
        self.compile_args = kernel.config.compile_args
        self.noc = getattr(kernel.config, "noc", 0)
        self.rta_addr = device.rta_address(slot)
        self.crta_addr = self.rta_addr + 4 * len(args)
        self.dst: np.ndarray | None = None
        self.dst_pending = 0
        self.compute = kernel.config if isinstance(kernel.config, ComputeConfig) else None
        self.extra: object = None  # a language layer's per-run state (TT-Lang: the node setup)
        self.api: dict[str, object] | None = (
            None  # kernel-API register state (NoC command-buffer state, packer flags)
        )


def slot_of(device, kernel: KernelSpec) -> str:
    """The processor slot a kernel runs on (explicit, or from its config)."""
    slots = device.slots
    if kernel.slot is not None:
        kind_slots = slots.get(kernel.kind, ())
        if kernel.slot not in kind_slots:
            raise DeviceError(
                f"kernel {kernel.name!r}: slot {kernel.slot!r} is not a {kernel.kind} slot of "
                f"this target ({', '.join(kind_slots)})"
            )
        return kernel.slot
    cfg = kernel.config
    if isinstance(cfg, ComputeConfig):
        if cfg.engine >= len(slots["compute"]):
            raise DeviceError(
                f"kernel {kernel.name!r}: compute engine {cfg.engine} does not exist "
                f"(target has {len(slots['compute'])})"
            )
        return slots["compute"][cfg.engine]
    dm = slots["data_movement"]
    if dm == ("ncrisc", "brisc"):
        by_proc = {DataMovementProcessor.RISCV_0: "brisc", DataMovementProcessor.RISCV_1: "ncrisc"}
        if cfg.processor in by_proc:
            return by_proc[cfg.processor]
    elif cfg.processor < len(dm):
        return dm[cfg.processor]
    raise DeviceError(
        f"kernel {kernel.name!r}: processor {DataMovementProcessor(cfg.processor).name} does not "
        f"exist on this target (data-movement slots: {', '.join(dm)})"
    )


@dataclass(slots=True)
class _Placement:
    core: Core
    kernel: KernelSpec
    slot: str


def launch_program(
    device, program: Program, *, place_word: str = "core", tracer=None
) -> LaunchResult:
    """Set up every core of ``program`` and run its kernels to completion."""
    runs = prepare_launch(device, program, place_word=place_word)
    plan = device.launch_plans.get(id(program))
    reuse = plan.reuse if isinstance(plan, LaunchPlan) and plan.runs is runs else None
    try:
        if tracer is not None:
            tracer.begin_launch(program, runs)
        result = device.engine.run(runs, reuse)
    except BaseException:
        # a failed launch leaves its runs half-run: the next launch sets up afresh
        device.launch_plans.pop(id(program), None)
        raise
    finally:
        release_launch(device)
    result.dispatch_ns = program_dispatch_ns(device, program)
    return result


def program_dispatch_ns(device, program: Program) -> int:
    """The modelled dispatch of ``program`` on ``device`` (device/perf/dispatch.py)."""
    return dispatch.program_dispatch_ns(device.perf.arch, program)


def prepare_launch(device, program: Program, *, place_word: str = "core") -> list[KernelRun]:
    """Set up every core of ``program`` on ``device``: the kernel runs to start.

    A mesh launch prepares each chip's program, then runs all runs on the mesh's shared
    engine; every prepared device must be released with :func:`release_launch`.
    """
    if device.closed:
        raise DeviceError("cannot launch a program on a closed device")
    _claim(device)
    if device.engine.running:  # this thread's own launch (a launch from a kernel)
        _unclaim(device)
        raise DeviceError("a program is already running on this device")
    try:
        key = _plan_key(device, program, place_word)
        plan = device.launch_plans.get(id(program))
        if LAUNCH_CACHE.enabled and isinstance(plan, LaunchPlan) and plan.fits(program, key):
            natives = _prepare_native(device, program)
            if natives == plan.natives:
                device.perf.reset()  # the launch's clocks start at 0 on an idle NoC
                plan.restore(device)
                _setup_semaphores(device, program)
                plan.write_args(device)
                LAUNCH_CACHE.hits += 1
                return plan.runs
        else:
            natives = None
        runs, natives = _prepare_cold(device, program, place_word, natives)
        if LAUNCH_CACHE.enabled:
            LAUNCH_CACHE.misses += 1
            _remember(device, program, key, runs, natives)
        return runs
    except BaseException:
        release_launch(device)
        raise


def _prepare_cold(
    device, program: Program, place_word: str, natives: dict[int, object] | None
) -> tuple[list[KernelRun], dict[int, object]]:
    """Every core's set-up from the program (a launch without a plan): the kernel runs,
    and the native kernels they run."""
    placements = _place_kernels(device, program)
    device.perf.reset()  # the launch's clocks start at 0 on an idle NoC
    cores = sorted({id(p.core): p.core for p in placements}.values(), key=lambda c: c.index)
    _setup_circular_buffers(device, program)
    _setup_semaphores(device, program)
    if natives is None:
        natives = _prepare_native(device, program)
    runs = []
    by_core: dict[int, list[_Placement]] = {}
    for p in placements:
        by_core.setdefault(p.core.index, []).append(p)
    prefix = device.place_prefix
    for core in cores:
        for p in by_core[core.index]:
            ctx = _make_context(device, p)
            fn = p.kernel.entry
            run = KernelRun(
                core,
                p.kernel.name,
                p.slot,
                fn,
                (),
                context=ctx,
                place=f"{prefix}{place_word} ({core.logical.x}, {core.logical.y})",
                native=natives.get(p.kernel.handle),
            )
            runs.append(run)
    return runs, natives


def release_launch(device) -> None:
    """Reset per-launch core state after a launch (finished or failed)."""
    try:
        for core in device.cores:
            core.cb_top = device.l1_unreserved_base
            core.cbs = [None] * device.num_cbs
        device.shared.reset()
    finally:
        _unclaim(device)


_OWNERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # device -> [thread, depth]
_OWNERS_LOCK = threading.Lock()


def _claim(device, loc=None) -> None:
    """Take ``device`` for this thread (again, if it holds it: claims nest).

    The engine allows one launch at a time, but preparing one already writes the cores'
    circular buffers and semaphores and releasing one resets them, and an operation call
    rewrites its warm program's runtime args before it launches: another thread doing any
    of it during a launch corrupted that launch (bogus DFB contract errors, wrong results,
    a crash of native code).  So a launch holds the device from its preparation to its
    release, and an operation call from its warm lookup to its launch's end."""
    me = threading.get_ident()
    with _OWNERS_LOCK:
        owner = _OWNERS.get(device)
        if owner is None:
            _OWNERS[device] = [me, 1]
        elif owner[0] != me:
            err = busy_error(device.engine.name)
            err.loc = loc
            raise err
        else:
            owner[1] += 1


def _unclaim(device) -> None:
    with _OWNERS_LOCK:
        owner = _OWNERS.get(device)
        if owner is not None and owner[0] == threading.get_ident():
            owner[1] -= 1
            if not owner[1]:
                del _OWNERS[device]


@contextmanager
def device_claim(device, loc=None) -> Iterator[None]:
    """Hold ``device`` for this thread (``_claim``); another thread's launch on it is the
    "running a launch in another thread" DeviceError (at ``loc``)."""
    _claim(device, loc)
    try:
        yield
    finally:
        _unclaim(device)


def _prepare_native(device, program: Program) -> dict[int, object]:
    """Build the program's native (C++) kernels, in parallel; kernel handle -> native run.

    A kernel entry is native when it says so (``native_kernel``, tilewright.native's
    NativeKernel); the device layer only asks it to prepare itself.
    """
    specs = [k for k in program.kernels if getattr(k.entry, "native_kernel", False)]
    if not specs:
        return {}
    prepare = getattr(type(specs[0].entry), "prepare_program")  # noqa: B009 - duck-typed hook
    return prepare(device, specs, program.circular_buffers)


def _place_kernels(device, program: Program) -> list[_Placement]:
    placements: list[_Placement] = []
    taken: dict[tuple[int, str], KernelSpec] = {}
    for k in program.kernels:
        slot = slot_of(device, k)
        for coord in k.cores.cores():
            core = device.core(coord.x, coord.y)
            other = taken.get((core.index, slot))
            if other is not None:
                raise DeviceError(
                    f"kernels {other.name!r} and {k.name!r} both run on processor {slot} of core "
                    f"{coord}; a core runs at most one kernel per processor"
                )
            taken[(core.index, slot)] = k
            placements.append(_Placement(core, k, slot))
    return placements


def _setup_circular_buffers(device, program: Program) -> None:
    for core in device.cores:
        core.cbs = [None] * device.num_cbs
        core.cb_top = device.l1_unreserved_base
    l1_end = device.l1_size - device.l1_small_size
    lowest_buffer = device.l1_allocator.lowest_allocated_address()
    align = device.l1_alignment
    for cores, cfg in program.circular_buffers:
        targets = [device.core(c.x, c.y) for c in cores.cores()]
        if cfg.global_buffer is not None:
            buf = cfg.global_buffer
            if buf.buffer_type.name not in ("L1", "L1_SMALL"):
                raise DeviceError("a globally allocated circular buffer must alias an L1 buffer")
            addr = buf.address + cfg.address_offset
            if cfg.address_offset + cfg.total_size > buf.size_per_bank:
                raise DeviceError(
                    f"globally allocated circular buffer of {cfg.total_size} B at offset "
                    f"{cfg.address_offset} exceeds the {buf.size_per_bank} B the buffer holds per core"
                )
            if buf.shard is not None:
                holders = {c.index for c in buf.shard_cores}
                for core in targets:
                    if core.index not in holders:
                        raise DeviceError(
                            f"circular buffer over a sharded buffer on core {core.logical}, "
                            "which holds no shard of it"
                        )
        else:
            if cfg.fixed_address is not None:
                addr = cfg.fixed_address
                if addr < device.l1_unreserved_base or addr % align:
                    raise DeviceError(
                        f"circular buffer address {addr:#x} is below l1_unreserved_base "
                        f"({device.l1_unreserved_base:#x}) or not {align}-byte aligned"
                    )
            else:
                addr = max(core.cb_top for core in targets)
                addr = -(-addr // align) * align
            top = addr + cfg.total_size
            if top > l1_end:
                raise DeviceError(
                    f"statically allocated circular buffers on cores {cores} grow to {top} B, "
                    f"beyond the {l1_end} B of L1 available to them"
                )
            if lowest_buffer is not None and top > lowest_buffer:
                raise DeviceError(
                    f"statically allocated circular buffers on cores {cores} clash with L1 "
                    f"buffers: the CB region ends at {top:#x} and an L1 buffer starts at "
                    f"{lowest_buffer:#x}"
                )
            for core in targets:
                core.cb_top = max(core.cb_top, top)
        for index in cfg.indices():
            if not 0 <= index < device.num_cbs:
                raise DeviceError(
                    f"circular buffer index {index} is out of range: this target has "
                    f"{device.num_cbs} circular-buffer indices"
                )
            for core in targets:
                if core.cbs[index] is not None:
                    raise DeviceError(
                        f"circular buffer index {index} is configured twice on core {core.logical}"
                    )
                core.cbs[index] = CircularBuffer.in_shared(
                    device.shared.cbs,
                    device.shared.cb_offset(core.index, index),
                    core,
                    index,
                    addr,
                    cfg.total_size,
                    cfg.page_sizes[index],
                    cfg.data_formats[index],
                    cfg.tiles.get(index),
                    cfg.names.get(index),
                )


def _setup_semaphores(device, program: Program) -> None:
    for sem in program.semaphores:
        addr = device.semaphore_address(sem.sem_id)
        for coord in sem.cores.cores():
            core = device.core(coord.x, coord.y)
            core.l1_words(addr)[0] = sem.initial_value


def _make_context(device, p: _Placement) -> KernelContext:
    coord = CoreCoord(p.core.logical.x, p.core.logical.y)
    args = list(p.kernel.runtime_args.get(coord, ()))
    common = list(p.kernel.common_runtime_args)
    ctx = KernelContext(device, p.core, p.kernel, p.slot, args, common)
    words = args + common
    if words:
        p.core.l1_words(ctx.rta_addr, len(words))[:] = np.asarray(words, dtype=np.uint32)
    return ctx


# -- the launch cache ----------------------------------------------------------------------------


@dataclass(slots=True)
class LaunchCacheStats:
    """How often a launch reused its program's plan (``hits``) or set up every core
    (``misses``); process-wide, for tests and benchmarks.  ``enabled`` False makes every
    launch set up from scratch, counted in neither and remembered by no plan
    (benchmarks/bench_launch.py's "before")."""

    hits: int = 0
    misses: int = 0
    enabled: bool = True


LAUNCH_CACHE = LaunchCacheStats()

_PLANS_PER_DEVICE = 64  # plans a device keeps (programs built per call must not pile up)
_NO_ARGS: list[int] = []  # the runtime args of a core that has none (read-only)


def _plan_key(device, program: Program, place_word: str) -> tuple:
    """Everything a launch's set-up depends on, but the runtime-argument values and
    counts (``LaunchPlan.fits``) and the native kernel objects (compared after their
    build check): cheap to compute, O(kernels + circular buffers + semaphores)."""
    return (
        place_word,
        device.place_prefix,
        device.l1_allocator.lowest_allocated_address(),  # the CB / L1 buffer clash check
        tuple(
            (id(k), k.entry, k.cores.ranges(), k.config, k.slot, k.name, len(k.common_runtime_args))
            for k in program.kernels
        ),
        tuple((cores.ranges(), _cb_key(cfg)) for cores, cfg in program.circular_buffers),
        tuple((s.sem_id, s.cores.ranges()) for s in program.semaphores),
    )


def _cb_key(cfg) -> tuple:
    buf = cfg.global_buffer
    held = (
        None
        if buf is None
        else (id(buf), buf.address, buf.size_per_bank, buf.buffer_type, buf.shard is None)
    )
    return (
        id(cfg),
        cfg.total_size,
        tuple(cfg.page_sizes.items()),
        tuple(cfg.data_formats.items()),
        tuple(cfg.tiles.items()),
        tuple(cfg.names.items()),
        cfg.fixed_address,
        cfg.address_offset,
        held,
    )


class _KernelArgs:
    """The runs of one kernel of a plan, and where their runtime args go."""

    __slots__ = ("spec", "coords", "contexts", "cores", "lens", "word", "uniform", "keys")

    def __init__(self, spec: KernelSpec, runs: list[KernelRun]) -> None:
        self.spec = spec
        self.coords = [CoreCoord(r.core.logical.x, r.core.logical.y) for r in runs]
        # The runtime-args dict's own keys when they are exactly these cores in this order
        # (a warm call rewrites the values in place): its values are then the rows as they
        # are, without hashing a coordinate per core.
        keys = list(spec.runtime_args)
        self.keys: list[CoreCoord] | None = keys if keys == self.coords else None
        self.contexts: list[KernelContext] = [r.kernel_context() for r in runs]
        self.cores = np.array([r.core.index for r in runs], dtype=np.intp)
        self.lens = tuple(len(c.args) for c in self.contexts)
        self.word = self.contexts[0].rta_addr // 4 if runs else 0  # one slot per kernel
        self.uniform = len(set(self.lens)) <= 1


class LaunchPlan:
    """A program's launch set-up on one device, kept for its next launch (module doc).

    Holds the program weakly (``Device.launch_plans`` is keyed by its id): the runs and
    their contexts, the CB table and each core's CB list as the set-up left them, and
    the engine's ``LaunchReuse``."""

    __slots__ = (
        "program",
        "key",
        "natives",
        "runs",
        "python_runs",
        "native_runs",
        "kernels",
        "cb_table",
        "core_cbs",
        "words",
        "reuse",
        "_rows",
    )

    def __init__(self, device, program: Program, key: tuple, runs, natives) -> None:
        plans = device.launch_plans
        pid = id(program)

        def forget(ref, plans=plans, pid=pid) -> None:  # the program is gone
            plan = plans.get(pid)
            if isinstance(plan, LaunchPlan) and plan.program is ref:
                del plans[pid]

        self.program = weakref.ref(program, forget)
        self.key = key
        self.natives = natives
        self.runs: list[KernelRun] = runs
        self.python_runs = [r for r in runs if r.native is None]
        self.native_runs = [r for r in runs if r.native is not None]
        by_spec: dict[int, list[KernelRun]] = {}
        for r in runs:
            by_spec.setdefault(id(r.kernel_context().kernel), []).append(r)
        self.kernels = [_KernelArgs(k, by_spec[id(k)]) for k in program.kernels if id(k) in by_spec]
        table = device.shared.cbs
        self.cb_table = ctypes.string_at(ctypes.addressof(table), ctypes.sizeof(table))
        base = device.l1_unreserved_base
        self.core_cbs = [
            (core, tuple(core.cbs), core.cb_top)
            for core in device.cores
            if core.cb_top != base or any(cb is not None for cb in core.cbs)
        ]
        arena = device.l1
        n = arena.num_cores
        self.words = arena.view[: n * arena.slot_size].view(np.uint32).reshape(n, -1)
        self.reuse = LaunchReuse()
        self._rows: list[list[list[int]]] | None = None

    def fits(self, program: Program, key: tuple) -> bool:
        """Whether a launch of ``program`` with ``key`` can reuse this plan: the same
        program and key, and as many runtime args on every core as before (their
        values are this launch's, kept for :meth:`write_args`)."""
        if self.program() is not program or self.key != key:
            return False
        rows_all = []
        for ka in self.kernels:
            args = ka.spec.runtime_args
            keys = ka.keys
            if keys is not None and len(args) == len(keys) and all(map(operator.is_, args, keys)):
                rows = list(args.values())
            else:
                rows = [args.get(c, _NO_ARGS) for c in ka.coords]
            if tuple(map(len, rows)) != ka.lens:
                return False
            rows_all.append(rows)
        self._rows = rows_all
        return True

    def restore(self, device) -> None:
        """The CBs as the set-up left them (counters and pointers reset), runs and
        contexts as new."""
        ctypes.memmove(device.shared.cbs, self.cb_table, len(self.cb_table))
        for core, cbs, top in self.core_cbs:
            core.cbs = list(cbs)
            core.cb_top = top
        for r in self.python_runs:
            r.reset()
        for r in self.native_runs:
            r.clock = 0  # the only field a native run's launch writes (Engine.run)
        for ka in self.kernels:
            for ctx in ka.contexts:
                ctx.dst = None
                ctx.dst_pending = 0
                ctx.extra = None
                ctx.api = None

    def write_args(self, device) -> None:
        """This launch's runtime args: into every run's context and L1 (per kernel, one
        write for all its cores when they have as many args)."""
        rows_all, self._rows = self._rows, None
        assert rows_all is not None  # fits() came first
        words = self.words
        for ka, rows in zip(self.kernels, rows_all):
            common = ka.spec.common_runtime_args
            for ctx, row in zip(ka.contexts, rows):
                ctx.args = row
                ctx.common_args = common
            n, nc = (ka.lens[0] if ka.lens else 0), len(common)
            if not ka.uniform:
                for ctx in ka.contexts:
                    _write_words(ctx)
                continue
            if n:
                flat = np.fromiter(chain.from_iterable(rows), dtype=np.uint32, count=n * len(rows))
                words[ka.cores, ka.word : ka.word + n] = flat.reshape(len(rows), n)
            if nc:
                words[ka.cores, ka.word + n : ka.word + n + nc] = np.asarray(
                    common, dtype=np.uint32
                )


def _remember(device, program: Program, key: tuple, runs, natives) -> None:
    plans = device.launch_plans
    if len(plans) >= _PLANS_PER_DEVICE:
        plans.clear()
    plans[id(program)] = LaunchPlan(device, program, key, runs, natives)


def _write_words(ctx: KernelContext) -> None:
    words = ctx.args + ctx.common_args
    if words:
        ctx.core.l1_words(ctx.rta_addr, len(words))[:] = np.asarray(words, dtype=np.uint32)
