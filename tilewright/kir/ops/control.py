"""Scalar code and structured control flow: ``set``, ``for``, ``while``, ``if``, ``break``,
``continue``, the run-time checks ``fail`` / ``failf``, and ``comment``.

``for`` evaluates its bounds once (stop, then start, converted to the loop variable's type)
and keeps the last value in the variable, as its C++ does (``{ const T end = stop; for (T
it = start; it < end; it += step) { var = it; ... } }``); ``fail`` / ``failf`` raise the
class the compiled kernel raises (``ttlang::ErrorClass``) with the same message -- ``{cb:N}``
names, ``snprintf`` of ``long long`` values into 512 bytes -- at the op's line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tilewright.device.api_messages import ERROR_CLASSES as API_ERROR_CLASSES
from tilewright.device.engine import current_run
from tilewright.device.noc import chips_with_tag
from tilewright.errors import (
    TilewrightError,
    untag_rule,
)
from tilewright.kir.interp_scalar import CONVERT, coerce, compile_expr, operand, unsupported
from tilewright.kir.ir import Const, Op, Var, seq
from tilewright.kir.opdef import (
    BREAK,
    CONTINUE,
    Checker,
    EffectWalker,
    OpDef,
    OpFn,
    Runner,
    Writer,
    operands,
)
from tilewright.kir.scalar import CPP_TYPE

__all__ = ["ROWS", "ERROR_CLASSES"]


# -- set ----------------------------------------------------------------------------------------


def _run_set(op: Op, rt: Runner) -> OpFn:
    var = op.args[0]
    assert isinstance(var, Var)
    name, value = var.name, operand(op, 1, var.ty.value)

    def set_(env: Any) -> None:
        env.values[name] = value(env)

    return set_


def _check_set(v: Checker, op: Op) -> None:
    var, value = op.args
    got = v.expr_type(value)
    if isinstance(var, Var) and got is not var.ty:
        raise v.fail(f"%{var.name} is {var.ty}, assigned a {got}")


# -- for ----------------------------------------------------------------------------------------

_INTEGERS = frozenset({"i64", "u32", "u64"})


def _run_for(op: Op, rt: Runner) -> OpFn:
    var, _, _, step = op.args
    assert isinstance(var, Var) and isinstance(step, int)
    ct = var.ty.value
    stop, start = operand(op, 2, ct), operand(op, 1, ct)
    body = rt.block(op.regions[0])
    name = var.name
    conv = CONVERT[ct]
    integral = ct in _INTEGERS

    def loop_c(env: Any, it: Any, end: Any) -> None:
        """The C++ loop literally (floats)."""
        values = env.values
        while (it < end) if step > 0 else (it > end):
            values[name] = it
            if body(env) == BREAK:
                return
            it = conv(it + step)

    def for_(env: Any) -> None:
        end = stop(env)
        it = start(env)
        if not integral:  # integers: Python's range below (``ttlang::loop_next`` never wraps)
            loop_c(env, it, end)
            return None
        values = env.values
        for i in range(it, end, step):
            values[name] = i
            if body(env) == BREAK:
                break
        return None

    return for_


def _cpp_for(w: Writer, depth: int, op: Op) -> None:
    var, start, stop, step = op.args
    assert isinstance(var, Var) and isinstance(step, int)
    ty = CPP_TYPE[var.ty]
    it, end = w.fresh("it"), w.fresh("end")
    cmp = "<" if step > 0 else ">"
    w.line(depth, "{", sync=False)
    w.line(depth + 1, f"const {ty} {end} = {w.expr(stop)};")
    nxt = f"{it} += {step}"
    if var.ty.is_int:  # an increment past the type's end stops the loop (Python's range)
        nxt = f"{it} = ttlang::loop_next<{ty}>({it}, {step}, {end})"
    w.line(depth + 1, f"for ({ty} {it} = {w.expr(start)}; {it} {cmp} {end}; {nxt}) {{")
    w.line(depth + 2, f"{var.name} = {it};")
    w.body(depth + 2, op.regions[0])
    w.line(depth + 1, "}", sync=False)
    w.line(depth, "}", sync=False)


def _check_for(v: Checker, op: Op) -> None:
    if op.args[3] == 0:
        raise v.fail("a for loop's step must not be 0")


def _effects_for(op: Op, w: EffectWalker) -> None:
    """A loop with static bounds repeats its body's actions; other bounds make them unknown
    (when the body acts at all)."""
    _var, start, stop, step = op.args
    if not (isinstance(start, Const) and isinstance(stop, Const) and isinstance(step, int)):
        if w.has_effects(op.regions[0]):
            raise w.unknown()
        return
    for _ in range(len(range(int(start.value), int(stop.value), step))):
        w.walk(op.regions[0])


def _text_for(op: Op, expr: Callable[[object], str]) -> str:
    var, start, stop, step = op.args
    return f"for {expr(var)} = {expr(start)}, {expr(stop)}, {step}"


# -- while / if ---------------------------------------------------------------------------------


def _run_while(op: Op, rt: Runner) -> OpFn:
    cond = operand(op, 0, "bool")
    body = rt.block(op.regions[0])

    def while_(env: Any) -> None:
        while cond(env):
            if body(env) == BREAK:
                break
        return None

    return while_


def _cpp_while(w: Writer, depth: int, op: Op) -> None:
    w.line(depth, f"while ({w.expr(op.args[0])}) {{")
    w.body(depth + 1, op.regions[0])
    w.line(depth, "}", sync=False)


def _run_if(op: Op, rt: Runner) -> OpFn:
    cond = operand(op, 0, "bool")
    then, other = rt.block(op.regions[0]), rt.block(op.regions[1])
    return lambda env: then(env) if cond(env) else other(env)


def _cpp_if(w: Writer, depth: int, op: Op) -> None:
    w.line(depth, f"if ({w.expr(op.args[0])}) {{")
    w.body(depth + 1, op.regions[0])
    if op.regions[1]:
        w.line(depth, "} else {", sync=False)
        w.body(depth + 1, op.regions[1])
    w.line(depth, "}", sync=False)


# -- fail / failf: the error the compiled kernel raises ---------------------------------------

ERROR_CLASSES: dict[str, type[TilewrightError]] = {
    c.exception.__name__: c.exception for c in API_ERROR_CLASSES if c.raisable
}
"""ttlang::ErrorClass (generated into ``twrt_errors.h`` from ``device/api_messages.py``'s
raisable classes) -> the class native/driver.py raises for it."""

_PRINTF = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?)(hh|h|ll|l|j|z|t)?([diouxXc%])|%")
# A long long argument read by a conversion without ll / l / j / z / t is its low 32 bits.
_PRINTF_VALUE = {
    "d": (True, "i32", "i64"),
    "i": (True, "i32", "i64"),
    "u": (True, "u32", "u64"),
    "o": (True, "u32", "u64"),
    "x": (True, "u32", "u64"),
    "X": (True, "u32", "u64"),
    "c": (True, "u32", "u32"),
}


def _names(text: str) -> str:
    """``{cb:N}`` and ``{chip:N}`` in a failure message, as the native driver names them."""
    if "{" not in text:
        return text
    run = current_run()
    cbs = getattr(run.core, "cbs", None) or []

    def cb_name(m: re.Match) -> str:
        i = int(m.group(1))
        cb = cbs[i] if 0 <= i < len(cbs) else None
        return cb.name if cb is not None else f"cb {i}"

    text = re.sub(r"\{cb:(\d+)\}", cb_name, text)
    num_chips = len(run.core.device.system_desc.chip_desc_indices)
    return re.sub(r"\{chip:(\d+)\}", lambda m: chips_with_tag(int(m.group(1)), num_chips), text)


def _error_class(op: Op) -> type[TilewrightError]:
    cls = ERROR_CLASSES.get(str(op.args[0]))
    if cls is None:
        raise unsupported(
            f"error class {op.args[0]!r} (ttlang/support.h has {', '.join(ERROR_CLASSES)})",
            "raw-ir-error-class",
            op,
        )
    return cls


def _run_fail(op: Op, rt: Runner) -> OpFn:
    cls, message, loc = _error_class(op), str(op.args[1]), op.loc

    def fail(env: Any) -> None:
        raise cls(_names(message), loc=loc)

    return fail


def _run_failf(op: Op, rt: Runner) -> OpFn:
    """``snprintf`` of the format into 512 bytes, each value a ``long long``."""
    cls, loc = _error_class(op), op.loc
    text_of = printf_text(op, str(op.args[1]), op.args[2])

    def failf(env: Any) -> None:
        raise cls(_names(text_of(env)), loc=loc)

    return failf


def printf_text(op: Op, fmt: str, value_exprs: object) -> Callable[[Any], str]:
    """The C++ ``snprintf`` of ``fmt`` into 512 bytes with each value a ``long long``
    (``failf``, ``trace.span``): a function of the interpreter's environment."""
    values = [coerce(*compile_expr(v, op), "i64") for v in seq(value_exprs)]
    convs: list[Callable[[Any], Any]] = []

    def spec(m: re.Match) -> str:
        if m.group(0) == "%" or m.group(3) is None:
            raise unsupported(
                f"failf format {fmt!r}: only integer conversions (%lld, %llu, %llx, ...) "
                "print its long long values",
                "raw-ir-failf-format",
                op,
            )
        if m.group(3) == "%":
            return "%%"
        _, short, long = _PRINTF_VALUE[m.group(3)]
        convs.append(CONVERT[long if m.group(2) in ("ll", "l", "j", "z", "t") else short])
        return f"%{m.group(1)}{m.group(3)}"

    pyfmt = _PRINTF.sub(spec, fmt)
    if len(convs) != len(values):
        raise unsupported(
            f"failf format {fmt!r} with {len(values)} value(s): it converts {len(convs)}",
            "raw-ir-failf-format",
            op,
        )

    def text(env: Any) -> str:
        out = pyfmt % tuple(c(v(env)) for c, v in zip(convs, values))
        return out.encode()[:511].decode("utf-8", "replace")

    return text


def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _fail_macro(stem: str, cls: object, message: object) -> str:
    """``STEM(cls, "message"`` -- or ``STEM_RULE(cls, "rule", "message"`` for a TT-Lang
    rule's message: its ``errors.tag_rule`` tag travels as an argument and the ``_RULE``
    macros put it back in front, so the native driver's error carries the rule id."""
    rule, text = untag_rule(str(message))
    if rule is None:
        return f"{stem}({cls}, {c_string(text)}"
    return f"{stem}_RULE({cls}, {c_string(rule)}, {c_string(text)}"


def _cpp_fail(w: Writer, depth: int, op: Op) -> None:
    cls, message = op.args
    w.line(depth, f"{_fail_macro('TTLANG_FAIL', cls, message)});")


def _cpp_failf(w: Writer, depth: int, op: Op) -> None:
    cls, fmt, values = op.args
    args = "".join(f", static_cast<long long>({w.expr(v)})" for v in seq(values))
    w.line(depth, f"{_fail_macro('TTLANG_FAILF', cls, fmt)}{args});")


def _jump(status: int) -> Callable[[Op, Runner], OpFn]:
    return lambda op, rt: lambda env: status


def _cpp_comment(w: Writer, depth: int, op: Op) -> None:
    w.line(depth, f"// {op.args[0]}")


ROWS = (
    OpDef(
        "set", operands("var:var", "value:e"), _run_set, "{var} = {value};",
        check=_check_set, doc="assign a local",
    ),
    OpDef(
        "for", operands("var:var", "start:e:int", "stop:e:int", "step:int"), _run_for, _cpp_for,
        regions=("loop",), check=_check_for, effects=_effects_for, text=_text_for,
        doc="for var in range(start, stop, step): the bounds are evaluated once",
    ),
    OpDef(
        "while", operands("cond:e:bool"), _run_while, _cpp_while, regions=("loop",),
        doc="while cond",
    ),
    OpDef(
        "if", operands("cond:e:bool"), _run_if, _cpp_if, regions=("branch", "branch"),
        doc="if cond: regions[0] else: regions[1]",
    ),
    OpDef("break", (), _jump(BREAK), "break;", jump=True),
    OpDef("continue", (), _jump(CONTINUE), "continue;", jump=True),
    OpDef(
        "fail", operands("error:str", "message:str"), _run_fail, _cpp_fail,
        doc="raise the interpreter's error (type, message) at this line when reached",
    ),
    OpDef(
        "failf", operands("error:str", "format:str", "values:ex*"), _run_failf, _cpp_failf,
        doc="raise the interpreter's error with run-time numbers (printf %lld) when reached",
    ),
    OpDef(
        "comment", operands("text:str"), lambda op, rt: None, _cpp_comment,
        doc="a comment in the C++",
    ),
)  # fmt: skip
