"""Modelled cycle costs that advance kernel clocks (the seed of the performance model).

Numbers follow the tt-metal digest §8 where it gives them (Wormhole @ 1 GHz); the
rest are round placeholders chosen to keep traces readable.  They only affect
logical time (traces, statistics), never results.
"""

CB_OP = 8
"""reserve / push / wait / pop bookkeeping."""
SEMAPHORE_OP = 8
TILE_COPY = 16
"""Unpack one tile into DST (copy_tile) or pack one out."""
TILE_ELTWISE = 8
"""add/sub (no fidelity) per 32x32 tile; mul scales with fidelity phases."""
TILE_SFPU = 64
"""A unary SFPU function on one tile (tens of instructions per lane iteration)."""
TILE_MATMUL = 64
"""32x32x32 tile matmul at HiFi4 (16 / 32 / 48 / 64 cycles for LoFi..HiFi4)."""
TILE_REDUCE = 16
PYTHON_STEP = 1
