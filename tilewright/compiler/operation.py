"""``@ttl.operation``: decoration, the call, and the launch of one operation.

Decoration reads the function's source once (``FunctionSource``), checks the
interface and decides the form: multi-kernel (nested ``@ttl.compute`` /
``@ttl.datamovement`` functions) or unified (split by ``compiler.split`` into
the equivalent multi-kernel body).  A call checks its tensors, resolves the grid,
evaluates the body once per node (``NodeSetup``), builds a device ``Program``
(``program_builder``) and runs it on the tensors' device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

from tilewright.compiler import program_builder
from tilewright.compiler.interface import check_interface
from tilewright.compiler.runtime import state
from tilewright.compiler.setup import SETUP_STACK, NodeSetup, caller_loc
from tilewright.compiler.source import FunctionSource
from tilewright.device.engine import location_of_exception
from tilewright.errors import CapacityError, InterfaceError, SourceLoc, TilewrightError

if TYPE_CHECKING:
    from tilewright.compiler.split.plan import SplitPlan
    from tilewright.device.engine import LaunchResult
    from tilewright.device.program import Program

__all__ = ["Operation", "operation"]

_UNSUPPORTED_OPTIONS = {
    "indexing_maps": "indexing maps (the linalg-style form)",
    "iterator_types": "iterator types (the linalg-style form)",
    "device_domain": "multi-device domains",
    "mesh_program_placements": "mesh program placements",
    "runtime_resource_factory": "runtime resource factories (hardware-only runtime resources)",
}


class Operation:
    """A TT-Lang operation: call it with TT-NN tensors."""

    def __init__(self, fn: Callable, *, grid=None, options: dict | None = None) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.qualname = f"{fn.__module__}.{fn.__qualname__}"
        self.grid = _check_grid_spec(grid)
        self.options = dict(options or {})
        self.source = FunctionSource.of(fn)
        self.interface = check_interface(self.source, self.name)
        self.multi_kernel = self.interface.multi_kernel
        self.body: Callable[..., object] = fn
        self.split_plan: SplitPlan | None = None
        self.last_program: Program | None = None
        self.last_launch: LaunchResult | None = None
        from tilewright.compiler import extern

        self.extern_plan = extern.validate_operation(self)  # call_extern_func sites (C.9)
        from tilewright.compiler import split

        self.identity = split.register_operation(self)  # reference B.9; binds Kernel handles
        if not self.multi_kernel:
            self.split_plan, self.body = split.split_operation(self)
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn

    # -- the call ------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        call_loc = caller_loc()
        kwargs.pop("options", None)  # per-call compiler flags: accepted, no effect here
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
        device = _check_tensors(self.name, params, args, call_loc)
        grid = self._resolve_grid(device, args, call_loc)
        setups = self._evaluate_setups(device, grid, args)
        program = program_builder.build(self, device, grid, setups, call_loc)
        self.last_program = program
        return self._launch(device, grid, setups, program)

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

    def _evaluate_setups(self, device, grid, args) -> dict[int, NodeSetup]:
        setups: dict[int, NodeSetup] = {}
        cols, rows = grid[0], grid[1]
        for y in range(rows):
            for x in range(cols):
                core = device.core(x, y)
                setup = NodeSetup(self, (x, y), grid, device, core)
                SETUP_STACK.append(setup)
                try:
                    self.body(*args)
                except TilewrightError as exc:
                    if exc.loc is None:
                        exc.loc = location_of_exception(exc)
                    exc.add_note(f"while setting up node ({x}, {y}) of operation '{self.name}'")
                    raise
                finally:
                    SETUP_STACK.pop()
                setups[core.index] = setup
        return setups

    def _launch(self, device, grid, setups, program):
        from tilewright.device import session

        launch = state.OpLaunch(self.name, grid, setups)
        prev = state.CURRENT
        state.CURRENT = launch
        tracer = session.tracer_for(device)
        prev_tracer = state.TRACER
        state.TRACER = tracer
        try:
            with _kernel_print():
                result = device.command_queue.enqueue_program(program, place_word="node")
            from tilewright.compiler.runtime.pipes import check_unmatched

            check_unmatched(launch)
        finally:
            state.CURRENT = prev
            state.TRACER = prev_tracer
        self.last_launch = result
        session.record_launch(self.name, result)
        return None

    def __repr__(self) -> str:
        form = "multi-kernel" if self.multi_kernel else "unified"
        return f"<ttl.operation {self.qualname} ({form}, grid={self.grid})>"


GridSpec: TypeAlias = tuple[int, ...] | str | Callable[..., object] | None
"""An operation's ``grid=``: (columns, rows, ...), "auto" / "full", a callable of the tensors
returning one of those, or None (no grid)."""


def _check_grid_spec(grid: object) -> GridSpec:
    if grid is None or callable(grid):
        return grid
    return _check_grid_value(grid, loc=None, what="grid")


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
    from tilewright.ttnn.tensor import Tensor

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


def _kernel_print():
    """Route ``print`` inside kernels through TT-Lang's debug print (spec §Debug printing);
    per thread, so other threads' prints stay plain (device.print_hook)."""
    from tilewright.compiler.runtime import debug_print
    from tilewright.device.print_hook import kernel_print

    return kernel_print(debug_print.make_print)


def operation(
    fn=None,
    *,
    grid=None,
    indexing_maps=None,
    iterator_types=None,
    num_outs=1,
    memory_space="L1",
    tiled=True,
    fp32_dest_acc_en=None,
    dst_full_sync_en=None,
    math_fidelity=None,
    options=None,
    device_domain=None,
    mesh_program_placements=None,
    runtime_resource_factory=None,
):
    """``@ttl.operation(grid=...)``: define a TT-Lang operation (spec §Operation)."""
    given = {
        "indexing_maps": indexing_maps,
        "iterator_types": iterator_types,
        "device_domain": device_domain,
        "mesh_program_placements": mesh_program_placements,
        "runtime_resource_factory": runtime_resource_factory,
    }
    loc = caller_loc()
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

    def wrap(f):
        return Operation(f, grid=grid, options=opts)

    if fn is not None:
        return wrap(fn)
    return wrap
