"""``print`` in compiled kernels: a DPRINT with the interpreter's text (lower/prints.py).

Each program runs its operation compiled (``--tw-engine=native``) and interpreted
(``python``): the standard output must be the same, line for line and in order.  What
compiled code cannot print the same is a NotCompilableError naming it at its line.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.compiler.backend.strict_build import strict_build
from tests.compiler.helpers import line_of, load, program, write
from tilewright.compiler.backend import engine as backend
from tilewright.compiler.backend.emit import emit_kernel
from tilewright.errors import NotCompilableError
from tilewright.native.kernels import kernel_source

TEMPLATE = """
N = 3

@ttl.operation(grid={grid}, options="--tw-engine={engine}")
def op(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
{reader}
        for i in range(N):
            with a_dfb.reserve() as ab:
                ttl.copy(a[0, 0], ab).wait()

    @ttl.compute()
    def compute():
{compute}
        for i in range(N):
            with a_dfb.wait() as x, o_dfb.reserve() as y:
                y.store(x + x)

    @ttl.datamovement()
    def writer():
{writer}
        for i in range(N):
            with o_dfb.wait() as ob:
                ttl.copy(ob, out[0, 0]).wait()
"""

CALL = """
x = torch.rand(32, 32).to(torch.bfloat16)
out = dev(torch.zeros(32, 32))
print("host before")
op(dev(x), out)
print("host after")
"""


def _source(engine: str, grid=(1, 1), reader="pass", compute="pass", writer="pass") -> str:
    def ind(text: str) -> str:
        return textwrap.indent(textwrap.dedent(text), " " * 8)

    body = TEMPLATE.format(
        grid=grid, engine=engine, reader=ind(reader), compute=ind(compute), writer=ind(writer)
    )
    return program(body, CALL)


def _stdout(tmp_path, capsys, engine: str, **parts) -> str:
    capsys.readouterr()
    load(write(tmp_path, _source(engine, **parts)))
    return capsys.readouterr().out


def _same(tmp_path, capsys, **parts) -> str:
    seen: list = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: seen.append(c))
    try:
        compiled = _stdout(tmp_path, capsys, "native", **parts)
    finally:
        backend.COMPILE_OBSERVERS.pop()
    assert seen, "the operation did not compile"
    interpreted = _stdout(tmp_path, capsys, "python", **parts)
    assert compiled == interpreted
    return compiled


def test_literals_ints_and_labels_in_each_kernel_kind(tmp_path, capsys):
    out = _same(
        tmp_path,
        capsys,
        reader='print("reader", 1, -2, True, 2.5, None, "50%", sep=", ")',
        compute='print("compute", N, label="L")\nprint()',
        writer='for j in range(7, 8):\n    print("writer", j * 3, label="w", thread=None)',
    )
    assert "reader, 1, -2, True, 2.5, None, 50%\n" in out
    assert "compute] L: compute 3\n" in out and "writer] w: writer 21\n" in out
    assert out.startswith("host before\n") and out.endswith("host after\n")


def test_loop_variables_and_node_coordinates_on_a_grid(tmp_path, capsys):
    out = _same(
        tmp_path,
        capsys,
        grid=(2, 1),
        reader='for j in range(2):\n    print(f"j={j} node={ttl.node(dims=2)} n={ttl.node(dims=1)}")',
        compute='for j in range(3):\n    print("c", j, j < 1, f"{j:d}|{N!r}|{N:>4}|{\'s\'!r}|{j == 2}")',
        writer='x, y = ttl.node(dims=2)\nprint("w", x, y, (x,), (x, y), sep="")',
    )
    assert "j=1 node=(1, 0) n=1" in out
    assert "c 2 False 2|3|   3|'s'|True" in out and "c 0 True 0|3|   3|'s'|False" in out


def test_prints_between_dfb_handshakes_keep_the_interpreters_order(tmp_path, capsys):
    out = _same(
        tmp_path,
        capsys,
        grid=(2, 1),
        reader="""\
for j in range(2):
    print("r wants", j)
    with a_dfb.reserve() as ab:
        ttl.copy(a[0, 0], ab).wait()
        print("r sent", j)
""",
        compute="""\
for j in range(2):
    with a_dfb.wait() as x, o_dfb.reserve() as y:
        print("c got", j)
        y.store(x + x)
    print("c done", j)
""",
        writer="""\
for j in range(2):
    with o_dfb.wait() as ob:
        ttl.copy(ob, out[0, 0]).wait()
    print("w wrote", j, "on", ttl.node(dims=1))
""",
    )
    assert out.count("w wrote 1") == 2


def test_run_time_floats_print_as_python_repr(tmp_path, capsys):
    out = _same(
        tmp_path,
        capsys,
        grid=(2, 1),
        reader="""\
n = ttl.node(dims=1)
for j in range(4):
    x = (j + n) * 0.1
    print(abs(-x), max(x, 0.25), x, x / 3, -x, x * 1e16, x * 1e-5, float(j * 1000000), f"{x}|{x!r}", (x, 2.0))
""",
    )
    third = (
        "[node (1, 0) reader] 0.30000000000000004 0.30000000000000004 0.30000000000000004 "
        "0.10000000000000002 -0.30000000000000004 3000000000000000.5 3.0000000000000005e-06 "
    )
    assert third in out, out
    assert "[node (0, 0) reader] 0.0 0.25 0.0 0.0 -0.0 0.0 0.0 0.0 0.0|0.0 (0.0, 2.0)\n" in out


def test_compute_thread_prints_once_as_the_interpreter(tmp_path, capsys):
    out = _same(tmp_path, capsys, compute='print("math only", thread="math")')
    assert out.count("math only") == 1


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        (dict(compute="with a_dfb.wait() as x:\n    print(x)  # <-\n"), "print of a block"),
        (dict(reader="print(a_dfb)  # <-"), "print of a DFB"),
        (dict(reader="print(a, num_pages=1)  # <-"), "print(num_pages=...)"),
        (
            dict(reader='for j in range(2):\n    print(f"{j * 0.5:.2f}")  # <-'),
            "print of a run-time float with format spec '.2f'",
        ),
        (
            dict(reader='for j in range(2):\n    print(f"{j > 1:>5}")  # <-'),
            "print of a run-time bool with format spec '>5'",
        ),
        (
            dict(reader='for j in range(2):\n    print(f"{j:x}")  # <-'),
            "run-time integer with format spec 'x'",
        ),
        (dict(reader='print("a", end="")  # <-'), "print(end=...) other than a newline"),
        (
            dict(reader="for j in range(2):\n    print(max(j, 0.5) * 2)  # <-"),
            "print of a float computed with min() / max() of an int and a float",
        ),
        (dict(reader='print("a", thread="math")  # <-'), "print(thread='math') in a data"),
        (dict(reader='print("' + "x" * 600 + '")  # <-'), "one DPRINT statement holds 510"),
    ],
)
def test_what_does_not_print_compiled(tmp_path, parts, message):
    path = write(tmp_path, _source("native", **parts))
    with pytest.raises(NotCompilableError) as info:
        load(path)
    err = info.value
    assert message in err.message, err.message
    assert err.loc is not None and err.loc.file == str(path)
    assert err.loc.line == line_of(path), (err.loc, err.message)


def test_emitted_print_is_a_dprint_that_builds_with_strict_warnings(tmp_path, capsys):
    kernels: list = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: kernels.extend(c.kernels))
    try:
        _stdout(
            tmp_path,
            capsys,
            "native",
            grid=(2, 1),
            reader='print(f"r {ttl.node(dims=1)}%", ttl.node(dims=1), label="a")',
            compute='print("c", N)',
            writer='print("w", ttl.node(dims=1) * 0.5, ttl.node(dims=1) == 1)',
        )
    finally:
        backend.COMPILE_OBSERVERS.pop()
    texts = [emit_kernel(k) for k in kernels]
    assert all('#include "api/debug/dprint.h"' in t for t in texts if "DPRINT" in t)
    lines = [ln.strip() for t in texts for ln in t.splitlines() if "DPRINT" in ln]
    assert 'DPRINT << TTLANG_PRINT() << "c 3" << ENDL();' in lines, lines
    assert any('== 1)) ? "True" : "False") << ENDL();' in ln for ln in lines), lines
    assert any("<< ttlang::PyFloat(static_cast<double>(" in ln for ln in lines), lines
    (line,) = [ln for ln in lines if '"a: r "' in ln]
    assert line.startswith('DPRINT << TTLANG_PRINT() << "a: r " << static_cast<long long>(')
    assert '<< "% " << static_cast<long long>(' in line and line.endswith("<< ENDL();")
    for i, k in enumerate(kernels):
        path = tmp_path / f"k{i}.cpp"
        path.write_text(kernel_source(None, k.kind, k.compile_args, text=emit_kernel(k)))
        r = strict_build(path, k.include_paths)
        assert r.returncode == 0, r.stderr
