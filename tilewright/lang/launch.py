"""One call of an operation at run time: per-node setup, the kernel entry, the launch.

The compiler decides *what* runs (``compiler.operation`` checks the call and
``compiler.program_builder`` builds the device ``Program``); this module is what
runs it, in the order of a call:

1. :func:`evaluate_setups` evaluates the operation body once per node of the grid,
   inside that node's :class:`~tilewright.lang.node.NodeSetup` (the DFB factories,
   kernel decorators, pipes and semaphores record themselves there);
2. the program's kernels are :func:`kernel_entry` functions: each runs its node's
   own kernel function (per-node state comes from the setups, never from copies)
   and releases what it still holds at exit (the compiler's auto-sync);
3. :func:`run_launch` makes the setups the current launch (``lang.state``), routes
   ``print`` through the debug print, runs the program on the device's command
   queue and reports pipe transfers nothing matched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from tilewright.device import session
from tilewright.device.engine import current_run
from tilewright.device.print_hook import kernel_print
from tilewright.errors import KernelError, TilewrightError, traceback_location
from tilewright.lang import debug_print, state
from tilewright.lang.arith_faults import division_error
from tilewright.lang.node import SETUP_STACK, NodeSetup, OperationInfo
from tilewright.lang.pipes import check_unmatched

if TYPE_CHECKING:
    from tilewright.device.device import Device
    from tilewright.device.engine import LaunchResult
    from tilewright.device.program import Program

__all__ = ["evaluate_setups", "kernel_entry", "run_launch"]


def evaluate_setups(
    op: OperationInfo,
    body: Callable[..., object],
    device: Device,
    grid: tuple[int, ...],
    args: Sequence[object],
) -> dict[int, NodeSetup]:
    """Evaluate ``body(*args)`` once per node of ``grid``: core index -> the node's setup."""
    setups: dict[int, NodeSetup] = {}
    cols, rows = grid[0], grid[1]
    for y in range(rows):
        for x in range(cols):
            core = device.core(x, y)
            setup = NodeSetup(op, (x, y), grid, device, core)
            SETUP_STACK.append(setup)
            try:
                body(*args)
            except TilewrightError as exc:
                if exc.loc is None:
                    exc.loc = traceback_location(exc)
                exc.add_note(f"while setting up node ({x}, {y}) of operation '{op.name}'")
                raise
            finally:
                SETUP_STACK.pop()
            setups[core.index] = setup
    return setups


def kernel_entry(index: int, name: str) -> Callable[[], None]:
    """The program kernel that runs kernel function ``index`` of whichever node it runs on."""

    def entry() -> None:
        run = current_run()
        launch = state.CURRENT
        if launch is None:
            raise KernelError(f"kernel '{name}' runs outside the launch of its operation")
        setup = launch.setups[run.core.index]
        run.kernel_context().extra = setup  # deadlock reports ask it what the kernel holds
        try:
            setup.kernels[index].fn()
        except ZeroDivisionError as exc:  # the compiled kernels' diagnostic (arith_faults)
            raise division_error(exc) from exc
        for dfb in setup.dfbs:
            dfb.release_held(run)

    entry.__name__ = name
    entry.__qualname__ = name
    return entry


def run_launch(
    name: str,
    device: Device,
    grid: tuple[int, ...],
    setups: dict[int, NodeSetup],
    program: Program,
) -> LaunchResult:
    """Run ``program`` on ``device`` as the launch of operation ``name``; its statistics."""
    launch = state.OpLaunch(name, grid, setups)
    state.LAST_GRID = grid
    prev, prev_tracer = state.CURRENT, state.TRACER
    state.CURRENT = launch
    state.TRACER = session.tracer_for(device)
    try:
        with _kernel_print():
            result = device.command_queue.enqueue_program(program, place_word="node")
        check_unmatched(launch)
    finally:
        state.CURRENT, state.TRACER = prev, prev_tracer
    session.record_launch(name, result)
    return result


def _kernel_print() -> AbstractContextManager[None]:
    """Route ``print`` inside kernels through TT-Lang's debug print (spec §Debug printing);
    per thread, so other threads' prints stay plain (device.print_hook)."""
    return kernel_print(debug_print.make_print)
