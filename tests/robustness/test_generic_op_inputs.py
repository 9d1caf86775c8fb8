"""``ttnn.generic_op`` checks every field at the boundary: a DescriptorError at the call.

Before, 10 of 10 malformed program descriptors (a bad fidelity, NoC, core range, CB
index, ...) escaped as ``ValueError`` / ``TypeError`` from inside the project, a
deallocated tensor was accepted, a compile-time arg of 2^40 was truncated and
``data_format=1.5`` was taken as 1.  Each mutation below is applied to a correct
descriptor; the correct one runs.  ``descriptor_mutations`` is also the hostile-input
driver's generic_op category (benchmarks/bench_hostile_inputs.py).
"""

from __future__ import annotations

import copy
import inspect
import random

import pytest
import torch

from tilewright import ttnn
from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet
from tilewright.errors import DescriptorError, TilewrightError

KERNEL = "void kernel_main() { (void)get_arg_val<uint32_t>(0); }\n"
COMPUTE = '#include "compute_kernel_api.h"\nnamespace NAMESPACE { void MAIN {} }\n'


def cores(x0=0, y0=0, x1=0, y1=0) -> CoreRangeSet:
    return CoreRangeSet([CoreRange(CoreCoord(x0, y0), CoreCoord(x1, y1))])


def base_descriptor() -> ttnn.ProgramDescriptor:
    """A correct program: a reader with one runtime arg, a compute kernel, one CB, one semaphore."""
    reader = ttnn.KernelDescriptor(
        kernel_source=KERNEL,
        core_ranges=cores(),
        compile_time_args=[1, 2],
        runtime_args=[[[7]]],
        config=ttnn.ReaderConfigDescriptor(),
    )
    compute = ttnn.KernelDescriptor(
        kernel_source=COMPUTE, core_ranges=cores(), config=ttnn.ComputeConfigDescriptor()
    )
    cb = ttnn.CBDescriptor(4096, cores(), [ttnn.CBFormatDescriptor(0, ttnn.bfloat16, 2048)])
    sem = ttnn.SemaphoreDescriptor(core_ranges=cores(), initial_value=0)
    return ttnn.ProgramDescriptor(kernels=[reader, compute], cbs=[cb], semaphores=[sem])


def _set(path: str, value):
    """A mutation: ``desc.<path> = value`` (``kernels.0.config.noc``)."""

    def mutate(desc):
        *parts, last = path.split(".")
        obj = desc
        for p in parts:
            obj = obj[int(p)] if p.isdigit() else getattr(obj, p)
        if last.isdigit():
            obj[int(last)] = value
        else:
            setattr(obj, last, value)
        return desc

    return mutate


MUTATIONS = {
    "bad fidelity": _set("kernels.1.config.math_fidelity", 7),
    "fidelity as a string": _set("kernels.1.config.math_fidelity", "HiFi9"),
    "bad NoC": _set("kernels.0.config.noc", 2),
    "bad processor": _set("kernels.0.config.processor", -1),
    "core range of strings": _set("kernels.0.core_ranges", "all"),
    "core range beyond the grid": _set("kernels.0.core_ranges", cores(0, 0, 99, 0)),
    "core range of junk": _set("kernels.0.core_ranges", [(0, 0), "x"]),
    "CB index 99": _set("cbs.0.format_descriptors.0.buffer_index", 99),
    "CB index -1": _set("cbs.0.format_descriptors.0.buffer_index", -1),
    "CB index as a float": _set("cbs.0.format_descriptors.0.buffer_index", 0.5),
    "data_format=1.5": _set("cbs.0.format_descriptors.0.data_format", 1.5),
    "data_format=99": _set("cbs.0.format_descriptors.0.data_format", 99),
    "page size zero": _set("cbs.0.format_descriptors.0.page_size", 0),
    "page size a string": _set("cbs.0.format_descriptors.0.page_size", "2048"),
    "total size beyond L1": _set("cbs.0.total_size", 1 << 40),
    "total size negative": _set("cbs.0.total_size", -4096),
    "compile-time arg 2^40": _set("kernels.0.compile_time_args", [1 << 40]),
    "compile-time arg negative": _set("kernels.0.compile_time_args", [-1]),
    "compile-time arg a float": _set("kernels.0.compile_time_args", [1.5]),
    "compile-time args not a list": _set("kernels.0.compile_time_args", 5),
    "runtime arg 2^33": _set("kernels.0.runtime_args", [[[1 << 33]]]),
    "runtime arg a string": _set("kernels.0.runtime_args", [[["x"]]]),
    "common runtime arg 2^40": _set("kernels.0.common_runtime_args", [1 << 40]),
    "named compile-time arg not a pair": _set("kernels.0.named_compile_time_args", [1, 2]),
    "semaphore id 16": _set("semaphores.0.id", 16),
    "semaphore initial value 2^33": _set("semaphores.0.initial_value", 1 << 33),
    "semaphore core range None": _set("semaphores.0.core_ranges", None),
    "kernel not a descriptor": _set("kernels.0", "reader.cpp"),
    "CB not a descriptor": _set("cbs.0", 4096),
    "bool fp32_dest_acc_en=2": _set("kernels.1.config.fp32_dest_acc_en", 2),
    "config of another kind": _set("kernels.0.config", ttnn.ComputeConfigDescriptor()),
}


def _line(marker: str) -> int:
    lines, start = inspect.getsourcelines(run_generic_op)
    return start + next(i for i, line in enumerate(lines) if marker in line)


def run_generic_op(device, desc, tensors=None):
    out = ttnn.from_torch(torch.zeros(32, 32), layout=ttnn.TILE_LAYOUT, device=device)
    return ttnn.generic_op(tensors if tensors is not None else [out], desc)  # CALL


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def test_the_correct_descriptor_runs(device, native_cache):
    run_generic_op(device, base_descriptor())


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_a_malformed_descriptor_is_a_descriptor_error_at_the_call(device, name):
    desc = MUTATIONS[name](base_descriptor())
    with pytest.raises(TilewrightError) as info:
        run_generic_op(device, desc)
    err = info.value
    assert isinstance(err, DescriptorError), f"{type(err).__name__}: {err}"
    assert err.rule == "program-descriptor"
    assert err.loc is not None and err.loc.file == __file__ and err.loc.line == _line("# CALL")


def test_a_deallocated_tensor_is_refused(device):
    gone = ttnn.from_torch(torch.zeros(32, 32), layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.deallocate(gone)
    with pytest.raises(DescriptorError, match="deallocated") as info:
        run_generic_op(device, base_descriptor(), [gone])
    assert info.value.loc.line == _line("# CALL")


def descriptor_mutations(seed: int, count: int):
    """``count`` random descriptors: one to three mutations of the correct one each (the
    hostile-input driver's ``generic_op`` category; 0 mutations now and then)."""
    rng = random.Random(seed)
    names = sorted(MUTATIONS)
    for i in range(count):
        desc, applied = base_descriptor(), []
        for name in rng.sample(names, rng.randint(0, 3)):
            try:
                desc = MUTATIONS[name](copy.deepcopy(desc))
            except (IndexError, AttributeError, TypeError):  # an earlier mutation replaced the part
                continue
            applied.append(name)
        yield f"descriptor #{i}: {', '.join(applied) or 'unchanged'}", desc, bool(applied)


def test_random_descriptor_mutations_are_errors_or_run(device, native_cache):
    for name, desc, mutated in descriptor_mutations(26, 40):
        try:
            run_generic_op(device, desc)
        except DescriptorError as err:
            assert mutated, name
            assert err.loc is not None and err.loc.file == __file__, name
        else:
            assert not mutated, f"{name}: a malformed descriptor ran"


def test_a_cpp_build_error_of_a_parallel_build_is_located_at_the_users_line(device):
    """Two kernels build in parallel; the failing build's traceback ended in the pool's
    worker, so the error was located at concurrent/futures/thread.py."""
    from tilewright.errors import NativeBuildError, traceback_location

    desc = base_descriptor()
    desc.kernels[0].kernel_source = "void kernel_main() { this is not C++; }\n"
    desc.kernels[1].kernel_source = "namespace NAMESPACE { void MAIN { int x = ; } }\n"
    with pytest.raises(NativeBuildError) as info:
        run_generic_op(device, desc)
    where = traceback_location(info.value)
    assert where is not None and where.file == __file__ and where.line == _line("# CALL")
