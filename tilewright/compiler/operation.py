"""``@ttl.operation``: decoration, the call, and the launch of one operation.

Decoration reads the function's source once (``FunctionSource``), checks the
interface and decides the form: multi-kernel (nested ``@ttl.compute`` /
``@ttl.datamovement`` functions) or unified (split by ``compiler.split`` into
the equivalent multi-kernel body).  A call checks its tensors, resolves the grid,
evaluates the body once per node (``NodeSetup``), builds a device ``Program``
(``program_builder``) and runs it on the tensors' device.
"""

from __future__ import annotations

import ast
import inspect
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

from tilewright.compiler import host_tensors, program_builder, runtime_resources, warm
from tilewright.compiler.backend.engine import run_engine
from tilewright.compiler.interface import check_interface
from tilewright.compiler.record import OperationRecord
from tilewright.compiler.source import FunctionSource
from tilewright.compiler.split import splitter
from tilewright.compiler.split.identity import operation_identity
from tilewright.device.launch import device_claim
from tilewright.errors import CapacityError, InterfaceError, SourceLoc, user_location
from tilewright.lang.extern.plan import with_sites
from tilewright.lang.launch import evaluate_setups, run_launch
from tilewright.lazy import lazy_import
from tilewright.ttnn.spmd import run_operation_per_chip
from tilewright.ttnn.tensor import Tensor

if TYPE_CHECKING:
    from tilewright.compiler.split.plan import SplitPlan
    from tilewright.device.engine import LaunchResult
    from tilewright.device.program import Program
    from tilewright.lang.extern.plan import ExternPlan

__all__ = ["Operation", "operation"]

# The external-call and raw front ends (with the raw tracer and the kernel IR builder they
# use) load only for an operation that can make such a call (`_front_ends`): a plain
# program's decoration never needs them (issue 22).
extern = lazy_import("tilewright.compiler.extern")
raw_cpp_calls = lazy_import("tilewright.compiler.raw.cpp_calls")
raw_frontend = lazy_import("tilewright.compiler.raw.frontend")

RAW_PACKAGE = "tilewright.compiler.raw"
"""Defines ``@ttl.raw.ir`` and ``ttl.raw.cpp`` functions; ``ttl.raw`` imports it."""


def _front_ends(tree: ast.FunctionDef) -> tuple[bool, bool]:
    """(external calls, raw calls): which call-site front ends can find a call in ``tree``.

    Each front end selects calls by name before it resolves them, so skipping it when the
    name cannot match finds exactly what running it would: an external call is a call
    named ``call_extern_func``; a ``ttl.raw.call`` is found by its receiver ``ttl.raw``
    (the name ``raw``) or as the object ``ttl.raw`` re-exports, and a ``ttl.raw.cpp``
    function is a ``CppFunction`` -- both need :data:`RAW_PACKAGE` imported, as does every
    ``@ttl.raw.ir`` function a call passes.
    """
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return "call_extern_func" in names, "raw" in names or RAW_PACKAGE in sys.modules


_UNSUPPORTED_OPTIONS = {
    "indexing_maps": "indexing maps (the linalg-style form)",
    "iterator_types": "iterator types (the linalg-style form)",
    "device_domain": "multi-device domains",
    "mesh_program_placements": "mesh program placements",
}


class Operation:
    """A TT-Lang operation: call it with TT-NN tensors."""

    def __init__(
        self,
        fn: Callable[..., None],
        *,
        grid: GridSpec = None,
        options: dict | None = None,
        loc: SourceLoc | None = None,
        runtime_resource_factory: Callable[..., object] | None = None,
    ) -> None:
        self.fn = fn
        self.runtime_resource_factory = runtime_resource_factory  # reference C.11
        self.runtime_lifetimes: tuple[object, ...] = ()  # kept from the last successful run
        self.name = fn.__name__
        self.qualname = f"{fn.__module__}.{fn.__qualname__}"
        self.grid = _check_grid_spec(grid, loc if loc is not None else user_location())
        self.options = dict(options or {})
        self.source = FunctionSource.of(fn)
        self.interface = check_interface(self.source, self.name)
        self.multi_kernel = self.interface.multi_kernel
        self.identity = operation_identity(fn)  # reference B.9
        self.record = OperationRecord(
            fn,
            self.name,
            self.qualname,
            self.source,
            self.interface,
            self.identity,
            has_grid=self.grid is not None,
        )
        self.body: Callable[..., object] = fn
        self.split_plan: SplitPlan | None = None
        self.last_program: Program | None = None
        self.last_launch: LaunchResult | None = None
        self.extern_plan: ExternPlan | None = None
        extern_calls, raw_calls = _front_ends(self.source.tree)
        if extern_calls:
            self.extern_plan = extern.validate_operation(self.record)  # C.9
        if raw_calls:
            # Calls of ttl.raw.cpp functions: planned and rewritten as the external calls
            # they are.
            self.extern_plan = raw_cpp_calls.expand_operation(self.record, self.extern_plan)
            self.extern_plan = with_sites(  # ttl.raw.call sites: effects computed from IR
                self.extern_plan, self.qualname, raw_frontend.validate_operation(self.record)
            )
        if self.multi_kernel:
            splitter.bind_captured_handles(self.record)  # reference B.2 / B.9
        else:
            self.split_plan, self.body = splitter.split_operation(self.record, self.extern_plan)
            self.extern_plan = with_sites(  # calls composed from other operations (B.8)
                self.extern_plan, self.qualname, self.split_plan.composed_sites
            )
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn

    def declared_name(self, file: str, line: int) -> str | None:
        """The variable a simple assignment at ``file:line`` of the body binds (names DFBs)."""
        return self.source.name_at_line(line) if file == self.source.file else None

    # -- the call ------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        call_loc = user_location()
        kwargs.pop("options", None)  # per-call compiler flags: accepted, no effect here
        factory = kwargs.pop("runtime_resource_factory", self.runtime_resource_factory)
        if factory is not self.runtime_resource_factory:  # this call's factory (C.11)
            runtime_resources.check_factory(factory, call_loc)
        if kwargs:
            raise InterfaceError(
                f"operation '{self.name}' takes its tensors positionally; unexpected keyword "
                f"argument(s): {', '.join(kwargs)}",
                loc=call_loc,
            )
        if self.split_plan is not None and self.split_plan.expand_only:
            raise InterfaceError(self.split_plan.expand_only_reason(self.name), loc=call_loc)
        params = self.interface.params
        if len(args) != len(params):
            raise InterfaceError(
                f"operation '{self.name}' takes {len(params)} tensor(s) ({', '.join(params)}), "
                f"got {len(args)}",
                loc=call_loc,
            )

        if run_operation_per_chip(self, args, params, call_loc):  # mesh tensors: every chip
            return None
        args, write_back = host_tensors.stage(self.name, params, args, call_loc)
        device = _check_tensors(self.name, params, args, call_loc)
        grid = self._resolve_grid(device, args, call_loc)
        with device_claim(device, call_loc):  # no other thread's launch touches the program
            self._call_on(device, grid, args, factory, call_loc)
        write_back()  # host tensor arguments get the results (docs/compatibility.md)
        return None

    def _call_on(self, device, grid, args, factory, call_loc) -> None:
        """The call once its device is claimed: warm or full path, then the launch."""
        sig = warm.signature_of(self, device, grid, args)  # what every cache keys on
        key = warm.key_of(self, sig, factory)  # docs/compiler.md "Warm calls"
        hit = warm.lookup(self, key, device, args)
        setups = hit.setups if hit else evaluate_setups(self, self.body, device, grid, args)
        program = (
            hit.program
            if hit
            else program_builder.build(
                self.record, self.options, self.split_plan, device, grid, setups, call_loc
            )
        )
        resources = None
        if factory is not None:  # validated whole before the program changes (C.11)
            resources = runtime_resources.plan(factory, self.name, program, args, grid, call_loc)
            runtime_resources.apply(resources, program)
        if hit is None:
            run_engine(
                self.record,
                self.options,
                self.split_plan,
                program,
                device,
                grid,
                setups,
                args,
                call_loc,
                runtime_resources=resources is not None,
                signature=sig,
            )
        self.last_program = program
        self.last_launch = run_launch(self.name, device, grid, setups, program)
        if hit is None:
            warm.remember(self, key, device, setups, program, sig.keep)
        if resources is not None:
            self.runtime_lifetimes = resources.lifetimes

    def _resolve_grid(self, device, args, loc: SourceLoc | None) -> tuple[int, ...]:
        spec = self.grid
        if spec is None:
            raise InterfaceError(f"operation '{self.name}' has no grid", loc=loc)
        if callable(spec):
            spec = _check_grid_value(spec(*args), loc=loc, what="grid callable result")
        grid: tuple[int, ...]
        if isinstance(spec, str):  # "auto" / "full": the device's compute grid
            grid = (device.grid_x, device.grid_y)
        else:
            grid = spec
        if len(grid) == 1:
            grid = (grid[0], 1)
        if any(g != 1 for g in grid[2:]):
            raise CapacityError(
                f"grid {grid}: a single chip runs 2-D grids (columns, rows); extra dimensions must be 1",
                loc=loc,
            )
        cols, rows = grid[0], grid[1]
        if cols > device.grid_x or rows > device.grid_y:
            raise CapacityError(
                f"grid {tuple(grid)} (columns, rows) does not fit the device's "
                f"{device.grid_x}x{device.grid_y} worker grid",
                loc=loc,
            )
        return tuple(grid)

    def __repr__(self) -> str:
        form = "multi-kernel" if self.multi_kernel else "unified"
        return f"<ttl.operation {self.qualname} ({form}, grid={self.grid})>"


GridSpec: TypeAlias = tuple[int, ...] | str | Callable[..., object] | None
"""An operation's ``grid=``: (columns, rows, ...), "auto" / "full", a callable of the tensors
returning one of those, or None (no grid)."""


def _check_grid_spec(grid: object, loc: SourceLoc | None) -> GridSpec:
    """``grid=`` of ``@ttl.operation`` (an error at the decorator's line, ``loc``)."""
    if grid is None or callable(grid):
        return grid
    return _check_grid_value(grid, loc=loc, what="grid")


def _check_grid_value(grid: object, *, loc: SourceLoc | None, what: str) -> tuple[int, ...] | str:
    """A grid tuple (an int is one column) or "auto" / "full"; an InterfaceError otherwise."""
    others = "'auto', 'full' or a callable" if what == "grid" else "'auto' or 'full'"
    if isinstance(grid, str):
        if grid not in ("auto", "full"):
            raise InterfaceError(f"{what} {grid!r}: expected a tuple, {others}", loc=loc)
        return grid
    if isinstance(grid, int) and not isinstance(grid, bool):
        grid = (grid,)
    if (
        not isinstance(grid, (tuple, list))
        or not grid
        or not all(isinstance(g, int) and not isinstance(g, bool) and g > 0 for g in grid)
    ):
        raise InterfaceError(
            f"{what} {grid!r}: expected a tuple of positive ints (columns, rows), {others}",
            loc=loc,
        )
    return tuple(grid)


def _check_tensors(name: str, params, args, loc):
    device = None
    for pname, arg in zip(params, args):
        if not isinstance(arg, Tensor):
            raise InterfaceError(
                f"runtime argument '{pname}' must be a TT-NN tensor, got {type(arg).__name__}",
                loc=loc,
            )
        dev = arg.device()
        if dev is None:
            raise InterfaceError(
                f"runtime argument '{pname}' is a host tensor; operation tensors live on a device "
                "(ttnn.from_torch(..., device=device))",
                loc=loc,
            )
        if device is None:
            device = dev
        elif dev is not device:
            raise InterfaceError(
                f"runtime argument '{pname}' is on device {dev.device_id} but earlier tensors are on "
                f"device {device.device_id}; all tensors of an operation are on one device",
                loc=loc,
            )
    if device is None:
        raise InterfaceError(
            f"operation '{name}' needs at least one TT-NN tensor argument", loc=loc
        )
    if device.closed:
        raise InterfaceError("the tensors' device is closed", loc=loc)
    return device


def operation(
    fn: Callable[..., None] | None = None,
    *,
    grid: GridSpec = None,
    indexing_maps: object = None,
    iterator_types: object = None,
    num_outs: int = 1,
    memory_space: str = "L1",
    tiled: bool = True,
    fp32_dest_acc_en: bool | None = None,
    dst_full_sync_en: bool | None = None,
    math_fidelity: object = None,
    options: str | None = None,
    device_domain: object = None,
    mesh_program_placements: object = None,
    runtime_resource_factory: Callable[..., object] | None = None,
) -> Any:
    """``@ttl.operation(grid=...)``: define a TT-Lang operation (spec §Operation)."""
    given = {
        "indexing_maps": indexing_maps,
        "iterator_types": iterator_types,
        "device_domain": device_domain,
        "mesh_program_placements": mesh_program_placements,
    }
    loc = user_location()
    for key, value in given.items():
        if value is not None:
            raise InterfaceError(
                f"@ttl.operation({key}=...): {_UNSUPPORTED_OPTIONS[key]} are not supported by Tilewright",
                loc=loc,
            )
    if num_outs != 1:
        raise InterfaceError(f"@ttl.operation(num_outs={num_outs}): num_outs must be 1", loc=loc)
    if memory_space not in ("L1", "DRAM"):
        raise InterfaceError(
            f"@ttl.operation(memory_space={memory_space!r}): expected 'L1' or 'DRAM'", loc=loc
        )
    if math_fidelity is not None and str(getattr(math_fidelity, "name", math_fidelity)) not in (
        "LoFi",
        "HiFi2",
        "HiFi3",
        "HiFi4",
    ):
        raise InterfaceError(
            f"@ttl.operation(math_fidelity={math_fidelity!r}): expected LoFi, HiFi2, HiFi3 or HiFi4",
            loc=loc,
        )
    opts = {
        "fp32_dest_acc_en": fp32_dest_acc_en,
        "dst_full_sync_en": dst_full_sync_en,
        "math_fidelity": math_fidelity,
        "options": options,
        "tiled": tiled,
    }

    if runtime_resource_factory is not None:
        runtime_resources.check_factory(runtime_resource_factory, loc)

    def wrap(f: Callable[..., None]) -> Operation:
        if not inspect.isfunction(f):
            raise InterfaceError(
                f"@ttl.operation decorates a function, got {type(f).__name__} {f!r}", loc=loc
            )
        return Operation(
            f,
            grid=grid,
            options=opts,
            loc=loc,
            runtime_resource_factory=runtime_resource_factory,
        )

    if fn is not None:
        return wrap(fn)
    return wrap
