"""The must-reject checklist of ttl.call_extern_func (reference C.9): one case per rule.

Each case places one call in a generated operation module (explicit form: inside a
data-movement kernel function; unified form: at the top of the body) and imports it:
the front end rejects the call at decoration, with the rule's message, located at the
line of the ``ttl.call_extern_func(`` call.
"""

from __future__ import annotations

import importlib.util
import itertools

import pytest

from tilewright import ttl
from tilewright.compiler.extern import ExternArgumentTypeError
from tilewright.errors import ExternCallError
from tilewright.lang.extern.plan import ExternPlan, dfb_usage

EXPLICIT = """\
from tilewright import ttl, ttnn
from tilewright.ttl import DFBAccess, DFBEffect

CAP = 4
HEADER = "h.hpp"
SEQ = (1, 2)
NOT_SEQ = 3
FLOAT = 1.5
MOD_COND = ttl.DispatchCondition(ttl.ScalarType.I64)


class GlobalSemaphore:
    def address(self):
        return 1024


SEM = GlobalSemaphore()


def select_kernel():
    return ttl.KernelKind.COMPUTE


def factory():
    cond = ttl.DispatchCondition(ttl.ScalarType.I64)
    seven = 7
    sem = GlobalSemaphore()

    @ttl.operation(grid=(1, 1))
    def op(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
        d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
        e = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=2)

        @ttl.datamovement()
        def dm():
            n = ttl.node(dims=1)
            {call}

    return op


op = factory()
"""

UNIFIED = """\
from tilewright import ttl, ttnn


def select_kernel():
    return ttl.KernelKind.COMPUTE


@ttl.operation(grid=(1, 1))
def op(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    h = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
    {call}
"""

_COUNTER = itertools.count()


def call_line(template: str) -> int:
    return next(i for i, ln in enumerate(template.splitlines(), 1) if "{call}" in ln)


def reject(tmp_path, call: str, message: str, template: str = EXPLICIT, exc=ExternCallError):
    path = tmp_path / f"extern_case_{next(_COUNTER)}.py"
    path.write_text(template.replace("{call}", call))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(exc) as info:
        spec.loader.exec_module(module)
    err = info.value
    assert message in err.message, err.message
    assert err.loc is not None and err.loc.file == str(path)
    assert err.loc.line == call_line(template), (err.loc, call_line(template))
    return err


def accept(tmp_path, call: str, template: str = EXPLICIT):
    path = tmp_path / f"extern_case_{next(_COUNTER)}.py"
    path.write_text(template.replace("{call}", call))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.op.extern_plan.sites[0]


CF = 'ttl.call_extern_func("h.hpp", "f", '

CASES = [
    # 1-2: positional arguments
    (
        "1-too-few",
        'ttl.call_extern_func("h.hpp")',
        "requires at least 2 positional arguments: header path and callee name",
    ),
    (
        "1-keywords-only",
        'ttl.call_extern_func(header="h.hpp", callee="f")',
        "requires at least 2 positional arguments",
    ),
    (
        "2-too-many",
        'ttl.call_extern_func("h.hpp", "f", n)',
        "accepts only 2 positional arguments (header, callee)",
    ),
    # 3: header / callee
    (
        "3-header-int",
        'ttl.call_extern_func(42, "f")',
        "header must be a string literal or a module-level or captured string",
    ),
    (
        "3-callee-local",
        'ttl.call_extern_func("h.hpp", str(n))',
        "callee must be a string literal or a module-level or captured string",
    ),
    (
        "3-callee-not-identifier",
        'ttl.call_extern_func("h.hpp", "not a name")',
        "is not a C++ function name",
    ),
    # 4: keywords
    (
        "4-unknown-keyword",
        CF + "results=ttl.ScalarType.I32)",
        "got unexpected keyword argument(s): results",
    ),
    # 5: template_args list
    ("5-tuple", CF + "template_args=(1, 2))", "template_args must be a list literal"),
    ("5-name", CF + "template_args=SEQ)", "template_args must be a list literal"),
    (
        "5-starred-local",
        CF + "template_args=[*n])",
        "starred template argument *n must reference a captured or module-level list or tuple",
    ),
    (
        "5-starred-int",
        CF + "template_args=[*NOT_SEQ])",
        "must reference a captured or module-level list",
    ),
    # 6-8: integer / unsigned / float template arguments
    (
        "6-int-range",
        CF + "template_args=[2147483648])",
        "signed integer template argument must fit in 32 bits, got 2147483648",
    ),
    ("6-int-range-negative", CF + "template_args=[-2147483649])", "must fit in 32 bits"),
    (
        "7-uint-negative",
        CF + "template_args=[ttl.uint32(-1)])",
        "unsigned template argument must fit in 32 bits (0 <= value < 2**32), got -1",
    ),
    (
        "7-uint-range",
        CF + "template_args=[ttl.uint32(4294967296)])",
        "unsigned template argument must fit",
    ),
    (
        "8-float-range",
        CF + "template_args=[1e100])",
        "float template argument 1e+100 is not representable as a 32-bit float",
    ),
    # 9-12: DFBs, descriptors, constants
    ("9-bare-dfb", CF + "template_args=[d])", "bare DFB template arguments are ambiguous"),
    (
        "10-descriptor-two-args",
        CF + "template_args=[ttl.dfb_descriptor(d, e)])",
        "ttl.dfb_descriptor takes exactly one argument: the DFB",
    ),
    (
        "10-descriptor-keyword",
        CF + "template_args=[ttl.dfb_descriptor(dfb=d)])",
        "ttl.dfb_descriptor takes exactly one argument",
    ),
    (
        "10-id-not-dfb",
        CF + "template_args=[ttl.get_dfb_id(a)])",
        "ttl.get_dfb_id(a): argument must be a DFB",
    ),
    (
        "11-local-int",
        CF + "template_args=[n])",
        "integer/index template argument 'n' is not a compile-time constant",
    ),
    ("11-runtime-expression", CF + "template_args=[n + 1])", "is not a compile-time constant"),
    (
        "12-string",
        CF + 'template_args=["x"])',
        "must be an int, bool, float, ttl.dfb_descriptor(dfb), ttl.get_dfb_id(dfb), or an integer/index value",
    ),
    ("12-tensor", CF + "template_args=[a])", "template argument 'a' is a tensor"),
    (
        "13-module-semaphore",
        CF + "template_args=[SEM])",
        "global semaphore 'SEM' is a module-level value; it must be captured by an operation factory",
    ),
    (
        "13-module-semaphore-func-arg",
        CF + "func_args=[SEM])",
        "global semaphore 'SEM' is a module-level value",
    ),
    # 14-16: function arguments
    ("14-func-args-tuple", CF + "func_args=(a,))", "func_args must be a list literal"),
    (
        "14-slice-func-arg",
        CF + "func_args=[a[0:1, 0:1]])",
        "does not support tensor slices/views in func_args (a[0:1, 0:1]); pass the base tensor or "
        "ttl.raw_addr(base_tensor)",
    ),
    (
        "14-slice-template-arg",
        CF + "template_args=[a[0, 0]])",
        "does not support tensor slices/views in template_args",
    ),
    ("14-float-func-arg", CF + "func_args=[1.5])", "func_args element 1.5 is a float"),
    (
        "15-raw-addr-two-args",
        CF + "func_args=[ttl.raw_addr(a, out)])",
        "ttl.raw_addr takes exactly one argument: a tensor",
    ),
    (
        "15-raw-addr-slice",
        CF + "func_args=[ttl.raw_addr(a[0:1, 0:1])])",
        "ttl.raw_addr does not support tensor slices/views",
    ),
    (
        "15-raw-addr-not-tensor",
        CF + "func_args=[ttl.raw_addr(n)])",
        "ttl.raw_addr(n): the operand must be a tensor argument of the operation",
    ),
    (
        "15-descriptor-in-func-args",
        CF + "func_args=[ttl.dfb_descriptor(d)])",
        "is a template argument",
    ),
    # 17: dependencies
    ("17-not-list", CF + "dfb_dependencies=d)", "dfb_dependencies must be a list literal"),
    ("17-not-dfb", CF + "dfb_dependencies=[n])", "dfb_dependencies element n is not a DFB"),
    (
        "17-repeats-func-arg",
        CF + "func_args=[d], dfb_dependencies=[d])",
        "dfb_dependencies must contain only distinct dependency-only DFBs",
    ),
    (
        "17-repeats-descriptor",
        CF + "template_args=[ttl.dfb_descriptor(d)], dfb_dependencies=[d])",
        "must contain only distinct dependency-only DFBs",
    ),
    (
        "17-repeats-itself",
        CF + "dfb_dependencies=[e, e])",
        "must contain only distinct dependency-only DFBs",
    ),
    # 18-21: effects
    (
        "18-concatenation",
        CF + "dfb_dependencies=[d], dfb_effects=[DFBEffect.reserve(d, tiles=2)] + "
        "[DFBEffect.push(d, tiles=2)])",
        "dfb_effects must be a list literal",
    ),
    (
        "18-access-in-effects",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBAccess.inspect(d)])",
        "is a DFBAccess; list it in dfb_accesses",
    ),
    (
        "18-not-effect",
        CF + "dfb_dependencies=[d], dfb_effects=[42])",
        "dfb_effects elements must be ttl.DFBEffect.reserve/push/wait/pop/repeat(...)",
    ),
    (
        "19-two-positional",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.reserve(d, e, tiles=2)])",
        "ttl.DFBEffect.reserve takes exactly one positional argument (the DFB) and tiles=",
    ),
    (
        "19-missing-tiles",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.push(d)])",
        "ttl.DFBEffect.push requires tiles=N",
    ),
    (
        "19-extra-keyword",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.wait(d, tiles=2, count=1)])",
        "ttl.DFBEffect.wait accepts only the tiles= keyword, got count=",
    ),
    (
        "20-tiles-bool",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.pop(d, tiles=True)])",
        "tiles=True is not a static integer: True is a bool",
    ),
    (
        "20-tiles-runtime",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.pop(d, tiles=n)])",
        "tiles=n is not a static integer: 'n' is an operation-local value",
    ),
    (
        "20-tiles-node",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.pop(d, tiles=ttl.node(dims=1))])",
        "is a run-time value",
    ),
    (
        "20-tiles-pow",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.pop(d, tiles=2 ** 1)])",
        "operator ** is not allowed in a static integer expression",
    ),
    (
        "20-tiles-zero",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.pop(d, tiles=CAP - 4)])",
        "tiles must be positive, got 0",
    ),
    (
        "20-tiles-div-zero",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.pop(d, tiles=CAP // 0)])",
        "division by zero",
    ),
    (
        "21-repeat-one-arg",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.repeat(2)])",
        "ttl.DFBEffect.repeat takes exactly 2 positional arguments (count, [effects])",
    ),
    (
        "21-repeat-keywords",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.repeat(count=2, "
        "effects=[ttl.DFBEffect.pop(d, tiles=1)])])",
        "ttl.DFBEffect.repeat takes exactly 2 positional arguments",
    ),
    (
        "21-repeat-runtime-count",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.repeat(n, "
        "[ttl.DFBEffect.pop(d, tiles=1)])])",
        "ttl.DFBEffect.repeat count n is not static",
    ),
    (
        "21-repeat-negative",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.repeat(-1, "
        "[ttl.DFBEffect.pop(d, tiles=1)])])",
        "ttl.DFBEffect.repeat count must be >= 0, got -1",
    ),
    (
        "21-repeat-empty",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.repeat(2, [])])",
        "ttl.DFBEffect.repeat body must not be empty",
    ),
    (
        "21-repeat-tuple-body",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.repeat(2, "
        "(ttl.DFBEffect.pop(d, tiles=1),))])",
        "ttl.DFBEffect.repeat body must be a list literal",
    ),
    (
        "21-too-many",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.repeat(4097, "
        "[ttl.DFBEffect.pop(d, tiles=1)])])",
        "dfb_effects expand to 4097 actions; at most 4096 are allowed",
    ),
    (
        "20-pow-in-repeat-count",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.repeat(10 ** 0 * 1000000, "
        "[ttl.DFBEffect.repeat(1000000, [ttl.DFBEffect.pop(d, tiles=1)])])])",
        "operator ** is not allowed",
    ),
    (
        "21-too-many-huge",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.repeat(1000000, "
        "[ttl.DFBEffect.repeat(1000000, [ttl.DFBEffect.pop(d, tiles=1)])])])",
        "at most 4096 are allowed per call",
    ),
    # 22-24: references, ambiguity, accesses
    (
        "22-not-dependency",
        CF + "func_args=[d], dfb_effects=[ttl.DFBEffect.reserve(e, tiles=1)])",
        "ttl.DFBEffect.reserve(e) references a DFB that is not a function argument, descriptor, or dependency",
    ),
    (
        "22-access-not-dependency",
        CF + "func_args=[d], dfb_accesses=[ttl.DFBAccess.inspect(e)])",
        "references a DFB that is not a function argument, descriptor, or dependency",
    ),
    (
        "23-ambiguous",
        CF + "func_args=[d, d], dfb_effects=[ttl.DFBEffect.reserve(d, tiles=1)])",
        "the reference is ambiguous: 'd' is 2 dependency occurrences of this call",
    ),
    (
        "23-ambiguous-descriptor",
        CF + "func_args=[d], template_args=[ttl.dfb_descriptor(d)], "
        "dfb_accesses=[ttl.DFBAccess.inspect(d)])",
        "the reference is ambiguous",
    ),
    (
        "24-accesses-not-list",
        CF + "dfb_dependencies=[d], dfb_accesses=d)",
        "dfb_accesses must be a list literal",
    ),
    (
        "24-effect-in-accesses",
        CF + "dfb_dependencies=[d], dfb_accesses=[ttl.DFBEffect.reserve(d, tiles=1)])",
        "dfb_accesses elements must be ttl.DFBAccess.inspect(dfb)",
    ),
    (
        "24-inspect-two-args",
        CF + "dfb_dependencies=[d, e], dfb_accesses=[ttl.DFBAccess.inspect(d, e)])",
        "ttl.DFBAccess.inspect takes exactly one argument: the DFB",
    ),
    (
        "24-effect-and-access",
        CF + "dfb_dependencies=[d], dfb_effects=[ttl.DFBEffect.reserve(d, tiles=1)], "
        "dfb_accesses=[ttl.DFBAccess.inspect(d)])",
        "has both dfb_effects and a DFBAccess.inspect",
    ),
    # 25: flags and include paths
    (
        "25-unknown-runtime",
        CF + "unknown_dfb_access=n)",
        "unknown_dfb_access must be a static bool",
    ),
    (
        "25-unknown-int",
        CF + "unknown_dfb_access=1)",
        "unknown_dfb_access must be a static bool, got 1",
    ),
    ("25-include-not-list", CF + 'include_paths="inc")', "include_paths must be a list of strings"),
    (
        "25-include-element",
        CF + "include_paths=[n])",
        "include_paths element must be a string literal",
    ),
    # 26-29: results and dispatch conditions
    (
        "26-result-str",
        CF + 'result_type="i64")',
        "result_type must be ttl.ScalarType.I32 or ttl.ScalarType.I64, got 'i64'",
    ),
    (
        "26-result-int",
        CF + "result_type=64)",
        "result_type must be ttl.ScalarType.I32 or ttl.ScalarType.I64, got 64",
    ),
    ("26-result-class", CF + "result_type=ttl.ScalarType)", "got ttl.ScalarType"),
    (
        "27-both-results",
        CF + "result_type=ttl.ScalarType.I64, condition_result=cond)",
        "cannot combine result_type and condition_result",
    ),
    (
        "28-condition-int",
        CF + "condition_result=17)",
        "condition_result must be a ttl.DispatchCondition, got 17",
    ),
    (
        "28-condition-module",
        CF + "condition_result=MOD_COND)",
        "module-level DispatchCondition; a ttl.DispatchCondition must be created by an enclosing factory",
    ),
    (
        "28-condition-inline",
        CF + "condition_result=ttl.DispatchCondition(ttl.ScalarType.I64))",
        "must be created by an enclosing factory",
    ),
    (
        "29-condition-dfb-id",
        CF + "template_args=[ttl.get_dfb_id(d)], dfb_dependencies=[d], condition_result=cond)",
        "condition_result call cannot access DFB state (it has a DFB template argument)",
    ),
    (
        "29-condition-dependency",
        CF + "dfb_dependencies=[d], condition_result=cond)",
        "condition_result call cannot access DFB state (it has a DFB dependency)",
    ),
    (
        "29-condition-unknown",
        CF + "unknown_dfb_access=True, condition_result=cond)",
        "condition_result call cannot access DFB state (it has unknown_dfb_access=True)",
    ),
    # 31, 33, 35: kernel selection, DFB ids, per-kernel mappings (explicit form)
    (
        "31-selection-conflict",
        CF + "kernel=ttl.KernelKind.COMPUTE)",
        "explicit external-call kernel selection (compute) conflicts with the enclosing kernel function 'dm' "
        "(data_movement)",
    ),
    (
        "33-id-not-dependency",
        CF + "template_args=[ttl.get_dfb_id(d)])",
        "ttl.get_dfb_id(d) reaches C++ but 'd' is not a dependency of the call",
    ),
    (
        "35-mapping-key-not-selected",
        CF + "func_args={ttl.KernelKind.COMPUTE: [1]})",
        "per-kernel mapping key compute is not a selected kernel of this call",
    ),
    (
        "35-mapping-empty-effects",
        CF + "dfb_dependencies=[d], dfb_effects={ttl.KernelKind.DATA_MOVEMENT: []})",
        "dfb_effects mapping entries must be nonempty lists",
    ),
]


@pytest.mark.parametrize("rule,call,message", CASES, ids=[c[0] for c in CASES])
def test_must_reject(tmp_path, rule, call, message):
    reject(tmp_path, call, message)


UNIFIED_CASES = [
    (
        "31-missing-selector",
        'ttl.call_extern_func("h.hpp", "f")',
        "call_extern_func requires a kernel selector when its logical kernel cannot be inferred",
    ),
    (
        "31-computed-selector",
        'ttl.call_extern_func("h.hpp", "f", kernel=select_kernel())',
        "kernel selector must be a KernelKind or Kernel declared as a top-level operation resource",
    ),
    (
        "31-int-selector",
        'ttl.call_extern_func("h.hpp", "f", kernel=42)',
        "kernel selector must be a KernelKind or Kernel declared as a top-level operation resource, got 42",
    ),
    (
        "31-unknown-member",
        'ttl.call_extern_func("h.hpp", "f", kernel=ttl.KernelKind.NOPE)',
        "unknown KernelKind member 'NOPE'",
    ),
    (
        "31-union-with-handle",
        'ttl.call_extern_func("h.hpp", "f", kernel=ttl.KernelKind.COMPUTE | h)',
        "kernel kind union operands must be KernelKind members; use a tuple to include operation-local Kernel handles",
    ),
    (
        "31-empty-tuple",
        'ttl.call_extern_func("h.hpp", "f", kernel=())',
        "call_extern_func kernel selection requires a nonempty tuple",
    ),
    (
        "31-duplicate",
        'ttl.call_extern_func("h.hpp", "f", kernel=(ttl.KernelKind.COMPUTE, ttl.KernelKind.COMPUTE))',
        "call_extern_func kernel selection contains a duplicate kernel selector",
    ),
]


@pytest.mark.parametrize("rule,call,message", UNIFIED_CASES, ids=[c[0] for c in UNIFIED_CASES])
def test_must_reject_unified(tmp_path, rule, call, message):
    reject(tmp_path, call, message, template=UNIFIED)


def test_uint32_of_a_float_is_a_type_error(tmp_path):
    err = reject(
        tmp_path,
        CF + "template_args=[ttl.uint32(1.5)])",
        "ttl.uint32 takes an int, got float 1.5",
        exc=ExternArgumentTypeError,
    )
    assert isinstance(err, TypeError) and isinstance(err, ExternCallError)


def test_dispatch_condition_of_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="takes ttl.ScalarType.I32 or ttl.ScalarType.I64"):
        ttl.DispatchCondition("i64")


def test_call_outside_a_kernel_function_of_a_multi_kernel_operation(tmp_path):
    template = EXPLICIT.replace(
        "            n = ttl.node(dims=1)\n            {call}\n",
        "            pass\n\n        {call}\n",
    )
    reject(
        tmp_path,
        'ttl.call_extern_func("h.hpp", "f")',
        "belongs inside a kernel function",
        template=template,
    )


def test_location_is_the_line_of_the_call_for_multi_line_calls(tmp_path):
    call = (
        'ttl.call_extern_func(\n                "h.hpp",\n                "f",\n'
        "                template_args=[d],\n            )"
    )
    reject(tmp_path, call, "bare DFB template arguments are ambiguous")


def test_template_arguments_are_checked_before_effects_are_resolved(tmp_path):
    # The effect names a DFB that is only a dependency through the (bad) template argument.
    reject(
        tmp_path,
        CF + "template_args=[d], dfb_effects=[ttl.DFBEffect.reserve(d, tiles=1)])",
        "bare DFB template arguments are ambiguous",
    )


def test_valid_template_arguments_become_cpp_text(tmp_path):
    site = accept(
        tmp_path,
        CF + "template_args=[-5, True, 1.0, -1.0, ttl.uint32(0xFFFFFFFF), FLOAT, "
        "ttl.dfb_descriptor(d), ttl.get_dfb_id(d), *SEQ, seven, CAP * 2 - 1, -2147483648, sem])",
    )
    texts = [t.text for t in site.template_args]
    kinds = [t.kind for t in site.template_args]
    assert texts[:6] == ["-5", "true", "1065353216U", "3212836864U", "4294967295U", "1069547520U"]
    assert kinds[6:8] == ["descriptor", "dfb_id"]
    assert texts[8:] == ["1", "2", "7", "7", "(-2147483647 - 1)", "1024U"]
    assert site.header == "h.hpp" and site.callee == "f" and site.kernel_kinds == {"data_movement"}


def test_effects_are_expanded_and_resolved_to_occurrences(tmp_path):
    site = accept(
        tmp_path,
        CF
        + "func_args=[e, n, a], template_args=[ttl.dfb_descriptor(d)], dfb_effects=[ttl.DFBEffect.repeat("
        "CAP // 2, [DFBEffect.reserve(d, tiles=2), DFBEffect.push(d, tiles=2)]), ttl.DFBEffect.wait(e, tiles=1), "
        "ttl.DFBEffect.repeat(0, [ttl.DFBEffect.pop(e, tiles=1)])])",
    )
    v = site.variants[None]
    assert [a.kind for a in v.func_args] == ["dfb", "scalar", "tensor"]
    assert [(o.dfb, o.where, o.position) for o in v.occurrences] == [
        ("e", "func_args", 0),
        ("d", "template_args", 0),
    ]
    assert [(x.kind, x.occurrence, x.tiles) for x in v.effects] == [
        ("reserve", 1, 2),
        ("push", 1, 2),
        ("reserve", 1, 2),
        ("push", 1, 2),
        ("wait", 0, 1),
    ]


def test_dfb_usage_record_for_the_allocator(tmp_path):
    site = accept(
        tmp_path,
        CF + "func_args=[d], dfb_dependencies=[e], dfb_accesses=[ttl.DFBAccess.inspect(d)])",
    )
    assert site.variants[None].opaque == (1,)

    usage = dfb_usage(ExternPlan("op", (site,)))
    assert usage.conflicting == {"e"} and not usage.all_opaque
    assert usage.calls[0].inspected == {"d"}
    site2 = accept(tmp_path, CF + "unknown_dfb_access=True)")

    assert dfb_usage(ExternPlan("op", (site2,))).all_opaque
    assert dfb_usage(None).calls == ()


def test_alias_of_a_dfb_is_the_same_occurrence(tmp_path):
    call = (
        "x = d\n            "
        + CF
        + "func_args=[x], dfb_effects=[ttl.DFBEffect.reserve(d, tiles=1)])"
    )
    path = tmp_path / "alias_case.py"
    path.write_text(EXPLICIT.replace("{call}", call))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (site,) = module.op.extern_plan.sites
    assert site.variants[None].occurrences[0].dfb == "d"


def test_mapping_form_selects_per_kernel_arguments(tmp_path):
    site = accept(
        tmp_path,
        CF
        + "func_args={ttl.KernelKind.DATA_MOVEMENT: [n, 1]}, kernel=ttl.KernelKind.DATA_MOVEMENT)",
    )
    assert set(site.variants) == {"kind:data_movement", "*"}
    assert (
        len(site.variants["kind:data_movement"].func_args) == 2
        and site.variants["*"].func_args == ()
    )
