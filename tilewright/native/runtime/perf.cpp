// perf.cpp -- the device-time model for native kernels: NoC transfers timed on the
// device's shared occupancy calendar, and a compute kernel's unpack / math / pack
// pipeline.  The twin of tilewright/device/perf/noc.py, kernel.py and pipeline.py: the
// same integer arithmetic on the same shared state (tw_NocPerf, tw_PerfRun), so Python
// and native kernels contend on one NoC; tests/device/perf pins the two.
#include "twrt.h"

namespace twrt {

namespace {

constexpr uint32_t kBucket = 1u << TW_COST_BUCKET_SHIFT;

struct XY {
    int32_t x, y;
};

struct Item {
    int32_t res;
    uint64_t need;
};

inline tw_NocPerf* model(Run* r) { return static_cast<tw_NocPerf*>(r->dev->perf); }

inline int32_t pmod(int32_t a, int32_t m) {
    int32_t v = a % m;
    return v < 0 ? v + m : v;
}

inline uint64_t ceil_rate(uint64_t a, int32_t num, int32_t den) {
    return (a * uint64_t(den) + uint64_t(num) - 1) / uint64_t(num);
}

XY worker_xy(const tw_NocPerf* p, int32_t core) {
    const int32_t* w = static_cast<const int32_t*>(p->worker_xy);
    return {w[2 * core], w[2 * core + 1]};
}

/** A transfer's far end: a core index, or -2 - bank for DRAM (dataflow.cpp's Target). */
XY owner_xy(const tw_NocPerf* p, int32_t owner, int32_t* bank) {
    if (owner >= 0) {
        *bank = -1;
        return worker_xy(p, owner);
    }
    int32_t b = -2 - owner;
    *bank = b;
    const int32_t* d = static_cast<const int32_t*>(p->dram_xy);
    return {d[2 * b], d[2 * b + 1]};
}

int32_t hops(const tw_NocPerf* p, uint32_t noc, XY s, XY d) {
    if (noc == 0) return pmod(d.x - s.x, p->size_x) + pmod(d.y - s.y, p->size_y);
    return pmod(s.x - d.x, p->size_x) + pmod(s.y - d.y, p->size_y);
}

inline int32_t link(const tw_NocPerf* p, uint32_t noc, int32_t x, int32_t y, int32_t dir) {
    return ((int32_t(noc) * p->size_y + y) * p->size_x + x) * 2 + dir;
}

inline int32_t niu(const tw_NocPerf* p, uint32_t noc, XY xy, int32_t eject) {
    return 4 * p->size_x * p->size_y + ((int32_t(noc) * p->size_y + xy.y) * p->size_x + xy.x) * 2 + eject;
}

inline int32_t dram_bank(const tw_NocPerf* p, int32_t bank) { return 8 * p->size_x * p->size_y + bank; }

inline int32_t dram_port(const tw_NocPerf* p, XY xy) {
    return 8 * p->size_x * p->size_y + p->num_dram + xy.y * p->size_x + xy.x;
}

/** The links of the route from s to d (NoC 0: +x then +y; NoC 1: -y then -x). */
int32_t route(const tw_NocPerf* p, uint32_t noc, XY s, XY d, Item* out, int32_t n) {
    int32_t x = s.x, y = s.y;
    if (noc == 0) {
        while (x != d.x) {
            out[n++].res = link(p, 0, x, y, 0);
            x = (x + 1) % p->size_x;
        }
        while (y != d.y) {
            out[n++].res = link(p, 0, x, y, 1);
            y = (y + 1) % p->size_y;
        }
    } else {
        while (y != d.y) {
            out[n++].res = link(p, 1, x, y, 1);
            y = pmod(y - 1, p->size_y);
        }
        while (x != d.x) {
            out[n++].res = link(p, 1, x, y, 0);
            x = pmod(x - 1, p->size_x);
        }
    }
    return n;
}

inline uint64_t epoch(const tw_NocPerf* p) { return uint64_t(p->epoch) << TW_COST_EPOCH_SHIFT; }

uint64_t earliest(const tw_NocPerf* p, int32_t res, uint64_t t) {
    const uint64_t* tags = static_cast<const uint64_t*>(p->tags);
    const uint32_t* used = static_cast<const uint32_t*>(p->used);
    for (;;) {
        uint64_t k = t >> TW_COST_BUCKET_SHIFT;
        size_t slot = size_t(res) * TW_COST_BUCKETS + size_t(k % TW_COST_BUCKETS);
        if (tags[slot] != (epoch(p) | (k + 1))) return t;
        uint64_t busy = (k << TW_COST_BUCKET_SHIFT) + used[slot];
        if (busy <= t) return t;
        if (busy < (k + 1) << TW_COST_BUCKET_SHIFT) return busy;
        t = (k + 1) << TW_COST_BUCKET_SHIFT;
    }
}

uint64_t take(tw_NocPerf* p, int32_t res, uint64_t t, uint64_t need) {
    uint64_t* tags = static_cast<uint64_t*>(p->tags);
    uint32_t* used = static_cast<uint32_t*>(p->used);
    while (need > 0) {
        uint64_t k = t >> TW_COST_BUCKET_SHIFT;
        size_t slot = size_t(res) * TW_COST_BUCKETS + size_t(k % TW_COST_BUCKETS);
        uint64_t tag = epoch(p) | (k + 1);
        if (tags[slot] != tag) {
            tags[slot] = tag;
            used[slot] = 0;
        }
        uint64_t start = k << TW_COST_BUCKET_SHIFT, end = start + kBucket;
        uint64_t s = t > start + used[slot] ? t : start + used[slot];
        if (s >= end) {
            t = end;
            continue;
        }
        uint64_t n = need < end - s ? need : end - s;
        used[slot] = uint32_t(s + n - start);
        need -= n;
        t = s + n;
    }
    return t;
}

/** One packet through every resource of items, from t: see NocModel.reserve. */
uint64_t reserve(tw_NocPerf* p, const Item* items, int32_t n, uint64_t t) {
    uint64_t s = t;
    for (int32_t i = 0; i < n; ++i) s = earliest(p, items[i].res, s);
    uint64_t end = s;
    for (int32_t i = 0; i < n; ++i) {
        uint64_t e = take(p, items[i].res, s, items[i].need);
        if (e > end) end = e;
    }
    return end;
}

inline void done(uint64_t* at, int32_t* is_dram, uint32_t noc, uint64_t t, bool dram) {
    if (t > at[noc]) {
        at[noc] = t;
        is_dram[noc] = dram ? 1 : 0;
    }
}

constexpr int32_t kMaxItems = 2 * TW_NOC_GRID + 8;

uint64_t model_write(tw_NocPerf* p, tw_PerfRun& pr, uint64_t now, uint32_t noc, XY src, XY dst, uint32_t nbytes,
                     int32_t bank, bool posted, uint64_t* landed) {
    Item items[kMaxItems];
    items[0].res = niu(p, noc, src, 0);
    int32_t n = route(p, noc, src, dst, items, 1);
    int32_t fwd = n - 1;
    items[n++].res = niu(p, noc, dst, 1);
    int32_t n_ser = n;
    bool dram = bank >= 0;
    if (dram) items[n++].res = dram_bank(p, bank);
    int32_t back = hops(p, noc, dst, src);
    uint64_t lat = uint64_t(fwd + back) * p->hop + p->base_write + (dram ? p->dram_latency : 0);
    uint64_t left = nbytes;
    for (;;) {
        uint64_t b = left < uint64_t(p->max_packet) ? left : uint64_t(p->max_packet);
        left -= b;
        uint64_t start = now + p->issue_write;
        if (pr.noc_ready[noc] > start) start = pr.noc_ready[noc];
        uint64_t ser = ceil_rate(b, p->write_bytes, p->write_cycles);
        for (int32_t i = 0; i < n_ser; ++i) items[i].need = ser;
        if (dram) items[n_ser].need = ceil_rate(b, p->dram_bank_bytes, p->dram_bank_cycles);
        uint64_t end = reserve(p, items, n, start);
        pr.noc_ready[noc] = end;
        now = start;
        *landed = end + uint64_t(fwd) * p->hop + p->base_write / 2;
        if (!posted) done(pr.write_done, pr.write_dram, noc, end + lat, dram);
        if (left == 0) return now;
    }
}

uint64_t model_read(tw_NocPerf* p, tw_PerfRun& pr, uint64_t now, uint32_t noc, XY req, XY src, uint32_t nbytes,
                    int32_t bank) {
    Item items[kMaxItems];
    items[0].res = niu(p, noc, src, 0);
    int32_t n = route(p, noc, src, req, items, 1);
    int32_t nlinks = n - 1;
    items[n++].res = niu(p, noc, req, 1);
    int32_t n_ser = n;
    uint64_t ask = uint64_t(hops(p, noc, req, src)) * p->hop;
    bool dram = bank >= 0;
    if (dram) {
        ask += p->dram_latency;
        items[n++].res = dram_bank(p, bank);
        items[n++].res = dram_port(p, req);
    }
    uint64_t lat = uint64_t(nlinks) * p->hop + p->base_read;
    uint64_t left = nbytes;
    for (;;) {
        uint64_t b = left < uint64_t(p->max_packet) ? left : uint64_t(p->max_packet);
        left -= b;
        now += p->issue_read;
        if (pr.read_done[noc] > now + uint64_t(p->read_ahead)) now = pr.read_done[noc] - uint64_t(p->read_ahead);
        uint64_t ser = ceil_rate(b, p->read_bytes, p->read_cycles);
        for (int32_t i = 0; i < n_ser; ++i) items[i].need = ser;
        if (dram) {
            items[n_ser].need = ceil_rate(b, p->dram_bank_bytes, p->dram_bank_cycles);
            items[n_ser + 1].need = ceil_rate(b, p->dram_core_bytes, p->dram_core_cycles);
        }
        uint64_t end = reserve(p, items, n, now + ask);
        done(pr.read_done, pr.read_dram, noc, end + lat, dram);
        if (left == 0) return now;
    }
}

uint64_t model_mcast(tw_NocPerf* p, tw_PerfRun& pr, uint64_t now, uint32_t noc, XY src, int32_t x0, int32_t y0,
                     int32_t x1, int32_t y1, uint32_t nbytes, bool linked, uint64_t* landed) {
    XY entry = noc == 0 ? XY{x0, y0} : XY{x1, y1};
    XY row_end = noc == 0 ? XY{x1, entry.y} : XY{x0, entry.y};
    Item items[kMaxItems];
    items[0].res = niu(p, noc, src, 0);
    int32_t n = route(p, noc, src, entry, items, 1);
    n = route(p, noc, entry, row_end, items, n);
    int32_t span = pmod(x1 - x0, p->size_x) + pmod(y1 - y0, p->size_y);
    int32_t far = hops(p, noc, src, entry) + span;
    // every destination acknowledges on the same NoC: the longest way back (around the torus)
    int32_t back = 0;
    const XY corners[4] = {{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}};
    for (const XY& c : corners) {
        int32_t h = hops(p, noc, c, src);
        back = h > back ? h : back;
    }
    uint64_t setup = uint64_t(p->mcast_setup) + uint64_t(p->mcast_setup_per_span) * uint64_t(span + 2);
    uint64_t left = nbytes;
    for (;;) {
        uint64_t b = left < uint64_t(p->max_packet) ? left : uint64_t(p->max_packet);
        left -= b;
        uint64_t start = now + p->issue_write;
        if (pr.noc_ready[noc] > start) start = pr.noc_ready[noc];
        uint64_t need = ceil_rate(b, p->write_bytes, p->write_cycles);
        if (!pr.mcast_linked[noc]) need += setup;
        for (int32_t i = 0; i < n; ++i) items[i].need = need;
        uint64_t end = reserve(p, items, n, start);
        pr.noc_ready[noc] = end;
        pr.mcast_linked[noc] = linked ? 1 : 0;
        now = start;
        *landed = end + uint64_t(far) * p->hop + p->base_write / 2;
        done(pr.write_done, pr.write_dram, noc, end + uint64_t(far + back) * p->hop + p->base_write, false);
        if (left == 0) return now;
    }
}

inline uint64_t front(const tw_PerfRun& pr) {
    uint64_t t = pr.unpack > pr.math ? pr.unpack : pr.math;
    return t > pr.pack ? t : pr.pack;
}

inline int32_t phases(int32_t fidelity) { return fidelity >= 2 && fidelity <= 4 ? fidelity : fidelity <= 1 ? 1 : 4; }

}  // namespace

// -- NoC transfers of the running kernel (device/perf/kernel.py) --------------------------------

uint32_t perf_noc(Run* r, uint32_t noc) { return (noc ? noc : r->noc) & 1; }

void perf_read(Run* r, int32_t owner, uint32_t size, uint32_t noc) {
    tw_NocPerf* p = model(r);
    tw_PerfRun& pr = perf_of(r);
    int32_t bank;
    XY src = owner_xy(p, owner, &bank);
    uint64_t start = r->st->clock;
    r->st->clock = model_read(p, pr, start, perf_noc(r, noc), worker_xy(p, r->core), src, size, bank);
    pr.busy_noc += r->st->clock - start;
    r->st->ops += 1;
}

uint64_t perf_write(Run* r, int32_t owner, uint32_t size, uint32_t noc, bool posted) {
    tw_NocPerf* p = model(r);
    tw_PerfRun& pr = perf_of(r);
    int32_t bank;
    XY dst = owner_xy(p, owner, &bank);
    uint64_t start = r->st->clock, landed = 0;
    r->st->clock =
        model_write(p, pr, start, perf_noc(r, noc), worker_xy(p, r->core), dst, size, bank, posted, &landed);
    pr.busy_noc += r->st->clock - start;
    r->st->ops += 1;
    return landed;
}

uint64_t perf_mcast(Run* r, const int32_t* cores, int32_t n, uint32_t size, uint32_t noc, bool linked) {
    tw_NocPerf* p = model(r);
    tw_PerfRun& pr = perf_of(r);
    XY first = worker_xy(p, cores[0]);
    int32_t x0 = first.x, x1 = first.x, y0 = first.y, y1 = first.y;
    for (int32_t i = 1; i < n; ++i) {
        XY c = worker_xy(p, cores[i]);
        x0 = c.x < x0 ? c.x : x0;
        x1 = c.x > x1 ? c.x : x1;
        y0 = c.y < y0 ? c.y : y0;
        y1 = c.y > y1 ? c.y : y1;
    }
    uint64_t start = r->st->clock, landed = 0;
    r->st->clock =
        model_mcast(p, pr, start, perf_noc(r, noc), worker_xy(p, r->core), x0, y0, x1, y1, size, linked, &landed);
    pr.busy_noc += r->st->clock - start;
    r->st->ops += 1;
    return landed;
}

void perf_barrier(Run* r, uint32_t noc) {
    tw_PerfRun& pr = perf_of(r);
    uint32_t n = perf_noc(r, noc);
    uint64_t now = r->st->clock + TW_COST_BARRIER_OP, t = now;
    bool dram = false;
    if (pr.read_done[n] > t) {
        t = pr.read_done[n];
        dram = pr.read_dram[n] != 0;
    }
    if (pr.write_done[n] > t) {
        t = pr.write_done[n];
        dram = pr.write_dram[n] != 0;
    }
    if (t > now) {
        if (dram) pr.busy_dram += t - now;
        else pr.busy_noc += t - now;
    }
    r->st->clock = t;
    r->st->ops += 1;
}

// -- the compute pipeline (device/perf/pipeline.py) ----------------------------------------------

tw_PerfRun& perf_of(Run* r) {
    tw_PerfRun& pr = r->st->perf;
    if (!pr.compute && r->kind_compute) {
        pr.compute = 1;
        pr.unpack = pr.math = pr.pack = r->st->clock;
        pr.fidelity = phases(r->fidelity);
        pr.fp32_acc = r->fp32_dest_acc ? 1 : 0;
        pr.full_sync = r->dst_full_sync ? 1 : 0;
        const tw_NocPerf* p = model(r);
        pr.unpack_rate = p->unpack_bytes;
        pr.pair_rate = p->unpack_pair_bytes;
        pr.pack_rate = p->pack_bytes;
    }
    return pr;
}

tw_PerfRun& pipe_enter(Run* r, int32_t stage) {
    tw_PerfRun& pr = perf_of(r);
    if (pr.compute) {
        if (stage == kUnpack) {
            pr.unpack += TW_COST_CB_OP;
            r->st->clock = pr.unpack;
        } else {
            pr.pack += TW_COST_CB_OP;
            r->st->clock = pr.pack;
        }
    } else {
        r->st->clock += TW_COST_CB_OP;
    }
    r->st->ops += 1;
    return pr;
}

void pipe_leave(Run* r, tw_PerfRun& pr, int32_t stage) {
    if (!pr.compute) return;
    if (stage == kUnpack) {
        pr.wait_front += r->st->clock - pr.unpack;
        pr.unpack = r->st->clock;
    } else {
        pr.wait_reserve += r->st->clock - pr.pack;
        pr.pack = r->st->clock;
    }
    r->st->clock = front(pr);
}

void pipe_unpack_math(Run* r, uint64_t unpack, uint64_t math) {
    tw_PerfRun& pr = perf_of(r);
    pr.unpack += unpack;
    uint64_t m = pr.math > pr.unpack ? pr.math : pr.unpack;
    pr.math = m + math;
    pr.busy_unpack += unpack;
    pr.busy_math += math;
    r->st->clock = front(pr);
    r->st->ops += 1;
}

void pipe_math(Run* r, uint64_t math) {
    tw_PerfRun& pr = perf_of(r);
    pr.math += math;
    pr.busy_math += math;
    r->st->clock = front(pr);
    r->st->ops += 1;
}

void pipe_acquire(Run* r) {
    tw_PerfRun& pr = perf_of(r);
    int32_t half = pr.dst_next;
    if (pr.dst_free[half] > pr.math) pr.math = pr.dst_free[half];
    if (!pr.full_sync) pr.dst_next = half ^ 1;
    r->st->clock = front(pr);
}

void pipe_handoff(Run* r) {
    tw_PerfRun& pr = perf_of(r);
    pr.dst_commit = pr.math;
    pr.committed = 1;
    if (pr.dst_commit > pr.pack) pr.pack = pr.dst_commit;
    r->st->clock = front(pr);
}

void pipe_pack(Run* r, uint64_t cycles) {
    tw_PerfRun& pr = perf_of(r);
    uint64_t ready = pr.committed ? pr.dst_commit : pr.math;
    if (ready > pr.pack) pr.pack = ready;
    pr.pack += cycles;
    pr.busy_pack += cycles;
    r->st->clock = front(pr);
    r->st->ops += 1;
}

void pipe_release(Run* r) {
    tw_PerfRun& pr = perf_of(r);
    int32_t half = pr.dst_rel;
    pr.dst_free[half] = pr.pack;
    if (!pr.full_sync) pr.dst_rel = half ^ 1;
    pr.committed = 0;
}

// -- tile ops (device/perf/costs.py, pipeline.py tile_*) ------------------------------------------

namespace {

uint64_t cost_unpack(const tw_PerfRun& pr, uint64_t nbytes, bool pair) {
    uint64_t rate = uint64_t(pair ? pr.pair_rate : pr.unpack_rate);
    return (nbytes + rate - 1) / rate;
}

uint64_t cost_pack(const tw_PerfRun& pr, uint64_t nbytes, bool l1_acc) {
    uint64_t rate = uint64_t(pr.pack_rate);
    return (nbytes * (l1_acc ? 2 : 1) + rate - 1) / rate;
}

}  // namespace

void tile_copy(Run* r, uint64_t nbytes, uint64_t tiles) {
    tw_PerfRun& pr = perf_of(r);
    pipe_unpack_math(r, cost_unpack(pr, nbytes, false), uint64_t(TW_COST_DATACOPY_TILE) * tiles);
}

void tile_transpose(Run* r, uint64_t nbytes) {
    tw_PerfRun& pr = perf_of(r);
    pipe_unpack_math(r, cost_unpack(pr, nbytes, false), TW_COST_TRANSPOSE_TILE);
}

void tile_binary(Run* r, uint64_t nbytes0, uint64_t nbytes1, bool mul) {
    tw_PerfRun& pr = perf_of(r);
    pipe_unpack_math(r, cost_unpack(pr, nbytes0 + nbytes1, true),
                     uint64_t(TW_COST_ELTWISE_TILE) * (mul ? pr.fidelity : 1));
}

void tile_dest_reuse(Run* r, uint64_t nbytes, bool mul) {
    tw_PerfRun& pr = perf_of(r);
    pipe_unpack_math(r, cost_unpack(pr, nbytes, false), uint64_t(TW_COST_ELTWISE_TILE) * (mul ? pr.fidelity : 1));
}

void tile_matmul(Run* r, uint64_t in0_bytes, uint64_t in1_bytes, uint64_t tiles) {
    tw_PerfRun& pr = perf_of(r);
    uint64_t c = uint64_t(TW_COST_MATMUL_TILE) * uint64_t(pr.fidelity) * tiles;
    if (pr.fp32_acc) c = (c * TW_COST_FP32_ACC_NUM + TW_COST_FP32_ACC_DEN - 1) / TW_COST_FP32_ACC_DEN;
    pipe_unpack_math(r, cost_unpack(pr, in0_bytes + in1_bytes, false), c);
}

void tile_reduce(Run* r, uint64_t nbytes, uint64_t scaler_bytes, bool is_max) {
    tw_PerfRun& pr = perf_of(r);
    pipe_unpack_math(r, cost_unpack(pr, nbytes + scaler_bytes, true),
                     uint64_t(TW_COST_REDUCE_TILE) * (is_max ? 1 : pr.fidelity));
}

void tile_sfpu(Run* r, int32_t instructions) { pipe_math(r, uint64_t(TW_COST_SFPU_PASS) * uint64_t(instructions)); }

void tile_pack(Run* r, uint64_t nbytes, bool l1_acc) { pipe_pack(r, cost_pack(perf_of(r), nbytes, l1_acc)); }

void tile_through(Run* r, uint64_t in_bytes, uint64_t out_bytes, uint64_t tiles) {
    tw_PerfRun& pr = perf_of(r);
    pipe_unpack_math(r, cost_unpack(pr, in_bytes, false), uint64_t(TW_COST_DATACOPY_TILE) * tiles);
    pipe_pack(r, cost_pack(pr, out_bytes, false));
}

bool dry_run(Run* r) { return model(r)->dry_run != 0; }

}  // namespace twrt

/** A Python kernel's page transfers (device/perf/kernel.py: reads / writes): one read
 *  (write: 0) or write (1) of `length` bytes per page, page k at `owners[k]` (a core index,
 *  or -2 - bank for DRAM), issued in order from core `core` on `noc` starting at `now`,
 *  timed as native kernels' transfers are (model_read / model_write on the same calendar).
 *  Returns the issuer's clock after the last.  The collective kernels (ttnn/ccl) time a
 *  million pages per all-gather this way: 0.2 us a page here, 10 us in Python. */
TW_EXPORT uint64_t twrt_perf_pages(tw_NocPerf* p, tw_PerfRun* pr, uint64_t now, uint32_t noc, int32_t core,
                                   const int32_t* owners, int32_t count, uint32_t length, int32_t write) {
    using namespace twrt;
    XY here = worker_xy(p, core);
    uint64_t t = now, landed = 0;
    for (int32_t k = 0; k < count; ++k) {
        int32_t bank;
        XY far = owner_xy(p, owners[k], &bank);
        t = write ? model_write(p, *pr, t, noc, here, far, length, bank, false, &landed)
                  : model_read(p, *pr, t, noc, here, far, length, bank);
    }
    return t;
}
