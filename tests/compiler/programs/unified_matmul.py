"""Example 02 (Y = A @ B + C) as a unified body; also runs the explicit original.

Run as a program: prints "SAME unified_matmul" when both give bit-identical results.
"""

import torch
import ttl
import ttnn

TILE = 32
M, K, N = 256, 384, 128
BM, BK, BN = 2, 2, 2
M_BLOCKS = M // TILE // BM
K_BLOCKS = K // TILE // BK
N_BLOCKS = N // TILE // BN


@ttl.operation(grid=(2, 2))
def unified_matmul_bias(a: ttnn.Tensor, b: ttnn.Tensor, c: ttnn.Tensor, y: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BM, BK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BK, BN), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(BM, BN), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(BM, BN), block_count=2)

    grid_x, grid_y = ttl.grid_size(dims=2)
    node_x, node_y = ttl.node(dims=2)
    m_per_node = M_BLOCKS // grid_y
    n_per_node = N_BLOCKS // grid_x
    for i in range(m_per_node):
        m0 = (node_y * m_per_node + i) * BM
        for j in range(n_per_node):
            n0 = (node_x * n_per_node + j) * BN
            with c_dfb.reserve() as c_in:
                ttl.copy(c[m0 : m0 + BM, n0 : n0 + BN], c_in).wait()
            for kb in range(K_BLOCKS):
                k0 = kb * BK
                with a_dfb.reserve() as a_in, b_dfb.reserve() as b_in:
                    ttl.copy(a[m0 : m0 + BM, k0 : k0 + BK], a_in).wait()
                    ttl.copy(b[k0 : k0 + BK, n0 : n0 + BN], b_in).wait()
            with c_dfb.wait() as c_blk, y_dfb.reserve() as y_blk:
                y_blk.store(c_blk)
                for _ in range(K_BLOCKS):
                    with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk:
                        y_blk += a_blk @ b_blk
            with y_dfb.wait() as y_out:
                ttl.copy(y_out, y[m0 : m0 + BM, n0 : n0 + BN]).wait()


@ttl.operation(grid=(2, 2))
def matmul_bias(a: ttnn.Tensor, b: ttnn.Tensor, c: ttnn.Tensor, y: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BM, BK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BK, BN), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(BM, BN), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(BM, BN), block_count=2)

    @ttl.datamovement()
    def reader():
        grid_x, grid_y = ttl.grid_size(dims=2)
        node_x, node_y = ttl.node(dims=2)
        m_per_node = M_BLOCKS // grid_y
        n_per_node = N_BLOCKS // grid_x
        for i in range(m_per_node):
            m0 = (node_y * m_per_node + i) * BM
            for j in range(n_per_node):
                n0 = (node_x * n_per_node + j) * BN
                with c_dfb.reserve() as c_blk:
                    c_xf = ttl.copy(c[m0 : m0 + BM, n0 : n0 + BN], c_blk)
                    c_xf.wait()
                for kb in range(K_BLOCKS):
                    k0 = kb * BK
                    with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                        a_xf = ttl.copy(a[m0 : m0 + BM, k0 : k0 + BK], a_blk)
                        b_xf = ttl.copy(b[k0 : k0 + BK, n0 : n0 + BN], b_blk)
                        a_xf.wait()
                        b_xf.wait()

    @ttl.compute()
    def compute():
        grid_x, grid_y = ttl.grid_size(dims=2)
        out_blocks_per_node = (M_BLOCKS // grid_y) * (N_BLOCKS // grid_x)
        for _ in range(out_blocks_per_node):
            with c_dfb.wait() as c_blk, y_dfb.reserve() as y_blk:
                # Initialise the accumulator (the reserved output block) with the bias.
                y_blk.store(c_blk)
                for _ in range(K_BLOCKS):
                    with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk:
                        # Accumulate into the reserved block (newest `+=` idiom).
                        y_blk += a_blk @ b_blk
            # c_blk is popped and y_blk (holding C + sum_k A_k @ B_k) is pushed here.

    @ttl.datamovement()
    def writer():
        grid_x, grid_y = ttl.grid_size(dims=2)
        node_x, node_y = ttl.node(dims=2)
        m_per_node = M_BLOCKS // grid_y
        n_per_node = N_BLOCKS // grid_x
        for i in range(m_per_node):
            m0 = (node_y * m_per_node + i) * BM
            for j in range(n_per_node):
                n0 = (node_x * n_per_node + j) * BN
                with y_dfb.wait() as y_blk:
                    y_xf = ttl.copy(y_blk, y[m0 : m0 + BM, n0 : n0 + BN])
                    y_xf.wait()


def to_device(t, device):
    return ttnn.from_torch(
        t,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.DRAM_MEMORY_CONFIG,
    )


torch.manual_seed(0)
a_host = (2.0 * torch.rand(M, K) - 1.0).to(torch.bfloat16)
b_host = (2.0 * torch.rand(K, N) - 1.0).to(torch.bfloat16)
c_host = (2.0 * torch.rand(M, N) - 1.0).to(torch.bfloat16)

device = ttnn.open_device(device_id=0)
try:
    args = [to_device(t, device) for t in (a_host, b_host, c_host)]
    y_unified = to_device(torch.zeros(M, N, dtype=torch.bfloat16), device)
    y_explicit = to_device(torch.zeros(M, N, dtype=torch.bfloat16), device)
    unified_matmul_bias(*args, y_unified)
    matmul_bias(*args, y_explicit)
    got, want = ttnn.to_torch(y_unified), ttnn.to_torch(y_explicit)
    if not torch.equal(got, want):
        raise AssertionError("unified and explicit results differ")
    golden = a_host.float() @ b_host.float() + c_host.float()
    if not torch.allclose(got.float(), golden, rtol=0.05, atol=0.03 * golden.abs().max().item()):
        raise AssertionError("mismatch against torch")
finally:
    ttnn.close_device(device)

print("SAME unified_matmul")
