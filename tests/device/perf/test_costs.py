"""device/perf/costs.py: tile math by op, fidelity and DST mode (reference section 2)."""

import pytest

from tilewright.device.perf import costs
from tilewright.device.perf.arch import BLACKHOLE, WORMHOLE_B0, arch_perf
from tilewright.device.program import MathFidelity
from tilewright.target import Arch


@pytest.mark.parametrize(
    "fidelity, phases",
    [
        (MathFidelity.LoFi, 1),
        (MathFidelity.HiFi2, 2),
        (MathFidelity.HiFi3, 3),
        (MathFidelity.HiFi4, 4),
    ],
)
def test_matmul_tile_costs_16_cycles_per_fidelity_phase(fidelity, phases):
    assert costs.fidelity_phases(fidelity) == phases
    assert costs.matmul_cycles(phases, 0) == 16 * phases  # 16 / 32 / 48 / 64


def test_fp32_dest_accumulation_is_about_7_percent_slower():
    assert costs.matmul_cycles(4, 1) == 69  # ceil(64 * 1.07)
    assert costs.matmul_cycles(1, 1, tiles=100) == 1712


def test_eltwise_mul_pays_fidelity_add_does_not_and_reduce_max_does_not():
    assert [costs.eltwise_cycles(False, p) for p in (1, 4)] == [8, 8]
    assert [costs.eltwise_cycles(True, p) for p in (1, 4)] == [8, 32]
    assert costs.reduce_cycles(False, 2) == 8 and costs.reduce_cycles(True, 4) == 4


def test_sfpu_costs_its_instructions_times_32_and_partial_tiles_their_faces():
    assert costs.sfpu_cycles("relu") == 3 * 32
    assert costs.sfpu_cycles("exp") > costs.sfpu_cycles("relu")
    assert costs.sfpu_cycles("no_such_op") == costs.SFPU_DEFAULT * 32
    assert costs.matmul_cycles(1, 0, faces=2) == 8  # a 16x32 tile is half the work


def test_unpack_and_pack_rates_are_per_architecture():
    wh, bh = WORMHOLE_B0, BLACKHOLE
    assert costs.unpack_cycles(2048, wh.unpack_bytes) == 32  # 4 x 128 bit per cycle
    assert costs.unpack_cycles(4096, wh.unpack_pair_bytes) == 52  # both unpackers
    assert costs.pack_cycles(2048, wh.pack_bytes) == 32
    assert costs.pack_cycles(2048, wh.pack_bytes, l1_acc=True) == 64  # read-modify-write
    assert costs.unpack_cycles(2048, bh.unpack_bytes) == 16


def test_architectures_from_the_descriptor_and_their_clocks():
    assert arch_perf(Arch.WORMHOLE_B0) is WORMHOLE_B0 and WORMHOLE_B0.clock_mhz == 1000
    assert arch_perf(Arch.BLACKHOLE) is BLACKHOLE and BLACKHOLE.clock_mhz == 1350
    assert BLACKHOLE.ns(1350) == pytest.approx(1000.0)
    assert arch_perf(Arch.QUASAR) is WORMHOLE_B0  # nothing published: Wormhole's numbers
