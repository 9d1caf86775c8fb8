"""device/perf/noc.py: the NoC model against tt-metal's measured latencies (reference section 3)."""

import csv
from pathlib import Path

import pytest

from tilewright import ttnn
from tilewright.device.perf.state import PerfRun

_DATA = Path("shared", "testdata", "perf", "noc_latencies.csv")
CSV = next(
    (p / _DATA for p in Path(__file__).resolve().parents if (p / _DATA).exists()),
    None,
)  # tt-metal's measured NoC latencies, in the project's shared/ folder beside the repo
needs_csv = pytest.mark.skipif(CSV is None, reason=f"{_DATA} is not beside the repository")


@pytest.fixture(scope="module", params=["n150", "p150"])
def model(request):
    dev = ttnn.open_device(device_id=0, board=request.param)
    yield dev.perf
    ttnn.close_device(dev)


def model_index(model, x, y):
    """The core index of logical worker (x, y) (cores are numbered row-major)."""
    return y * len({w[0] for w in model.workers}) + x


def _single(model, direction, same_axis, size, n=1):
    """Cycles of n transfers (0, 0) -> (1, 1) (or (0, 1)) and a barrier, as the benchmark."""
    model.reset()
    pr = PerfRun()
    a = model.workers[model_index(model, 0, 0)]
    b = model.workers[model_index(model, 0, 1) if same_axis else model_index(model, 1, 1)]
    t = 0
    for _ in range(n):
        if direction == "write":
            t, _ = model.write(pr, t, 0, a, b, size)
        else:
            t = model.read(pr, t, 1, a, b, size)
    return model.barrier(pr, t, 0 if direction == "write" else 1, True, True)


def _measured(arch, direction, same_axis, n):
    out = {}
    with CSV.open() as f:
        for r in csv.DictReader(f):
            if (
                r["arch"] == arch
                and r["memory"] == "L1"
                and r["pattern"] in ("ONE_TO_ONE", "ONE_FROM_ONE")
                and r["direction"] == direction
                and r["same_axis"] == str(int(same_axis))
                and r["stateful"] == "0"
                and r["loopback"] == "0"
                and r["noc_index"] == ("0" if direction == "write" else "1")
                and r["num_transactions"] == str(n)
                and r["clamped_not_measured"] == "0"
            ):
                out[int(r["transaction_size_bytes"])] = float(r["latency_cycles"])
    return out


@needs_csv
@pytest.mark.parametrize("direction", ["write", "read"])
@pytest.mark.parametrize("same_axis", [False, True])
def test_single_transfers_within_10_percent_of_silicon(model, direction, same_axis):
    measured = _measured(model.arch.name, direction, same_axis, 1)
    assert len(measured) == 11
    for size, cycles in measured.items():
        predicted = _single(model, direction, same_axis, size)
        assert abs(predicted / cycles - 1) <= 0.10, (size, predicted, cycles)


@needs_csv
def test_streaming_bandwidth_is_the_measured_one(model):
    """256 x 64 KiB back to back: WH write 31.1 / read 28.7 B/cycle, BH 62.1 / 61.6."""
    for direction in ("write", "read"):
        cycles = _single(model, direction, False, 65536, 256)
        meas = _measured(model.arch.name, direction, False, 256)[65536]
        assert abs(cycles / meas - 1) <= 0.1


def test_a_shared_link_slows_both_transfers(model):
    model.reset()
    src0, src1 = model.workers[model_index(model, 0, 0)], model.workers[model_index(model, 1, 0)]
    dst = model.workers[model_index(model, 3, 0)]
    alone = PerfRun()
    model.write(alone, 0, 0, src1, dst, 65536)
    model.reset()
    a, b = PerfRun(), PerfRun()
    model.write(a, 0, 0, src0, dst, 65536)  # both cross the links (1, 0) -> (3, 0)
    model.write(b, 0, 0, src1, dst, 65536)
    assert b.write_done[0] > alone.write_done[0] * 1.5


def test_the_calendar_shares_by_time_not_by_turn(model):
    """A transfer issued later in simulated time does not delay one issued earlier, even
    if the scheduler ran it first."""
    model.reset()
    src, dst = model.workers[0], model.workers[model_index(model, 2, 0)]
    late, early = PerfRun(), PerfRun()
    model.write(late, 50_000, 0, src, dst, 8192)
    model.write(early, 0, 0, src, dst, 8192)
    model.reset()
    ref = PerfRun()
    model.write(ref, 0, 0, src, dst, 8192)
    assert early.write_done[0] == ref.write_done[0]


def test_linked_multicast_is_cheaper_than_unicast_to_each(model):
    src = model.workers[0]
    dests = [model.workers[model_index(model, x, y)] for y in (1, 2, 3) for x in (1, 2, 3)]
    xs, ys = [d[0] for d in dests], [d[1] for d in dests]
    rect = (min(xs), min(ys), max(xs), max(ys))
    model.reset()
    linked, plain, unicast = PerfRun(), PerfRun(), PerfRun()
    t = 0
    for i in range(16):
        t, _ = model.multicast(linked, t, 0, src, rect, 8192, i < 15)
    model.reset()
    t = 0
    for _ in range(16):
        t, _ = model.multicast(plain, t, 0, src, rect, 8192, False)
    model.reset()
    t = 0
    for _ in range(16):
        for d in dests:
            t, _ = model.write(unicast, t, 0, src, d, 8192)
    assert linked.write_done[0] < plain.write_done[0] < unicast.write_done[0]


def test_dram_bank_placement_matters(model):
    """A reader next to its bank vs the same reader at the far corner of the grid."""
    model.reset()
    bank = 0
    near = min(
        model.workers,
        key=lambda w: model.hops(0, model.dram[bank], w) + model.hops(0, w, model.dram[bank]),
    )
    far = max(model.workers, key=lambda w: model.hops(0, model.dram[bank], w))
    a, b = PerfRun(), PerfRun()
    model.read(a, 0, 0, near, model.dram[bank], 2048, bank)
    model.read(b, 0, 0, far, model.dram[bank], 2048, bank)
    assert b.read_done[0] > a.read_done[0] and a.read_dram[0] == 1


def test_one_core_streams_dram_at_the_single_core_ideal(model):
    """WH 22 B/cycle, BH 33 (tt-metal data_movement ideal_performance.md)."""
    model.reset()
    pr = PerfRun()
    here = model.workers[0]
    t = 0
    n = len(model.dram)
    for i in range(96):
        bank = i % n
        t = model.read(pr, t, 0, here, model.dram[bank], 8192, bank)
    rate = 96 * 8192 / model.barrier(pr, t, 0, True, False)
    ideal = model.arch.dram_core_rate[0] / model.arch.dram_core_rate[1]
    assert ideal * 0.9 <= rate <= ideal * 1.02


# -- the occupancy calendar against its definition ---------------------------------------------


def _reference_reserve(calendar: dict, epoch: int, items, t: int) -> int:
    """NocModel.reserve as its docstring defines it, on a dict (resource, ring slot) ->
    (launch, bucket index, cycles taken): the slow, obvious form of the same ring."""
    from tilewright.device.perf.state import BUCKET_SHIFT, BUCKETS

    size = 1 << BUCKET_SHIFT

    def taken(res, k):
        launch, index, used = calendar.get((res, k % BUCKETS), (None, None, 0))
        return used if (launch, index) == (epoch, k) else None

    s = t
    for res, _ in items:  # the earliest time every resource has a free cycle
        while True:
            k = s // size
            used = taken(res, k)
            if used is None or k * size + used <= s:
                break
            if k * size + used < (k + 1) * size:
                s = k * size + used
                break
            s = (k + 1) * size
    end = s
    for res, need in items:  # then need cycles of each, bucket by bucket
        t = s
        while need > 0:
            k = t // size
            used = taken(res, k) or 0
            first = max(t, k * size + used)
            calendar[(res, k % BUCKETS)] = (epoch, k, used)
            if first >= (k + 1) * size:
                t = (k + 1) * size
                continue
            n = min(need, (k + 1) * size - first)
            calendar[(res, k % BUCKETS)] = (epoch, k, first + n - k * size)
            need -= n
            t = first + n
        end = max(end, t)
    return end


@pytest.mark.parametrize("seed", range(4))
def test_the_calendar_reserves_as_defined(model, seed):
    """Random packets (shared resources, needs across buckets, times out of order, a
    launch boundary): the model's reserve gives the ends and bucket contents of the
    definition above."""
    import random

    from tilewright.device.perf.state import BUCKETS, EPOCH_SHIFT

    rng = random.Random(seed)
    pool = rng.sample(range(model.state.num_resources), 24)
    calendar: dict = {}
    for _launch in range(2):
        model.reset()
        epoch = model.state.epoch
        clock = 0
        for _ in range(1500):
            clock += rng.randrange(0, 400)
            t = max(0, clock - rng.randrange(0, 3000))  # kernels run out of time order
            if rng.random() < 0.02:
                t += rng.randrange(1 << 17)  # past the ring's window: buckets are reused
            # needs of 0 too: a zero-byte transfer is a packet that takes no cycles
            items = [(r, rng.randrange(0, 700)) for r in rng.sample(pool, rng.randrange(1, 16))]
            want = _reference_reserve(calendar, epoch, items, t)
            assert model.reserve(items, t) == want
        for (res, slot), (launch_epoch, k, used) in calendar.items():
            if launch_epoch != epoch:
                continue
            cell = res * BUCKETS + slot
            assert model.tags[cell] == (epoch << EPOCH_SHIFT | (k + 1)), (res, slot)
            assert model.used[cell] == used, (res, slot, k)
