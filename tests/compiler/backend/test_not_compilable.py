"""What the compiled engine does not compile: one test per construct, message and line.

Each program runs its operation with ``--tw-engine=native``: the construct is a
``NotCompilableError`` naming it, at its line, raised when the operation is called
(before anything is built or run).  Under ``auto`` the same operation runs interpreted
with a one-line notice naming the line.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from tests.compiler.helpers import line_of, load, program, write
from tilewright.device import session
from tilewright.errors import InterfaceError, NotCompilableError

READER = """\
with a_dfb.reserve() as ab:
    ttl.copy(a[0, 0], ab).wait()
"""
COMPUTE = """\
with a_dfb.wait() as x, o_dfb.reserve() as y:
    y.store(x + x)
"""

TEMPLATE = """
{prelude}

@ttl.operation(grid=(1, 1), options="--tw-engine={engine}")
def op(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
{reader}

    @ttl.compute()
    def compute():
{compute}

    @ttl.datamovement()
    def writer():
        with o_dfb.wait() as ob:
            ttl.copy(ob, out[0, 0]).wait()
"""

CALL = """
x = torch.rand(32, 32).to(torch.bfloat16)
out = dev(torch.zeros(32, 32))
op(dev(x), out)
result = ttnn.to_torch(out)
expected = (x.float() + x.float()).to(torch.bfloat16)
"""


def source(
    *, reader: str = READER, compute: str = COMPUTE, prelude: str = "", engine: str = "native"
) -> str:
    body = TEMPLATE.format(
        prelude=textwrap.dedent(prelude),
        engine=engine,
        reader=textwrap.indent(textwrap.dedent(reader), " " * 8),
        compute=textwrap.indent(textwrap.dedent(compute), " " * 8),
    )
    return program(body, CALL)


CASES = {
    "list": (
        dict(reader="xs = [1, 2]  # <-\n" + READER),
        "a list in kernel code is not compilable",
    ),
    "dict": (dict(reader="d = {1: 2}  # <-\n" + READER), "a dict in kernel code is not compilable"),
    "comprehension": (
        dict(reader="xs = [i for i in range(3)]  # <-\n" + READER),
        "a list comprehension in kernel code is not compilable",
    ),
    "generator": (
        dict(reader="n = max(i for i in range(3))  # <-\n" + READER),
        "a generator expression in kernel code is not compilable",
    ),
    "lambda": (
        dict(reader="f = lambda: 1  # <-\n" + READER),
        "a lambda in kernel code is not compilable",
    ),
    "f-string": (
        dict(reader='s = f"{1}"  # <-\n' + READER),
        "an f-string in kernel code is not compilable",
    ),
    "python call": (
        dict(prelude="from os.path import join\n", reader="n = join('a')  # <-\n" + READER),
        "a call into the Python function 'join'",
    ),
    "python object": (
        dict(prelude='CONFIG = {"n": 2}\n', reader='n = CONFIG["n"]  # <-\n' + READER),
        "'CONFIG' is a Python dict object",
    ),
    "recursion": (
        dict(reader="def rec(n):\n    rec(n)  # <-\nrec(1)\n" + READER),
        "recursive call of 'rec'",
    ),
    "try": (
        dict(reader="try:  # <-\n    pass\nexcept Exception:\n    pass\n" + READER),
        "'try' statements are not compilable",
    ),
    "raise": (
        dict(
            reader="for i in range(2):\n    if i > 5:\n        raise ValueError('x')  # <-\n"
            + READER
        ),
        "'raise' statements are not compilable",
    ),
    "global": (dict(reader="global G  # <-\n" + READER), "'global' statements are not compilable"),
    "import": (
        dict(reader="import math  # <-\n" + READER),
        "'import' statements are not compilable",
    ),
    "class": (
        dict(reader="class C:  # <-\n    pass\n" + READER),
        "'class' statements are not compilable",
    ),
    "print of a tensor": (
        dict(reader="print(a)  # <-\n" + READER),
        "print of a tensor (its contents print only interpreted)",
    ),
    "unpacking": (
        dict(reader="args = (1, 2)\nttl.copy(*args)  # <-\n" + READER),
        "a call with * / ** unpacking",
    ),
    "dynamic shape": (
        dict(
            reader="""\
for n in range(1, 2):
    with a_dfb.reserve() as ab:
        ttl.copy(a[0:n, 0:1], ab).wait()  # <-
"""
        ),
        "a tensor slice whose extent is not known at compile time",
    ),
    "path-dependent state": (
        dict(
            compute="""\
for i in range(1):
    with a_dfb.wait() as x, o_dfb.reserve() as y:  # <-
        if i == 0:
            y.store(x + x)
"""
        ),
        "the state of block 'y' (reserved from DFB 'o_dfb') depends on the path taken",
    ),
    "chained block comparison": (
        dict(
            compute="with a_dfb.wait() as x, o_dfb.reserve() as y:\n    y.store(0.0 < x < 1.0)  # <-\n"
        ),
        "a chained comparison of blocks",
    ),
    "uncompiled math": (
        dict(
            compute="with a_dfb.wait() as x, o_dfb.reserve() as y:\n    y.store(ttl.block.squeeze(ttl.block.unsqueeze(x, dims=[0]), dims=[0]))  # <-\n"
        ),
        "'unsqueeze' on blocks of rank other than 2",
    ),
    "nonlocal": (
        dict(reader="def f():\n    nonlocal ab  # <-\nf()\n" + READER),
        "'nonlocal' statements are not compilable",
    ),
    "early return": (
        dict(reader=READER + "x, _ = ttl.node(dims=2)\nif x == 0:\n    return  # <-\n" + READER),
        "'return' other than at the end of a kernel function",
    ),
    "del": (dict(reader="n = 1\ndel n  # <-\n" + READER), "'del' statements are not compilable"),
    "assert": (
        dict(reader="assert True  # <-\n" + READER),
        "'assert' statements are not compilable",
    ),
    "wait_any": (
        dict(reader="r = ttl.wait_any(())  # <-\n" + READER),
        "ttl.wait_any: the request it completes is known only at run time",
    ),
    "typecast": (
        dict(
            compute="with a_dfb.wait() as x, o_dfb.reserve() as y:\n    y.store(ttl.math.typecast(x + x, 'bfp8_b'))  # <-\n"
        ),
        "ttl.math.typecast to bfloat8_b: a block-float target quantises as a store would",
    ),
    "group transfer": (
        dict(reader="g = ttl.GroupTransfer()  # <-\n" + READER),
        "ttl.GroupTransfer (a group wait of transfers): tt-lang's compiler does not build it",
    ),
    "raw element access": (
        dict(
            reader="""\
with a_dfb.reserve() as ab:
    ttl.copy(a[0, 0], ab).wait()
    v = ttl.raw_element_read(ab, 0, 0)  # <-
"""
        ),
        "ttl.raw_element_read",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_not_compilable_construct(tmp_path, case):
    parts, message = CASES[case]
    path = write(tmp_path, source(**parts))
    with pytest.raises(NotCompilableError) as info:
        load(path)
    err = info.value
    assert message in err.message, err.message
    assert err.loc is not None and err.loc.file == str(path)
    assert err.loc.line == line_of(path), (err.loc, err.message)


def test_auto_interprets_with_a_one_line_notice(tmp_path, capsys):
    path = write(tmp_path, source(reader="xs = [1, 2]  # <-\n" + READER, engine="auto"))
    ns = load(path)
    assert torch.equal(ns["result"], ns["expected"])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "runs interpreted" in ln]
    assert len(lines) == 1
    assert f"{path}:{line_of(path)}" in lines[0]
    assert "operation 'op' runs interpreted" in lines[0] and "a list" in lines[0]


def test_auto_compiles_what_compiles(tmp_path, capsys):
    from tilewright.compiler.backend import engine as backend

    seen = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: seen.append(r.name))
    try:
        ns = load(write(tmp_path, source(engine="auto")))
    finally:
        backend.COMPILE_OBSERVERS.pop()
    assert seen == ["op"]
    assert torch.equal(ns["result"], ns["expected"])
    assert "runs interpreted" not in capsys.readouterr().err


def test_python_interprets_everything(tmp_path, capsys):
    from tilewright.compiler.backend import engine as backend

    seen = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: seen.append(r.name))
    try:
        ns = load(write(tmp_path, source(reader="xs = [1, 2]\n" + READER, engine="python")))
    finally:
        backend.COMPILE_OBSERVERS.pop()
    assert seen == []
    assert torch.equal(ns["result"], ns["expected"])
    assert "runs interpreted" not in capsys.readouterr().err


def test_the_session_engine_applies_without_an_operation_flag(tmp_path):
    text = source(reader="xs = [1, 2]  # <-\n" + READER).replace(
        ', options="--tw-engine=native"', ""
    )
    path = write(tmp_path, text)
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = "native"
    try:
        with pytest.raises(NotCompilableError):
            load(path)
    finally:
        session.OPTIONS.engine = saved


def test_an_unknown_engine_is_an_interface_error(tmp_path):
    path = write(tmp_path, source(engine="fast"))
    with pytest.raises(InterfaceError) as info:
        load(path)
    assert "--tw-engine takes one of auto, python, native, got 'fast'" in info.value.message
