"""``ttl.raw.cpp``: C++ functions with typed signatures, run on both engines and emitted.

The example (``examples/raw_cpp_template.py``: an inline templated compute function
scaling DFB tiles) runs under ``--engine python`` (host-built C++ against the
kernel-API emulation, its effects checked), ``--engine native`` (part of the compiled
kernel) and ``tilewright emit`` (the emitted kernel includes the inline source's
header and calls the entry with its template argument), each checked against torch by
the program itself.  Typed values (f32, i64, u32, results), tensor arguments,
composition and the content-addressed inline header are checked here too.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import os
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from tilewright import ttl, ttnn
from tilewright.cli.main import cli
from tilewright.cli.runner import run_program
from tilewright.compiler.raw.cpp import header_for
from tilewright.device import session

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "raw_cpp_template.py"
_COUNTER = itertools.count()


@contextlib.contextmanager
def engine(name: str):
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = name
    try:
        yield
    finally:
        session.OPTIONS.engine = saved


def run_example(name: str) -> str:
    out = io.StringIO()
    with engine(name), contextlib.redirect_stdout(out):
        assert run_program(str(EXAMPLE), []) == 0
    return out.getvalue()


@pytest.mark.parametrize("name", ["python", "native"])
def test_example_runs_on_both_engines(name):
    assert run_example(name).strip().splitlines()[-1] == "PASS raw_cpp_template"


def test_example_python_engine_checks_the_contract(monkeypatch):
    """Under --engine python the call runs through the external-call run time and its
    contract monitor (the compiled engine, like hardware, trusts the declaration)."""
    from tilewright.lang.extern import contract

    seen = []
    real = contract.ContractMonitor.finish

    def finish(self):
        seen.append((self.site.title, len(self.expected), self.pos))
        return real(self)

    monkeypatch.setattr(contract.ContractMonitor, "finish", finish)
    run_example("python")
    assert seen == [("ttl.raw.cpp function 'scale_tiles'", 16, 16)] * 2  # one call per node


def test_example_emits_the_inline_source_and_the_templated_call(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["emit", "-o", str(out), str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert "PASS raw_cpp_template" in result.output
    folder = out / "scale"
    compute = (folder / "compute.cpp").read_text()
    headers = [p for p in folder.iterdir() if p.name.startswith("tw_raw_")]
    assert len(headers) == 1
    assert f'#include "{headers[0].name}"' in compute
    assert (
        "scale_tiles<4>(static_cast<uint32_t>(0u), static_cast<uint32_t>(1u), static_cast<float>(1.5)"
        in compute
    )
    assert "template <uint32_t N>" in headers[0].read_text()
    text = io.StringIO()
    cwd = os.getcwd()
    try:
        os.chdir(folder)
        with contextlib.redirect_stdout(text):
            assert run_program(str(folder / "run.py"), []) == 0
    finally:
        os.chdir(cwd)
    assert text.getvalue().splitlines() == ["PASS scale"]  # checked against the call's result


def test_example_explain_shows_the_external_call_and_its_effects():
    result = CliRunner().invoke(cli, ["explain", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert "ttl.call_extern_func('tw_raw_" in result.output
    assert "'scale_tiles', func_args=[in_dfb, out_dfb, FACTOR, BLOCKS_PER_NODE])" in result.output


# -- typed values ------------------------------------------------------------------------------

VALUES = '''
import os

from tilewright import ttl, ttnn

SOURCE = """
#include <cstdint>
inline int64_t mix(float f, int64_t wide, uint32_t u, int32_t s) {
    return static_cast<int64_t>(f * 4.0f) + wide + static_cast<int64_t>(u) + s;
}
inline int32_t first_word(uint32_t addr) { return *reinterpret_cast<const int32_t*>(addr); }
template <bool Neg, int32_t K>
inline int32_t affine(int32_t x) { return Neg ? -K * x : K * x; }
"""

mix = ttl.raw.cpp(
    SOURCE, entry="mix", signature=(ttl.raw.f32, ttl.raw.i64, ttl.raw.u32, ttl.raw.index),
    result=ttl.raw.i64,
)
first_word = ttl.raw.cpp(SOURCE, entry="first_word", signature=(ttl.raw.RawAddr,), result=ttl.raw.i32)
affine = ttl.raw.cpp(
    SOURCE, entry="affine", signature=(ttl.raw.i32,), result=ttl.raw.i32, template_args=[True, 3]
)
RESULTS = []


@ttl.operation(grid=(2, 1))
def op(a: ttnn.Tensor) -> None:
    @ttl.datamovement()
    def dm():
        n = ttl.node(dims=1)
        RESULTS.append(("mix", n, mix(0.75 + n, 2**40, 3_000_000_000, -7)))
        RESULTS.append(("affine", n, affine(n + 5)))
        RESULTS.append(("word", n, first_word(a)))
'''


def load(tmp_path, text: str):
    path = tmp_path / f"raw_cpp_values_{next(_COUNTER)}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_typed_scalars_addresses_template_args_and_results(tmp_path, device):
    module = load(tmp_path, VALUES)
    a = torch.arange(32 * 32, dtype=torch.int32).reshape(32, 32) + 11
    t = ttnn.from_torch(
        a,
        dtype=ttnn.int32,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        device=device,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )
    module.op(t)
    got = sorted(module.RESULTS)
    want = sorted(
        [("mix", n, int((0.75 + n) * 4) + 2**40 + 3_000_000_000 - 7) for n in (0, 1)]
        + [("affine", n, -3 * (n + 5)) for n in (0, 1)]
        # ttl.raw.RawAddr of an L1 tensor is the node's own L1 at the buffer's address: with
        # interleaved pages (one 32-element row each) node n holds row n there.
        + [("word", n, 11 + 32 * n) for n in (0, 1)]
    )
    assert got == want


def test_inline_source_is_a_content_addressed_header(tmp_path):
    one = ttl.raw.cpp("inline void f() {}\n", entry="f", signature=())
    two = ttl.raw.cpp("inline void f() { /* edited */ }\n", entry="f", signature=())
    again = ttl.raw.cpp("inline void f() {}\n", entry="f", signature=())
    h1, paths1 = header_for(one)
    h2, _ = header_for(two)
    assert h1 != h2 and header_for(again)[0] == h1
    assert (Path(paths1[0]) / h1).read_text() == "inline void f() {}\n"


def test_file_source_is_included_from_its_directory(tmp_path):
    src = tmp_path / "kernels" / "ops.hpp"
    src.parent.mkdir()
    src.write_text("inline int g(int x) { return x; }\n")
    fn = ttl.raw.cpp(src, entry="g", signature=(ttl.raw.i32,), result=ttl.raw.i32)
    assert header_for(fn) == ("ops.hpp", (str(src.parent.resolve()),))


COMPOSED = '''
from tilewright import ttl, ttnn

SOURCE = """
#include <cstdint>
#include "compute_kernel_api/eltwise_unary/binop_with_scalar.h"
#include "compute_kernel_api/eltwise_unary/eltwise_unary.h"
#include "compute_kernel_api/tile_move_copy.h"
inline void scale_one(uint32_t src, uint32_t dst, float factor) {
    init_sfpu(src, dst);
    cb_wait_front(src, 1);
    cb_reserve_back(dst, 1);
    tile_regs_acquire();
    copy_tile_init(src);
    copy_tile(src, 0, 0);
    binop_with_scalar_tile_init();
    mul_unary_tile(0, __builtin_bit_cast(uint32_t, factor));
    tile_regs_commit();
    tile_regs_wait();
    pack_tile(0, dst);
    tile_regs_release();
    cb_push_back(dst, 1);
    cb_pop_front(src, 1);
}
"""

scale_one = ttl.raw.cpp(
    SOURCE, entry="scale_one", signature=(ttl.raw.DFB, ttl.raw.DFB, ttl.raw.f32),
    effects=lambda s, d, f: [ttl.DFBEffect.wait(s, tiles=1), ttl.DFBEffect.reserve(d, tiles=1),
                             ttl.DFBEffect.push(d, tiles=1), ttl.DFBEffect.pop(s, tiles=1)],
)


@ttl.operation(grid=(1, 1))
def scale_tile(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    y = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)
    with x.reserve() as blk:
        ttl.copy(a[0:1, 0:1], blk).wait()
    scale_one(x, y, 3.0, kernel=ttl.KernelKind.COMPUTE)
    with y.wait() as blk:
        ttl.copy(blk, out[0:1, 0:1]).wait()


@ttl.operation(grid=(1, 1))
def scale_twice(a: ttnn.Tensor, mid: ttnn.Tensor, out: ttnn.Tensor) -> None:
    scale_tile(a, mid)
    scale_tile(mid, out)
'''


@pytest.mark.parametrize("name", ["python", "native"])
def test_calls_compose_into_a_caller(tmp_path, device, name):
    module = load(tmp_path, COMPOSED)
    sites = module.scale_twice.extern_plan.sites
    assert [s.title for s in sites] == ["ttl.raw.cpp function 'scale_one'"] * 2
    a = torch.randn(32, 32).to(torch.bfloat16)

    def dev(t):
        return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    mid, out = dev(torch.zeros(32, 32)), dev(torch.zeros(32, 32))
    with engine(name):
        module.scale_twice(dev(a), mid, out)
    want = ((a.float() * 3).to(torch.bfloat16).float() * 3).to(torch.bfloat16)
    assert torch.equal(ttnn.to_torch(out).to(torch.bfloat16), want)


def test_an_entry_defined_in_an_included_user_header_is_accepted(tmp_path):
    (tmp_path / "impl.hpp").write_text("inline int g(int x) { return x; }\n")
    src = tmp_path / "ops.hpp"
    src.write_text('#include "impl.hpp"\n')
    assert ttl.raw.cpp(src, entry="g", signature=(ttl.raw.i32,), result=ttl.raw.i32).entry == "g"
    with pytest.raises(ttl.raw.RawCppError, match="entry 'g' is not defined in the inline source"):
        ttl.raw.cpp('#include "compute_kernel_api.h"\n', entry="g", signature=())


DESCRIPTORS = '''
from tilewright import ttl, ttnn

SOURCE = """
#include <cstdint>
#include "compute_kernel_api/eltwise_unary/binop_with_scalar.h"
#include "compute_kernel_api/eltwise_unary/eltwise_unary.h"
#include "compute_kernel_api/tile_move_copy.h"
template <typename Src, typename Dst, uint32_t SrcIndex>
inline void negate_block(uint32_t src, uint32_t dst) {
    static_assert(Src::index == SrcIndex, "the descriptor and the id name one DFB");
    if (src != Src::index || dst != Dst::index) return;  // indices agree with the arguments
    init_sfpu(Src::index, Dst::index);
    cb_wait_front(Src::index, Src::pages_per_block);
    cb_reserve_back(Dst::index, Dst::pages_per_block);
    for (uint32_t t = 0; t < Src::pages_per_block; ++t) {
        tile_regs_acquire();
        copy_tile_init(Src::index);
        copy_tile(Src::index, t, 0);
        binop_with_scalar_tile_init();
        mul_unary_tile(0, 0xBF800000u);
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, Dst::index);
        tile_regs_release();
    }
    cb_push_back(Dst::index, Dst::pages_per_block);
    cb_pop_front(Src::index, Src::pages_per_block);
}
"""

negate_block = ttl.raw.cpp(
    SOURCE,
    entry="negate_block",
    signature=(ttl.raw.DFB, ttl.raw.DFB),
    template_args=[ttl.dfb_descriptor(0), ttl.dfb_descriptor(1), ttl.get_dfb_id(0)],
    effects=lambda s, d: [ttl.DFBEffect.wait(s, tiles=2), ttl.DFBEffect.reserve(d, tiles=2),
                          ttl.DFBEffect.push(d, tiles=2), ttl.DFBEffect.pop(s, tiles=2)],
)


@ttl.operation(grid=(1, 1))
def negate(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    pad = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    x = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    y = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=1)
    with x.reserve() as blk:
        ttl.copy(a[0:1, 0:2], blk).wait()
    negate_block(x, y, kernel=ttl.KernelKind.COMPUTE)
    with y.wait() as blk:
        ttl.copy(blk, out[0:1, 0:2]).wait()


@ttl.operation(grid=(1, 1))
def negate_explicit(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    x = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    y = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=1)

    @ttl.datamovement()
    def reader():
        with x.reserve() as blk:
            ttl.copy(a[0:1, 0:2], blk).wait()

    @ttl.compute()
    def compute():
        negate_block(x, y)

    @ttl.datamovement()
    def writer():
        with y.wait() as blk:
            ttl.copy(blk, out[0:1, 0:2]).wait()
'''


@pytest.mark.parametrize("op", ["negate", "negate_explicit"])
@pytest.mark.parametrize("name", ["python", "native"])
def test_dfb_descriptors_of_parameters_as_template_arguments(tmp_path, device, name, op):
    module = load(tmp_path, DESCRIPTORS)
    operation = getattr(module, op)
    site = operation.extern_plan.sites[0]
    assert [(t.kind, t.dfb) for t in site.template_args] == [
        ("descriptor", "x"), ("descriptor", "y"), ("dfb_id", "x"),
    ]  # fmt: skip
    a = torch.randn(32, 64).to(torch.bfloat16)

    def dev(t):
        return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    out = dev(torch.zeros(32, 64))
    with engine(name):
        operation(dev(a), out)
    assert torch.equal(ttnn.to_torch(out).to(torch.bfloat16), -a)
