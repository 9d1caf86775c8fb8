// dataflow.cpp -- the data-movement kernel API: identity, arguments, circular buffers,
// NoC transfers (unicast, multicast, stateful), semaphores and tensor accessors.
//
// Semantics are those of the Python kernel API (device/cb.py, device/kernel_api/dataflow.py,
// device/transfer.py, device/kernel_api/accessor.py); the messages are the same table's
// (fail_<name>: twrt_messages.h, generated from device/api_messages.py).
#include <cinttypes>

#include "twrt.h"

namespace twrt {

namespace {

constexpr uint64_t kLocalMask = (uint64_t(1) << 36) - 1;

// The chip tag in bits 60..63 (device/noc.py chip_tag): 0 is "the issuing chip".
inline uint32_t chip_tag(int32_t chip) { return uint32_t(chip % 15) + 1; }

inline uint64_t xy_addr(const tw_DeviceInfo* d, uint32_t x, uint32_t y, uint64_t addr) {
    return (uint64_t(y & 63) << 42) | (uint64_t(x & 63) << 36) | (addr & kLocalMask) |
           (uint64_t(chip_tag(d->chip)) << 60);
}

void observe(Run* r, int32_t kind, int32_t cb, int32_t n, tw::Loc loc) {
    const int64_t args[3] = {kind, cb, n};
    request(r, "observe", 3, args, loc);
}

uint32_t word_addr(Run* r, uint32_t addr, tw::Loc loc) {
    if (addr % 4 || uint64_t(addr) + 4 > r->dev->l1_size) fail_semaphore_word(r, loc, addr);
    return addr;
}

tw_WaitList* watch_list(Run* r, uint32_t addr, tw::Loc loc) {
    tw_CoreState* cs = r->cs;
    tw_WatchEntry* free_entry = nullptr;
    for (auto& e : cs->watch) {
        if (e.active) {
            if (e.addr == addr) return &e.waiters;
        } else if (free_entry == nullptr) {
            free_entry = &e;
        }
    }
    if (free_entry == nullptr) fail_watch_full(r, loc, TW_MAX_WATCH);
    free_entry->addr = addr;
    free_entry->active = 1;
    free_entry->waiters.head = free_entry->waiters.tail = TW_NO_RUN;
    cs->n_watch += 1;
    return &free_entry->waiters;
}

/** A resolved NoC target: memory, local address, owner (core index, or -2 - bank). */
struct Target {
    uint8_t* mem;
    uint64_t local;
    int32_t owner;
};

uint8_t* dram_channel(Run* r, int32_t bank, tw::Loc loc) {
    tw_DeviceInfo* d = r->dev;
    if (d->dram[bank] == nullptr) {
        const int64_t args[1] = {bank};
        request(r, "map_dram", 1, args, loc);
    }
    return static_cast<uint8_t*>(d->dram[bank]);
}

Target resolve(Run* r, uint64_t noc_addr, uint32_t size, const char* what, tw::Loc loc) {
    tw_DeviceInfo* d = r->dev;
    uint32_t x = (noc_addr >> 36) & 63, y = (noc_addr >> 42) & 63;
    uint64_t local = noc_addr & kLocalMask;
    if (size == 0) fail_noc_size(r, loc, what, 0);
    uint32_t tag = (noc_addr >> 60) & 15;
    if (tag && tag != chip_tag(d->chip)) {
        char target[64];
        fail_noc_cross_chip(r, loc, what, fmt_noc_address_what(target, sizeof target, noc_addr), tag, d->chip);
    }
    int32_t m = d->noc_map[y * TW_NOC_GRID + x];
    if (m >= 0) {
        if (local + size > d->l1_size) {
            tw_CoreState* cs = static_cast<tw_CoreState*>(d->cores) + m;
            fail_noc_l1_range(r, loc, what, local, local + size, d->l1_size, cs->logical_x, cs->logical_y);
        }
        return {static_cast<uint8_t*>(d->l1_base) + size_t(m) * d->l1_slot, local, m};
    }
    if (m <= -2) {
        int32_t bank = -2 - m;
        if (local + size > d->dram_size) fail_noc_dram_range(r, loc, what, local, local + size, bank, d->dram_size);
        return {dram_channel(r, bank, loc), local, m};
    }
    fail_noc_target(r, loc, what, noc_addr, x, y);
}

Target local_target(Run* r, uint32_t addr, uint32_t size, const char* what, tw::Loc loc) {
    if (addr >= r->dev->l1_size) fail_not_l1_address(r, loc, addr, r->cs->logical_x, r->cs->logical_y, r->dev->l1_size);
    if (size == 0 || uint64_t(addr) + size > r->dev->l1_size)
        fail_noc_local_range(r, loc, what, addr, uint64_t(addr) + size, r->cs->logical_x, r->cs->logical_y);
    return {r->l1, addr, r->core};
}

void copy(Run* r, const Target& src, const Target& dst, uint32_t size, const char* what, tw::Loc loc) {
    uint32_t align = (src.owner < 0 || dst.owner < 0) ? r->dev->dram_alignment : r->dev->l1_alignment;
    if (src.local % align != dst.local % align) fail_noc_align(r, loc, what, src.local, dst.local, align);
    // A dry run moves no payload, only flags (transfers of at most TW_COST_DRY_RUN_KEPT bytes).
    if (size <= TW_COST_DRY_RUN_KEPT || !dry_run(r))
        std::memmove(dst.mem + dst.local, src.mem + src.local, size);
    if (dst.owner >= 0) notify_write(r->dev, dst.owner, uint32_t(dst.local), uint32_t(dst.local + size));
}

/** Cores of a multicast rectangle (tt-metal reach rules); returns the count. */
int32_t mcast_targets(Run* r, uint64_t mcast, bool include_self, const char* what, int32_t* out, uint32_t* local,
                      tw::Loc loc) {
    tw_DeviceInfo* d = r->dev;
    uint32_t xa = (mcast >> 48) & 63, ya = (mcast >> 54) & 63, xb = (mcast >> 36) & 63, yb = (mcast >> 42) & 63;
    uint32_t x0 = xa < xb ? xa : xb, x1 = xa < xb ? xb : xa, y0 = ya < yb ? ya : yb, y1 = ya < yb ? yb : ya;
    *local = uint32_t(mcast & kLocalMask);
    int32_t n = 0;
    for (uint32_t y = y0; y <= y1; ++y) {
        for (uint32_t x = x0; x <= x1; ++x) {
            int32_t m = d->noc_map[y * TW_NOC_GRID + x];
            if (m < 0) fail_mcast_not_worker(r, loc, what, x0, y0, x1, y1, x, y);
            if (m == r->core && !include_self) continue;
            out[n++] = m;
        }
    }
    if (n == 0) fail_mcast_only_sender(r, loc, what);
    return n;
}

const char* const kStateKinds[5] = {"read", "read_one_packet", "write", "write_one_packet",
                                    "write_one_packet_with_trid"};

}  // namespace

tw_CBState* cb_of(Run* r, int32_t cb, tw::Loc loc) {
    if (cb < 0 || cb >= r->dev->num_cbs || !r->cbs[cb].configured)
        fail_cb_not_configured(r, loc, cb, r->cs->logical_x, r->cs->logical_y);
    return &r->cbs[cb];
}

void notify_write(tw_DeviceInfo* dev, int32_t core, uint32_t start, uint32_t end) {
    tw_CoreState* cs = static_cast<tw_CoreState*>(dev->cores) + core;
    if (cs->n_watch == 0) return;
    for (auto& e : cs->watch) {
        if (e.active && e.addr >= start && e.addr < end) {
            e.active = 0;
            cs->n_watch -= 1;
            wake_all(cur(), &e.waiters);
        }
    }
}

}  // namespace twrt

using namespace twrt;

// -- identity, arguments -------------------------------------------------------------------------

TW_EXPORT uint32_t twrt_my_noc_x(uint32_t) { return cur()->cs->noc_x; }
TW_EXPORT uint32_t twrt_my_noc_y(uint32_t) { return cur()->cs->noc_y; }
TW_EXPORT uint32_t twrt_logical_x() { return cur()->cs->logical_x; }
TW_EXPORT uint32_t twrt_logical_y() { return cur()->cs->logical_y; }
TW_EXPORT uint8_t twrt_noc_index() { return uint8_t(cur()->noc); }

TW_EXPORT uint32_t twrt_arg(int32_t index, tw::Loc loc) {
    Run* r = cur();
    if (index < 0 || uint32_t(index) >= r->n_rta)
        fail_arg_range(r, loc, index, r->cs->logical_x, r->cs->logical_y, r->n_rta);
    uint32_t v;
    std::memcpy(&v, r->l1 + r->rta_addr + 4 * uint32_t(index), 4);
    return v;
}

TW_EXPORT uint32_t twrt_common_arg(int32_t index, tw::Loc loc) {
    Run* r = cur();
    if (index < 0 || uint32_t(index) >= r->n_crta) fail_common_arg_range(r, loc, index, r->n_crta);
    uint32_t v;
    std::memcpy(&v, r->l1 + r->crta_addr + 4 * uint32_t(index), 4);
    return v;
}

TW_EXPORT uint32_t twrt_arg_addr(int32_t index) { return cur()->rta_addr + 4 * uint32_t(index); }
TW_EXPORT uint32_t twrt_common_arg_addr(int32_t index) { return cur()->crta_addr + 4 * uint32_t(index); }

TW_EXPORT uint32_t twrt_compile_time_arg(int32_t index, tw::Loc loc) {
    Run* r = cur();
    if (index < 0 || uint32_t(index) >= r->n_cta) fail_compile_arg_range(r, loc, index, r->n_cta);
    return r->cta[index];
}

// -- circular buffers --------------------------------------------------------------------------------

// The protocol of device/cb.py, on the same fields: `reserved` / `waited` are the pages this
// kernel API's cb_reserve_back / cb_wait_front opened (cumulative), closed by pushes / pops.
// A kernel that opened none (a sharded CB pushed without a reserve) is held to the buffer's
// occupancy only.

// A compiled kernel announces each external call (phase 0) and its end (1, or 2: a C++
// exception escaped): Python checks the call's declared contract there (lang/extern/checks.py,
// the interpreter's checks), and in between this run shows it every CB protocol action, as a
// hosted external call of a Python kernel does (twrt_run_observe).
TW_EXPORT void twrt_extern_call(int32_t phase, int32_t contract, int64_t value, tw::Loc loc) {
    Run* r = cur();
    r->observed = 0;
    const int64_t args[3] = {phase, contract, value};
    request(r, "extern_call", 3, args, loc);
    r->observed = phase == 0;
}

TW_EXPORT void twrt_cb_reserve_back(int32_t cb, int32_t n, tw::Loc loc) {
    Run* r = cur();
    tw_CBState* c = cb_of(r, cb, loc);
    tw_PerfRun& pr = pipe_enter(r, kPack);
    if (r->observed) observe(r, 0, cb, n, loc);
    if (uint32_t(n) > c->num_pages) fail_cb_reserve_never(r, loc, cb, n, c->num_pages);
    while (c->num_pages - ((c->received - c->acked) & 0xFFFF) < uint32_t(n))
        wait_on(r, &c->back_waiters, TW_WAITKIND_CB_RESERVE, cb, n, loc);
    if (uint32_t(n) > c->reserved) c->reserved = uint32_t(n);
    pipe_leave(r, pr, kPack);
}

TW_EXPORT void twrt_cb_push_back(int32_t cb, int32_t n, tw::Loc loc) {
    Run* r = cur();
    tw_CBState* c = cb_of(r, cb, loc);
    tw_PerfRun& pr = pipe_enter(r, kPack);
    if (r->observed) observe(r, 1, cb, n, loc);
    uint32_t filled = (c->received - c->acked) & 0xFFFF;
    if (filled + uint32_t(n) > c->num_pages) fail_cb_push_overflow(r, loc, cb, n, filled, c->num_pages);
    if (c->reserved > 0 && c->reserved < uint32_t(n)) fail_cb_push_unreserved(r, loc, cb, n, c->reserved);
    c->reserved = c->reserved > uint32_t(n) ? c->reserved - uint32_t(n) : 0;
    uint32_t wr = c->wr_ptr + uint32_t(n) * c->page_size;
    if (wr == c->fifo_limit) {
        wr = c->fifo_addr;
    } else if (wr > c->fifo_limit) {
        fail_cb_push_wrap(r, loc, cb, n, c->num_pages, c->wr_ptr, c->fifo_limit);
    }
    c->wr_ptr = wr;
    c->received = (c->received + uint32_t(n)) & 0xFFFF;
    c->pack_counter = 0;
    if (c->front_waiters.head != TW_NO_RUN) wake_all(r, &c->front_waiters);
    pipe_leave(r, pr, kPack);
}

TW_EXPORT void twrt_cb_wait_front(int32_t cb, int32_t n, tw::Loc loc) {
    Run* r = cur();
    tw_CBState* c = cb_of(r, cb, loc);
    tw_PerfRun& pr = pipe_enter(r, kUnpack);
    if (r->observed) observe(r, 2, cb, n, loc);
    if (uint32_t(n) > c->num_pages) fail_cb_wait_never(r, loc, cb, n, c->num_pages);
    while (((c->received - c->acked) & 0xFFFF) < uint32_t(n))
        wait_on(r, &c->front_waiters, TW_WAITKIND_CB_WAIT, cb, n, loc);
    if (uint32_t(n) > c->waited) c->waited = uint32_t(n);
    pipe_leave(r, pr, kUnpack);
}

TW_EXPORT void twrt_cb_pop_front(int32_t cb, int32_t n, tw::Loc loc) {
    Run* r = cur();
    tw_CBState* c = cb_of(r, cb, loc);
    tw_PerfRun& pr = pipe_enter(r, kUnpack);
    if (r->observed) observe(r, 3, cb, n, loc);
    uint32_t filled = (c->received - c->acked) & 0xFFFF;
    if (uint32_t(n) > filled) fail_cb_pop_unpushed(r, loc, cb, n, filled);
    if (c->waited > 0 && c->waited < uint32_t(n)) fail_cb_pop_unwaited(r, loc, cb, n, c->waited);
    c->waited = c->waited > uint32_t(n) ? c->waited - uint32_t(n) : 0;
    uint32_t rd = c->rd_ptr + uint32_t(n) * c->page_size;
    if (rd == c->fifo_limit) {
        rd = c->fifo_addr;
    } else if (rd > c->fifo_limit) {
        fail_cb_pop_wrap(r, loc, cb, n, c->num_pages, c->rd_ptr, c->fifo_limit);
    }
    c->rd_ptr = rd;
    c->acked = (c->acked + uint32_t(n)) & 0xFFFF;
    if (c->back_waiters.head != TW_NO_RUN) wake_all(r, &c->back_waiters);
    pipe_leave(r, pr, kUnpack);
}

namespace {
// A true answer of the non-blocking tests opens the pages, as the blocking call would.
bool reservable(tw_CBState* c, int32_t n) {
    if (c->num_pages - ((c->received - c->acked) & 0xFFFF) < uint32_t(n)) return false;
    if (uint32_t(n) > c->reserved) c->reserved = uint32_t(n);
    return true;
}
bool available(tw_CBState* c, int32_t n) {
    if (((c->received - c->acked) & 0xFFFF) < uint32_t(n)) return false;
    if (uint32_t(n) > c->waited) c->waited = uint32_t(n);
    return true;
}
}  // namespace

TW_EXPORT bool twrt_cb_pages_reservable_at_back(int32_t cb, int32_t n, tw::Loc loc) {
    Run* r = cur();
    tw_CBState* c = cb_of(r, cb, loc);
    if (reservable(c, n)) return true;
    poll_yield(r, TW_WAITKIND_CB_RESERVE, cb, n, loc);
    return reservable(c, n);
}

TW_EXPORT bool twrt_cb_pages_available_at_front(int32_t cb, int32_t n, tw::Loc loc) {
    Run* r = cur();
    tw_CBState* c = cb_of(r, cb, loc);
    if (available(c, n)) return true;
    poll_yield(r, TW_WAITKIND_CB_WAIT, cb, n, loc);
    return available(c, n);
}

TW_EXPORT uint32_t twrt_cb_write_ptr(int32_t cb, tw::Loc loc) { return cb_of(cur(), cb, loc)->wr_ptr; }
TW_EXPORT uint32_t twrt_cb_read_ptr(int32_t cb, tw::Loc loc) { return cb_of(cur(), cb, loc)->rd_ptr; }

TW_EXPORT uint32_t twrt_cb_info(int32_t cb, int32_t what, tw::Loc loc) {
    tw_CBState* c = cb_of(cur(), cb, loc);
    switch (what) {
        case 0: return c->page_size;
        case 1: return c->num_pages;
        case 2: return c->fifo_size;
        case 3: return c->fifo_addr;
        case 4: return c->tile_bytes ? c->tile_bytes : c->page_size;
        case 5: return c->tile_h * c->tile_w;
        case 6: return c->tile_faces;
        case 7: return c->format_code;
        case 8: return c->fifo_limit;
        case 9: return c->received;
        case 10: return c->acked;
        default: return 0;
    }
}

// -- NoC addresses --------------------------------------------------------------------------------

TW_EXPORT uint64_t twrt_noc_xy_addr(uint32_t x, uint32_t y, uint32_t addr) { return xy_addr(cur()->dev, x, y, addr); }

TW_EXPORT uint64_t twrt_noc_local_addr(uint32_t addr, tw::Loc loc) {
    Run* r = cur();
    if (addr >= r->dev->l1_size)
        fail_not_l1_address(r, loc, addr, r->cs->logical_x, r->cs->logical_y, r->dev->l1_size);
    return xy_addr(r->dev, r->cs->noc_x, r->cs->noc_y, addr);
}

TW_EXPORT uint32_t twrt_bank_count(bool dram) {
    Run* r = cur();
    return dram ? uint32_t(r->dev->num_dram) : uint32_t(r->dev->num_cores);
}

TW_EXPORT uint32_t twrt_align(bool dram) {
    Run* r = cur();
    return dram ? r->dev->dram_alignment : r->dev->l1_alignment;
}

static uint64_t bank_xy(Run* r, uint32_t bank, bool dram, uint64_t addr) {
    tw_DeviceInfo* d = r->dev;
    if (dram) return xy_addr(d, bank, uint32_t(d->dram_noc_y), addr);
    tw_CoreState* cs = static_cast<tw_CoreState*>(d->cores) + bank;
    return xy_addr(d, cs->noc_x, cs->noc_y, addr);
}

TW_EXPORT uint64_t twrt_noc_bank_addr(uint32_t bank, uint32_t offset, bool dram, tw::Loc loc) {
    Run* r = cur();
    uint32_t n = twrt_bank_count(dram);
    if (bank >= n) fail_bank_range(r, loc, dram ? "DRAM" : "L1", bank, n);
    return bank_xy(r, bank, dram, offset);
}

TW_EXPORT uint64_t twrt_noc_bank_page_addr(bool dram, uint32_t base, uint32_t aligned_page, uint32_t page,
                                           uint32_t offset, tw::Loc) {
    Run* r = cur();
    uint32_t n = twrt_bank_count(dram);
    uint32_t bank = page % n, index = page / n;
    return bank_xy(r, bank, dram, uint64_t(base) + uint64_t(index) * aligned_page + offset);
}

// -- NoC transfers ----------------------------------------------------------------------------------

TW_EXPORT void twrt_noc_read(uint64_t src, uint32_t dst, uint32_t size, uint32_t noc, tw::Loc loc) {
    Run* r = cur();
    note(r, loc);
    const char* what = "noc_async_read";
    Target s = resolve(r, src, size, what, loc);
    Target d = local_target(r, dst, size, what, loc);
    copy(r, s, d, size, what, loc);
    perf_read(r, s.owner, size, noc);
}

TW_EXPORT void twrt_noc_write(uint32_t src, uint64_t dst, uint32_t size, uint32_t noc, tw::Loc loc) {
    Run* r = cur();
    note(r, loc);
    const char* what = "noc_async_write";
    Target s = local_target(r, src, size, what, loc);
    Target d = resolve(r, dst, size, what, loc);
    uint64_t landed = perf_write(r, d.owner, size, noc, false);
    wake_at(r, landed, [&] { copy(r, s, d, size, what, loc); });
}

// flags: bit 0 loopback (the sender is a destination), bit 1 linked (the next multicast
// reuses the path).
TW_EXPORT void twrt_noc_write_mcast(uint32_t src, uint64_t dst, uint32_t size, uint32_t num_dests, uint32_t flags,
                                    uint32_t noc, tw::Loc loc) {
    Run* r = cur();
    note(r, loc);
    bool loopback = (flags & 1) != 0, linked = (flags & 2) != 0;
    const char* what = loopback ? "noc_async_write_multicast_loopback_src" : "noc_async_write_multicast";
    Target s = local_target(r, src, size, what, loc);
    int32_t cores[TW_NOC_GRID * TW_NOC_GRID / 4];
    uint32_t local;
    int32_t n = mcast_targets(r, dst, loopback, what, cores, &local, loc);
    if (uint32_t(n) != num_dests)
        fail_mcast_dests(r, loc, what, num_dests, n, loopback ? " (including the sender)" : " (excluding the sender)");
    if (uint64_t(local) + size > r->dev->l1_size) {
        tw_CoreState* cs = static_cast<tw_CoreState*>(r->dev->cores) + cores[0];
        fail_noc_l1_range(r, loc, what, local, uint64_t(local) + size, r->dev->l1_size, cs->logical_x, cs->logical_y);
    }
    uint64_t landed = perf_mcast(r, cores, n, size, noc, linked);
    wake_at(r, landed, [&] {
        for (int32_t i = 0; i < n; ++i) {
            Target d{static_cast<uint8_t*>(r->dev->l1_base) + size_t(cores[i]) * r->dev->l1_slot, local, cores[i]};
            copy(r, s, d, size, what, loc);
        }
    });
}

// One barrier for reads and writes alike (the headers make every barrier this call).
TW_EXPORT void twrt_noc_barrier(uint32_t noc) { perf_barrier(cur(), noc); }

TW_EXPORT void twrt_noc_inline_dw_write(uint64_t addr, uint32_t value, uint32_t be, uint32_t noc, tw::Loc loc) {
    Run* r = cur();
    Target t = resolve(r, addr, 4, "noc_inline_dw_write", loc);
    if (t.owner < 0) fail_no_dram_target(r, loc, "noc_inline_dw_write");
    uint32_t old;
    std::memcpy(&old, t.mem + t.local, 4);
    uint32_t mask = 0;
    for (int i = 0; i < 4; ++i)
        if (be >> i & 1) mask |= 0xFFu << (8 * i);
    uint32_t v = (old & ~mask) | (value & mask);
    std::memcpy(t.mem + t.local, &v, 4);
    uint64_t landed = perf_write(r, t.owner, 4, noc, false);
    wake_at(r, landed, [&] { notify_write(r->dev, t.owner, uint32_t(t.local), uint32_t(t.local + 4)); });
}

TW_EXPORT void twrt_noc_set_state(int32_t kind, uint64_t addr, uint32_t size, uint32_t noc, tw::Loc) {
    Run* r = cur();
    r->noc_state_addr[kind][noc & 1] = addr;
    r->noc_state_size[kind][noc & 1] = size;
    r->noc_state_set[kind][noc & 1] = 1;
    tick(r, TW_COST_SET_STATE_OP);
}

TW_EXPORT uint64_t twrt_noc_state_addr(int32_t kind, uint32_t local, uint32_t noc, uint32_t* size, tw::Loc loc) {
    Run* r = cur();
    if (!r->noc_state_set[kind][noc & 1]) fail_noc_state(r, loc, kStateKinds[kind], noc);
    if (size != nullptr) *size = r->noc_state_size[kind][noc & 1];
    return (r->noc_state_addr[kind][noc & 1] & ~uint64_t(0xFFFFFFFF)) | local;
}

TW_EXPORT void twrt_noc_check_trid(uint32_t trid, const char* what, tw::Loc loc) {
    if (trid > 15) fail_trid_range(cur(), loc, what, trid);
}

// -- semaphores ------------------------------------------------------------------------------------

TW_EXPORT uint32_t twrt_semaphore(uint32_t id, tw::Loc loc) {
    Run* r = cur();
    if (id >= TW_NUM_SEMAPHORES) fail_semaphore_id(r, loc, id, TW_NUM_SEMAPHORES - 1);
    return r->dev->sem_base + 16 * id;
}

TW_EXPORT void twrt_sem_set(uint32_t addr, uint32_t value, tw::Loc loc) {
    Run* r = cur();
    uint32_t a = word_addr(r, addr, loc);
    std::memcpy(r->l1 + a, &value, 4);
    notify_write(r->dev, r->core, a, a + 4);
    tick(r, TW_COST_SEMAPHORE_OP);
}

TW_EXPORT void twrt_sem_wait(uint32_t addr, uint32_t value, bool at_least, tw::Loc loc) {
    Run* r = cur();
    tick(r, TW_COST_SEMAPHORE_OP);
    uint32_t a = word_addr(r, addr, loc);
    for (;;) {
        uint32_t v;
        std::memcpy(&v, r->l1 + a, 4);
        if (at_least ? v >= value : v == value) return;
        wait_on(r, watch_list(r, a, loc), at_least ? TW_WAITKIND_SEM_GE : TW_WAITKIND_SEM_EQ, int32_t(a), value, loc);
    }
}

TW_EXPORT void twrt_sem_inc(uint64_t addr, uint32_t incr, uint32_t noc, tw::Loc loc) {
    Run* r = cur();
    Target t = resolve(r, addr, 4, "noc_semaphore_inc", loc);
    if (t.owner < 0) fail_no_dram_target(r, loc, "noc_semaphore_inc");
    if (t.local % 4) fail_semaphore_align(r, loc, "noc_semaphore_inc", t.local);
    uint64_t landed = perf_write(r, t.owner, 4, noc, false);
    wake_at(r, landed, [&] {
        uint32_t v;
        std::memcpy(&v, t.mem + t.local, 4);
        v += incr;
        std::memcpy(t.mem + t.local, &v, 4);
        notify_write(r->dev, t.owner, uint32_t(t.local), uint32_t(t.local + 4));
    });
}

TW_EXPORT void twrt_sem_inc_mcast(uint64_t addr, uint32_t incr, uint32_t num_dests, uint32_t noc, tw::Loc loc) {
    Run* r = cur();
    const char* what = "noc_semaphore_inc_multicast";
    int32_t cores[TW_NOC_GRID * TW_NOC_GRID / 4];
    uint32_t local;
    int32_t n = mcast_targets(r, addr, false, what, cores, &local, loc);
    if (uint32_t(n) != num_dests) fail_mcast_dests(r, loc, what, num_dests, n, "");
    if (local % 4 || uint64_t(local) + 4 > r->dev->l1_size) fail_semaphore_word(r, loc, local);
    uint64_t landed = perf_mcast(r, cores, n, 4, noc, false);
    wake_at(r, landed, [&] {
        for (int32_t i = 0; i < n; ++i) {
            uint8_t* mem = static_cast<uint8_t*>(r->dev->l1_base) + size_t(cores[i]) * r->dev->l1_slot;
            uint32_t v;
            std::memcpy(&v, mem + local, 4);
            v += incr;
            std::memcpy(mem + local, &v, 4);
            notify_write(r->dev, cores[i], local, local + 4);
        }
    });
}

TW_EXPORT void twrt_l1_written(uint32_t addr, uint32_t size) {
    Run* r = cur();
    notify_write(r->dev, r->core, addr, addr + size);
}

// -- tensor accessors ------------------------------------------------------------------------------

TW_EXPORT void twrt_accessor_init(tw_accessor* acc, const uint32_t* w, uint32_t n, uint32_t base, uint32_t page_size,
                                  uint32_t offset, tw::Loc loc) {
    Run* r = cur();
    auto incomplete = [&] { fail_accessor_args(r, loc, offset); };
    if (n < 2) incomplete();
    std::memset(acc, 0, sizeof(*acc));
    acc->is_dram = (w[0] & 2) != 0;
    acc->sharded = (w[0] & 1) != 0;
    acc->base = base;
    if (!acc->sharded) {
        acc->aligned_page_size = w[1];
        acc->page_size = page_size ? page_size : w[1];
        acc->num_banks = twrt_bank_count(acc->is_dram);
        return;
    }
    uint32_t rank = w[1], nb = w[2];
    if (rank != 2 || nb == 0 || nb > 64 || n < 3 + 2 * rank + (nb + 1) / 2) incomplete();
    acc->rank = rank;
    acc->num_banks = nb;
    acc->tensor_shape[0] = w[3];
    acc->tensor_shape[1] = w[4];
    acc->shard_shape[0] = w[5];
    acc->shard_shape[1] = w[6];
    for (uint32_t i = 0; i < nb; ++i) {
        uint32_t word = w[7 + i / 2];
        uint32_t x = (i % 2 == 0) ? (word >> 8) & 0xFF : (word >> 24) & 0xFF;
        uint32_t y = (i % 2 == 0) ? word & 0xFF : (word >> 16) & 0xFF;
        acc->banks[i] = uint16_t((x << 8) | y);
    }
    if (page_size == 0) fail_accessor_page_size(r, loc);
    acc->page_size = page_size;
    uint32_t a = r->dev->l1_alignment;
    acc->aligned_page_size = (page_size + a - 1) / a * a;
}

TW_EXPORT uint64_t twrt_accessor_page_addr(const tw_accessor* acc, uint32_t page, uint32_t offset, tw::Loc loc) {
    Run* r = cur();
    if (!acc->sharded) {
        uint32_t bank = page % acc->num_banks, index = page / acc->num_banks;
        return bank_xy(r, bank, acc->is_dram, uint64_t(acc->base) + uint64_t(index) * acc->aligned_page_size + offset);
    }
    uint32_t tr = acc->tensor_shape[0], tc = acc->tensor_shape[1], sr = acc->shard_shape[0], sc = acc->shard_shape[1];
    if (page >= tr * tc) fail_accessor_page(r, loc, page, tr * tc);
    uint32_t pr = page / tc, pc = page % tc;
    uint32_t shards_per_row = (tc + sc - 1) / sc;
    uint32_t shard = (pr / sr) * shards_per_row + pc / sc;
    uint32_t bank = shard % acc->num_banks;
    uint32_t in_shard = (pr % sr) * sc + pc % sc;
    uint64_t page_off = uint64_t(shard / acc->num_banks) * sr * sc + in_shard;
    return xy_addr(r->dev, acc->banks[bank] >> 8, acc->banks[bank] & 0xFF,
                   uint64_t(acc->base) + page_off * acc->aligned_page_size + offset);
}

TW_EXPORT uint64_t twrt_accessor_shard_addr(const tw_accessor* acc, uint32_t shard, uint32_t offset, tw::Loc loc) {
    Run* r = cur();
    if (!acc->sharded) fail_accessor_interleaved(r, loc, "get_shard_noc_addr");
    uint32_t sr = acc->shard_shape[0], sc = acc->shard_shape[1];
    uint32_t n = ((acc->tensor_shape[0] + sr - 1) / sr) * ((acc->tensor_shape[1] + sc - 1) / sc);
    if (shard >= n) fail_accessor_shard(r, loc, shard, n);
    uint32_t bank = shard % acc->num_banks;
    uint64_t page_off = uint64_t(shard / acc->num_banks) * sr * sc;
    return xy_addr(r->dev, acc->banks[bank] >> 8, acc->banks[bank] & 0xFF,
                   uint64_t(acc->base) + page_off * acc->aligned_page_size + offset);
}

TW_EXPORT uint32_t twrt_accessor_shard_bytes(const tw_accessor* acc, tw::Loc loc) {
    Run* r = cur();
    if (!acc->sharded) fail_accessor_interleaved(r, loc, "shard access");
    return acc->aligned_page_size * acc->shard_shape[0] * acc->shard_shape[1];
}

TW_EXPORT void twrt_accessor_from_handle(tw_accessor* acc, int64_t handle, tw::Loc loc) {
    // The accessor of a tensor passed to an external call: Python writes its description.
    Run* r = cur();
    const int64_t args[2] = {handle, int64_t(reinterpret_cast<uintptr_t>(acc))};
    request(r, "accessor_describe", 2, args, loc);
}
