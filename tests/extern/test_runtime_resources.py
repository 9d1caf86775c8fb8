"""Operation runtime resources (reference C.11): ``runtime_resource_factory=`` supplies
per-node runtime arguments, JIT defines and caller semaphores for each execution; every
must-reject rule is a test asserting the message and the user's line."""

from __future__ import annotations

import os
import re
import textwrap

import pytest
import torch

from tilewright import ttnn
from tilewright.errors import InterfaceError

CPP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpp")

PROGRAM = f"""
import torch
from tilewright import ttl, ttnn

HEADER = {os.path.join(CPP, "runtime_resources.hpp")!r}
filler = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
seen = []


def make_factory(values, offset=None):
    def make_resources(*, tensors, core_ranges, first_free_semaphore_id):
        seen.append((len(tensors), first_free_semaphore_id, core_ranges))
        semaphore = ttnn.SemaphoreDescriptor(
            first_free_semaphore_id, core_ranges=core_ranges, initial_value=0
        )
        defines = () if offset is None else (ttl.KernelDefine("VALUE_OFFSET", str(offset)),)
        return ttl.ProgramRuntimeResources(
            semaphore_descriptors=(semaphore,),
            kernel_resources=(
                ttl.KernelRuntimeResources(
                    kernel=filler,
                    runtime_args=(
                        ttl.CoreRuntimeArgs(ttnn.CoreCoord(0, 0), (values[0], first_free_semaphore_id)),
                        ttl.CoreRuntimeArgs(ttnn.CoreCoord(1, 0), (values[1], first_free_semaphore_id)),
                    ),
                    defines=defines,
                ),
            ),
            lifetimes=(semaphore, "owner"),
        )

    return make_resources


@ttl.operation(grid=(2, 1), runtime_resource_factory=make_factory((0x3F800000, 0x40000000)))
def fill(out):
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)
    barrier = ttl.Semaphore(initial=0)  # a compiler-owned semaphore: id 0

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement(kernel=filler)
    def fill_block():
        ttl.call_extern_func(HEADER, "fill_from_runtime_args", func_args=[out_dfb])

    @ttl.datamovement()
    def write():
        x, _ = ttl.node(dims=2)
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, x]).wait()
"""


def load(tmp_path, source: str) -> dict:
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(source))
    ns: dict = {"__name__": "prog", "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    return ns


def line_of(ns: dict, marker: str) -> int:
    with open(ns["__file__"]) as f:
        return next(i for i, text in enumerate(f, 1) if marker in text)


def f32_out(device):
    return ttnn.from_torch(
        torch.zeros(32, 64), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device
    )


def tiles(out) -> tuple[float, float]:
    got = ttnn.to_torch(out).float()
    assert torch.equal(got[:, :32], torch.full((32, 32), got[0, 0].item()))
    return got[0, 0].item(), got[0, 32].item()


def test_runtime_arguments_semaphores_and_defines_reach_the_kernels(tmp_path, device):
    ns = load(tmp_path, PROGRAM)
    fill, make_factory = ns["fill"], ns["make_factory"]
    out = f32_out(device)
    fill(out)
    assert tiles(out) == (1.0, 2.0)  # each node its own word
    tensors, first_free, worker = ns["seen"][-1]
    assert (tensors, first_free) == (1, 1)  # after the compiler's semaphore (id 0)
    assert worker.num_cores() == 2
    plan = fill.last_program.runtime_resources
    assert [s.sem_id for s in plan.semaphores] == [1]
    assert fill.runtime_lifetimes[1] == "owner"
    # The factory runs for each execution; a call may bring its own (runtime configuration).
    fill(out, runtime_resource_factory=make_factory((0x40400000, 0x40800000)))
    assert tiles(out) == (3.0, 4.0)
    same_structure = fill.last_program.runtime_resources.fingerprint
    assert same_structure == plan.fingerprint  # only the argument words changed
    # A define is compile input: 0x40A00000 + 0x100000 is 5.0 + 0.5 in float32.
    fill(out, runtime_resource_factory=make_factory((0x40A00000, 0x40C00000), offset=0x100000))
    assert tiles(out) == (5.5, 6.5)
    assert fill.last_program.runtime_resources.fingerprint != plan.fingerprint


RESOURCES_OP = """
import torch
from tilewright import ttl, ttnn

mine = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
theirs = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
loose = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)


def make_resources(*, tensors, core_ranges, first_free_semaphore_id):
    C = ttnn.CoreCoord
    sem = ttnn.SemaphoreDescriptor
    first = first_free_semaphore_id
BODY


@ttl.operation(grid=(2, 1))
def op(out):
    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement(kernel=mine)
    def dm():
        pass


@ttl.operation(grid=(1, 1))
def other(out):
    @ttl.datamovement(kernel=theirs)
    def dm():
        pass


def call(out):
    op(out, runtime_resource_factory=make_resources)  # CALL
"""

REJECTED = [
    ("    return {'semaphore_descriptors': ()}", "# CALL", "must return a ttl.ProgramRuntimeResources, got dict"),
    ("    return ttl.ProgramRuntimeResources(kernel_resources=[])  # HERE", "# HERE", "kernel_resources must be a tuple, got list"),
    ("    return ttl.ProgramRuntimeResources(kernel_resources=('x',))  # HERE", "# HERE", r"kernel_resources\[0\] must be a ttl.KernelRuntimeResources, got str"),
    ("    return ttl.ProgramRuntimeResources(fabric_connections=(1,))  # HERE", "# HERE", "fabric_connections need external fabric managers"),
    ("    a = ttl.CoreRuntimeArgs(C(0, 0), (True,))  # HERE", "# HERE", r"values\[0\] is a bool"),
    ("    a = ttl.CoreRuntimeArgs(C(0, 0), ('7',))  # HERE", "# HERE", r"values\[0\] is str '7', not an integer"),
    ("    a = ttl.CoreRuntimeArgs(C(0, 0), [7])  # HERE", "# HERE", "values must be a tuple, got list"),
    ("    a = ttl.CoreRuntimeArgs(C(0, 0), (1 << 32,))  # HERE", "# HERE", "does not fit 32 bits"),
    ("    d = ttl.KernelDefine('X', 1)  # HERE", "# HERE", "value must be a string, got int"),
    ("    d = ttl.KernelDefine('1X', '1')  # HERE", "# HERE", "'1X' is not a C\\+\\+ macro name"),
    ("    k = ttl.KernelRuntimeResources(mine, defines=(ttl.KernelDefine('X', '1'), ttl.KernelDefine('X', '2')))  # HERE", "# HERE", "define X is given twice"),
    ("    k = ttl.KernelRuntimeResources(mine, runtime_args=(7,))  # HERE", "# HERE", r"runtime_args\[0\] must be a ttl.CoreRuntimeArgs"),
    ("    return ttl.ProgramRuntimeResources(kernel_resources=(ttl.KernelRuntimeResources('brisc'),))  # HERE", "# HERE", "'brisc': a processor name is not a logical kernel"),
    ("    return ttl.ProgramRuntimeResources(kernel_resources=(ttl.KernelRuntimeResources(loose),))  # HERE", "# HERE", "is an unbound ttl.Kernel handle"),
    ("    return ttl.ProgramRuntimeResources(kernel_resources=(ttl.KernelRuntimeResources(theirs),))  # HERE", "# HERE", "selects no kernel of this operation \\(it is bound to operation 'prog.other'\\)"),
    ("    return ttl.ProgramRuntimeResources(kernel_resources=(ttl.KernelRuntimeResources(ttl.KernelKind.COMPUTE), ttl.KernelRuntimeResources(ttl.KernelKind.COMPUTE)))  # HERE", "# HERE", "compute has two KernelRuntimeResources entries"),
    ("    return ttl.ProgramRuntimeResources(kernel_resources=(ttl.KernelRuntimeResources(mine, runtime_args=(ttl.CoreRuntimeArgs(C(5, 0), (1,)),)),))  # HERE", "# HERE", r"runtime arguments for node \(5, 0\), outside the 2x1 grid"),
    ("    return ttl.ProgramRuntimeResources(kernel_resources=(ttl.KernelRuntimeResources(mine, runtime_args=(ttl.CoreRuntimeArgs(C(0, 0), (1,)), ttl.CoreRuntimeArgs(C(0, 0), (2,)))),))  # HERE", "# HERE", r"node \(0, 0\) has runtime arguments twice"),
    ("    return ttl.ProgramRuntimeResources(kernel_resources=(ttl.KernelRuntimeResources(mine, runtime_args=(ttl.CoreRuntimeArgs(C(0, 0), (1,)), ttl.CoreRuntimeArgs(C(1, 0), (1, 2)))),))  # HERE", "# HERE", r"node \(1, 0\) has 2 runtime arguments, other nodes 1"),
    ("    return ttl.ProgramRuntimeResources(kernel_resources=(ttl.KernelRuntimeResources(mine, runtime_args=(ttl.CoreRuntimeArgs('n0', (1,)),)),))  # HERE", "# HERE", "core must be a ttnn.CoreCoord, got str"),
    ("    return ttl.ProgramRuntimeResources(semaphore_descriptors=(sem(core_ranges=core_ranges),))  # HERE", "# HERE", r"semaphore_descriptors\[0\] has no semaphore id"),
    ("    return ttl.ProgramRuntimeResources(semaphore_descriptors=(sem(first - 1, core_ranges=core_ranges),))  # HERE", "# HERE", "semaphore id -1 is below first_free_semaphore_id 0"),
    ("    return ttl.ProgramRuntimeResources(semaphore_descriptors=(sem(first, core_ranges=core_ranges), sem(first, core_ranges=core_ranges)))  # HERE", "# HERE", "semaphore id 0 is given twice"),
    ("    return ttl.ProgramRuntimeResources(semaphore_descriptors=(sem(first, core_ranges=ttnn.CoreRangeSet([ttnn.CoreRange(C(0, 0), C(3, 0))])),))  # HERE", "# HERE", r"node \(2, 0\) is outside the operation's 2x1 grid"),
    ("    return ttl.ProgramRuntimeResources(semaphore_descriptors=('s',))  # HERE", "# HERE", r"semaphore_descriptors\[0\] must be a ttnn.SemaphoreDescriptor, got str"),
]  # fmt: skip


@pytest.mark.parametrize("body, marker, message", REJECTED, ids=[r[2][:40] for r in REJECTED])
def test_rejected_runtime_resources(tmp_path, device, body, marker, message):
    ns = load(tmp_path, RESOURCES_OP.replace("BODY", body))
    out = f32_out(device)
    ns["op"](out)  # no factory: fine
    before = ns["op"].last_program
    with pytest.raises(InterfaceError) as info:
        ns["call"](out)
    assert re.search(message, info.value.message), info.value.message
    assert info.value.loc is not None and info.value.loc.line == line_of(ns, marker), str(
        info.value
    )
    assert info.value.rule == "runtime-resources"
    assert ns["op"].last_program is before  # rejected before any program was changed or run


@pytest.mark.parametrize(
    "decorator, message",
    [
        ("runtime_resource_factory=3", "takes a callable, got int"),
        ("runtime_resource_factory=lambda tensors: None", "must accept the keyword arguments"),
    ],
)
def test_the_factory_is_checked_at_decoration(tmp_path, decorator, message):
    source = f"""
    from tilewright import ttl

    def make():
        @ttl.operation(grid=(1, 1), {decorator})  # DECORATOR
        def op(out):
            pass
    """
    ns = load(tmp_path, source)
    with pytest.raises(InterfaceError, match=message) as info:
        ns["make"]()
    assert info.value.loc.line == line_of(ns, "# DECORATOR")


def test_a_failed_execution_keeps_the_last_lifetimes(tmp_path, device):
    ns = load(tmp_path, PROGRAM)
    out = f32_out(device)
    ns["fill"](out)
    kept = ns["fill"].runtime_lifetimes

    def broken(*, tensors, core_ranges, first_free_semaphore_id):
        return "not resources"

    with pytest.raises(InterfaceError):
        ns["fill"](out, runtime_resource_factory=broken)
    assert ns["fill"].runtime_lifetimes is kept
