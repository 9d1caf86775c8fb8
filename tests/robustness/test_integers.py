"""Kernel integers: Python's on the Python engine, int64 checked in compiled kernels.

Compiled TT-Lang kernel code computes ``+ - *`` and negation with the kernel IR's checked
operators: the exact result, or ``integer overflow in kernel code`` at the line, so an
index that overflows int64 can no longer wrap into range and pass the emitted slice
check (before, ``n * 2**62 * 4`` was 0 on the native engine and read tile 0, while the
interpreter reported index 2**64).  A constant beyond int64 (``range(2**64)``) is not
compilable (``auto`` interprets it, ``native`` says where); a loop bound computed through
a value beyond int64 (``(n + 1) * 2**62 // 2**62``) is the overflow error where it used to
run 0 times and deadlock.  ``//``, ``%`` and ``/`` by zero are one text at the line on
every engine.
"""

from __future__ import annotations

import pytest
import torch

from tests.robustness.test_language_inputs import line_of
from tilewright import ttl, ttnn
from tilewright.device import session
from tilewright.errors import DeviceError, KernelError, NotCompilableError

ENGINES = ("native", "auto", "python")
BIG = 2**62


def make(case: str, runtime: bool):
    """A reader of one tile whose index or loop bound is computed by ``case``; with
    ``runtime`` the operand ``n`` (1) is a run-time value (two nodes), else a constant."""

    @ttl.operation(grid=(2, 1) if runtime else (1, 1))
    def op(a, y):
        code = CASE[case]
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            n = ttl.node(dims=1) * 0 + 1
            reps = 1
            i = 0
            if code == 0:
                i = n * BIG * 4  # INDEX
            elif code == 1:
                reps = (n + 1) * BIG // BIG  # LOOP
            elif code == 2:
                i = 4 // (n - 1)  # FLOORDIV
            elif code == 3:
                i = 4 % (n - 1)  # MOD
            elif code == 4:
                i = int(4 / (n - 1))  # TRUEDIV
            for _ in range(reps):
                with a_dfb.reserve() as b:
                    ttl.copy(a[i, 0], b).wait()

        @ttl.datamovement()
        def writer():
            for _ in range(2 if code == 1 else 1):
                with a_dfb.wait() as b:
                    ttl.copy(b, y[0, 0]).wait()

    return op


CASE = {"index": 0, "loop": 1, "floordiv": 2, "mod": 3, "truediv": 4}


def _run(op, engine: str):
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = engine
    device = ttnn.open_device(device_id=0)
    try:
        kw = dict(dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
        a = ttnn.from_torch(torch.full((32, 32), 3.0), **kw)
        y = ttnn.from_torch(torch.zeros(32, 32), **kw)
        op(a, y)
        return float(ttnn.to_torch(y)[0, 0])
    finally:
        ttnn.close_device(device)
        session.OPTIONS.engine = saved


def _line(marker: str) -> int:
    return line_of(make, marker)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("runtime", [True, False], ids=["run-time n", "constant n"])
def test_an_index_that_overflows_int64_never_passes_the_slice_check(engine, runtime):
    with pytest.raises((KernelError, DeviceError, NotCompilableError)) as info:
        _run(make("index", runtime), engine)
    err = info.value
    if engine == "python" or (engine == "auto" and not runtime):  # Python's integers
        assert isinstance(err, DeviceError) and "index 18446744073709551616" in err.message
        assert err.loc.line == _line("# INDEX") + 11  # the ttl.copy
    else:
        assert "integer overflow in kernel code" in err.message
        assert err.loc.file == __file__ and err.loc.line == _line("# INDEX")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("runtime", [True, False], ids=["run-time n", "constant n"])
def test_a_loop_bound_through_a_value_beyond_int64(engine, runtime):
    """Python gives 2 iterations; compiled code either interprets the constant (auto) or
    reports the overflow at the line -- never 0 iterations and a deadlock."""
    op = make("loop", runtime)
    if engine == "python" or (engine == "auto" and not runtime):
        assert _run(op, engine) == 3.0
        return
    with pytest.raises((KernelError, NotCompilableError)) as info:
        _run(op, engine)
    assert "integer overflow in kernel code" in info.value.message
    assert info.value.loc.line == _line("# LOOP")


@ttl.operation(grid=(1, 1))
def range_2_64(a, y):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        for _ in range(2**64):  # RANGE
            with a_dfb.reserve() as b:
                ttl.copy(a[0, 0], b).wait()
            break

    @ttl.datamovement()
    def writer():
        with a_dfb.wait() as b:
            ttl.copy(b, y[0, 0]).wait()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_loop_over_range_2_64(engine):
    """Before: "could not diagnose this input (OverflowError)" from the compiler."""
    if engine == "native":
        with pytest.raises(NotCompilableError, match="does not fit in int64") as info:
            _run(range_2_64, engine)
        assert info.value.loc.line == line_of(range_2_64.__wrapped__, "# RANGE")
    else:
        assert _run(range_2_64, engine) == 3.0


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("runtime", [True, False], ids=["run-time n", "constant n"])
@pytest.mark.parametrize(
    ("case", "text"),
    [
        ("floordiv", "floor division by zero in kernel code"),
        ("mod", "modulo by zero in kernel code"),
        ("truediv", "division by zero in kernel code"),
    ],
)
def test_division_by_zero_is_one_text_at_the_line_on_every_engine(engine, runtime, case, text):
    """Before: a SIGFPE reported as a bad pointer (native), ZeroDivisionError (Python)."""
    with pytest.raises((KernelError, NotCompilableError)) as info:
        _run(make(case, runtime), engine)
    assert info.value.message.endswith(text)
    assert info.value.loc.file == __file__
    assert info.value.loc.line == _line(f"# {case.upper()}")
