"""``@ttl.raw.ir`` signatures: typed parameters read from annotations, errors at the def line."""

from __future__ import annotations

import inspect

import pytest

from tilewright import ttl
from tilewright.compiler.raw import RawIRError, RawIRFunction

raw = ttl.raw


def _def_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, t in enumerate(lines) if t.lstrip().startswith("def "))


def test_signature_is_read_from_the_annotations():
    @ttl.raw.ir
    def f(src: ttl.raw.DFB, t: ttl.raw.TensorAccessor, a: ttl.raw.RawAddr, x: ttl.raw.f32,
          n: ttl.raw.index, k: ttl.raw.i32, w: ttl.raw.i64, u: ttl.raw.u32) -> ttl.raw.i32:  # fmt: skip
        return 0

    assert isinstance(f, RawIRFunction)
    assert [(n, t.name) for n, t in f.params] == [
        ("src", "DFB"), ("t", "TensorAccessor"), ("a", "RawAddr"), ("x", "f32"),
        ("n", "index"), ("k", "i32"), ("w", "i64"), ("u", "u32"),
    ]  # fmt: skip
    assert f.result is ttl.raw.i32
    assert {m.kind for m in (raw.i32, raw.i64, raw.u32, raw.index)} == {"int"}
    assert (raw.f32.kind, raw.DFB.kind, raw.TensorAccessor.kind, raw.RawAddr.kind) == (
        "float", "dfb", "tensor", "addr",
    )  # fmt: skip


def _fn_missing(src: ttl.raw.DFB, n):  # no annotation on n
    pass


def _fn_unknown(src: ttl.raw.DFB, n: int):  # a Python type, not a ttl.raw marker
    pass


def _fn_result(src: ttl.raw.DFB) -> ttl.raw.DFB:  # not a scalar result
    pass


def _fn_default(n: ttl.raw.i32 = 3):
    pass


def _fn_varargs(*ns: ttl.raw.i32):
    pass


@pytest.mark.parametrize(
    "fn, message",
    [
        (_fn_missing, "parameter 'n' has no type annotation"),
        (_fn_unknown, "parameter 'n' is annotated <class 'int'>, not a ttl.raw type"),
        (_fn_result, "a raw function returns at most one scalar"),
        (_fn_default, "parameter 'n' has a default value"),
        (_fn_varargs, "parameter 'ns' is variadic positional"),
    ],
)
def test_bad_signatures_are_errors_at_the_def_line(fn, message):
    with pytest.raises(RawIRError) as info:
        ttl.raw.ir(fn)
    assert message in info.value.message
    assert info.value.loc.file == __file__
    assert info.value.loc.line == _def_line(fn)


def test_an_annotation_that_does_not_evaluate_is_an_error_at_the_def_line():
    ns: dict = {}
    src = "from __future__ import annotations\ndef g(n: ttl.raw.i33):\n    pass\n"
    exec(compile(src, __file__, "exec"), {"ttl": ttl}, ns)  # the annotation names nothing
    with pytest.raises(RawIRError) as info:
        ttl.raw.ir(ns["g"])
    assert "an annotation cannot be evaluated (AttributeError" in info.value.message


def test_calling_a_raw_function_directly_is_an_error_at_the_caller():
    @ttl.raw.ir
    def f(n: ttl.raw.i32):
        pass

    with pytest.raises(RawIRError) as info:
        f(3)
    line = inspect.currentframe().f_lineno - 1  # the f(3) line
    assert "call it from a kernel with ttl.raw.call(f, ...)" in info.value.message
    assert (info.value.loc.file, info.value.loc.line) == (__file__, line)


def test_a_builder_op_outside_a_trace_is_an_error_at_its_line():
    with pytest.raises(RawIRError) as info:
        raw.tile_regs_acquire()
    line = inspect.currentframe().f_lineno - 1
    assert "raw.tile_regs_acquire is a builder op: it is valid only inside a @ttl.raw.ir" in (
        info.value.message
    )
    assert (info.value.loc.file, info.value.loc.line) == (__file__, line)
