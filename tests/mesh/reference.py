"""Host references of the collectives, in the devices' order of reduction (bf16 rounding per add).

Reduce-scatter over N chips: part ``j`` starts at chip ``j+1`` and goes round the ring,
``((x[j+1] + x[j+2]) + ... + x[j+N-1]) + x[j]``, each addition rounded to bfloat16.
All-reduce: reduce-scatter along the innermost dimension whose tiles split into N parts,
then all-gather; when no dimension splits, ``((x[0] + x[1]) + ...) + x[N-1]`` on every chip.
"""

from __future__ import annotations

import torch


def add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.float() + b.float()).to(a.dtype)


def ring_reduce_scatter(xs: list[torch.Tensor], dim: int) -> list[torch.Tensor]:
    n = len(xs)
    chunks = [x.chunk(n, dim=dim) for x in xs]
    parts = []
    for j in range(n):
        acc = chunks[(j + 1) % n][j]
        for s in range(2, n):
            acc = add(acc, chunks[(j + s) % n][j])
        parts.append(add(acc, chunks[j][j]) if n > 1 else acc)
    return parts


def scatter_dim(shape: tuple[int, ...], n: int, tile: int = 32) -> int | None:
    pages = [*shape[:-2], shape[-2] // tile, shape[-1] // tile]
    return next((d for d in reversed(range(len(shape))) if pages[d] % n == 0), None)


def ring_all_reduce(xs: list[torch.Tensor]) -> torch.Tensor:
    dim = scatter_dim(tuple(xs[0].shape), len(xs))
    if dim is None:
        total = xs[0]
        for x in xs[1:]:
            total = add(total, x)
        return total
    return torch.cat(ring_reduce_scatter(xs, dim), dim=dim)
