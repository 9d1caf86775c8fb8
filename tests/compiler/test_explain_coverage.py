"""``tilewright explain --coverage``: per operation, compiled or interpreted; per kernel,
whether it compiles or the first construct that stops it (file:line)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.compiler.helpers import line_of, program, write
from tests.e2e.conftest import EXAMPLES
from tilewright.cli.main import cli


@pytest.fixture(autouse=True)
def engine():
    """explain chooses its engine itself (overrides the compiler tests' parametrisation)."""
    yield None


def coverage(path, *flags: str) -> str:
    result = CliRunner().invoke(cli, ["explain", "--coverage", *flags, str(path)])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_demo_compiles_every_kernel():
    out = coverage(EXAMPLES / "demo.py")
    assert "PASS demo" in out
    assert "== tilewright explain --coverage: 1 of 1 operation(s) compiled, 3 of 3 kernel(s)" in out
    assert "operation fused_relu_mul_add at demo.py:25: compiled" in out
    for kernel in ("reader", "compute", "writer"):
        assert f"  kernel {kernel}: compiles" in out


TWO_OPS = """
@ttl.operation(grid=(1, 1))
def good(a, out):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        with d.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()

    @ttl.datamovement()
    def writer():
        with d.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


@ttl.operation(grid=(1, 1))
def bad(a, out):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        rows = [0]  # <-reader
        with d.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()

    @ttl.compute()
    def compute():
        with d.wait() as x, o.reserve() as y:
            y.store(x + x)

    @ttl.datamovement()
    def writer():
        with o.wait() as blk:
            print("writing", blk)  # <-writer
            ttl.copy(blk, out[0, 0]).wait()
"""

CALLS = """
x = dev(torch.ones(32, 32))
for _ in range(2):  # a second call of each: the same outcome, listed once
    good(x, dev(torch.zeros(32, 32)))
    bad(x, dev(torch.zeros(32, 32)))
"""


def test_each_refused_kernel_names_its_construct_and_line(tmp_path):
    path = write(tmp_path, program(TWO_OPS, CALLS))
    out = coverage(path)
    name = path.name
    assert "== tilewright explain --coverage: 1 of 2 operation(s) compiled, 3 of 5 kernel(s)" in out
    reader, writer = line_of(path, "# <-reader"), line_of(path, "# <-writer")
    good = out.index("operation good at")
    bad = out.index("operation bad at")
    assert good < bad
    assert out.count("operation good at") == 1 and out.count("operation bad at") == 1
    block = out[bad:]
    assert block.splitlines()[0].endswith(
        f": interpreted ({name}:{reader}: kernel 'reader': a list in kernel code is not compilable)"
    ), block
    assert (
        f"  kernel reader: not compilable: {name}:{reader}: kernel 'reader': a list in kernel "
        "code is not compilable"
    ) in block
    assert "  kernel compute: compiles" in block
    assert (
        f"  kernel writer: not compilable: {name}:{writer}: kernel 'writer': print of a block "
        "(its contents print only interpreted)"
    ) in block


def test_the_python_engine_lists_what_would_compile(tmp_path):
    path = write(tmp_path, program(TWO_OPS, CALLS))
    out = coverage(path, "--engine", "python")
    assert "== tilewright explain --coverage: 0 of 2 operation(s) compiled, 3 of 5 kernel(s)" in out
    assert "operation good at" in out and ": interpreted (--engine python)" in out
