"""The Python and the C++ kernel API offer the same functions, arguments and checks.

* names: every function the C++ headers declare (``tilewright/native/include``, plus the
  headers generated from the op registry) exists in ``tilewright.device.kernel_api`` and
  the other way round, but for the documented exceptions below;
* arguments: a Python function accepts every argument count a C++ overload does, its
  value template parameters (``pack_tile<out_of_order>``) as trailing arguments;
* checks: every compute-API function (and the CB calls) is called on both APIs with each
  circular-buffer, tile, DST-index, slot and page-count argument made invalid in turn --
  and once with all of them valid -- and both must succeed, or fail with the same error
  class, message and rule (the messages are one table, ``device/api_messages.py``).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

import numpy as np
import pytest

from tests.native.api_listing import compute_names, cpp_api, python_api, python_arity
from tilewright.device import kernel_api as k
from tilewright.device.coords import CoreCoord
from tilewright.device.formats import DataFormat
from tilewright.device.kernel_api import BroadcastType
from tilewright.device.program import (
    CircularBufferConfig,
    ComputeConfig,
    Program,
    ReaderDataMovementConfig,
)
from tilewright.errors import TilewrightError
from tilewright.native.kernels import NativeKernel

PYTHON_ONLY = {
    "circular_buffer": "the CB object of an index: what C++ reaches through pointers and "
    "get_local_cb_interface, Python kernels use directly",
    "read_l1": "a Python kernel's load from L1 (C++ dereferences an L1 pointer)",
    "write_l1": "a Python kernel's store into L1 (C++ stores through an L1 pointer)",
    "read_dst": "a debugging aid (DST contents as numpy); C++ kernels DPRINT them",
    "tensor_accessor_args": "host side (the compile-time args describing a buffer): tt-metal's "
    "host TensorAccessorArgs(buffer), not a kernel function",
    "get_compile_time_arg_val": "a macro in C++ (a constexpr array access)",
    "my_x": "my_x[noc] is an array in C++; a function of the NoC in Python",
    "my_y": "my_y[noc] is an array in C++; a function of the NoC in Python",
}
"""Python kernel-API functions with no C++ function of the same name, and why."""

CPP_ONLY = {
    "SETW": "a DPRINT stream manipulator; Python kernels print() (debug print)",
    "HEX": "a DPRINT stream manipulator",
    "DEC": "a DPRINT stream manipulator",
    "F32": "a DPRINT stream manipulator",
    "U32": "a DPRINT stream manipulator",
    "ENDL": "a DPRINT stream manipulator",
    "TTLANG_PRINT": "Tilewright's DPRINT marker of a compiled TT-Lang print (the interpreter's "
    "prefix; compiler docs)",
    "TensorAccessor": "a class in both APIs (its deduction guides look like functions)",
}
"""C++ kernel-API functions with no Python function of the same name, and why."""
SFPI_GLUE = ("_llk_math_eltwise_", "llk_math_eltwise_", "_sfpu_")
"""Prefixes of the SFPU call wrappers that run user SFPI code (tilewright/sfpi_glue.h): C++
only, as SFPI is (Python kernels have no vector-register language)."""


@pytest.fixture(scope="module")
def cpp():
    return cpp_api()


@pytest.fixture(scope="module")
def python():
    return python_api()


def test_every_function_exists_in_both_kernel_apis(cpp, python):
    cpp_only = {n for n in set(cpp) - set(python) if not n.startswith(SFPI_GLUE)}
    assert sorted(cpp_only) == sorted(CPP_ONLY)
    assert any(n.startswith(SFPI_GLUE) for n in cpp)
    assert sorted(set(python) - set(cpp)) == sorted(PYTHON_ONLY)


def test_every_function_takes_the_arguments_of_its_cpp_overloads(cpp, python):
    wrong = []
    for name in sorted(set(cpp) & set(python)):
        low, high = python_arity(python[name])
        need = min(o.min_args for o in cpp[name])
        most = max(o.max_args for o in cpp[name])
        if low > need or high < most:
            wrong.append(f"{name}{python[name]}: C++ takes {need}..{most} (with template values)")
    assert not wrong, "\n".join(wrong)


# -- the argument checks, called on both APIs --------------------------------------------------

CB_IN0, CB_IN1, CB_OUT = 0, 1, 16
PAGES, FILLED, WAITED, RESERVED = 4, 4, 2, 2
BAD = {"cb": 40, "tile": WAITED, "dst": 8, "slot": RESERVED, "pages": 3}
"""An invalid value per argument kind: an unconfigured CB, the first filled tile that was not
waited for, the first DST index beyond one acquire (bf16 DST, half sync), the first slot
beyond the reservation, one page more than is reserved / waited."""

_SECOND_CB = re.compile(r"(icb1|in1_cb|old_in1|srcb_\w+|icb_scaler)")
_OUT_CB = re.compile(r"(ocb|out_cb|old_ocb)")
OTHER_VALID = {
    "block": 1, "ct_dim": 1, "rt_dim": 1, "kt_dim": 1, "full_ct_dim": 1, "full_dim": 1,
    "block_rt_dim": 1, "ntiles": 1, "num_rows": 1, "num_faces": 4, "face_r_dim": 16,
    "block_c_index": 0, "transpose": 0, "acc_to_dest": 0, "l1_acc_en": 0, "output_index": 0,
    "bits": 0, "value": 0.5, "param0": 0, "param1": 0, "param2": 0, "uint32_t": 0, "int32_t": 0,
}  # fmt: skip
"""Valid values of the arguments the check cases do not vary."""
TEMPLATE_REQUIRED = {
    "bcast_type": BroadcastType.ROW,
    "bcast": BroadcastType.ROW,
    "in_dtype": DataFormat.Float32,  # typecast_tile<IN_DTYPE, OUT_DTYPE>
    "out_dtype": DataFormat.Float16_b,
}


def kind_of(name: str) -> str | None:
    """The checked kind of a C++ parameter, by its (tt-metal) name."""
    if "cb" in name or name in (
        "operand",
        "old_in1",
        "srca_new",
        "srca_old",
        "srcb_new",
        "srcb_old",
    ):
        return "cb"
    if name in ("idst", "idst0", "idst1", "idst2", "odst", "dst_tile_index"):
        return "dst"
    if name == "output_tile_index":
        return "slot"
    if "tile" in name and name != "ntiles":
        return "tile"
    if name in ("num_pages",):
        return "pages"
    return None


PRODUCER_CALLS = ("cb_reserve_back", "cb_push_back", "cb_pages_reservable_at_back")


def _valid(fn: str, name: str, kind: str | None):
    if kind == "cb":
        if _OUT_CB.fullmatch(name) or fn in PRODUCER_CALLS:
            return CB_OUT
        return CB_IN1 if _SECOND_CB.fullmatch(name) else CB_IN0
    if kind == "dst":
        return {"idst1": 1, "idst2": 2}.get(name, 0)
    if kind in ("tile", "slot"):
        return 0
    if kind == "pages":
        return 1
    return OTHER_VALID[name]


@dataclass(frozen=True)
class Case:
    fn: str
    args: tuple
    template: tuple  # enum values (C++ template arguments, Python trailing arguments)
    bad: str  # the argument made invalid ("" for the valid call)

    def cpp(self) -> str:
        t = (
            f"<{', '.join(f'{type(v).__name__}::{v.name}' for v in self.template)}>"
            if self.template
            else ""
        )
        args = ", ".join(f"{a!r}f" if isinstance(a, float) else f"{int(a)}u" for a in self.args)
        return f"{self.fn}{t}({args});"

    def python(self) -> None:
        getattr(k, self.fn)(*self.args, *self.template)


def _cases_for(name: str, cpp_overloads, signature: inspect.Signature) -> list[Case]:
    overload = max(cpp_overloads, key=lambda o: len(o.params))
    names = overload.names
    kinds = [kind_of(n) for n in names]
    unknown = [n for n, kd in zip(names, kinds) if kd is None and n not in OTHER_VALID]
    if unknown:
        raise AssertionError(f"{name}: classify the arguments {unknown} in test_api_parity.py")
    valid = [_valid(name, n, kd) for n, kd in zip(names, kinds)]
    # Template values C++ requires: the Python parameter's default, else a valid value.
    params = list(signature.parameters.values())[len(names) :]
    template = [
        p.default if p.default is not p.empty else TEMPLATE_REQUIRED[p.name]
        for p in params[: overload.template_required]
    ]
    cases = [Case(name, tuple(valid), tuple(template), "")]
    for i, (n, kd) in enumerate(zip(names, kinds)):
        if kd in BAD:
            args = list(valid)
            args[i] = BAD[kd]
            cases.append(Case(name, tuple(args), tuple(template), n))
    return cases


def _all_cases() -> dict[str, list[Case]]:
    cpp, python = cpp_api(), python_api()
    names = sorted((compute_names() | {n for n in cpp if n.startswith("cb_")}) & set(python))
    return {n: _cases_for(n, cpp[n], python[n]) for n in names}


CASES = _all_cases()
FLAT = [case for cases in CASES.values() for case in cases]


def _source() -> str:
    lines = [
        "#include <cstdint>",
        '#include "api/compute/compute_kernel_api.h"',
        *(
            f'#include "{h}"'
            for h in ("api/compute/eltwise_binary_sfpu.h", "api/compute/eltwise_unary/fill.h")
        ),
        "void kernel_main() {",
        "    const uint32_t which = get_arg_val<uint32_t>(0);",
        f"    cb_wait_front({CB_IN0}, {WAITED});",
        f"    cb_wait_front({CB_IN1}, {WAITED});",
        f"    cb_reserve_back({CB_OUT}, {RESERVED});",
        "    tile_regs_acquire();",
        "    switch (which) {",
    ]
    lines += [f"        case {i}: {case.cpp()} break;" for i, case in enumerate(FLAT)]
    lines += ["        default: break;", "    }", "}"]
    return "\n".join(lines) + "\n"


SOURCE = _source()


def _outcome(device, compute, args) -> tuple[str, str, str] | None:
    """None if the kernel ran, else (error class, message, rule)."""
    core = CoreCoord(0, 0)
    program = Program("parity")
    bf16 = DataFormat.Float16_b
    for index in (CB_IN0, CB_IN1, CB_OUT):
        program.create_circular_buffer(
            core, CircularBufferConfig(PAGES * 2048, {index: bf16}).set_page_size(index, 2048)
        )
    data = (np.arange(PAGES * 1024, dtype=np.float32) % 7 - 3).astype(np.float32)

    def reader():
        from tilewright.device.formats import encode_elements

        for cb in (CB_IN0, CB_IN1):
            k.cb_reserve_back(cb, FILLED)
            k.write_l1(k.get_write_ptr(cb), encode_elements(data, bf16))
            k.cb_push_back(cb, FILLED)

    program.create_kernel(reader, core, ReaderDataMovementConfig())
    kernel = program.create_kernel(compute, core, ComputeConfig(), name="parity")
    if args is not None:
        program.set_runtime_args(kernel, core, args)
    try:
        device.command_queue.enqueue_program(program)
    except TilewrightError as err:
        return type(err).__name__, err.message, err.rule
    return None


def _python_kernel(case: Case):
    def kernel():
        k.cb_wait_front(CB_IN0, WAITED)
        k.cb_wait_front(CB_IN1, WAITED)
        k.cb_reserve_back(CB_OUT, RESERVED)
        k.tile_regs_acquire()
        case.python()

    return kernel


def test_the_check_cases_cover_the_compute_api():
    assert len(CASES) > 200 and len(FLAT) > 2 * len(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_both_kernel_apis_make_the_same_argument_checks(device, name):
    native = NativeKernel(source=SOURCE, name="parity")
    for case in CASES[name]:
        index = FLAT.index(case)
        got_cpp = _outcome(device, native, [index])
        got_python = _outcome(device, _python_kernel(case), None)
        what = f"{case.cpp()} ({case.bad or 'valid'})"
        assert got_cpp == got_python, f"{what}\n  C++:    {got_cpp}\n  Python: {got_python}"
