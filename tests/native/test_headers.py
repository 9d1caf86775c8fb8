"""The C++ headers generated from the Python tables (tilewright/native/headers.py).

The runtime's messages are printf formats generated from the message table: rendered with
the same values they must give the text Python raises (here checked with Python's own
printf, the `%` operator, on every message); the error classes, the data formats and the
op codes are the Python tables' values.
"""

from __future__ import annotations

import re

import pytest

from tilewright.device.api_messages import ERROR_CLASSES, MESSAGES
from tilewright.device.formats.dataformat import DataFormat
from tilewright.device.ops.tile_ops import SFPU_OPS
from tilewright.native import headers

SAMPLE = {
    "int": (7, 7),
    "hex": (0x1A2B, 0x1A2B),
    "bool": (True, True),
    "str": ("noc_async_read", "noc_async_read"),
    "float": (-2.5, -2.5),
    "xy": ((3, 4), (3, 4)),
    "cb": ("in_dfb", 3),
    "format": (DataFormat.Float16_b, int(DataFormat.Float16_b)),
    "chip": ("chip 1", 2),
    "kernel": ("reader", None),
}
"""kind -> (Python value, C++ value) of a sample field."""


def _printf(fmt: str, args: list) -> str:
    """The C format of the generated header, applied by Python's printf."""
    text = fmt[1:-1].replace('" PRId64 "', "d").replace('" PRIx64 "', "x")
    text = text.replace('\\"', '"').replace("\\\\", "\\")
    return text % tuple(args)


def _c_value(kind: str, value):
    if kind == "bool":
        return "True" if value else "False"
    return value


@pytest.mark.parametrize("name", [n for n, m in MESSAGES.items()])
def test_the_cpp_format_renders_the_python_text(name):
    msg = MESSAGES[name]
    fmt, _args = headers._c_format(msg)  # noqa: SLF001 - the generator's own rendering
    py_values = {field: SAMPLE[kind][0] for field, kind in msg.fields}
    c_args = []
    for m in re.finditer(r"\{(\w+):(\w+)\}", msg.template):
        kind = m.group(2)
        c = SAMPLE[kind][1]
        c_args += list(c) if kind == "xy" else [] if kind == "kernel" else [_c_value(kind, c)]
    text = _printf(fmt, c_args)
    # the placeholders C++ leaves for the driver, named as Python names them
    text = text.replace("{cb:3}", "in_dfb").replace("{chip:2}", "chip 1")
    text = text.replace("{format:5}", "Float16_b (bfloat16)").replace("{kernel}", "'reader'")
    assert text == msg.text(**py_values)


def test_every_message_is_a_generated_fail_function_and_fragments_are_formatters():
    text = headers.messages_header()
    for name, msg in MESSAGES.items():
        kind = "void fail_" if msg.error is not None else "const char* fmt_"
        assert f"{kind}{name}(" in text, name


def test_error_classes_data_formats_and_op_codes_are_the_python_tables():
    errors = headers.errors_header()
    for c in ERROR_CLASSES:
        assert f"ERR_{c.name} = {c.code}," in errors
    formats = headers.dataformat_header()
    for f in DataFormat:
        assert f"    {f.name} = {f.value}," in formats
    ops = headers.sfpu_ops_header()
    for i, name in enumerate(SFPU_OPS):
        assert f"TW_SFPU_{name} = {i}," in ops


def test_a_field_that_cannot_be_a_cpp_parameter_is_refused():
    from tilewright.device.api_messages import ApiMessage
    from tilewright.errors import KernelError

    with pytest.raises(AssertionError, match="cannot be a C\\+\\+ parameter name"):
        headers._c_params(ApiMessage("bad", KernelError, "{enum:str}"))  # noqa: SLF001
