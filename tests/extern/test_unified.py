"""External calls in unified operation bodies: kernel selection, per-kernel arguments, results."""

from __future__ import annotations

import os

import torch

from tilewright import ttl, ttnn

CPP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpp")


def make_op():
    cond = ttl.DispatchCondition(ttl.ScalarType.I64)

    @ttl.operation(grid=(1, 1))
    def scaled_copy(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
        d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        o = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        # One call per selected kernel, each with its own arguments and its own result.
        p = ttl.call_extern_func(
            "scalars.hpp",
            "add_i32",
            func_args={ttl.KernelKind.COMPUTE: [1, 2], ttl.KernelKind.DATA_MOVEMENT: [10, 20]},
            include_paths=[CPP],
            result_type=ttl.ScalarType.I32,
            kernel=(ttl.KernelKind.COMPUTE, ttl.KernelKind.DATA_MOVEMENT),
        )
        c = ttl.call_extern_func(
            "scalars.hpp",
            "identity_i64",
            func_args=[1],
            include_paths=[CPP],
            condition_result=cond,
            kernel=(ttl.KernelKind.COMPUTE, ttl.KernelKind.DATA_MOVEMENT),
        )
        if c:
            with d.reserve() as blk:
                ttl.copy(a[0:1, 0:1], blk).wait()
            with d.wait() as x, o.reserve() as y:
                y.store(x * p)
            with o.wait() as z:
                ttl.copy(z, out[0:1, 0:1]).wait()
        print("p =", p)

    return scaled_copy


def test_multi_kernel_selection_gives_each_kernel_its_own_call(device, capsys):
    a = ttnn.from_torch(
        torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
    )
    out = ttnn.from_torch(
        torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
    )
    make_op()(a, out)
    printed = capsys.readouterr().out
    assert "compute] p = 3" in printed and "data_movement] p = 30" in printed
    assert torch.equal(ttnn.to_torch(out).float(), torch.full((32, 32), 3.0))
