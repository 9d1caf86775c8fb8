"""External calls on every engine: the same checks, diagnostics and bits.

The interpreter checks each call's declared DFB contract (C.6) as the C++ runs; the
compiled engine runs the same checks (``lang.extern.checks``) from the announcements its
emitted C++ makes around the call.  Each bad program of :data:`CASES` runs under
``--engine python``, ``native`` and ``auto``: the error -- type, message, rule, file and
line -- is the interpreter's on all three, and ``auto`` compiled the operation (it no
longer falls back to the interpreter for external calls).  A correct program gives the
same bits on both engines, and ``tilewright explain --coverage`` reports the external-call
example compiled.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from tests.compiler.helpers import line_of, load, write
from tests.e2e.conftest import EXAMPLES
from tilewright.cli.main import cli
from tilewright.compiler.backend import engine as backend
from tilewright.device import session
from tilewright.errors import (
    DFBContractError,
    ExternCallError,
    KernelError,
    NativeBuildError,
    NativeCrashError,
    TilewrightError,
)

CPP = Path(__file__).resolve().parent / "cpp"

PRELUDE = f"CPP = {str(CPP)!r}\nRESULTS = []\n"

RUN = """
device = ttnn.open_device(device_id=0)
try:
    x = ttnn.from_torch(torch.zeros({rows}, {cols}), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    op(x)
finally:
    ttnn.close_device(device)
"""

FILLER = """
@ttl.operation(grid=(1, 1))
def op(a):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)

    @ttl.datamovement()
    def producer():
        ttl.call_extern_func(  # <-
            "contract.hpp",
            "{fn}",
            template_args=[ttl.dfb_descriptor(d)],
            dfb_effects=[{effects}],
            include_paths=[CPP],
        )

    @ttl.datamovement()
    def consumer():
        for _ in range({blocks}):
            with d.wait() as blk:
                ttl.copy(blk, a[0:1, 0:2]).wait()
"""

INSPECTOR = """
@ttl.operation(grid=(1, 1))
def op(a):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)

    @ttl.datamovement()
    def producer():
        with d.reserve() as blk:
            ttl.copy(a[0:1, 0:2], blk).wait()

    @ttl.datamovement()
    def consumer():
        with d.wait() as blk:
            first = ttl.call_extern_func(  # <-
                "contract.hpp",
                "peek_and_pop",
                template_args=[ttl.dfb_descriptor(d)],
                func_args=[0],
                dfb_accesses=[ttl.DFBAccess.inspect(d)],
                include_paths=[CPP],
                result_type=ttl.ScalarType.I32,
            )
            ttl.copy(blk, a[0:1, 0:2]).wait()
"""

TOUCHER = """
@ttl.operation(grid=(1, 1))
def op(a):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def producer():
        ttl.call_extern_func("contract.hpp", "touch_cb", func_args=[0], include_paths=[CPP])  # <-

    @ttl.datamovement()
    def consumer():
        with d.wait() as blk:
            ttl.copy(blk, a[0:1, 0:1]).wait()
"""

ONE_CALL = """
@ttl.operation(grid=(1, 1))
def op(a):
    @ttl.datamovement()
    def dm():
        ttl.call_extern_func("failures.hpp", "{fn}", func_args=[{arg}], include_paths=[CPP])  # <-
"""

CONDITION = """
def make_op():
    cond = ttl.DispatchCondition(ttl.ScalarType.I32)

    @ttl.operation(grid=(1, 1))
    def op(a):
        @ttl.datamovement()
        def dm():
            c = ttl.call_extern_func(
                "scalars.hpp", "pick", func_args=[1], include_paths=[CPP], condition_result=cond
            )

        @ttl.compute()
        def compute():
            c = ttl.call_extern_func(  # <-
                "scalars.hpp", "pick", func_args=[0], include_paths=[CPP], condition_result=cond
            )

    return op


op = make_op()
"""


def reserve_push(declared: int) -> str:
    return f"ttl.DFBEffect.reserve(d, tiles=2), ttl.DFBEffect.push(d, tiles={declared})"


@dataclass(frozen=True)
class Case:
    source: str
    error: type
    message: str  # a regular expression the message must match
    rule: str
    cols: int = 64
    line_only: bool = False  # located at the call's line (a fault: no column), not its start


CASES = {
    "wrong-effects": Case(
        FILLER.format(fn="push_in_halves", effects=reserve_push(2), blocks=1),
        DFBContractError,
        r"broke its dfb_effects contract: DFB action 2 is push\(d, 1\) but dfb_effects declare "
        r"push\(d, 2\)\n  declared: \[reserve\(d, 2\), push\(d, 2\)\]\n"
        r"  observed: \[reserve\(d, 2\), push\(d, 1\)\]",
        "extern-contract",
    ),
    "missing-actions": Case(
        FILLER.format(
            fn="fill_block", effects=f"ttl.DFBEffect.repeat(2, [{reserve_push(2)}])", blocks=2
        ),
        DFBContractError,
        r"returned after 2 of the 4 DFB actions its dfb_effects declare",
        "extern-contract",
    ),
    "wrong-inspect": Case(
        INSPECTOR,
        DFBContractError,
        r"DFBAccess\.inspect\(d\) declares that the function leaves d's protocol state unchanged, "
        r"but it called cb_wait_front\(d, 2\)",
        "extern-contract",
    ),
    "undeclared-dfb": Case(
        TOUCHER,
        DFBContractError,
        r"called cb_reserve_back\(0, 1\) on DFB 'd', which is not a dependency of the call",
        "extern-contract",
        cols=32,
    ),
    "over-capacity": Case(
        FILLER.format(
            fn="fill_block",
            effects="ttl.DFBEffect.reserve(d, tiles=8), ttl.DFBEffect.push(d, tiles=8)",
            blocks=1,
        ),
        ExternCallError,
        r"ttl\.DFBEffect\.reserve\(d, tiles=8\) exceeds the capacity of DFB 'd' \(4 tiles: 2 "
        r"blocks of 2 tiles\)",
        "extern",
    ),
    "cpp-exception": Case(
        ONE_CALL.format(fn="throw_error", arg=1),
        KernelError,
        r"a C\+\+ exception escaped the external function: bad code from the external function",
        "extern-cpp-exception",
        cols=32,
    ),
    "dispatch-condition": Case(
        CONDITION,
        DFBContractError,
        r"DispatchCondition 'cond' disagrees within one dispatch on node \(0, 0\)",
        "dispatch-condition",
        cols=32,
    ),
    "crash": Case(
        ONE_CALL.format(fn="crash_now", arg=0),
        NativeCrashError,
        r"ttl\.call_extern_func\('failures\.hpp', 'crash_now'\) crashed with SIGILL \(Illegal "
        r"instruction\) at address 0x[0-9a-f]+, not an L1 address .* on node \(0, 0\) "
        r"\(.*failures\.hpp:14\)",
        "native-fault",
        cols=32,
        line_only=True,
    ),
}


@dataclass(frozen=True)
class Outcome:
    error: type
    message: str
    rule: str
    file: str | None
    line: int | None
    compiled: int


@contextlib.contextmanager
def _engine(engine: str):
    """Run under ``--engine engine``; yields the names of the operations that compiled."""
    compiled: list[str] = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: compiled.append(r.name))
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = engine
    try:
        yield compiled
    finally:
        session.OPTIONS.engine = saved
        backend.COMPILE_OBSERVERS.pop()


def _run(path: Path, engine: str) -> Outcome:
    with _engine(engine) as compiled:
        try:
            load(path)
        except TilewrightError as exc:
            loc = exc.loc
            return Outcome(
                type(exc),
                exc.message,
                exc.rule,
                loc.file if loc else None,
                loc.line if loc else None,
                len(compiled),
            )
    raise AssertionError(f"{path} ran without an error on --engine {engine}")


def _addresses(message: str) -> str:
    """A fault's host address differs from run to run (ASLR); everything else must not."""
    return re.sub(r"address 0x[0-9a-f]+", "address 0x?", message)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_external_call_on_every_engine(tmp_path, native_cache, name):
    case = CASES[name]
    path = write(tmp_path, PRELUDE + case.source + RUN.format(rows=32, cols=case.cols))
    line = line_of(path)
    outcomes = {engine: _run(path, engine) for engine in ("python", "native", "auto")}
    py = outcomes["python"]
    assert py.error is case.error, py
    assert re.search(case.message, py.message), py.message
    assert (py.rule, py.file, py.line) == (case.rule, str(path), line), py
    for engine in ("native", "auto"):
        got = outcomes[engine]
        assert (got.error, _addresses(got.message), got.rule, got.file, got.line) == (
            py.error,
            _addresses(py.message),
            py.rule,
            py.file,
            py.line,
        ), f"--engine {engine} gives the interpreter's diagnostic"
        assert got.compiled == 1, f"--engine {engine} compiled the operation"
    assert py.compiled == 0


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        ("broken", "'undeclared_variable' was not declared"),
        ("call_missing", "undefined symbol(s) never_defined(int)"),
    ],
)
def test_a_build_error_in_the_header_is_located_at_the_call_on_every_engine(
    tmp_path, native_cache, fn, message
):
    """The compiler's messages, at the call: the interpreter builds the call's glue, the
    compiled engine the kernel around the call (so the generated source shown differs)."""
    header = "broken.hpp" if fn == "broken" else "failures.hpp"
    source = ONE_CALL.replace("failures.hpp", header).format(fn=fn, arg=1)
    path = write(tmp_path, PRELUDE + source + RUN.format(rows=32, cols=32))
    line = line_of(path)
    for engine in ("python", "native", "auto"):
        got = _run(path, engine)
        assert got.error is NativeBuildError, (engine, got)
        assert message in got.message, (engine, got.message)
        assert f"ttl.call_extern_func('{header}', '{fn}')" in got.message, (engine, got.message)
        assert (got.rule, got.file, got.line) == ("native-build", str(path), line), (engine, got)


GOOD = """
@ttl.operation(grid=(2, 1))
def op(a, out):
    in_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 4), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 4), block_count=2)

    @ttl.datamovement()
    def reader():
        start = ttl.node(dims=1) * 16
        ttl.call_extern_func(
            "reader.hpp",
            "read_tiles",
            template_args=[ttl.dfb_descriptor(in_dfb)],
            func_args=[a, start, 16],
            dfb_effects=[
                ttl.DFBEffect.repeat(
                    4, [ttl.DFBEffect.reserve(in_dfb, tiles=4), ttl.DFBEffect.push(in_dfb, tiles=4)]
                )
            ],
            include_paths=[READER],
        )

    @ttl.compute()
    def compute():
        for _ in range(4):
            with in_dfb.wait() as x, out_dfb.reserve() as y:
                y.store(x * x + x)

    @ttl.datamovement()
    def writer():
        start = ttl.node(dims=1) * 16
        ttl.call_extern_func(
            "writer.hpp",
            "write_tiles",
            template_args=[ttl.dfb_descriptor(out_dfb)],
            func_args=[out, start, 16],
            dfb_effects=[
                ttl.DFBEffect.repeat(
                    4, [ttl.DFBEffect.wait(out_dfb, tiles=4), ttl.DFBEffect.pop(out_dfb, tiles=4)]
                )
            ],
            include_paths=[CPP],
        )


device = ttnn.open_device(device_id=0)
try:
    def dev(t):
        return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    x = dev(INPUT)
    y = dev(torch.zeros(32, 32 * 32))
    op(x, y)
    RESULTS.append(ttnn.to_torch(y))
finally:
    ttnn.close_device(device)
"""


def test_a_correct_program_gives_the_same_bits_on_both_engines(tmp_path, native_cache):
    prelude = PRELUDE + f"READER = {str(EXAMPLES / '07_extern_reader')!r}\n"
    seeded = "torch.manual_seed(7)\nINPUT = torch.randn(32, 32 * 32).to(torch.bfloat16)\n"
    path = write(tmp_path, prelude + seeded + GOOD)
    results = {}
    for engine in ("python", "native", "auto"):
        with _engine(engine) as compiled:
            ns = load(path)
        results[engine] = (ns["INPUT"], ns["RESULTS"][0], len(compiled))
    data, py, _ = results["python"]
    want = data.float() * data.float() + data.float()
    assert torch.allclose(py.float(), want, rtol=2e-2, atol=2e-2)
    for engine in ("native", "auto"):
        _, got, compiled = results[engine]
        assert compiled == 1, f"--engine {engine} compiled the operation"
        assert torch.equal(got.view(torch.int16), py.view(torch.int16)), engine


def test_explain_coverage_reports_the_external_call_example_compiled(native_cache):
    result = CliRunner().invoke(
        cli, ["explain", "--coverage", str(EXAMPLES / "07_extern_reader" / "program.py")]
    )
    assert result.exit_code == 0, result.output
    assert "PASS 07_extern_reader" in result.output
    assert "1 of 1 operation(s) compiled, 2 of 2 kernel(s) compile" in result.output
    assert "operation extern_read_double at program.py:98: compiled" in result.output
