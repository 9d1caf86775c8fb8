"""Trace events of compiled code (``tilewright run --trace``): ``trace.clock``, ``trace.span``.

``trace.clock var`` keeps the kernel's modelled clock (``twrt_trace_clock()``);
``trace.span name, start, key, format, values`` records a span ``name`` from ``start`` to
the clock now, with argument ``key`` the ``snprintf`` of ``format`` (``long long`` values,
as ``failf``; ``key`` "": no argument; ``*``: the text is the JSON object of the
arguments, ``native.requests.span_args``).  They give the compiled kernel the events the
interpreter records (a ``copy`` from issue to its wait, a ``signpost`` zone): the same
names, arguments and modelled times.  Untraced, a span is one flag check in the runtime.
"""

from __future__ import annotations

from typing import Any

from tilewright.device.engine import current_run
from tilewright.kir.ir import Op, Var, seq
from tilewright.kir.opdef import OpDef, OpFn, Runner, Writer, operands
from tilewright.kir.ops.control import c_string, printf_text
from tilewright.native.requests import span_args

__all__ = ["ROWS"]


def _run_clock(op: Op, rt: Runner) -> OpFn:
    var = op.args[0]
    assert isinstance(var, Var)
    name = var.name

    def clock(env: Any) -> None:
        env.values[name] = current_run().clock

    return clock


def _run_span(op: Op, rt: Runner) -> OpFn:
    name, key = str(op.args[0]), str(op.args[2])
    start = op.args[1]
    assert isinstance(start, Var)
    text_of = printf_text(op, str(op.args[3]), op.args[4])

    def span(env: Any) -> None:
        run = current_run()
        tracer = run.engine.tracer if run.engine is not None else None
        if tracer is not None:
            args = span_args(key, text_of(env))
            tracer.span(run, name, int(env.values[start.name]), run.clock, args)

    return span


def _cpp_span(w: Writer, depth: int, op: Op) -> None:
    name, start, key, fmt, values = op.args
    args = "".join(f", static_cast<long long>({w.expr(v)})" for v in seq(values))
    # An empty format (a span without an argument: a signpost zone) is written "%s", "":
    # the same text, and no -Wformat-zero-length against the printf attribute.
    text = c_string(str(fmt)) if str(fmt) or args else '"%s", ""'
    w.line(
        depth,
        f"twrt_trace_span({c_string(str(name))}, {w.expr(start)}, {c_string(str(key))}, "
        f"{text}{args});",
    )


ROWS = (
    OpDef(
        "trace.clock",
        operands("var:var"),
        _run_clock,
        "{var} = twrt_trace_clock();",
        doc="keep the kernel's modelled clock (the start of a trace span)",
    ),
    OpDef(
        "trace.span",
        operands("name:str", "start:var", "key:str", "format:str", "values:ex*"),
        _run_span,
        _cpp_span,
        doc="a trace span from start to now, argument key = printf(format, values...)",
    ),
)
