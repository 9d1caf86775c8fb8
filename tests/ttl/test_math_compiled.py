"""Every elementwise ttl.math function and operator, compiled (``--engine native``), against the
interpreter.

tests/ttl/test_math.py builds its operations with Python lists of DFBs, which the compiler
leaves to the interpreter; here each arity has its own operation written in the compilable
subset, so the compiled tile program of every function (its SFPU op, parameters, binary
form) is checked against the interpreter's result on the same inputs.  Functions the
back end does not compile must say so (NotCompilableError) rather than compute something.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.device.ops.test_ops_elementwise import CASES
from tests.ttl.test_math import COLS, ROWS
from tilewright import ttnn
from tilewright.device import session
from tilewright.device.ops import get_op
from tilewright.errors import NotCompilableError

# Not compiled yet: the operation runs interpreted under auto (docs/compiler.md, "What compiles").
# typecast to a block-float format quantises as a store would: still interpreted.
INTERPRETED = {("typecast", "bfloat8_b")}
# Transcendentals: the compiled SFPU and numpy may differ in the last float32 bits.
RTOL = 2e-6


SYMBOLS = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "mod": "%",
    "floordiv": "//",
    "gt": ">",
    "lt": "<",
    "ge": ">=",
    "le": "<=",
    "eq": "==",
    "ne": "!=",
}
NAMES = ("x", "y", "z")


def expression(name: str, params: dict, arity: int) -> str:
    """The block expression as a user writes it (kernel code calls ``ttl`` functions only)."""
    args = NAMES[:arity]
    spec = get_op(name)
    if spec.namespace == "operator":
        return f" {SYMBOLS[name]} ".join(args)
    module = "ttl.math" if spec.namespace == "math" else "ttl.block"
    kwargs = "".join(f", {k}={v!r}" for k, v in params.items())
    return f"{module}.{name}({', '.join(args)}{kwargs})"


def source(expr: str, arity: int) -> str:
    """An operation with one DFB per input, in the compilable subset (no Python containers)."""
    ins = [f"x{i}" for i in range(arity)]
    dfbs = [f"d{i}" for i in range(arity)]
    lines = [
        "from tilewright import ttl",
        "",
        "@ttl.operation(grid=(1, 1))",
        f"def apply({', '.join(ins)}, out):",
    ]
    for d, x in zip(dfbs, ins):
        lines.append(f"    {d} = ttl.make_dataflow_buffer_like({x}, shape=(1, 2), block_count=1)")
    lines += [
        "    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=1)",
        "",
        "    @ttl.datamovement()",
        "    def reader():",
    ]
    for d, x in zip(dfbs, ins):
        lines += [
            f"        with {d}.reserve() as blk:",
            f"            ttl.copy({x}[0:1, 0:2], blk).wait()",
        ]
    waits = ", ".join(f"{d}.wait() as {n}" for d, n in zip(dfbs, NAMES))
    lines += [
        "",
        "    @ttl.compute()",
        "    def compute():",
        f"        with {waits}, o_dfb.reserve() as o:",
        f"            o.store({expr})",
        "",
        "    @ttl.datamovement()",
        "    def writer():",
        "        with o_dfb.wait() as o:",
        "            ttl.copy(o, out[0:1, 0:2]).wait()",
    ]
    return "\n".join(lines) + "\n"


def _run(device, program, text, xs, engine: str) -> torch.Tensor:
    kw = dict(dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    tensors = [ttnn.from_torch(torch.from_numpy(x), **kw) for x in xs]
    out = ttnn.from_torch(torch.zeros(ROWS, COLS), **kw)
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = engine
    try:
        program(text)["apply"](*tensors, out)
    finally:
        session.OPTIONS.engine = saved
    return ttnn.to_torch(out)


def _cases():
    for name, cases in sorted(CASES.items()):
        for i, (params, domains) in enumerate(cases):
            yield pytest.param(name, params, domains, id=f"{name}-{i}")


@pytest.fixture(autouse=True)
def engine():
    """Each test picks both engines itself (overrides the tests/ttl parametrisation)."""
    yield None


@pytest.mark.parametrize("name, params, domains", list(_cases()))
def test_compiled_function_matches_the_interpreter(device, program, name, params, domains):
    rng = np.random.default_rng(sum(map(ord, name)))
    xs = [rng.uniform(lo, hi, size=(ROWS, COLS)).astype(np.float32) for lo, hi in domains]
    if name in ("eq", "ne", "ge", "le", "gt", "lt", "mask", "mask_posinf"):
        xs = [np.round(x) for x in xs]
    text = source(expression(name, params, len(xs)), len(xs))
    if (name, params.get("dtype")) in INTERPRETED:
        with pytest.raises(NotCompilableError):
            _run(device, program, text, xs, "native")
        return
    want = _run(device, program, text, xs, "python")
    got = _run(device, program, text, xs, "native")
    torch.testing.assert_close(got, want, rtol=RTOL, atol=1e-6, equal_nan=True)
