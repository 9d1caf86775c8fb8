"""Operation runtime resources: plan the factory's records, then apply them to the program
(reference C.11; tt-lang's "Operation runtime resources").

Per device execution, after the program is built (its semaphores known) and before it
runs, :func:`plan` calls the operation's ``runtime_resource_factory`` with the
invocation's tensors, the worker grid as a ``ttnn.CoreRangeSet`` and the first
semaphore id after the compiler's own, validates the whole result against the
reference's rules and returns a frozen :class:`RuntimeResourcePlan`; only then does
:func:`apply` touch the program.  A rejected result leaves no partial program.

The plan is plain data a back end lowers without the records: per kernel function of
the program (every one, with or without resources) its logical kernel, ``#define`` s
and per-node runtime-argument words, plus the caller's semaphores.  In the program
it becomes the kernel configs' ``defines`` (the interpreter passes them to the JIT
build of the kernel's external calls), ``KernelSpec.runtime_args`` (``get_arg_val``
index 0 onwards: a TT-Lang kernel's per-node runtime arguments belong to the caller)
and semaphores with the caller's ids.  ``fingerprint`` is the structural identity a
program cache keys on: destinations, nodes, defines, vector lengths and semaphores,
never the argument words or the lifetime objects.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet, as_core_range_set
from tilewright.device.device import NUM_SEMAPHORES
from tilewright.errors import InterfaceError, SourceLoc
from tilewright.lang.resources import KernelRuntimeResources, ProgramRuntimeResources
from tilewright.lang.selectors import (
    Kernel,
    KernelKind,
    LogicalKernel,
    PipeSourceKernel,
    format_kernels,
    kernel_of,
)

if TYPE_CHECKING:
    from tilewright.compiler.program_builder import OperationProgram

__all__ = [
    "CallerSemaphore",
    "KernelResources",
    "RuntimeResourcePlan",
    "apply",
    "check_factory",
    "plan",
]

_RULE = "runtime-resources"
_FACTORY_KEYWORDS = ("tensors", "core_ranges", "first_free_semaphore_id")

Node = tuple[int, int]


@dataclass(frozen=True, slots=True)
class KernelResources:
    """What one kernel function of the program gets (empty when the factory names it not)."""

    function: str  # the program's kernel name
    logical: LogicalKernel
    defines: tuple[tuple[str, str], ...] = ()
    runtime_args: tuple[tuple[Node, tuple[int, ...]], ...] = ()  # by node, sorted


@dataclass(frozen=True, slots=True)
class CallerSemaphore:
    """A semaphore the caller declared: its id, nodes (x0, y0, x1, y1 ranges), initial value."""

    sem_id: int
    ranges: tuple[tuple[int, int, int, int], ...]
    initial_value: int


@dataclass(frozen=True, slots=True)
class RuntimeResourcePlan:
    """One execution's validated runtime resources (see the module docstring)."""

    operation: str
    first_free_semaphore_id: int
    kernels: tuple[KernelResources, ...]  # one per kernel function, in program order
    semaphores: tuple[CallerSemaphore, ...]
    lifetimes: tuple[object, ...] = field(default=(), compare=False, repr=False)

    @property
    def fingerprint(self) -> str:
        """The structural identity (reference C.11 program-cache identity)."""
        structure = (
            self.operation,
            tuple(
                (
                    k.function,
                    k.logical.describe(),
                    k.defines,
                    tuple((n, len(w)) for n, w in k.runtime_args),
                )
                for k in self.kernels
            ),
            tuple((s.sem_id, s.ranges, s.initial_value) for s in self.semaphores),
        )
        return hashlib.sha256(repr(structure).encode()).hexdigest()[:16]


def check_factory(factory: object, loc: SourceLoc | None) -> None:
    """At decoration: the factory is callable and takes the keyword-only contract."""
    if not callable(factory):
        raise InterfaceError(
            f"@ttl.operation(runtime_resource_factory=...) takes a callable, got "
            f"{type(factory).__name__}",
            loc=loc,
            rule=_RULE,
        )
    try:
        inspect.signature(factory).bind(**{k: None for k in _FACTORY_KEYWORDS})
    except TypeError as exc:
        raise InterfaceError(
            f"runtime_resource_factory {getattr(factory, '__name__', factory)!r} must accept the "
            f"keyword arguments tensors, core_ranges and first_free_semaphore_id ({exc})",
            loc=loc,
            rule=_RULE,
            hint="def make_resources(*, tensors, core_ranges, first_free_semaphore_id): ...",
        ) from None
    except ValueError:  # no signature (a builtin): checked when it is called
        pass


def plan(
    factory: Callable[..., object],
    op_name: str,
    program: OperationProgram,
    tensors: Sequence[object],
    grid: tuple[int, ...],
    loc: SourceLoc | None,
) -> RuntimeResourcePlan:
    """Call the factory for this execution and validate its result (no program change)."""
    cols, rows = grid[0], grid[1]
    worker = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(cols - 1, rows - 1))])
    first_free = max((s.sem_id + 1 for s in program.semaphores), default=0)
    result = factory(tensors=tuple(tensors), core_ranges=worker, first_free_semaphore_id=first_free)
    where = loc
    if not isinstance(result, ProgramRuntimeResources):
        raise InterfaceError(
            f"operation '{op_name}': runtime_resource_factory must return a "
            f"ttl.ProgramRuntimeResources, got {type(result).__name__}",
            loc=where,
            rule=_RULE,
        )
    where = result.loc or loc
    semaphores = _semaphores(result.semaphore_descriptors, first_free, worker, op_name, where)
    kernels = _kernels(result.kernel_resources, program, worker, op_name, where)
    return RuntimeResourcePlan(op_name, first_free, kernels, semaphores, result.lifetimes)


def apply(resources: RuntimeResourcePlan, program: OperationProgram) -> None:
    """Install a plan in the program: defines, runtime arguments, caller semaphores."""
    for handle, entry in enumerate(resources.kernels):
        spec = program.kernels[handle]
        if entry.defines:
            spec.config = dataclasses.replace(
                spec.config, defines=tuple(spec.config.defines) + entry.defines
            )
        for (x, y), words in entry.runtime_args:
            program.set_runtime_args(handle, CoreCoord(x, y), list(words))
    for sem in resources.semaphores:
        cores = CoreRangeSet(
            [CoreRange(CoreCoord(x0, y0), CoreCoord(x1, y1)) for x0, y0, x1, y1 in sem.ranges]
        )
        program.create_semaphore_with_id(cores, sem.sem_id, sem.initial_value)
    program.runtime_resources = resources


# -- validation (reference C.11) ----------------------------------------------------------------


def _error(op_name: str, message: str, loc: SourceLoc | None, hint: str | None = None):
    return InterfaceError(
        f"operation '{op_name}': runtime resources: {message}", loc=loc, rule=_RULE, hint=hint
    )


def _semaphores(descriptors, first_free: int, worker: CoreRangeSet, op_name: str, loc):
    out: list[CallerSemaphore] = []
    seen: set[int] = set()
    for i, d in enumerate(descriptors):
        what = f"semaphore_descriptors[{i}]"
        if type(d).__name__ != "SemaphoreDescriptor":
            raise _error(
                op_name, f"{what} must be a ttnn.SemaphoreDescriptor, got {type(d).__name__}", loc
            )
        sem_id = getattr(d, "id", None)
        if isinstance(sem_id, bool) or not isinstance(sem_id, int):
            raise _error(
                op_name,
                f"{what} has no semaphore id (got {sem_id!r})",
                loc,
                hint="ttnn.SemaphoreDescriptor(first_free_semaphore_id, core_ranges=..., initial_value=...)",
            )
        if sem_id < first_free:
            raise _error(
                op_name,
                f"{what}: semaphore id {sem_id} is below first_free_semaphore_id {first_free} "
                "(ids below it are the compiler's)",
                loc,
            )
        if sem_id >= NUM_SEMAPHORES:
            raise _error(
                op_name, f"{what}: semaphore id {sem_id}: a node has {NUM_SEMAPHORES}", loc
            )
        if sem_id in seen:
            raise _error(op_name, f"{what}: semaphore id {sem_id} is given twice", loc)
        seen.add(sem_id)
        init = getattr(d, "initial_value", 0)
        if isinstance(init, bool) or not isinstance(init, int) or not 0 <= init < 1 << 32:
            raise _error(op_name, f"{what}: initial_value must be a uint32, got {init!r}", loc)
        core_type = getattr(d, "core_type", None)
        if core_type is not None and str(getattr(core_type, "name", core_type)).upper() != "WORKER":
            raise _error(
                op_name, f"{what}: core_type {core_type!r}: only worker nodes run operations", loc
            )
        try:
            cores = as_core_range_set(d.core_ranges)
        except Exception:  # noqa: BLE001 - a user value: name it
            raise _error(op_name, f"{what}: core_ranges is not a ttnn.CoreRangeSet", loc) from None
        outside = [c for c in cores.cores() if not worker.contains(c)]
        if outside:
            raise _error(
                op_name,
                f"{what}: node {(outside[0].x, outside[0].y)} is outside the operation's "
                f"{_grid(worker)} grid",
                loc,
            )
        ranges = tuple(sorted((r.start.x, r.start.y, r.end.x, r.end.y) for r in cores))
        out.append(CallerSemaphore(sem_id, ranges, init))
    return tuple(sorted(out, key=lambda s: s.sem_id))


def _grid(worker: CoreRangeSet) -> str:
    size = worker.bounding_box().grid_size()
    return f"{size.x}x{size.y}"


def _logical(selector: object, program, op_name: str, loc) -> LogicalKernel:
    emitted = program.logical_kernels
    if isinstance(selector, str):
        raise _error(
            op_name,
            f"kernel={selector!r}: a processor name is not a logical kernel",
            loc,
            hint="select ttl.KernelKind.COMPUTE / DATA_MOVEMENT, ttl.PIPE_SOURCE_KERNEL or a "
            "ttl.Kernel handle of the operation",
        )
    if isinstance(selector, Kernel) and selector.name is None:
        raise _error(op_name, f"kernel={selector!r} is an unbound ttl.Kernel handle", loc)
    if not isinstance(selector, (KernelKind, PipeSourceKernel, Kernel)):
        raise _error(
            op_name,
            f"kernel must be a ttl.KernelKind member, ttl.PIPE_SOURCE_KERNEL or a ttl.Kernel, got "
            f"{type(selector).__name__}",
            loc,
        )
    kernel = kernel_of(selector)
    assert kernel is not None
    for lk in emitted:
        if lk == kernel or (
            kernel.role == "canonical"
            and lk.role in ("canonical", "ordinal")
            and lk.kind == kernel.kind
            and _first_of_kind(emitted, lk)
        ):
            return lk
    bound = (
        f" (it is bound to operation '{selector.operation}')"
        if isinstance(selector, Kernel)
        else ""
    )
    raise _error(
        op_name,
        f"kernel={selector!r} selects no kernel of this operation{bound}; its kernels are "
        f"{format_kernels(emitted)}",
        loc,
    )


def _first_of_kind(kernels: Sequence[LogicalKernel], lk: LogicalKernel) -> bool:
    """The canonical kernel of a kind in an explicit operation without selectors: its first."""
    return (
        next(k for k in kernels if k.kind == lk.kind and k.role in ("canonical", "ordinal")) == lk
    )


def _kernels(
    entries, program, worker: CoreRangeSet, op_name: str, loc
) -> tuple[KernelResources, ...]:
    by_kernel: dict[LogicalKernel, KernelRuntimeResources] = {}
    for entry in entries:
        where = entry.loc or loc
        lk = _logical(entry.kernel, program, op_name, where)
        if lk in by_kernel:
            raise _error(op_name, f"{lk.describe()} has two KernelRuntimeResources entries", where)
        by_kernel[lk] = entry
    out: list[KernelResources] = []
    for spec, lk in zip(program.kernels, program.logical_kernels, strict=True):
        entry = by_kernel.get(lk)
        if entry is None:
            out.append(KernelResources(spec.name, lk))
            continue
        out.append(
            KernelResources(
                spec.name,
                lk,
                tuple((d.name, d.value) for d in entry.defines),
                _runtime_args(entry, lk, worker, op_name, loc),
            )
        )
    return tuple(out)


def _runtime_args(entry: KernelRuntimeResources, lk: LogicalKernel, worker, op_name: str, loc):
    args: dict[Node, tuple[int, ...]] = {}
    length: int | None = None
    for a in entry.runtime_args:
        where = a.loc or entry.loc or loc
        node = a.node
        if not worker.contains(CoreCoord(*node)):
            raise _error(
                op_name,
                f"{lk.describe()}: runtime arguments for node {node}, outside the {_grid(worker)} grid",
                where,
            )
        if node in args:
            raise _error(
                op_name, f"{lk.describe()}: node {node} has runtime arguments twice", where
            )
        words = tuple(operator.index(v) & 0xFFFFFFFF for v in a.values)
        if length is not None and len(words) != length:
            raise _error(
                op_name,
                f"{lk.describe()}: node {node} has {len(words)} runtime arguments, other nodes "
                f"{length}; one kernel's vectors have one length",
                where,
            )
        length = len(words)
        args[node] = words
    return tuple(sorted(args.items()))
