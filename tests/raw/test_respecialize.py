"""A folded argument that changes between calls: the raw call uses today's value.

Compile-time scalar arguments (module values, captured values) are folded into the trace
at decoration; the program may change them between operation calls, and the call must
compute with the new value on both engines -- or, when the new value would change the
computed DFB effects the operation was planned with, say so at the call's line.
"""

from __future__ import annotations

import pytest

from tests.raw.conftest import SCALE_COPY, line_of

ENGINES = ["python", "native"]

PROGRAM = (
    """
N = 2
SCALE = 1.5

"""
    + SCALE_COPY
    + """

@ttl.operation(grid=(1, 1))
def op(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    ttl.raw.call(scale_copy, a_dfb, o_dfb, SCALE, N, kernel=ttl.KernelKind.COMPUTE)  # CALL
    for i in range(2):
        with a_dfb.reserve() as blk:
            ttl.copy(a[0:1, i : i + 1], blk).wait()
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0:1, i : i + 1]).wait()


device = ttnn.open_device(device_id=0)
a_host = (4.0 * torch.rand(32, 64, generator=torch.Generator().manual_seed(0)) - 2.0).to(
    torch.bfloat16
)
kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
for SCALE in CHANGES:
    out_t = ttnn.from_torch(torch.zeros(32, 64, dtype=torch.bfloat16), **kw)
    op(ttnn.from_torch(a_host, **kw), out_t)
    want = (a_host.float() * SCALE).to(torch.bfloat16)
    print("SCALE", SCALE, bool(torch.equal(ttnn.to_torch(out_t), want)))
ttnn.close_device(device)
"""
)

# The same program, with the function reading N and SCALE from its module itself.
BODY_READS = (
    PROGRAM.replace(
        "factor: ttl.raw.f32, n: ttl.raw.index):\n    with raw.for_(n):",
        "):\n    with raw.for_(N):",
    )
    .replace("raw.mul_scalar(0, factor)", "raw.mul_scalar(0, SCALE)")
    .replace("o_dfb, SCALE, N, kernel", "o_dfb, kernel")
)
assert BODY_READS.count("raw.for_(N)") == 1 and "o_dfb, kernel" in BODY_READS

# (program, what the trip-count error names): the value passed as an argument, or read by the body
VARIANTS = {
    "argument": (
        PROGRAM,
        "the value(s) it folds changed since the operation was decorated ('n' = 2 -> 3)",
    ),
    "body": (BODY_READS, "module value 'N' = 2 -> 3"),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_changed_module_value_is_used_by_the_next_call(write_program, run_file, engine, variant):
    program, _ = VARIANTS[variant]
    path = write_program(program.replace("CHANGES", "(1.5, -3.0, 0.25, 1.5)"), run=False)
    status, out, err = run_file(path, engine)
    assert status == 0, err
    assert out.split("\n")[:4] == [
        "SCALE 1.5 True",
        "SCALE -3.0 True",
        "SCALE 0.25 True",
        "SCALE 1.5 True",
    ]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_changed_trip_count_that_changes_the_planned_effects_is_an_error(
    write_program, run_file, engine, variant
):
    program, names = VARIANTS[variant]
    body = program.replace("CHANGES", "(1.5,)").replace(
        "ttnn.close_device(device)", "N = 3\nop(ttnn.from_torch(a_host, **kw), out_t)\n"
    )
    path = write_program(body, run=False)
    status, out, err = run_file(path, engine)
    assert status == 1
    assert "SCALE 1.5 True" in out
    assert f"prog.py:{line_of(path, '# CALL')}:" in err, err
    assert "ttl.raw.call(scale_copy)" in err, err
    assert names in err, err
    assert "(8 action(s) -> 12 action(s))" in err, err
