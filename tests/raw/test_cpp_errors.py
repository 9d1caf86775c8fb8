"""Diagnostics of ``ttl.raw.cpp``: one case per rule, each asserting the message and file:line.

Declaration errors are located at the user's ``ttl.raw.cpp(`` line; call errors at the
call's line (decoration, before any kernel runs); run-time errors (builds, contract
violations, out-of-range values) at the call's line too.  Each case writes a small
program module and imports it.
"""

from __future__ import annotations

import importlib.util
import itertools

import pytest
import torch

from tilewright import ttnn
from tilewright.compiler.raw.cpp import RawCppError
from tilewright.errors import DFBContractError, ExternCallError, NativeBuildError

PROGRAM = """\
from pathlib import Path

from tilewright import ttl, ttnn

TWO = 2
SOURCE = '''
#include <cstdint>
inline void copy_n(uint32_t src, uint32_t dst, float f, uint32_t n) {}
inline int32_t add_one(int32_t x) { return x + 1; }
inline int64_t twice(int64_t x) { return 2 * x; }
'''

ext = {decl}


def factory():
    blocks = 3

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

DECL_LINE = next(i for i, ln in enumerate(PROGRAM.splitlines(), 1) if "{decl}" in ln)
CALL_LINE = next(i for i, ln in enumerate(PROGRAM.splitlines(), 1) if "{call}" in ln)
COPY_N = (
    'ttl.raw.cpp(SOURCE, entry="copy_n", '
    "signature=(ttl.raw.DFB, ttl.raw.DFB, ttl.raw.f32, ttl.raw.u32){extra})"
)
_COUNTER = itertools.count()


def load(tmp_path, decl: str, call: str = "pass"):
    path = tmp_path / f"raw_cpp_case_{next(_COUNTER)}.py"
    path.write_text(PROGRAM.replace("{decl}", decl).replace("{call}", call))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


def reject(tmp_path, decl: str, message: str, call: str = "pass", line: int = DECL_LINE):
    with pytest.raises(ExternCallError) as info:
        load(tmp_path, decl, call)
    err = info.value
    assert isinstance(err, RawCppError)
    assert message in err.message, err.message
    assert err.loc is not None and err.loc.file.startswith(str(tmp_path))
    assert err.loc.line == line, (err.loc, line)
    return err


# -- the declaration: located at the ttl.raw.cpp( line -------------------------------------------

DECLARATION_CASES = [
    (
        "source-path-missing",
        'ttl.raw.cpp(Path("no/such/file.cpp"), entry="f", signature=())',
        "source file 'no/such/file.cpp' does not exist",
    ),
    (
        "source-empty",
        'ttl.raw.cpp("  \\n", entry="f", signature=())',
        "the inline C++ source is empty",
    ),
    (
        "source-str-looks-like-a-path",
        'ttl.raw.cpp("kernels/scale.cpp", entry="f", signature=())',
        "is a str, which ttl.raw.cpp takes as inline C++ text",
    ),
    (
        "source-wrong-type",
        'ttl.raw.cpp(42, entry="f", signature=())',
        "source must be a pathlib.Path",
    ),
    (
        "entry-not-a-name",
        'ttl.raw.cpp(SOURCE, entry="copy-n", signature=())',
        "entry 'copy-n' is not a C++ function name",
    ),
    (
        "entry-not-in-source",
        'ttl.raw.cpp(SOURCE, entry="scale_block", signature=())',
        "entry 'scale_block' is not defined in the inline source",
    ),
    (
        "signature-unknown-marker",
        'ttl.raw.cpp(SOURCE, entry="copy_n", signature=(ttl.raw.DFB, float))',
        "signature[1] is float, not a ttl.raw type marker",
    ),
    (
        "signature-string-marker",
        'ttl.raw.cpp(SOURCE, entry="copy_n", signature=("f32",))',
        "signature[0] is 'f32', not a ttl.raw type marker",
    ),
    (
        "signature-not-a-tuple",
        'ttl.raw.cpp(SOURCE, entry="copy_n", signature=ttl.raw.f32)',
        "signature must be a tuple of ttl.raw type markers",
    ),
    (
        "result-float",
        'ttl.raw.cpp(SOURCE, entry="add_one", signature=(ttl.raw.i32,), result=ttl.raw.f32)',
        "result=ttl.raw.f32: a raw C++ function returns at most one signed integer",
    ),
    (
        "include-path-missing",
        'ttl.raw.cpp(SOURCE, entry="add_one", signature=(ttl.raw.i32,), include_paths=["nope"])',
        "include_paths element 'nope' is not a directory",
    ),
    (
        "template-arg-out-of-range",
        'ttl.raw.cpp(SOURCE, entry="add_one", signature=(ttl.raw.i32,), template_args=[2**31])',
        "signed integer template argument must fit in 32 bits, got 2147483648",
    ),
    (
        "template-arg-type",
        'ttl.raw.cpp(SOURCE, entry="add_one", signature=(ttl.raw.i32,), template_args=["N"])',
        "template argument 'N' must be an int, bool, float",
    ),
    (
        "effects-arity",
        COPY_N.format(extra=", effects=lambda src, dst: []"),
        "effects takes 2 parameter(s) but the signature has 4",
    ),
    (
        "effects-type",
        COPY_N.format(extra=", effects=42"),
        "effects must be a function of the parameters, a list of ttl.DFBEffect entries or None",
    ),
    (
        "effects-list-names-a-scalar",
        COPY_N.format(extra=", effects=[ttl.DFBEffect.wait(2, tiles=1)]"),
        "effects list entry wait(2) must name a ttl.raw.DFB parameter by its position",
    ),
    (
        "effects-list-element",
        COPY_N.format(extra=", effects=[7]"),
        "effects elements must be ttl.DFBEffect.reserve/push/wait/pop/repeat(...)",
    ),
]


@pytest.mark.parametrize(
    ("decl", "message"), [c[1:] for c in DECLARATION_CASES], ids=[c[0] for c in DECLARATION_CASES]
)
def test_declaration_is_rejected_at_its_line(tmp_path, decl, message):
    reject(tmp_path, decl, message)


# -- the call: located at the call's line, at decoration ----------------------------------------

EFFECTS = (
    ", effects=lambda src, dst, f, count: [ttl.DFBEffect.repeat(count, "
    "[ttl.DFBEffect.wait(src, tiles=1), ttl.DFBEffect.pop(src, tiles=1)])]"
)

CALL_CASES = [
    ("arg-count", COPY_N.format(extra=""), "ext(d, e, 1.0)", "takes 4 argument(s)"),
    (
        "dfb-expected",
        COPY_N.format(extra=""),
        "ext(d, 3, 1.0, 4)",
        "argument 1 (3) for parameter 1 (ttl.raw.DFB) must be a DFB of the operation",
    ),
    (
        "scalar-given-a-dfb",
        COPY_N.format(extra=""),
        "ext(d, e, e, 4)",
        "argument 2 (e) for parameter 2 (ttl.raw.f32) is a dfb, not a f32 scalar",
    ),
    (
        "u32-negative-literal",
        COPY_N.format(extra=""),
        "ext(d, e, 1.0, -1)",
        "argument 3 (-1) for parameter 3 (ttl.raw.u32) = -1 is out of range for uint32_t",
    ),
    (
        "i32-literal-too-big",
        'ttl.raw.cpp(SOURCE, entry="add_one", signature=(ttl.raw.i32,), result=ttl.raw.i32)',
        "r = ext(2147483648)",
        "= 2147483648 is out of range for int32_t ([-2147483648, 2147483647])",
    ),
    (
        "i64-literal-too-big",
        'ttl.raw.cpp(SOURCE, entry="twice", signature=(ttl.raw.i64,), result=ttl.raw.i64)',
        "r = ext(-9223372036854775809)",
        "is out of range for int64_t",
    ),
    (
        "f32-literal-overflows",
        COPY_N.format(extra=""),
        "ext(d, e, 1e40, 4)",
        "= 1e+40 is not representable as a 32-bit float",
    ),
    (
        "float-for-an-int",
        'ttl.raw.cpp(SOURCE, entry="add_one", signature=(ttl.raw.i32,), result=ttl.raw.i32)',
        "r = ext(1.5)",
        "is a float; the parameter is the integer type int32_t",
    ),
    (
        "string-argument",
        'ttl.raw.cpp(SOURCE, entry="add_one", signature=(ttl.raw.i32,), result=ttl.raw.i32)',
        'r = ext("7")',
        "is a str, not a i32 scalar",
    ),
    (
        "unexpected-keyword",
        COPY_N.format(extra=""),
        "ext(d, e, 1.0, 4, tiles=2)",
        "got unexpected keyword argument(s): tiles",
    ),
    (
        "result-none-but-used",
        COPY_N.format(extra=""),
        "r = ext(d, e, 1.0, 4)",
        "the function returns no value (result=None), but the call's value is used",
    ),
    (
        "effects-count-not-static",
        COPY_N.format(extra=EFFECTS),
        "ext(d, e, 1.0, n)",
        "effects use parameter 'count', but its argument n is a run-time value",
    ),
    (
        "effects-tiles-not-static",
        COPY_N.format(
            extra=", effects=lambda src, dst, f, count: [ttl.DFBEffect.wait(src, tiles=2 * count)]"
        ),
        "ext(d, e, 1.0, n + 1)",
        "effects use parameter 'count', but its argument n + 1 is a run-time value",
    ),
    (
        "effects-not-a-list",
        COPY_N.format(
            extra=", effects=lambda src, dst, f, count: ttl.DFBEffect.wait(src, tiles=1)"
        ),
        "ext(d, e, 1.0, 4)",
        "effects must return a list of ttl.DFBEffect entries, got EffectItem",
    ),
    (
        "effects-name-a-scalar",
        COPY_N.format(
            extra=", effects=lambda src, dst, f, count: [ttl.DFBEffect.wait(count, tiles=1)]"
        ),
        "ext(d, e, 1.0, 4)",
        "ttl.DFBEffect.wait(4): the argument must be a ttl.raw.DFB parameter",
    ),
    (
        "effects-zero-tiles",
        COPY_N.format(
            extra=", effects=lambda src, dst, f, count: [ttl.DFBEffect.wait(src, tiles=0)]"
        ),
        "ext(d, e, 1.0, 4)",
        "ttl.DFBEffect.wait: tiles must be positive, got 0",
    ),
    (
        "effects-too-many",
        COPY_N.format(extra=EFFECTS),
        "ext(d, e, 1.0, 5000)",
        "effects expand to 10000 actions; at most 4096 are allowed per call",
    ),
    (
        "effects-raise",
        COPY_N.format(extra=", effects=lambda src, dst, f, count: [1 / 0]"),
        "ext(d, e, 1.0, 4)",
        "effects raised ZeroDivisionError: division by zero",
    ),
    (
        "effects-and-inspect",
        COPY_N.format(
            extra=", effects=lambda s, d, f, c: [ttl.DFBEffect.wait(s, tiles=1), "
            "ttl.DFBEffect.pop(s, tiles=1), ttl.DFBAccess.inspect(s)]"
        ),
        "ext(d, e, 1.0, 4)",
        "has both DFB effects and a DFBAccess.inspect",
    ),
    (
        "kernel-selector-conflict",
        COPY_N.format(extra=""),
        "ext(d, e, 1.0, 4, kernel=ttl.KernelKind.COMPUTE)",
        "conflicts with the enclosing kernel function 'dm'",
    ),
]


@pytest.mark.parametrize(
    ("decl", "call", "message"), [c[1:] for c in CALL_CASES], ids=[c[0] for c in CALL_CASES]
)
def test_call_is_rejected_at_its_line(tmp_path, decl, call, message):
    err = reject(tmp_path, decl, message, call=call, line=CALL_LINE)
    assert "ttl.raw.cpp function" in err.message and f":{DECL_LINE}" in err.message


def test_a_static_scalar_count_is_evaluated(tmp_path):
    """The same effects with a module constant and a captured int: a static contract."""
    module, _ = load(tmp_path, COPY_N.format(extra=EFFECTS), "ext(d, e, 1.0, TWO)")
    site = module.op.extern_plan.sites[0]
    actions = [(e.kind, e.occurrence, e.tiles) for e in site.variants[None].effects]
    assert actions == [("wait", 0, 1), ("pop", 0, 1)] * 2
    module, _ = load(tmp_path, COPY_N.format(extra=EFFECTS), "ext(d, e, 1.0, blocks)")
    assert len(module.op.extern_plan.sites[0].variants[None].effects) == 6


def test_list_effects_name_parameters_by_position(tmp_path):
    decl = COPY_N.format(
        extra=", effects=[ttl.DFBEffect.repeat(3, [ttl.DFBEffect.reserve(1, tiles=2), "
        "ttl.DFBEffect.push(1, tiles=2)]), ttl.DFBAccess.inspect(0)]"
    )
    module, _ = load(tmp_path, decl, "ext(d, e, 1.0, 4)")
    variant = module.op.extern_plan.sites[0].variants[None]
    assert [o.dfb for o in variant.occurrences] == ["d", "e"]
    assert [(e.kind, e.occurrence) for e in variant.effects] == [("reserve", 1), ("push", 1)] * 3
    assert variant.inspected == (0,) and variant.opaque == ()


def test_effects_none_leaves_dfb_parameters_opaque(tmp_path):
    module, _ = load(tmp_path, COPY_N.format(extra=""), "ext(d, e, 1.0, 4)")
    site = module.op.extern_plan.sites[0]
    assert site.variants[None].opaque == (0, 1)
    assert site.title == "ttl.raw.cpp function 'copy_n'"
    assert [a.kind for a in site.variants[None].func_args] == ["dfb", "dfb", "f32", "uint32"]


def test_eager_call_is_a_kernel_only_error(tmp_path):
    module, _ = load(tmp_path, COPY_N.format(extra=""))
    with pytest.raises(
        RuntimeError, match="ttl.raw.cpp function 'copy_n' is valid only in a compiled kernel"
    ):
        module.ext(1, 2, 1.0, 4)


# -- run time: builds, values, contracts ----------------------------------------------------------

RUNTIME = """\
from tilewright import ttl, ttnn

RESULTS = []
{decls}


@ttl.operation(grid=(1, 1))
def op(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)

    @ttl.datamovement()
    def dm():
        v = {value}
        {call}
"""


def runtime_text(decls: str, call: str, value: str = "0") -> tuple[str, int]:
    text = RUNTIME.replace("{decls}", decls).replace("{call}", call).replace("{value}", value)
    return text, next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip() == call)


def run_case(tmp_path, device, decls: str, call: str, value: str = "0"):
    path = tmp_path / f"raw_cpp_run_{next(_COUNTER)}.py"
    text, line = runtime_text(decls, call, value)
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    t = ttnn.from_torch(
        torch.zeros(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
    )
    module.op(t, t)
    return module.RESULTS


def test_entry_missing_from_the_source_is_a_build_error_at_the_call(tmp_path, device):
    decls = (
        'ext = ttl.raw.cpp("// scale_it is documented here but never defined\\n'
        'inline int other() { return 1; }\\n", entry="scale_it", signature=(ttl.raw.i32,), '
        "result=ttl.raw.i32)"
    )
    with pytest.raises(NativeBuildError) as info:
        run_case(tmp_path, device, decls, "RESULTS.append(ext(v))")
    err = info.value
    assert "scale_it" in err.compiler_output and "was not declared" in err.compiler_output
    assert "ttl.raw.cpp function 'scale_it'" in err.message
    assert err.loc is not None and err.loc.line == runtime_text(decls, "RESULTS.append(ext(v))")[1]


def test_run_time_value_out_of_range_for_i32(tmp_path, device):
    decls = (
        'ext = ttl.raw.cpp("inline int32_t add_one(int32_t x) { return x + 1; }", entry="add_one", '
        "signature=(ttl.raw.i32,), result=ttl.raw.i32)"
    )
    with pytest.raises(ExternCallError) as info:
        run_case(
            tmp_path, device, decls, "RESULTS.append(ext(v))", value="2**31 + ttl.node(dims=1)"
        )
    err = info.value
    assert "func_args element v = 2147483648 does not fit a signed 32-bit integer" in err.message
    assert err.loc is not None and err.loc.line == runtime_text(decls, "RESULTS.append(ext(v))")[1]


def test_run_time_float_argument_must_be_a_number(tmp_path, device):
    decls = (
        'ext = ttl.raw.cpp("inline int32_t trunc(float x) { return (int32_t)x; }", entry="trunc", '
        "signature=(ttl.raw.f32,), result=ttl.raw.i32)"
    )
    with pytest.raises(
        ExternCallError, match="is str '1' at run time; the parameter is a 32-bit float"
    ):
        run_case(
            tmp_path, device, decls, "RESULTS.append(ext(v))", value="str(1 + ttl.node(dims=1))"
        )


CONTRACT = '''
ext = ttl.raw.cpp(
    """
    #include <cstdint>
    inline void fill(uint32_t dfb) {
        cb_reserve_back(dfb, 1);
        cb_push_back(dfb, 1);
        cb_reserve_back(dfb, 1);
        cb_push_back(dfb, 1);
        cb_wait_front(dfb, 2);
        cb_pop_front(dfb, 2);
    }
    """,
    entry="fill",
    signature=(ttl.raw.DFB,),
    effects=lambda dfb: [ttl.DFBEffect.reserve(dfb, tiles=2), ttl.DFBEffect.push(dfb, tiles=2),
                         ttl.DFBEffect.wait(dfb, tiles=2), ttl.DFBEffect.pop(dfb, tiles=2)],
)'''


def test_observed_effects_differing_from_the_declaration_are_caught(tmp_path, device):
    with pytest.raises(DFBContractError) as info:
        run_case(tmp_path, device, CONTRACT, "ext(d)")
    err = info.value
    assert "ttl.raw.cpp function 'fill'" in err.message
    assert "DFB action 1 is reserve(d, 1) but dfb_effects declare reserve(d, 2)" in err.message
    assert "declared: [reserve(d, 2), push(d, 2), wait(d, 2), pop(d, 2)]" in err.message
    assert "observed: [reserve(d, 1)]" in err.message
    assert err.loc is not None and err.loc.line == runtime_text(CONTRACT, "ext(d)")[1]


def test_undeclared_actions_on_an_inspected_dfb_are_caught(tmp_path, device):
    decls = CONTRACT.replace(
        "effects=lambda dfb: [ttl.DFBEffect.reserve(dfb, tiles=2), ttl.DFBEffect.push(dfb, tiles=2),\n"
        "                         ttl.DFBEffect.wait(dfb, tiles=2), ttl.DFBEffect.pop(dfb, tiles=2)]",
        "effects=lambda dfb: [ttl.DFBAccess.inspect(dfb)]",
    )
    with pytest.raises(
        DFBContractError, match=r"DFBAccess.inspect\(d\) declares that the function leaves"
    ):
        run_case(tmp_path, device, decls, "ext(d)")


def test_declared_actions_the_function_never_performs_are_caught(tmp_path, device):
    decls = (
        'ext = ttl.raw.cpp("#include <cstdint>\\ninline void idle(uint32_t d) {}\\n", entry="idle", '
        "signature=(ttl.raw.DFB,), effects=lambda d: [ttl.DFBEffect.reserve(d, tiles=1), "
        "ttl.DFBEffect.push(d, tiles=1)])"
    )
    with pytest.raises(DFBContractError) as info:
        run_case(tmp_path, device, decls, "ext(d)")
    assert "the external function returned after 0 of the 2 DFB actions" in info.value.message
    assert info.value.loc is not None and info.value.loc.line == runtime_text(decls, "ext(d)")[1]


UNIFIED = """\
from tilewright import ttl, ttnn

ext = ttl.raw.cpp("inline void touch(uint32_t d) {}", entry="touch", signature=(ttl.raw.DFB,))


@ttl.operation(grid=(1, 1))
def op(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    {call}
"""


def load_text(tmp_path, text: str):
    path = tmp_path / f"raw_cpp_text_{next(_COUNTER)}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_unified_call_needs_a_kernel_selector(tmp_path):
    with pytest.raises(RawCppError) as info:
        load_text(tmp_path, UNIFIED.replace("{call}", "ext(d)"))
    err = info.value
    assert "requires a kernel selector when its logical kernel cannot be inferred" in err.message
    assert err.loc is not None and err.loc.line == 9


def test_unified_call_is_placed_on_its_selected_kernel(tmp_path):
    module = load_text(tmp_path, UNIFIED.replace("{call}", "ext(d, kernel=ttl.KernelKind.COMPUTE)"))
    site = module.op.extern_plan.sites[0]
    assert site.kernel_kinds == frozenset({"compute"})
    assert site.variants[None].opaque == (0,)  # effects=None: an opaque dependency


def test_the_operation_module_must_name_ttl(tmp_path):
    text = PROGRAM.replace(
        "from tilewright import ttl, ttnn",
        "import tilewright.ttl as tt\nfrom tilewright import ttnn",
    )
    text = text.replace("ttl.", "tt.").replace(
        "{decl}", COPY_N.replace("ttl.", "tt.").format(extra="")
    )
    with pytest.raises(RawCppError) as info:
        load_text(tmp_path, text.replace("{call}", "ext(d, e, 1.0, 4)"))
    assert "the operation's module must name the TT-Lang module 'ttl'" in info.value.message
    assert info.value.loc is not None and info.value.loc.line == CALL_LINE + 1


def test_one_dfb_for_two_dfb_parameters_is_two_occurrences(tmp_path):
    decl = COPY_N.format(
        extra=", effects=lambda s, d, f, c: [ttl.DFBEffect.wait(s, tiles=1), ttl.DFBEffect.pop(s, tiles=1), "
        "ttl.DFBEffect.reserve(d, tiles=1), ttl.DFBEffect.push(d, tiles=1)]"
    )
    module, _ = load(tmp_path, decl, "ext(d, d, 1.0, 4)")
    variant = module.op.extern_plan.sites[0].variants[None]
    assert [o.dfb for o in variant.occurrences] == ["d", "d"]
    assert [(e.kind, e.occurrence) for e in variant.effects] == [
        ("wait", 0),
        ("pop", 0),
        ("reserve", 1),
        ("push", 1),
    ]


def test_a_call_through_a_helper_function_is_not_validated(tmp_path, device):
    decls = (
        'ext = ttl.raw.cpp("inline int32_t one() { return 1; }", entry="one", signature=(), '
        "result=ttl.raw.i32)\n\n\ndef helper():\n    return ext()"
    )
    with pytest.raises(RawCppError) as info:
        run_case(tmp_path, device, decls, "RESULTS.append(helper())")
    assert (
        "this call of ttl.raw.cpp function 'one' was not validated with its operation"
        in info.value.message
    )
    assert info.value.loc is not None and info.value.loc.line == 8


def test_a_template_descriptor_must_name_a_dfb_parameter(tmp_path):
    reject(
        tmp_path,
        COPY_N.format(extra=", template_args=[ttl.dfb_descriptor(2)]"),
        "template argument DFBDescriptorArg(dfb=2) must name a ttl.raw.DFB parameter by its position",
    )
