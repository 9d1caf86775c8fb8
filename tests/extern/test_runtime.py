"""External C++ functions running inside TT-Lang kernels, checked against torch.

Explicit multi-kernel operations (the call's kernel is the enclosing kernel function):
external readers and writers moving DFB blocks from / to interleaved DRAM tensors,
compute on an L1-sharded tensor through ``ttl.raw_addr`` and ``LocalTensorAccessor``,
the compute API on DFB tiles, scalar results, template-argument encoding, and the
run-time checks: DFB contracts, dispatch conditions, capacities, tensor kinds, builds.
"""

from __future__ import annotations

import os

import pytest
import torch

from tilewright import ttl, ttnn
from tilewright.device import session
from tilewright.errors import DFBContractError, ExternCallError, KernelError, NativeBuildError

HERE = os.path.dirname(os.path.abspath(__file__))
CPP = os.path.join(HERE, "cpp")
EXAMPLE_07 = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "07_extern_reader")
TILE = 32
T = 4  # tiles per block
NB = 4  # blocks per node
RESULTS: list = []


def line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if marker in line and "line_of(" not in line)


def to_dev(t, device, memory_config=None, dtype=None):
    return ttnn.from_torch(
        t,
        dtype=dtype or ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=memory_config or ttnn.DRAM_MEMORY_CONFIG,
    )


# -- data movement: reader and writer --------------------------------------------------------


@ttl.operation(grid=(2, 1))
def read_double_write(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    in_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, T), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, T), block_count=2)

    @ttl.datamovement()
    def reader():
        start = ttl.node(dims=1) * NB * T
        ttl.call_extern_func(
            "reader.hpp",
            "read_tiles",
            template_args=[ttl.dfb_descriptor(in_dfb)],
            func_args=[a, start, NB * T],
            dfb_effects=[
                ttl.DFBEffect.repeat(
                    NB,
                    [ttl.DFBEffect.reserve(in_dfb, tiles=T), ttl.DFBEffect.push(in_dfb, tiles=T)],
                )
            ],
            include_paths=[EXAMPLE_07],
        )

    @ttl.compute()
    def compute():
        for _ in range(NB):
            with in_dfb.wait() as x, out_dfb.reserve() as y:
                y.store(x * x + x)

    @ttl.datamovement()
    def writer():
        start = ttl.node(dims=1) * NB * T
        ttl.call_extern_func(
            "writer.hpp",
            "write_tiles",
            template_args=[ttl.dfb_descriptor(out_dfb)],
            func_args=[out, start, NB * T],
            dfb_effects=[
                ttl.DFBEffect.repeat(
                    NB, [ttl.DFBEffect.wait(out_dfb, tiles=T), ttl.DFBEffect.pop(out_dfb, tiles=T)]
                )
            ],
            include_paths=[CPP],
        )


def test_external_reader_and_writer_match_torch(device):
    torch.manual_seed(0)
    a = (2 * torch.rand(64, 512) - 1).to(torch.bfloat16)  # 2 x 16 tiles: 16 per node
    a_t = to_dev(a, device)
    out_t = to_dev(torch.zeros(64, 512), device)
    read_double_write(a_t, out_t)
    got = ttnn.to_torch(out_t).float()
    want = a.float() * a.float() + a.float()
    torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2)


@ttl.operation(grid=(1, 1))
def copy_through_addrgen(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    in_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)

    @ttl.datamovement()
    def reader():
        for i in range(4):
            with in_dfb.reserve() as blk:
                ttl.copy(a[0:1, 2 * i : 2 * i + 2], blk).wait()

    @ttl.datamovement()
    def writer():
        ttl.call_extern_func(
            "writer.hpp",
            "write_tiles_addrgen",
            template_args=[ttl.get_dfb_id(in_dfb), 2048],
            func_args=[ttl.raw_addr(out), 0, 8, 2],
            dfb_dependencies=[in_dfb],
            dfb_effects=[
                ttl.DFBEffect.repeat(
                    4, [ttl.DFBEffect.wait(in_dfb, tiles=2), ttl.DFBEffect.pop(in_dfb, tiles=2)]
                )
            ],
            include_paths=[CPP],
        )


def test_writer_with_raw_address_and_dfb_id(device):
    torch.manual_seed(1)
    a = torch.randn(32, 256).to(torch.bfloat16)
    out_t = to_dev(torch.zeros(32, 256), device)
    copy_through_addrgen(to_dev(a, device), out_t)
    assert torch.equal(ttnn.to_torch(out_t).to(torch.bfloat16), a)


# -- compute on an L1-sharded tensor --------------------------------------------------------


@ttl.operation(grid=(2, 1))
def scale_shards(a: ttnn.Tensor) -> None:
    @ttl.compute()
    def compute():
        ttl.call_extern_func(
            "sharded_scale.hpp",
            "scale_shard",
            template_args=[1.5],
            func_args=[ttl.raw_addr(a), 64 * 64],
            include_paths=[CPP],
        )


@ttl.operation(grid=(2, 1))
def scale_local_shards(a: ttnn.Tensor) -> None:
    @ttl.compute()
    def compute():
        ttl.call_extern_func(
            "sharded_scale.hpp",
            "scale_local",
            template_args=[-2.0],
            func_args=[a, 64 * 64],
            include_paths=[CPP],
        )

    @ttl.datamovement()
    def mover():
        ttl.call_extern_func(
            "sharded_scale.hpp",
            "scale_shard",
            template_args=[0.5],
            func_args=[ttl.raw_addr(a), 64 * 64],
            include_paths=[CPP],
        )


def sharded(device, host):
    cfg = ttnn.create_sharded_memory_config(
        (128, 64), ttnn.CoreGrid(y=1, x=2), ttnn.ShardStrategy.HEIGHT
    )
    return to_dev(host, device, memory_config=cfg)


def test_compute_on_sharded_l1_tensor_through_raw_addr(device):
    torch.manual_seed(2)
    a = torch.randn(128, 64).to(torch.bfloat16)  # two 64 x 64 shards, one per node
    a_t = sharded(device, a)
    scale_shards(a_t)
    want = (a.float() * 1.5).to(torch.bfloat16)
    assert torch.equal(ttnn.to_torch(a_t).to(torch.bfloat16), want)
    a_t.deallocate()


def test_local_tensor_accessor_and_raw_addr_on_both_kernel_kinds(device):
    torch.manual_seed(3)
    a = torch.randn(128, 64).to(torch.bfloat16)
    a_t = sharded(device, a)
    scale_local_shards(a_t)  # x -2 on compute, x 0.5 on data movement: exact in bf16
    assert torch.equal(ttnn.to_torch(a_t).to(torch.bfloat16), -a)
    a_t.deallocate()


# -- the compute API on DFB tiles ---------------------------------------------------------


@ttl.operation(grid=(1, 1))
def exp_blocks(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    in_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=2)

    @ttl.datamovement()
    def reader():
        for i in range(4):
            with in_dfb.reserve() as blk:
                ttl.copy(a[0:1, 2 * i : 2 * i + 2], blk).wait()

    @ttl.compute()
    def compute():
        ttl.call_extern_func(
            "tile_math.hpp",
            "exp_tiles",
            template_args=[ttl.dfb_descriptor(in_dfb), ttl.dfb_descriptor(out_dfb)],
            func_args=[4],
            dfb_effects=[
                ttl.DFBEffect.repeat(
                    4,
                    [
                        ttl.DFBEffect.wait(in_dfb, tiles=2),
                        ttl.DFBEffect.reserve(out_dfb, tiles=2),
                        ttl.DFBEffect.pop(in_dfb, tiles=2),
                        ttl.DFBEffect.push(out_dfb, tiles=2),
                    ],
                )
            ],
            include_paths=[CPP],
        )

    @ttl.datamovement()
    def writer():
        for i in range(4):
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0:1, 2 * i : 2 * i + 2]).wait()


def test_compute_api_exp_on_dfb_tiles_matches_torch(device):
    torch.manual_seed(4)
    a = torch.randn(32, 256).to(torch.bfloat16)
    out_t = to_dev(torch.zeros(32, 256), device)
    exp_blocks(to_dev(a, device), out_t)
    torch.testing.assert_close(
        ttnn.to_torch(out_t).float(), torch.exp(a.float()), rtol=2e-2, atol=1e-2
    )


@ttl.operation(grid=(1, 1))
def add_blocks(a: ttnn.Tensor, b: ttnn.Tensor, out: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 4), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 4), block_count=1)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 4), block_count=1)

    @ttl.datamovement()
    def reader():
        with a_dfb.reserve() as x, b_dfb.reserve() as y:
            ttl.copy(a[0:1, 0:4], x).wait()
            ttl.copy(b[0:1, 0:4], y).wait()

    @ttl.compute()
    def compute():
        ttl.call_extern_func(
            "tile_math.hpp",
            "add_block",
            template_args=[
                ttl.dfb_descriptor(a_dfb),
                ttl.dfb_descriptor(b_dfb),
                ttl.dfb_descriptor(o_dfb),
            ],
            dfb_effects=[
                ttl.DFBEffect.wait(a_dfb, tiles=4),
                ttl.DFBEffect.wait(b_dfb, tiles=4),
                ttl.DFBEffect.reserve(o_dfb, tiles=4),
                ttl.DFBEffect.push(o_dfb, tiles=4),
                ttl.DFBEffect.pop(a_dfb, tiles=4),
                ttl.DFBEffect.pop(b_dfb, tiles=4),
            ],
            include_paths=[CPP],
        )

    @ttl.datamovement()
    def writer():
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0:1, 0:4]).wait()


def test_compute_api_add_tiles_matches_torch(device):
    torch.manual_seed(5)
    a, b = torch.randn(32, 128).to(torch.bfloat16), torch.randn(32, 128).to(torch.bfloat16)
    out_t = to_dev(torch.zeros(32, 128), device)
    add_blocks(to_dev(a, device), to_dev(b, device), out_t)
    assert torch.equal(
        ttnn.to_torch(out_t).to(torch.bfloat16), (a.float() + b.float()).to(torch.bfloat16)
    )


# -- scalars, template arguments, results ------------------------------------------------------

BIG = 3_000_000_000


@ttl.operation(grid=(2, 1))
def scalar_calls(a: ttnn.Tensor) -> None:
    d = ttl.make_dataflow_buffer_like(a, shape=(2, 1), block_count=3)

    @ttl.datamovement()
    def dm():
        node = ttl.node(dims=1)
        s = ttl.call_extern_func(
            "scalars.hpp",
            "add_i32",
            func_args=[node, 40],
            include_paths=[CPP],
            result_type=ttl.ScalarType.I32,
        )
        big = ttl.call_extern_func(
            "scalars.hpp",
            "times_big",
            func_args=[s],
            include_paths=[CPP],
            result_type=ttl.ScalarType.I64,
        )
        wide = [
            ttl.call_extern_func(
                "scalars.hpp",
                "identity_i64",
                func_args=[v],
                include_paths=[CPP],
                result_type=ttl.ScalarType.I64,
            )
            for v in (7, BIG, -BIG)
        ]
        enc = ttl.call_extern_func(
            "scalars.hpp",
            "encode_template",
            template_args=[-3, True, 2.5, ttl.uint32(4000000000), 7],
            include_paths=[CPP],
            result_type=ttl.ScalarType.I64,
        )
        desc = ttl.call_extern_func(
            "scalars.hpp",
            "describe",
            template_args=[ttl.dfb_descriptor(d)],
            include_paths=[CPP],
            result_type=ttl.ScalarType.I64,
        )
        ident = ttl.call_extern_func(
            "scalars.hpp",
            "dfb_id",
            template_args=[ttl.get_dfb_id(d)],
            dfb_dependencies=[d],
            include_paths=[CPP],
            result_type=ttl.ScalarType.I64,
        )
        void = ttl.call_extern_func("scalars.hpp", "pick", func_args=[1], include_paths=[CPP])
        if s > 40:
            RESULTS.append(("branch", node))
        RESULTS.append((node, s, big, wide, enc, desc, ident, void))


def test_scalar_results_and_template_arguments(device):
    RESULTS.clear()
    scalar_calls(to_dev(torch.zeros(64, 32), device))
    rows = sorted(r for r in RESULTS if r[0] != "branch")
    assert [r[0] for r in RESULTS if r[0] == "branch"] == ["branch"]
    for node, s, big, wide, enc, desc, ident, void in rows:
        assert s == 40 + node
        assert big == s * 4_000_000_000
        assert wide == [7, BIG, -BIG]
        assert enc == -3 * 1000000 + 100000 + 250 + 4000000000 * 10 + 7
        assert desc == ident * 1000000 + 2 * 10000 + 3 * 1000 + 2
        assert void is None


def test_scalar_too_wide_for_64_bits_is_rejected(device):
    @ttl.operation(grid=(1, 1))
    def too_wide(a: ttnn.Tensor) -> None:
        @ttl.datamovement()
        def dm():
            ttl.call_extern_func(  # L:too-wide
                "scalars.hpp",
                "identity_i64",
                func_args=[2**70],
                include_paths=[CPP],
                result_type=ttl.ScalarType.I64,
            )

    with pytest.raises(
        ExternCallError,
        match=r"func_args element 2 \*\* 70 = 1180591620717411303424 does not "
        r"fit a 64-bit integer",
    ) as info:
        too_wide(to_dev(torch.zeros(32, 32), device))
    assert info.value.loc.line == line_of("# L:too-wide")


# -- dispatch conditions -------------------------------------------------------------------


def make_conditioned(first: int, second: int):
    cond = ttl.DispatchCondition(ttl.ScalarType.I32)

    @ttl.operation(grid=(1, 1))
    def conditioned(a: ttnn.Tensor) -> None:
        @ttl.datamovement()
        def dm():
            c = ttl.call_extern_func(  # L:cond-dm
                "scalars.hpp",
                "pick",
                func_args=[first],
                include_paths=[CPP],
                condition_result=cond,
            )
            RESULTS.append(("dm", c))

        @ttl.compute()
        def compute():
            c = ttl.call_extern_func(  # L:cond-ck
                "scalars.hpp",
                "pick",
                func_args=[second],
                include_paths=[CPP],
                condition_result=cond,
            )
            RESULTS.append(("compute", c))

    return conditioned


def test_dispatch_condition_evaluations_that_agree(device):
    RESULTS.clear()
    make_conditioned(3, 1)(to_dev(torch.zeros(32, 32), device))  # both true
    assert sorted(RESULTS) == [("compute", 1), ("dm", 3)]


def test_dispatch_condition_disagreement_names_both_call_sites(device):
    with pytest.raises(DFBContractError) as info:
        make_conditioned(1, 0)(to_dev(torch.zeros(32, 32), device))
    msg = str(info.value)
    assert "DispatchCondition 'cond' disagrees within one dispatch on node (0, 0)" in msg
    assert (
        f"test_runtime.py:{line_of('# L:cond-dm')}" in msg
        and f"test_runtime.py:{line_of('# L:cond-ck')}" in msg
    )
    assert "returned True" in msg and "returned False" in msg
    assert info.value.loc.line in (line_of("# L:cond-dm"), line_of("# L:cond-ck"))


# -- DFB contracts ---------------------------------------------------------------------------


def make_filler(fn: str, declared_tiles: int, blocks: int):
    @ttl.operation(grid=(1, 1))
    def filler(a: ttnn.Tensor) -> None:
        d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)

        @ttl.datamovement()
        def producer():
            ttl.call_extern_func(  # L:filler
                "contract.hpp",
                fn,
                template_args=[ttl.dfb_descriptor(d)],
                dfb_effects=[
                    ttl.DFBEffect.repeat(
                        blocks,
                        [
                            ttl.DFBEffect.reserve(d, tiles=2),
                            ttl.DFBEffect.push(d, tiles=declared_tiles),
                        ],
                    )
                ],
                include_paths=[CPP],
            )

        @ttl.datamovement()
        def consumer():
            for _ in range(blocks):
                with d.wait() as blk:
                    ttl.copy(blk, a[0:1, 0:2]).wait()

    return filler


def test_wrong_dfb_effects_are_a_contract_error(device):
    with pytest.raises(DFBContractError) as info:
        make_filler("push_in_halves", 2, 1)(to_dev(torch.zeros(32, 64), device))
    err = info.value
    assert "ttl.call_extern_func('contract.hpp', 'push_in_halves')" in err.message
    assert (
        "broke its dfb_effects contract: DFB action 2 is push(d, 1) but dfb_effects declare push(d, 2)"
        in err.message
    )
    assert "declared: [reserve(d, 2), push(d, 2)]" in err.message
    assert "observed: [reserve(d, 2), push(d, 1)]" in err.message
    assert err.loc.line == line_of("# L:filler")


def test_missing_declared_actions_are_a_contract_error(device):
    with pytest.raises(
        DFBContractError, match=r"returned after 2 of the 4 DFB actions its dfb_effects declare"
    ):
        make_filler("fill_block", 2, 2)(to_dev(torch.zeros(32, 64), device))


def test_a_correct_declaration_passes(device):
    make_filler("fill_block", 2, 1)(to_dev(torch.zeros(32, 64), device))


def make_inspector(fn: str):
    @ttl.operation(grid=(1, 1))
    def inspector(a: ttnn.Tensor) -> None:
        d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)

        @ttl.datamovement()
        def producer():
            with d.reserve() as blk:
                ttl.copy(a[0:1, 0:2], blk).wait()

        @ttl.datamovement()
        def consumer():
            with d.wait() as blk:
                first = ttl.call_extern_func(  # L:inspect
                    "contract.hpp",
                    fn,
                    template_args=[ttl.dfb_descriptor(d)],
                    func_args=[0],
                    dfb_accesses=[ttl.DFBAccess.inspect(d)],
                    include_paths=[CPP],
                    result_type=ttl.ScalarType.I32,
                )
                RESULTS.append(first)
                ttl.copy(blk, a[0:1, 0:2]).wait()

    return inspector


def test_inspect_that_reads_without_changing_state(device):
    RESULTS.clear()
    a = torch.full((32, 64), 1.0).to(torch.bfloat16)
    make_inspector("peek")(to_dev(a, device))
    assert RESULTS == [0x3F80]  # bf16 1.0


def test_wrong_inspect_is_a_contract_error(device):
    with pytest.raises(DFBContractError) as info:
        make_inspector("peek_and_pop")(to_dev(torch.zeros(32, 64), device))
    assert (
        "DFBAccess.inspect(d) declares that the function leaves d's protocol state unchanged, but it called "
        "cb_wait_front(d, 2)"
    ) in info.value.message
    assert info.value.loc.line == line_of("# L:inspect")


def make_toucher(unknown: bool):
    @ttl.operation(grid=(1, 1))
    def toucher(a: ttnn.Tensor) -> None:
        d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def producer():
            ttl.call_extern_func(
                "contract.hpp",
                "touch_cb",
                func_args=[0],
                include_paths=[CPP],
                unknown_dfb_access=unknown,
            )

        @ttl.datamovement()
        def consumer():
            with d.wait() as blk:
                ttl.copy(blk, a[0:1, 0:1]).wait()

    return toucher


def test_undeclared_dfb_access_is_a_contract_error(device):
    with pytest.raises(
        DFBContractError,
        match=r"called cb_reserve_back\(0, 1\) on DFB 'd', which is not a "
        r"dependency of the call",
    ):
        make_toucher(False)(to_dev(torch.zeros(32, 32), device))
    make_toucher(True)(to_dev(torch.zeros(32, 32), device))  # declared unknown access: allowed


@ttl.operation(grid=(1, 1))
def opaque_toucher(a: ttnn.Tensor) -> None:
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def producer():
        ttl.call_extern_func("contract.hpp", "touch_cb", func_args=[d], include_paths=[CPP])

    @ttl.datamovement()
    def consumer():
        with d.wait() as blk:
            ttl.copy(blk, a[0:1, 0:1]).wait()


def test_opaque_dependency_may_do_anything(device):
    opaque_toucher(to_dev(torch.zeros(32, 32), device))


# -- value-dependent checks at first evaluation --------------------------------------------


@ttl.operation(grid=(1, 1))
def over_capacity(a: ttnn.Tensor) -> None:
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)

    @ttl.datamovement()
    def producer():
        ttl.call_extern_func(  # L:capacity
            "contract.hpp",
            "fill_block",
            template_args=[ttl.dfb_descriptor(d)],
            dfb_effects=[ttl.DFBEffect.reserve(d, tiles=8), ttl.DFBEffect.push(d, tiles=8)],
            include_paths=[CPP],
        )


def test_effect_beyond_dfb_capacity(device):
    with pytest.raises(ExternCallError) as info:
        over_capacity(to_dev(torch.zeros(32, 64), device))
    assert (
        "ttl.DFBEffect.reserve(d, tiles=8) exceeds the capacity of DFB 'd' (4 tiles: 2 blocks of 2 tiles)"
        in info.value.message
    )
    assert info.value.loc.line == line_of("# L:capacity")


@ttl.operation(grid=(1, 1))
def dram_tensor_to_compute(a: ttnn.Tensor) -> None:
    @ttl.compute()
    def compute():
        ttl.call_extern_func(  # L:tensor-kind
            "sharded_scale.hpp",
            "scale_local",
            template_args=[1.0],
            func_args=[a, 16],
            include_paths=[CPP],
        )


def test_compute_kernel_tensor_must_be_sharded_l1(device):
    with pytest.raises(ExternCallError) as info:
        dram_tensor_to_compute(to_dev(torch.zeros(32, 32), device))
    assert (
        "a tensor passed to a compute kernel must be height-, width- or block-sharded in L1"
        in info.value.message
    )
    assert info.value.loc.line == line_of("# L:tensor-kind")


# -- native failures ---------------------------------------------------------------------------


def make_failing(header: str, fn: str, arg: int = 1):
    @ttl.operation(grid=(1, 1))
    def failing(a: ttnn.Tensor) -> None:
        @ttl.datamovement()
        def dm():
            ttl.call_extern_func(header, fn, func_args=[arg], include_paths=[CPP])  # L:failing

    return failing


def test_compile_error_reports_compiler_messages_and_generated_source(device, monkeypatch):
    # the interpreter's build of the call's glue (tests/extern/test_engines.py: every engine)
    monkeypatch.setattr(session.OPTIONS, "engine", "python")
    with pytest.raises(NativeBuildError) as info:
        make_failing("broken.hpp", "broken")(to_dev(torch.zeros(32, 32), device))
    text = str(info.value)
    assert "'undeclared_variable' was not declared" in text and "broken.hpp:4" in text
    assert (
        "--- generated source" in text and '#include "broken.hpp"' in text and "broken(v0);" in text
    )
    assert info.value.loc.line == line_of("# L:failing")


def test_missing_symbol_is_named(device):
    with pytest.raises(NativeBuildError) as info:
        make_failing("failures.hpp", "call_missing")(to_dev(torch.zeros(32, 32), device))
    assert "undefined symbol(s) never_defined(int)" in info.value.message


def test_cpp_exception_is_reported_at_the_call(device):
    with pytest.raises(KernelError) as info:
        make_failing("failures.hpp", "throw_error")(to_dev(torch.zeros(32, 32), device))
    assert (
        "a C++ exception escaped the external function: bad code from the external function"
        in info.value.message
    )
    assert info.value.loc.line == line_of("# L:failing")


# -- eager use -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: ttl.call_extern_func("h.hpp", "f"),
        lambda: ttl.dfb_descriptor(None),
        lambda: ttl.get_dfb_id(None),
        lambda: ttl.raw_addr(None),
        lambda: ttl.uint32(3),
        lambda: ttl.DFBEffect.reserve(None, tiles=1),
        lambda: ttl.DFBEffect.repeat(2, []),
        lambda: ttl.DFBAccess.inspect(None),
    ],
    ids=[
        "call_extern_func",
        "dfb_descriptor",
        "get_dfb_id",
        "raw_addr",
        "uint32",
        "effect",
        "repeat",
        "inspect",
    ],
)
def test_eager_use_is_a_runtime_error(call):
    with pytest.raises(RuntimeError, match=r"is valid only in a compiled kernel"):
        call()


def test_second_launch_reuses_the_built_objects(device, monkeypatch):
    from tilewright.lang.extern import runtime

    torch.manual_seed(6)
    a = (2 * torch.rand(64, 512) - 1).to(torch.bfloat16)
    a_t = to_dev(a, device)
    out_t = to_dev(torch.zeros(64, 512), device)
    read_double_write(a_t, out_t)
    built = []
    monkeypatch.setattr(runtime, "build_shared_object", lambda *a, **k: built.append(a))
    out_t2 = to_dev(torch.zeros(64, 512), device)
    read_double_write(a_t, out_t2)
    assert built == []
    assert torch.equal(ttnn.to_torch(out_t), ttnn.to_torch(out_t2))


def test_external_calls_appear_in_the_trace(device, tmp_path):
    from tilewright.device import session

    session.reset(trace=True)
    try:
        make_filler("fill_block", 2, 1)(to_dev(torch.zeros(32, 64), device))
        path = tmp_path / "trace.json"
        session.OPTIONS.tracer.write(str(path))
        assert '"extern fill_block"' in path.read_text()
    finally:
        device.engine.tracer = None
        device.command_queue.tracer = None
        session.reset()
