"""Python helpers in kernel code (``lower/helpers.py``): functions and generators inlined.

Helpers defined in the operation body or at module level -- functions returning tile
coordinates, generators yielding them -- compile: each program runs interpreted and
compiled (``--engine native``, checked to have compiled) and gives the same bits, and the
rows Python's semantics give.  What the inlining cannot keep equal to Python is a
``NotCompilableError`` naming the construct at its line.  ``examples/demo.py`` (a loop
over the body's generator ``my_blocks()``) runs compiled, bit for bit the interpreter's.
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import textwrap

import pytest
import torch

from tests.compiler.helpers import line_of, load, program, write
from tilewright.cli.runner import run_program
from tilewright.device import session
from tilewright.errors import NotCompilableError

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples"

# The reader copies four one-tile-high rows of `a` in the order its code computes; the
# writer stores them as rows 0..3 of `out` (through a generator too).
TEMPLATE = """
{prelude}

@ttl.operation(grid=(1, 1))
def op(a, out):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
{body}

    @ttl.datamovement()
    def reader():
{reader}

    @ttl.datamovement()
    def writer():
        for i in in_order(4):
            with d.wait() as blk:
                ttl.copy(blk, out[i : i + 1, 0:2]).wait()
"""

IN_ORDER = """
def in_order(n):
    for i in range(n):
        yield i
"""

CALL = """
torch.manual_seed(0)
x = torch.rand(128, 64).to(torch.bfloat16)
out = dev(torch.zeros(128, 64))
op(dev(x), out)
result = ttnn.to_torch(out)
source = x
"""

COPY = "with d.reserve() as blk:\n    ttl.copy(a[r : r + 1, 0:c], blk).wait()"


def _source(reader: str, body: str = "", prelude: str = "") -> str:
    text = TEMPLATE.format(
        prelude=textwrap.dedent(IN_ORDER) + textwrap.dedent(prelude),
        body=textwrap.indent(textwrap.dedent(body), " " * 4),
        reader=textwrap.indent(textwrap.dedent(reader).strip("\n"), " " * 8),
    )
    return program(text, CALL)


GOOD = {
    # a function of the operation body returning a tuple, and one of the module
    "helper_functions": (
        dict(
            prelude="def flip(n):\n    return 3 - n\n",
            body="def tile_of(i):\n    row = flip(i)\n    return row, 2\n",
            reader=f"for i in range(4):\n    r, c = tile_of(i)\n{textwrap.indent(COPY, '    ')}",
        ),
        [3, 2, 1, 0],
    ),
    # the demo's shape: a generator of the body over node coordinates and nested loops
    "body_generator": (
        dict(
            body="""\
def blocks():
    x, y = ttl.node(dims=2)
    cols, rows = ttl.grid_size(dims=2)
    for i in range(2 // rows):
        for j in range(2 // cols):
            yield (y * 2 + i) * 2 + j, 2
""",
            reader=f"for r, c in blocks():\n{textwrap.indent(COPY, '    ')}",
        ),
        [0, 1, 2, 3],
    ),
    # parameters, straight-line yields and a loop, a branch in the generator
    "generator_with_parameters": (
        dict(
            prelude="""\
def rows(first, n):
    yield first
    for k in range(n):
        if k % 2 == 0:
            yield first + k + 1
        else:
            yield first + k - 1
""",
            reader=f"c = 2\nfor r in rows(0, 3):\n{textwrap.indent(COPY, '    ')}",
        ),
        [0, 1, 0, 3],
    ),
    # an argument is evaluated once, at the call: the loop body changing the local it
    # read does not change the generator's parameter
    "generator_arguments_are_values": (
        dict(
            prelude="def same(n):\n    for k in range(4):\n        yield n\n",
            reader=f"c = 2\nx = 3\nfor r in same(x):\n{textwrap.indent(COPY, '    ')}\n    x = x - 1",
        ),
        [3, 3, 3, 3],
    ),
    # a generator defined in the kernel reads the kernel's names (late, as Python does)
    "kernel_generator": (
        dict(
            reader=f"""\
c = 2
base = 3
def down(n):
    for k in range(n):
        yield base - k
for r in down(4):
{textwrap.indent(COPY, "    ")}
""",
        ),
        [3, 2, 1, 0],
    ),
    # loops over generators nested in each other, and the targets after the loop
    "nested_generators": (
        dict(
            body="""\
def pairs():
    for h in in_order(2):
        yield h, 2
""",
            reader=f"""\
for g, c in pairs():
    for k in in_order(2):
        r = 2 * k + g
{textwrap.indent(COPY, "        ")}
""",
        ),
        [0, 2, 1, 3],
    ),
}


def _run(path: pathlib.Path, engine: str) -> tuple[dict, list[str]]:
    from tilewright.compiler.backend import engine as backend

    compiled: list[str] = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: compiled.append(r.name))
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = engine
    try:
        return load(path), compiled
    finally:
        session.OPTIONS.engine = saved
        backend.COMPILE_OBSERVERS.pop()


@pytest.mark.parametrize("case", sorted(GOOD))
def test_helpers_compile_and_match_the_interpreter(tmp_path, case):
    parts, rows = GOOD[case]
    path = write(tmp_path, _source(**parts))
    interpreted, none = _run(path, "python")
    native, compiled = _run(path, "native")
    assert none == [] and compiled == ["op"]
    want = torch.cat([interpreted["source"][32 * r : 32 * (r + 1)] for r in rows])
    assert torch.equal(interpreted["result"], want)
    assert torch.equal(native["source"], interpreted["source"])
    assert torch.equal(native["result"], interpreted["result"])


BAD = {
    "return in generator": (
        dict(prelude="def g():\n    yield 0\n    return  # <-\n", reader="for r in g():\n    pass"),
        "'return' in the generator 'g'",
    ),
    "recursive generator": (
        dict(
            prelude="def g(n):\n    for r in g(n):  # <-\n        yield r\n",
            reader="for r in g(0):\n    pass",
        ),
        "recursive use of the generator 'g'",
    ),
    "recursive function": (
        dict(prelude="def f(n):\n    return f(n)  # <-\n", reader="n = f(0)"),
        "recursive call of 'f'",
    ),
    "yield inside try": (
        dict(
            prelude="def g():\n    try:\n        yield 0  # <-\n    finally:\n        pass\n",
            reader="for r in g():\n    pass",
        ),
        "'yield' inside 'try' in the generator 'g'",
    ),
    "generator as a value": (
        dict(prelude="def g():\n    yield 0\n", reader="it = g()  # <-"),
        "the generator 'g' used other than as the iterable of a for loop",
    ),
    "yield from": (
        dict(prelude="def g():\n    yield from range(2)  # <-\n", reader="for r in g():\n    pass"),
        "'yield from' in the generator 'g'",
    ),
    "yield as a value": (
        dict(prelude="def g():\n    v = yield 0  # <-\n", reader="for r in g():\n    pass"),
        "'yield' used as a value in the generator 'g'",
    ),
    "break over a generator": (
        dict(reader="for r in in_order(2):\n    break  # <-"),
        "'break' in the body of a loop over the generator 'in_order'",
    ),
    "continue over a generator": (
        dict(reader="for r in in_order(2):\n    if r == 0:\n        continue  # <-"),
        "'continue' in the body of a loop over the generator 'in_order'",
    ),
    "return over a generator": (
        dict(reader="for r in in_order(2):\n    if r == 1:\n        return  # <-"),
        "'return' in the body of a loop over the generator 'in_order'",
    ),
    "early return in a helper": (
        dict(
            prelude="def f(n):\n    if n > 0:\n        return 1  # <-\n    return 0\n",
            reader="n = f(2)",
        ),
        "'return' other than as the last statement of 'f'",
    ),
    "function in a generator": (
        dict(
            prelude="def g():\n    def h():  # <-\n        pass\n    yield 0\n",
            reader="for r in g():\n    pass",
        ),
        "a function defined in the generator 'g'",
    ),
    "lambda helper": (
        dict(body="pick = lambda i: i\n", reader="n = pick(0)  # <-"),
        "a lambda called from kernel code",
    ),
    "library function": (
        dict(prelude="from os.path import join\n", reader="n = join('a')  # <-"),
        "a call into the Python function 'join'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_refused_helper_shapes(tmp_path, case):
    parts, message = BAD[case]
    reader = (
        parts["reader"]
        + "\n"
        + "for i in range(4):\n"
        + textwrap.indent("r = i\nc = 2\n" + COPY, "    ")
    )
    path = write(tmp_path, _source(**{**parts, "reader": reader}))
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = "native"
    try:
        with pytest.raises(NotCompilableError) as info:
            load(path)
    finally:
        session.OPTIONS.engine = saved
    err = info.value
    assert message in err.message, err.message
    assert err.loc is not None and err.loc.file == str(path)
    assert err.loc.line == line_of(path), (err.loc, err.message)


def test_a_refused_generator_runs_interpreted_under_auto(tmp_path, capsys):
    parts, _ = BAD["return in generator"]
    reader = (
        parts["reader"]
        + "\nfor i in range(4):\n"
        + textwrap.indent("r = i\nc = 2\n" + COPY, "    ")
    )
    path = write(tmp_path, _source(**{**parts, "reader": reader}))
    ns, compiled = _run(path, "auto")
    assert compiled == []
    assert torch.equal(ns["result"], ns["source"])
    err = capsys.readouterr().err
    assert f"{path.name}:{line_of(path)}" in err and "'return' in the generator 'g'" in err


def _run_demo(engine: str, monkeypatch) -> tuple[int, str, list[torch.Tensor], list[str]]:
    from tilewright import ttnn
    from tilewright.compiler.backend import engine as backend

    results: list[torch.Tensor] = []
    original = ttnn.to_torch

    def record(tensor, *args, **kwargs):
        value = original(tensor, *args, **kwargs)
        results.append(value.clone())
        return value

    monkeypatch.setattr(ttnn, "to_torch", record)
    compiled: list[str] = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: compiled.append(r.name))
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = engine
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = run_program(str(EXAMPLES / "demo.py"), [])
    finally:
        session.OPTIONS.engine = saved
        backend.COMPILE_OBSERVERS.pop()
        monkeypatch.setattr(ttnn, "to_torch", original)
    return status, out.getvalue() + err.getvalue(), results, compiled


def test_the_demo_runs_compiled_bit_for_bit(monkeypatch):
    status, text, interpreted, none = _run_demo("python", monkeypatch)
    assert status == 0, text
    status, text, native, compiled = _run_demo("native", monkeypatch)
    assert status == 0, text
    assert "PASS demo" in text
    assert none == [] and compiled == ["fused_relu_mul_add"]
    assert len(native) == len(interpreted) == 1
    assert torch.equal(native[0].view(torch.int16), interpreted[0].view(torch.int16))


MODULE_CONSTANT = """
FIRST = 0


def first_row():
    return FIRST


@ttl.operation(grid=(1, 1), options="--tw-engine=native")
def op(a, out):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)

    @ttl.datamovement()
    def reader():
        r = first_row()
        with d.reserve() as blk:
            ttl.copy(a[r : r + 1, 0:2], blk).wait()

    @ttl.datamovement()
    def writer():
        with d.wait() as blk:
            ttl.copy(blk, out[0:1, 0:2]).wait()
"""

TWICE = """
torch.manual_seed(0)
x = torch.rand(128, 64).to(torch.bfloat16)
results = []
for first in (0, 2):
    FIRST = first  # read only by the module-level helper, not by the kernel
    out = dev(torch.zeros(32, 64))
    op(dev(x), out)
    results.append(ttnn.to_torch(out))
source = x
"""


def test_a_module_constant_only_a_helper_reads_is_part_of_the_lowering_key(tmp_path):
    """The compiled kernel of the second call reads the helper's new constant (the lowering
    cache signs the free values of the helpers the kernels reach)."""
    ns = load(write(tmp_path, program(MODULE_CONSTANT, TWICE)))
    x = ns["source"]
    assert torch.equal(ns["results"][0], x[0:32])
    assert torch.equal(ns["results"][1], x[64:96])
