"""Cycle costs of tile math and of kernel-API bookkeeping, by op, format, fidelity, DST mode.

The compute engine of a Tensix core (reference ``perf-model.md`` section 2; tt-metal
``tech_reports/matrix_engine``, tt-isa-documentation ``TensixTile/L1.md``):

* FPU matmul: 8x16 . 16x16 per cycle per fidelity phase -> a 32x32x32 tile matmul is 16
  cycles at LoFi, 32 / 48 / 64 at HiFi2 / HiFi3 / HiFi4; with ``fp32_dest_acc_en`` about
  7 % slower (measured).
* FPU elementwise: 8x16 elements per cycle -> 8 cycles per tile; mul per phase, add/sub not.
* FPU reduce: 16x16 per cycle -> 4 cycles per tile; sum/avg per phase, max not.
* SFPU: 32 lanes; one instruction over a 32x32 tile is 32 cycles (4 faces x 8 row
  iterations); a function costs its instruction count (load and store included) times 32.
* Unpack and pack move tiles between L1 and the engine at the architecture's rates
  (``arch.py``: WH one unpacker 4 x 128 bit per cycle, both 5 x 128, the packer 4 x 128;
  with L1 accumulation the packer's read-modify-write halves its rate).

Partial tiles (fewer than 4 faces) cost their share of faces.  Costs are integer cycles,
the same formulas as ``native/runtime/perf.cpp`` (``twrt_perf.h`` carries the constants).
"""

from __future__ import annotations

from tilewright.device.perf.state import BUCKET_SHIFT, BUCKETS, DRY_RUN_KEPT, EPOCH_SHIFT

__all__ = [
    "CB_OP",
    "SEMAPHORE_OP",
    "BARRIER_OP",
    "SET_STATE_OP",
    "MATMUL_TILE",
    "ELTWISE_TILE",
    "REDUCE_TILE",
    "SFPU_PASS",
    "DATACOPY_TILE",
    "TRANSPOSE_TILE",
    "FP32_ACC",
    "SFPU_INSTRUCTIONS",
    "SFPU_DEFAULT",
    "fidelity_phases",
    "matmul_cycles",
    "eltwise_cycles",
    "reduce_cycles",
    "sfpu_cycles",
    "unpack_cycles",
    "pack_cycles",
]

# -- RISC-V bookkeeping of the kernel API (cycles on the calling processor) -------------------
CB_OP = 8
"""cb_reserve_back / cb_push_back / cb_wait_front / cb_pop_front: a few mailbox accesses."""
SEMAPHORE_OP = 8
"""A local semaphore read or write (noc_semaphore_set / the first poll of a wait)."""
BARRIER_OP = 8
"""A NoC barrier's check of the transaction counters (the wait itself is modelled)."""
SET_STATE_OP = 8
"""Programming a command buffer (*_set_state, *_set_trid)."""

# -- the compute engine -------------------------------------------------------------------------
MATMUL_TILE = 16
"""Cycles per fidelity phase of one 32x32x32 tile matmul."""
ELTWISE_TILE = 8
"""Cycles of one FPU elementwise pass over a 32x32 tile."""
DATACOPY_TILE = 8
"""copy_tile's MOVA2D into DST: one elementwise-rate pass."""
TRANSPOSE_TILE = 16
"""transpose_wh: the datacopy with the in-face and face-order transposes."""
REDUCE_TILE = 4
"""Cycles per fidelity phase of one 32x32 reduce."""
SFPU_PASS = 32
"""One SFPU instruction over a 32x32 tile (32 lanes, 4 faces x 8 rows)."""
FP32_ACC = (107, 100)
"""Matmul slow-down with fp32_dest_acc_en (measured ~7 %), as a ratio."""

SFPU_DEFAULT = 8
SFPU_INSTRUCTIONS: dict[str, int] = {
    # one or two ALU instructions, plus the load and store of every lane row
    "relu": 3, "abs": 3, "negative": 3, "sign": 4, "signbit": 3, "square": 3,
    "relu_max": 4, "relu_min": 4, "leaky_relu": 4, "prelu": 5, "threshold": 4, "clamp": 5,
    "hardtanh": 5, "fill": 2, "add_unary": 4, "sub_unary": 4, "mul_unary": 4, "rsub_unary": 4,
    "rsub": 4, "hardsigmoid": 6,
    # rounding
    "floor": 8, "ceil": 8, "trunc": 8, "frac": 8, "round": 10,
    # transcendental functions: polynomial / Newton sequences
    "exp": 16, "exp2": 18, "expm1": 18, "log": 20, "log1p": 22, "sqrt": 16, "rsqrt": 18,
    "recip": 14, "div_unary": 14, "sigmoid": 20, "tanh": 20, "gelu": 24, "silu": 22,
    "softplus": 24, "softsign": 16, "erf": 24, "erfc": 26, "elu": 20, "celu": 20, "selu": 20,
    "sin": 28, "cos": 28, "tan": 32, "asin": 32, "acos": 32, "atan": 32, "asinh": 34,
    "acosh": 34, "atanh": 34, "power": 40, "power_iterative": 40,
    # on DST tiles: a binary SFPU op (add, sub, mul, div, max, min), the DST transpose
    "binary": 5, "transpose_dest": 8,
}  # fmt: skip
"""SFPU instructions per lane row of each function (load and store included)."""

_PHASES = {0: 1, 1: 1, 2: 2, 3: 3, 4: 4}


def fidelity_phases(math_fidelity: int) -> int:
    """Passes of a ``MathFidelity`` value (LoFi = 0 -> 1, HiFi2 -> 2, HiFi3 -> 3, HiFi4 -> 4)."""
    return _PHASES.get(int(math_fidelity), 4)


def _faces(cycles: int, faces: int) -> int:
    return cycles if faces >= 4 else -(-cycles * faces // 4)


def matmul_cycles(phases: int, fp32_acc: int, tiles: int = 1, faces: int = 4) -> int:
    """``tiles`` 32x32x32 tile matmuls (in0 tiles of ``faces`` faces)."""
    c = MATMUL_TILE * phases * tiles
    if fp32_acc:
        c = -(-c * FP32_ACC[0] // FP32_ACC[1])
    return _faces(c, faces)


def eltwise_cycles(mul: bool, phases: int, tiles: int = 1, faces: int = 4) -> int:
    """FPU elementwise add / sub (``mul`` False) or mul over ``tiles`` tiles."""
    return _faces(ELTWISE_TILE * (phases if mul else 1) * tiles, faces)


def reduce_cycles(is_max: bool, phases: int, tiles: int = 1, faces: int = 4) -> int:
    return _faces(REDUCE_TILE * (1 if is_max else phases) * tiles, faces)


def sfpu_cycles(op: str, tiles: int = 1, faces: int = 4) -> int:
    return _faces(SFPU_PASS * SFPU_INSTRUCTIONS.get(op, SFPU_DEFAULT) * tiles, faces)


def unpack_cycles(nbytes: int, rate: int) -> int:
    """Unpacking ``nbytes`` from L1 at ``rate`` bytes per cycle (one operand, or both at
    the pair rate)."""
    return -(-nbytes // rate)


def pack_cycles(nbytes: int, rate: int, l1_acc: bool = False) -> int:
    """Packing ``nbytes`` into L1 at ``rate`` bytes per cycle (half with L1 accumulation)."""
    return -(-nbytes * (2 if l1_acc else 1) // rate)


def c_constants() -> dict[str, int]:
    """These numbers for the native runtime's generated ``twrt_costs.h`` (``TW_COST_<name>``)."""

    return {
        "CB_OP": CB_OP,
        "SEMAPHORE_OP": SEMAPHORE_OP,
        "BARRIER_OP": BARRIER_OP,
        "SET_STATE_OP": SET_STATE_OP,
        "MATMUL_TILE": MATMUL_TILE,
        "ELTWISE_TILE": ELTWISE_TILE,
        "DATACOPY_TILE": DATACOPY_TILE,
        "TRANSPOSE_TILE": TRANSPOSE_TILE,
        "REDUCE_TILE": REDUCE_TILE,
        "SFPU_PASS": SFPU_PASS,
        "SFPU_DEFAULT": SFPU_DEFAULT,
        "FP32_ACC_NUM": FP32_ACC[0],
        "FP32_ACC_DEN": FP32_ACC[1],
        "SFPU_BINARY": SFPU_INSTRUCTIONS["binary"],
        "SFPU_FILL": SFPU_INSTRUCTIONS["fill"],
        "SFPU_TRANSPOSE_DEST": SFPU_INSTRUCTIONS["transpose_dest"],
        "BUCKET_SHIFT": BUCKET_SHIFT,
        "BUCKETS": BUCKETS,
        "EPOCH_SHIFT": EPOCH_SHIFT,
        "DRY_RUN_KEPT": DRY_RUN_KEPT,
    }
