"""y = a @ b + c, K accumulated block by block in the compute kernel (TT-Lang 1.1.1's form)."""

import torch
import ttl
import ttnn

M, K, N = 64, 128, 64  # elements; tiles: 2 x 4 x 2


@ttl.operation(grid=(1, 1))
def matmul(a: ttnn.Tensor, b: ttnn.Tensor, c: ttnn.Tensor, y: ttnn.Tensor):
    mt, kt, nt = M // 32, K // 32, N // 32
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(mt, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, nt), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(mt, nt), block_count=1)
    acc_dfb = ttl.make_dataflow_buffer_like(y, shape=(mt, nt), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(mt, nt), block_count=1)

    @ttl.compute()
    def compute():
        with acc_dfb.reserve() as acc:
            acc.store(ttl.math.fill(acc, 0))
        for _ in range(kt):
            with (
                a_dfb.wait() as ab,
                b_dfb.wait() as bb,
                acc_dfb.wait() as prev,
                acc_dfb.reserve() as acc,
            ):
                acc.store(prev + ab @ bb)
        with acc_dfb.wait() as total, c_dfb.wait() as cb, y_dfb.reserve() as yb:
            yb.store(total + cb)

    @ttl.datamovement()
    def reader():
        with c_dfb.reserve() as cb:
            ttl.copy(c[0:mt, 0:nt], cb).wait()
        for k in range(kt):
            with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                ta = ttl.copy(a[0:mt, k : k + 1], ab)
                tb = ttl.copy(b[k : k + 1, 0:nt], bb)
                ta.wait()
                tb.wait()

    @ttl.datamovement()
    def writer():
        with y_dfb.wait() as yb:
            ttl.copy(yb, y[0:mt, 0:nt]).wait()


def on_device(t, device):
    return ttnn.from_torch(
        t,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.DRAM_MEMORY_CONFIG,
    )


torch.manual_seed(1)
a = torch.rand(M, K, dtype=torch.bfloat16) - 0.5
b = torch.rand(K, N, dtype=torch.bfloat16) - 0.5
c = torch.rand(M, N, dtype=torch.bfloat16) - 0.5
device = ttnn.open_device(device_id=0)
try:
    y = on_device(torch.zeros(M, N, dtype=torch.bfloat16), device)
    matmul(on_device(a, device), on_device(b, device), on_device(c, device), y)
    got = ttnn.to_torch(y).float()
finally:
    ttnn.close_device(device)
want = a.float() @ b.float() + c.float()
assert torch.allclose(got, want, rtol=5e-2, atol=5e-2), (got - want).abs().max()
print("PASS matmul_acc")
