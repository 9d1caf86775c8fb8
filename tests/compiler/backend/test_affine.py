"""Index locals kept symbolic (``lower/affine.py``) never change an answer.

``Lowering.bind`` keeps an affine Scalar local as an expression, not a C++ local, when it
has one assignment site in its scope.  Each program here gives a local several sites (an
``if`` / ``else`` in a loop, an assignment before a loop and another inside it, augmented
assignment, a helper called from a loop) and copies the tensor row the local names:
the compiled kernel (``--engine native``, checked to have compiled) must read the rows the
interpreter reads, bit for bit, and both the rows Python's semantics give.  A tuple
bound to a name is the same question for each of its items (two cases here gave wrong
rows compiled before its items got locals of their own).  The shared
program ``tests/compiler/programs/affine_eltwise.py`` runs on both engines too.
"""

from __future__ import annotations

import pathlib

import pytest
import torch

from tests.compiler.helpers import load, program, write
from tilewright.cli.runner import run_program
from tilewright.device import session

PROGRAMS = pathlib.Path(__file__).resolve().parents[1] / "programs"

# Each kernel reads four one-tile-high rows of `a` into `d` in the order it computes;
# the writer stores them as rows 0..3 of `out`.
TEMPLATE = """
@ttl.operation(grid=(1, 1))
def op(a, out):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)

    @ttl.datamovement()
    def reader():
        x, _ = ttl.node(dims=2)
{reader}

    @ttl.datamovement()
    def writer():
        for i in range(4):
            with d.wait() as blk:
                ttl.copy(blk, out[i : i + 1, 0:2]).wait()
"""

CALL = """
torch.manual_seed(0)
x = torch.rand(128, 64).to(torch.bfloat16)
out = dev(torch.zeros(128, 64))
op(dev(x), out)
result = ttnn.to_torch(out)
source = x
"""

COPY = "with d.reserve() as blk:\n    ttl.copy(a[r : r + 1, 0:2], blk).wait()"


def _indent(text: str, n: int) -> str:
    return "\n".join(" " * n + line if line else line for line in text.splitlines())


CASES = {
    # two sites in a loop: an if / else of two affine expressions of the loop variable
    "if_else_in_loop": (
        f"""
for i in range(4):
    if i % 2 == 0:
        r = i + 1
    else:
        r = i - 1
{_indent(COPY, 4)}
""",
        [1, 0, 3, 2],
    ),
    # the condition depends on the node only: the branch is decided per node
    "node_if_else_in_loop": (
        f"""
for i in range(4):
    if x == 0:
        r = 3 - i
    else:
        r = i
{_indent(COPY, 4)}
""",
        [3, 2, 1, 0],
    ),
    # an affine value before the loop, reassigned (after its read) inside it
    "before_and_in_loop": (
        f"""
r = x + 3
for i in range(4):
{_indent(COPY, 4)}
    r = i
""",
        [3, 0, 1, 2],
    ),
    # the same with the loop's first read before a conditional reassignment
    "before_and_if_in_loop": (
        f"""
r = x + 2
for i in range(4):
{_indent(COPY, 4)}
    if i == 0:
        r = x + 3
""",
        [2, 3, 3, 3],
    ),
    # augmented assignment carried across iterations
    "augmented_across_iterations": (
        f"""
r = x + 3
for i in range(4):
{_indent(COPY, 4)}
    r -= 1
""",
        [3, 2, 1, 0],
    ),
    # augmented assignment of a local set in the same iteration
    "augmented_in_iteration": (
        f"""
for i in range(4):
    r = 3 - 2 * i
    r += i
{_indent(COPY, 4)}
""",
        [3, 2, 1, 0],
    ),
    # augmented assignment in a nested loop of a local set in the outer one
    "augmented_nested": (
        f"""
for i in range(2):
    r = 2 * i
    for j in range(2):
{_indent(COPY, 8)}
        r += 1
""",
        [0, 1, 2, 3],
    ),
    # a while loop carrying the local
    "while_carried": (
        f"""
r = x + 1
k = 0
while k < 4:
{_indent(COPY, 4)}
    r = 3 - r
    k += 1
""",
        [1, 2, 1, 2],
    ),
    # a tuple holds the values its items had when it was made
    "tuple_of_a_changing_local": (
        f"""
x = 3
p = (x, 0)
for i in range(4):
    r = p[0]
{_indent(COPY, 4)}
    x = x - 1
""",
        [3, 3, 3, 3],
    ),
    # a tuple carried across iterations: read before its reassignment
    "tuple_carried_across_iterations": (
        f"""
p = (0, 2)
for i in range(4):
    r = p[0]
{_indent(COPY, 4)}
    p = (i, 2)
""",
        [0, 0, 1, 2],
    ),
    # a helper defined in the kernel, called from a loop: its if / else are two sites of
    # the helper's scope, outside any loop of it
    "helper_if_else_called_in_loop": (
        f"""
def pick(i):
    if i % 2 == 0:
        r = i + 1
    else:
        r = i - 1
{_indent(COPY, 4)}

for i in range(4):
    pick(i)
""",
        [1, 0, 3, 2],
    ),
    # a helper carrying a local over its own loop
    "helper_carried_in_its_loop": (
        f"""
def rows(first):
    r = first
    for i in range(4):
{_indent(COPY, 8)}
        r = 3 - i

rows(x + 2)
""",
        [2, 3, 2, 1],
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


@pytest.mark.parametrize("case", sorted(CASES))
def test_locals_with_several_sites_read_the_rows_python_reads(tmp_path, case):
    reader, rows = CASES[case]
    source = TEMPLATE.format(reader=_indent(reader.strip("\n"), 8))
    path = write(tmp_path, program(source, CALL))
    interpreted, _ = _run(path, "python")
    native, compiled = _run(path, "native")
    assert compiled == ["op"]
    want = torch.cat([interpreted["source"][32 * r : 32 * (r + 1)] for r in rows])
    assert torch.equal(interpreted["result"], want)
    got = torch.cat([native["source"][32 * r : 32 * (r + 1)] for r in rows])
    assert torch.equal(native["result"], got)
    # both runs draw the same inputs (torch's default generator, same program order)
    assert torch.equal(native["source"], interpreted["source"])
    assert torch.equal(native["result"], interpreted["result"])


def _run_program(capsys, engine: str) -> tuple[str, list[str]]:
    from tilewright.compiler.backend import engine as backend

    compiled: list[str] = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: compiled.append(r.name))
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = engine
    try:
        status = run_program(str(PROGRAMS / "affine_eltwise.py"), [])
    finally:
        session.OPTIONS.engine = saved
        backend.COMPILE_OBSERVERS.pop()
    out, err = capsys.readouterr()
    assert status == 0, err
    return out.strip().splitlines()[-1], compiled


def test_affine_eltwise_program_on_both_engines(capsys):
    """The shared affine program: compiled under native, the interpreter's checksum."""
    interpreted, none = _run_program(capsys, "python")
    native, compiled = _run_program(capsys, "native")
    assert interpreted.startswith("DONE affine_eltwise ")
    assert none == [] and compiled == ["affine_fma"]
    assert native == interpreted
