"""``ttl.raw.call`` diagnostics at decoration: each is an error at the user's call line."""

from __future__ import annotations

import pytest

from tests.raw.conftest import line_of

PROGRAM = """
@ttl.raw.ir
def copy_n(src: ttl.raw.DFB, dst: ttl.raw.DFB, n: ttl.raw.u32, k: ttl.raw.i32):
    with raw.for_(n):
        raw.dfb_wait(src, 1)
        raw.dfb_reserve(dst, 1)
        raw.tile_regs_acquire()
        raw.copy_tile(src, 0, 0)
        raw.tile_regs_commit()
        raw.tile_regs_wait()
        raw.pack_tile(0, dst)
        raw.tile_regs_release()
        raw.dfb_push(dst, 1)
        raw.dfb_pop(src, 1)


@ttl.raw.ir
def count(src: ttl.raw.DFB, n: ttl.raw.index):
    with raw.for_(n):
        raw.dfb_wait(src, 1)
        raw.dfb_pop(src, 1)


@ttl.raw.ir
def reader(t: ttl.raw.TensorAccessor, dst: ttl.raw.DFB):
    raw.dfb_reserve(dst, 1)
    raw.read_page(t, 0, raw.write_ptr(dst))
    raw.read_barrier()
    raw.dfb_push(dst, 1)


@ttl.raw.ir
def bad_dst(src: ttl.raw.DFB):
    raw.tile_regs_acquire()
    raw.copy_tile(src, 0, 9)  # DST 9
    raw.tile_regs_commit()
    raw.tile_regs_wait()
    raw.tile_regs_release()


NOT_RAW = 3
BIG = 2**31


@ttl.operation(grid=(1, 1))
def op(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    CALL  # the call
    with a_dfb.reserve() as blk:
        ttl.copy(a[0:1, 0:1], blk).wait()
    with out_dfb.wait() as blk:
        ttl.copy(blk, out[0:1, 0:1]).wait()
"""

COMPUTE = "kernel=ttl.KernelKind.COMPUTE"
CASES = [
    (
        f"ttl.raw.call(copy_n, a_dfb, out_dfb, 1, {COMPUTE})",
        "ttl.raw.call(copy_n): 'copy_n' takes 4 argument(s) (src: ttl.raw.DFB, dst: ttl.raw.DFB, "
        "n: ttl.raw.u32, k: ttl.raw.i32), got 3",
    ),
    (
        f"ttl.raw.call(copy_n, a_dfb, 2, 1, 0, {COMPUTE})",
        "argument 2 (2) of 'copy_n': parameter 'dst' is a ttl.raw.DFB; got the scalar 2",
    ),
    (
        f"ttl.raw.call(copy_n, a_dfb, out_dfb, out_dfb, 0, {COMPUTE})",
        "argument 3 (out_dfb) of 'copy_n': parameter 'n' is a scalar ttl.raw.u32; got the DFB 'out_dfb'",
    ),
    (
        f"ttl.raw.call(copy_n, a, out_dfb, 1, 0, {COMPUTE})",
        "argument 1 (a) of 'copy_n': parameter 'src' is a ttl.raw.DFB; got the tensor 'a'",
    ),
    (
        f"ttl.raw.call(copy_n, a_dfb, out_dfb, -1, 0, {COMPUTE})",
        "argument 3 (-1) of 'copy_n': -1 is not a valid ttl.raw.u32 (parameter 'n') -- out of range",
    ),
    (
        f"ttl.raw.call(copy_n, a_dfb, out_dfb, 1, BIG, {COMPUTE})",
        "argument 4 (BIG) of 'copy_n': 2147483648 is not a valid ttl.raw.i32 (parameter 'k') "
        "-- out of range",
    ),
    (
        f"ttl.raw.call(count, a_dfb, BIG, {COMPUTE})",  # index is int32_t, as in ttl.raw.cpp
        "argument 2 (BIG) of 'count': 2147483648 is not a valid ttl.raw.index (parameter 'n') "
        "-- out of range",
    ),
    (
        f"ttl.raw.call(copy_n, a_dfb, out_dfb, 1.5, 0, {COMPUTE})",
        "1.5 is not a valid ttl.raw.u32 (parameter 'n')",
    ),
    (
        f"ttl.raw.call(reader, a, out_dfb, {COMPUTE})",
        "a TensorAccessor is a data-movement resource; 'reader' runs on a compute kernel",
    ),
    (
        "ttl.raw.call(reader, a_dfb, out_dfb, kernel=ttl.KernelKind.DATA_MOVEMENT)",
        "parameter 't' is a ttl.raw.TensorAccessor (pass a base tensor of the operation); got the "
        "DFB 'a_dfb'",
    ),
    (
        "ttl.raw.call(copy_n, a_dfb, out_dfb, 1, 0)",
        "a raw IR function runs on one kernel kind: select it with kernel=ttl.KernelKind.COMPUTE",
    ),
    (
        "ttl.raw.call(copy_n, a_dfb, out_dfb, 1, 0, kernel=ttl.KernelKind.COMPUTE | "
        "ttl.KernelKind.DATA_MOVEMENT)",
        "a raw IR function runs on one kernel kind",
    ),
    (
        f"ttl.raw.call(NOT_RAW, a_dfb, {COMPUTE})",
        "the first argument must be a @ttl.raw.ir function (module-level or captured), got NOT_RAW",
    ),
    (
        f"ttl.raw.call(copy_n, a_dfb, out_dfb, 1, 0, {COMPUTE}, tiles=2)",
        "got unexpected keyword argument tiles; the only keyword is kernel=",
    ),
]


@pytest.mark.parametrize("call, message", CASES, ids=[str(i) for i in range(len(CASES))])
def test_call_mismatches_are_errors_at_the_call(write_program, run_file, call, message):
    path = write_program(PROGRAM.replace("CALL", call))
    status, out, err = run_file(path)
    assert status != 0 and "RESULT" not in out
    assert "RawIRError" in err, err
    assert message in err, err
    assert f"{path}:{line_of(path, '# the call')}:" in err


def test_builder_misuse_found_while_tracing_a_call_names_the_line_inside_the_function(
    write_program, run_file
):
    path = write_program(PROGRAM.replace("CALL", f"ttl.raw.call(bad_dst, a_dfb, {COMPUTE})"))
    status, out, err = run_file(path)
    assert status != 0
    assert "raw.copy_tile: DST index 9 is outside the 8 DST tiles of one acquire" in err
    assert f"{path}:{line_of(path, '# DST 9')}:" in err
    assert f"while tracing ttl.raw.call(bad_dst) at {path}:{line_of(path, '# the call')}" in err


def test_a_valid_call_runs(write_program, run_file):
    path = write_program(
        PROGRAM.replace("CALL", f"ttl.raw.call(copy_n, a_dfb, out_dfb, 1, 0, {COMPUTE})")
    )
    status, out, err = run_file(path, "native")
    assert status == 0, err
    got, want = out.split()[1:3]
    assert float(got) == float(want)
