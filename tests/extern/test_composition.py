"""External calls and composition (reference B.8, B.9, C): composed calls run, DFB
parameters name their caller's DFBs, kernel handles are keyed by operation identity, a
tensor passed twice reuses one accessor, and the reference's own selector example runs."""

from __future__ import annotations

import os
import textwrap

import pytest
import torch

from tilewright import ttnn

CPP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpp")
HEADER = f"import torch\nfrom tilewright import ttl, ttnn\nCPP = {CPP!r}\n"

WRITER = """
@ttl.operation(grid=None)
def write_out(src: ttl.DFB, out):
    ttl.call_extern_func(
        "writer.hpp", "write_tiles",
        template_args=[ttl.dfb_descriptor(src)],
        func_args=[out, 0, 1],
        dfb_effects=[ttl.DFBEffect.wait(src, tiles=1), ttl.DFBEffect.pop(src, tiles=1)],
        include_paths=[CPP],
        kernel=ttl.KernelKind.DATA_MOVEMENT,
    )


@ttl.operation(grid=(1, 1))
def double_and_write(a, out):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    with d.reserve() as blk:
        ttl.copy(a[0:1, 0:1], blk).wait()
    with d.wait() as x, o.reserve() as y:
        y.store(x * 2)
    ttl.call_extern_func(
        "writer.hpp", "write_tiles",
        template_args=[ttl.dfb_descriptor(o)],
        func_args=[out, 0, 1],
        dfb_effects=[ttl.DFBEffect.wait(o, tiles=1), ttl.DFBEffect.pop(o, tiles=1)],
        include_paths=[CPP],
        kernel=ttl.KernelKind.DATA_MOVEMENT,
    )


@ttl.operation(grid=(1, 1))
def composed(a, b, out_a, out_b):
    double_and_write(a, out_a)
    double_and_write(b, out_b)


@ttl.operation(grid=(1, 1))
def through_dfb_parameter(a, out):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    with d.reserve() as blk:
        ttl.copy(a[0:1, 0:1], blk).wait()
    with d.wait() as x, o.reserve() as y:
        y.store(x + 1)
    write_out(o, out)
"""


def load(tmp_path, source: str) -> dict:
    path = tmp_path / "prog.py"
    path.write_text(HEADER + textwrap.dedent(source))
    ns: dict = {"__name__": "prog"}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    return ns


def dev(t, device):
    return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)


def first_tile(t):
    return ttnn.to_torch(t).float()[:32, :32]


def test_composed_external_calls_run_with_the_callers_dfbs(tmp_path, device):
    ns = load(tmp_path, WRITER)
    a, b = dev(torch.full((32, 32), 3.0), device), dev(torch.full((32, 32), 5.0), device)
    out_a, out_b = dev(torch.zeros(32, 32), device), dev(torch.zeros(32, 32), device)
    ns["composed"](a, b, out_a, out_b)
    assert torch.equal(first_tile(out_a), torch.full((32, 32), 6.0))
    assert torch.equal(first_tile(out_b), torch.full((32, 32), 10.0))
    # each expansion has its own copy of the callee's call site, under the caller's names
    sites = ns["composed"].extern_plan.sites
    assert len(sites) == 2 and len({s.id for s in sites}) == 2
    named = sorted(s.template_args[0].dfb for s in sites)
    assert all(n.startswith("o__double_and_write_inl_") for n in named) and named[0] != named[1]
    # the lifecycle proofs see the copies' declared effects (not opaque, unvalidated calls)
    facts = {f.dfb: f for f in ns["composed"].split_plan.lifecycle.dfbs}
    assert all(facts[n].bounded and not facts[n].opaque for n in named), [facts[n] for n in named]


def test_a_dfb_parameter_named_in_an_external_call(tmp_path, device):
    ns = load(tmp_path, WRITER)  # decorating write_out used to raise KeyError
    assert ns["write_out"].split_plan.expand_only
    out = dev(torch.zeros(32, 32), device)
    ns["through_dfb_parameter"](dev(torch.full((32, 32), 2.0), device), out)
    assert torch.equal(first_tile(out), torch.full((32, 32), 3.0))
    (site,) = ns["through_dfb_parameter"].extern_plan.sites
    assert site.template_args[0].dfb == "o"  # the parameter 'src' is the caller's 'o'


HANDLES = """
def make_writer(offset):
    writer = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)

    @ttl.operation(grid=None)
    def write_out(src: ttl.DFB, out):
        ttl.call_extern_func(
            "writer.hpp", "write_tiles",
            template_args=[ttl.dfb_descriptor(src)],
            func_args=[out, offset, 1],
            dfb_effects=[ttl.DFBEffect.wait(src, tiles=1), ttl.DFBEffect.pop(src, tiles=1)],
            include_paths=[CPP],
            kernel=writer,
        )

    return write_out


first = make_writer(0)
second = make_writer(OFFSET)


@ttl.operation(grid=(1, 1))
def two(out):
    d0 = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)
    d1 = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)
    with d0.reserve() as x:
        x.store(ttl.block.fill(1.0, shape=(1, 1)))
    with d1.reserve() as y:
        y.store(ttl.block.fill(2.0, shape=(1, 1)))
    first(d0, out)
    second(d1, out)
"""


@pytest.mark.parametrize("offset, kernels, tiles", [(1, 2, (1.0, 2.0)), (0, 1, (2.0, 0.0))])
def test_kernel_handles_are_keyed_by_operation_identity(tmp_path, device, offset, kernels, tiles):
    ns = load(tmp_path, HANDLES.replace("OFFSET", str(offset)))
    explicit = [k for k in ns["two"].split_plan.kernels if k.role == "explicit"]
    # different captures: two logical 'writer' kernels; equal captures: one
    assert len(explicit) == kernels and {k.name for k in explicit} == {"writer"}
    out = dev(torch.zeros(32, 64), device)
    ns["two"](out)
    got = ttnn.to_torch(out).float()
    assert (got[0, 0].item(), got[0, 32].item()) == tiles
    names = [lk.name for lk in ns["two"].last_program.logical_kernels if lk.role == "explicit"]
    assert sorted(ns["two"].last_program.kernel_slots) == sorted(
        {"compute", *(["writer", "writer_2"] if kernels == 2 else ["writer"])}
    ), names


def test_a_tensor_passed_twice_reuses_one_accessor(tmp_path, device, capsys):
    ns = load(
        tmp_path,
        """
        @ttl.operation(grid=(1, 1))
        def op(a, out):
            r = ttl.call_extern_func(
                "compat.hpp", "same_accessor", func_args=[a, 7, a], include_paths=[CPP],
                result_type=ttl.ScalarType.I64, kernel=ttl.KernelKind.DATA_MOVEMENT,
            )
            print("same accessor", r)
            d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
            with d.reserve() as blk:
                ttl.copy(a[0, 0], blk).wait()
            with d.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()
        """,
    )
    ns["op"](dev(torch.ones(32, 32), device), dev(torch.zeros(32, 32), device))
    # 1000: both C++ parameters are one accessor object; 7: the argument order is kept
    assert "same accessor 1007" in capsys.readouterr().out


def test_the_references_selector_example_runs(tmp_path, device, capsys):
    # The reference's external-functions selector example, unmodified except its header path
    # (the original is compile-only against a fake header) and one print -- including the
    # host tensor input, run on the one open device.
    source = """
    import ttl
    import ttnn
    from ttl import KernelKind, call_extern_func
    from ttl import KernelKind as KK

    FAKE_HEADER = CPP + "/compat.hpp"
    reader = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)


    @ttl.operation(grid=(2, 1))
    def selected_external_calls(inp):
        descriptor_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
        drain_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

        ttl.call_extern_func(
            FAKE_HEADER,
            "compute_entry",
            template_args=[ttl.dfb_descriptor(descriptor_dfb), -3, True],
            func_args=[ttl.raw_addr(inp), 7],
            dfb_dependencies=[drain_dfb],
            dfb_effects=[
                ttl.DFBEffect.reserve(drain_dfb, tiles=1),
                ttl.DFBEffect.push(drain_dfb, tiles=1),
            ],
            include_paths=["/tmp"],
            kernel=ttl.KernelKind.COMPUTE,
        )
        core_x, _ = ttl.node(dims=2)
        if core_x == 0:
            call_extern_func(
                FAKE_HEADER,
                "reader_entry",
                template_args=[5],
                func_args=[ttl.raw_addr(inp)],
                kernel=reader,
            )
        ttl.call_extern_func(
            FAKE_HEADER,
            "shared_entry",
            kernel=KernelKind.COMPUTE | KernelKind.DATA_MOVEMENT,
        )
        ttl.call_extern_func(FAKE_HEADER, "alias_entry", kernel=KK.COMPUTE)

        unused = drain_dfb.wait()
        unused.pop(kernel=reader)


    if __name__ == "__main__":
        import torch

        inp = ttnn.from_torch(
            torch.zeros((32, 32), dtype=torch.bfloat16),
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
        )
        selected_external_calls(inp)  # a host tensor: staged on the open device
        print("selectors:", [k.describe() for k in selected_external_calls.split_plan.kernels])
    """
    path = tmp_path / "selectors.py"
    path.write_text(f"CPP = {CPP!r}\n" + textwrap.dedent(source))
    from tilewright.cli.runner import run_program

    assert run_program(str(path), []) == 0, capsys.readouterr().err
    assert (
        "selectors: ['compute', 'data_movement', \"data_movement kernel 'reader'\"]"
        in capsys.readouterr().out
    )


def test_user_code_cannot_name_a_call_site(tmp_path):
    from tilewright.errors import ExternCallError

    with pytest.raises(ExternCallError, match=r"unexpected keyword argument\(s\): _site"):
        load(
            tmp_path,
            """
            @ttl.operation(grid=(1, 1))
            def op(a):
                ttl.call_extern_func("compat.hpp", "shared_entry", kernel=ttl.KernelKind.COMPUTE, _site=1)
            """,
        )
