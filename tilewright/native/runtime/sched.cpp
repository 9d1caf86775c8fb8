// sched.cpp -- the native scheduler: wait lists, the ready ring, requests to Python,
// errors, and the C entry points Python calls (tilewright/native/runtime.py).
//
// The ready ring and the wait lists are shared with the Python engine; both sides
// implement the same few operations on them (device/engine.py: make_ready,
// SharedQueue.add / wake).  twrt_resume runs native fibers back to back while the head
// of the ring is a native run, and returns to Python otherwise.
#include <cstdio>
#include <cstdlib>
#include <new>

#include "twrt.h"

namespace twrt {

void make_ready(Engine* e, int32_t index, uint64_t now) {
    tw_RunState& st = e->runs[index];
    // --trace: the woken run's wait as a span, recorded where device/engine.py's
    // make_ready records it (before the clock moves), by the waker's request.
    if (e->hdr->trace && now > st.wait_start && g_cur != nullptr) {
        const int64_t args[3] = {index, static_cast<int64_t>(st.wait_start), static_cast<int64_t>(now)};
        request(g_cur, "trace_wait", 3, args, tw::Loc{g_cur->last_file, g_cur->last_line});
    }
    if (st.clock < now) {
        st.blocked += now - st.clock;
        st.clock = now;
    }
    st.phase = TW_RUNPHASE_READY;
    if (st.kind == TW_RUNKIND_PYTHON) st.woken = 1;
    tw_EngineHeader* h = e->hdr;
    e->ring[h->ring_tail & h->ring_mask] = index;
    h->ring_tail += 1;
    h->spins = 0;
}

void wait_on(Run* r, tw_WaitList* q, int32_t kind, int32_t obj, int64_t a, tw::Loc loc) {
    Engine* e = r->eng;
    tw_RunState* st = r->st;
    st->wait_kind = kind;
    st->wait_obj = obj;
    st->wait_a = a;
    st->src_file = const_cast<char*>(loc.file);
    st->src_line = loc.line;
    st->waits += 1;
    st->wait_start = st->clock;
    // --trace: Python describes the wait now, as the interpreter does when a kernel blocks.
    if (e->hdr->trace) request(r, "trace_block", 0, nullptr, loc);
    st->phase = TW_RUNPHASE_BLOCKED;
    st->next = TW_NO_RUN;
    if (q->tail == TW_NO_RUN) {
        q->head = r->index;
    } else {
        e->runs[q->tail].next = r->index;
    }
    q->tail = r->index;
    e->hdr->spins = 0;
    fiber_yield(r, ST_BLOCKED);
}

void wake_all(Run* waker, tw_WaitList* q) {
    int32_t i = q->head;
    if (i == TW_NO_RUN) return;
    q->head = q->tail = TW_NO_RUN;
    Engine* e = waker->eng;
    uint64_t now = waker->st->clock;
    while (i != TW_NO_RUN) {
        int32_t next = e->runs[i].next;
        make_ready(e, i, now);
        i = next;
    }
}

void poll_yield(Run* r, int32_t kind, int32_t obj, int64_t a, tw::Loc loc) {
    Engine* e = r->eng;
    tw_EngineHeader* h = e->hdr;
    h->spins += 1;
    uint32_t pending = h->ring_tail - h->ring_head;
    if (static_cast<int64_t>(h->spins) > static_cast<int64_t>(h->poll_limit) * (pending + 1)) {
        r->st->wait_kind = kind;
        r->st->wait_obj = obj;
        r->st->wait_a = a;
        fail(r, ERR_DEADLOCK, loc, "keeps polling without any kernel making progress");
    }
    int32_t spins = h->spins;
    r->st->wait_kind = kind;
    r->st->wait_obj = obj;
    r->st->wait_a = a;
    r->st->src_file = const_cast<char*>(loc.file);
    r->st->src_line = loc.line;
    make_ready(e, r->index, 0);
    h->spins = spins;
    fiber_yield(r, ST_BLOCKED);
}

int64_t request(Run* r, const char* name, int32_t argc, const int64_t* argv, tw::Loc loc) {
    note(r, loc);
    r->req_name = name;
    r->req_argc = argc < 16 ? argc : 16;
    for (int32_t i = 0; i < r->req_argc; ++i) r->req_args[i] = argv[i];
    r->req_result = 0;
    fiber_yield(r, ST_REQUEST);
    return r->req_result;
}

static void set_error(Run* r, int32_t cls, int32_t cb, tw::Loc loc, const char* fmt, va_list ap) {
    r->err_class = cls;
    r->err_cb = cb;
    r->err_message = 0;
    r->err_file = loc.file;
    r->err_line = loc.line;
    std::vsnprintf(r->err_msg, sizeof(r->err_msg), fmt, ap);
}

void l1_overflow(Run* r, uint64_t addr, uint64_t size, const char* what, tw::Loc loc) {
    fail(r, ERR_L1, loc,
         "%s: L1 range [0x%llx, 0x%llx) of core (%u, %u) ends beyond its %u B of L1 (it would reach the next "
         "core's memory)",
         what, static_cast<unsigned long long>(addr), static_cast<unsigned long long>(addr + size), r->cs->logical_x,
         r->cs->logical_y, r->dev->l1_size);
}

void fail(Run* r, int32_t cls, tw::Loc loc, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_error(r, cls, -1, loc, fmt, ap);
    va_end(ap);
    fiber_exit(r, ST_FAILED);
}

void fail_msg(Run* r, int32_t cls, int32_t msg, tw::Loc loc, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_error(r, cls, -1, loc, fmt, ap);
    va_end(ap);
    r->err_message = msg;
    fiber_exit(r, ST_FAILED);
}

}  // namespace twrt

using namespace twrt;

// -- kernel-facing -------------------------------------------------------------------------------

TW_EXPORT int64_t twrt_request(const char* name, int32_t argc, const int64_t* argv, tw::Loc loc) {
    return request(cur(), name, argc, argv, loc);
}

TW_EXPORT void twrt_fail(int32_t cls, const char* message, tw::Loc loc) {
    fail(cur(), cls, loc, "%s", message);
}

// -- tracing (tilewright run --trace): the running kernel's clock, and a span from `start`
// to now handed to Python's tracer; without --trace a span costs this flag check.
TW_EXPORT uint64_t twrt_trace_clock() { return cur()->st->clock; }

TW_EXPORT void twrt_trace_span(const char* name, uint64_t start, const char* key, const char* format, ...) {
    Run* r = cur();
    if (r->eng == nullptr || !r->eng->hdr->trace) return;
    char text[512];
    va_list ap;
    va_start(ap, format);
    std::vsnprintf(text, sizeof text, format, ap);
    va_end(ap);
    const int64_t args[4] = {reinterpret_cast<int64_t>(name), static_cast<int64_t>(start),
                             reinterpret_cast<int64_t>(key), reinterpret_cast<int64_t>(text)};
    request(r, "trace_span", 4, args, tw::Loc{r->last_file, r->last_line});
}

// -- Python-facing -----------------------------------------------------------------------------

namespace {

// DST buffers (the physical DST tiles of 32x32 floats) are recycled like fiber stacks: a
// launch of a 64-core program would otherwise allocate and zero 4 MiB or more.  A buffer
// goes back with the tiles its run wrote cleared -- the tiles outside dst_dirty are zero,
// which clear_dst (compute.cpp) relies on too -- so it comes out of the pool as zero as a
// new one.  Buffers are pooled with their size (a descriptor's DST size: 16..32 tiles).
constexpr size_t kDstTileFloats = 32 * 32;
struct PooledDst {
    float* dst;
    int32_t tiles;
};
PooledDst g_free_dst[256];
int g_n_free_dst = 0;

float* dst_alloc(int32_t tiles) {
    {
        NativeSection section(nullptr);  // the pool is process-wide
        for (int i = g_n_free_dst - 1; i >= 0; --i) {
            if (g_free_dst[i].tiles != tiles) continue;
            float* dst = g_free_dst[i].dst;
            g_free_dst[i] = g_free_dst[--g_n_free_dst];
            return dst;
        }
    }
    return new float[size_t(tiles) * kDstTileFloats]();
}

void dst_free(float* dst, int32_t tiles, uint32_t dirty) {
    if (dst == nullptr) return;
    for (uint32_t m = dirty; m; m &= m - 1) std::memset(dst + __builtin_ctz(m) * kDstTileFloats, 0, kDstTileFloats * 4);
    {
        NativeSection section(nullptr);
        if (g_n_free_dst < 256) {
            g_free_dst[g_n_free_dst++] = PooledDst{dst, tiles};
            return;
        }
    }
    delete[] dst;
}

}  // namespace

TW_EXPORT Engine* twrt_engine_new(tw_EngineHeader* hdr) {
    {
        NativeSection section(hdr);
        window_install();
    }
    auto* e = new Engine;
    e->hdr = hdr;
    e->runs = static_cast<tw_RunState*>(hdr->runs);
    e->ring = static_cast<int32_t*>(hdr->ring);
    e->n = hdr->n_runs;
    e->native = new Run*[e->n > 0 ? e->n : 1]();
    return e;
}

TW_EXPORT void twrt_engine_free(Engine* e) {
    delete[] e->native;
    delete e;
}

TW_EXPORT Run* twrt_run_new(Engine* e, int32_t index, tw_DeviceInfo* dev, int32_t core, int32_t native) {
    auto* r = new Run;
    r->eng = e;
    r->index = index;
    r->st = &e->runs[index];
    r->dev = dev;
    r->core = core;
    r->cbs = static_cast<tw_CBState*>(dev->cbs) + static_cast<size_t>(core) * dev->num_cbs;
    r->cs = static_cast<tw_CoreState*>(dev->cores) + core;
    r->l1 = static_cast<uint8_t*>(dev->l1_base) + static_cast<size_t>(core) * dev->l1_slot;
    if (native) e->native[index] = r;
    return r;
}

TW_EXPORT void twrt_run_args(Run* r, uint32_t rta_addr, uint32_t n_rta, uint32_t crta_addr, uint32_t n_crta,
                             const uint32_t* cta, uint32_t n_cta, uint32_t noc) {
    r->rta_addr = rta_addr;
    r->n_rta = n_rta;
    r->crta_addr = crta_addr;
    r->n_crta = n_crta;
    r->cta = cta;
    r->n_cta = n_cta;
    r->noc = noc;
}

// dst_tiles: the tiles of one acquire, computed by Python from the target's rule (the
// runtime keeps no copy of it); dst_physical: the descriptor's DST size, which is allocated.
TW_EXPORT void twrt_run_compute(Run* r, int32_t fp32_dest_acc, int32_t dst_full_sync, int32_t approx,
                                int32_t fidelity, int32_t dst_tiles, int32_t dst_physical) {
    r->kind_compute = 1;
    r->fp32_dest_acc = fp32_dest_acc;
    r->dst_full_sync = dst_full_sync;
    r->approx = approx;
    r->fidelity = fidelity;
    r->dst_tiles = dst_tiles;
    // At least 16 tiles (the runtime's floor); the driver refuses more than 32 (dst_dirty's bits).
    if (r->dst == nullptr) {
        r->dst_capacity = dst_physical > 16 ? dst_physical : 16;
        r->dst = dst_alloc(r->dst_capacity);
    }
}

TW_EXPORT void twrt_run_observe(Run* r, int32_t on) { r->observed = on; }

/** Prepare `r` to run `entry(argv, result)` from its start on a fresh fiber. */
TW_EXPORT int32_t twrt_run_start(Run* r, int32_t (*entry)(const int64_t*, int64_t*), const int64_t* argv,
                                 int64_t* result) {
    r->entry = entry;
    r->argv = argv;
    r->result = result;
    r->entry_rc = 0;
    r->err_class = 0;
    r->err_msg[0] = 0;
    NativeSection section(nullptr);  // the stack pool is process-wide
    try {
        fiber_init(r);
    } catch (const std::bad_alloc&) {
        return -1;
    }
    return 0;
}

/** Create a launch's native runs from `n` descriptions in one call (what run_new, run_args,
 *  run_compute and run_start do for one run); `handles[spec.index]` gets each run.  Returns
 *  0, or -1 - i when run i's fiber stack cannot be allocated (the runs made so far stay in
 *  the engine: twrt_runs_free frees them). */
TW_EXPORT int32_t twrt_runs_new(Engine* e, tw_DeviceInfo* dev, const tw_RunSpec* specs, int32_t n,
                                void** handles) {
    for (int32_t i = 0; i < n; ++i) {
        const tw_RunSpec& s = specs[i];
        Run* r = twrt_run_new(e, s.index, dev, s.core, 1);
        handles[s.index] = r;
        twrt_run_args(r, s.rta_addr, s.n_rta, s.crta_addr, s.n_crta, static_cast<const uint32_t*>(s.cta), s.n_cta,
                      s.noc);
        if (s.compute)
            twrt_run_compute(r, s.fp32_dest_acc, s.dst_full_sync, s.approx, s.fidelity, s.dst_tiles, s.dst_physical);
        auto entry = reinterpret_cast<int32_t (*)(const int64_t*, int64_t*)>(s.entry);
        if (twrt_run_start(r, entry, r->own_argv, &r->own_result) != 0) return -1 - i;
    }
    return 0;
}

TW_EXPORT void twrt_run_free(Run* r) {
    if (r == nullptr) return;
    if (r->eng != nullptr && r->index >= 0 && r->eng->native[r->index] == r) r->eng->native[r->index] = nullptr;
    {
        NativeSection section(nullptr);  // the stack pool is process-wide
        fiber_free(r);
    }
    dst_free(r->dst, r->dst_capacity, r->dst_dirty);
    delete r;
}

/** Free every native run of engine `e` that twrt_run_free did not (twrt_runs_new's). */
TW_EXPORT void twrt_runs_free(Engine* e) {
    for (int32_t i = 0; i < e->n; ++i) {
        if (e->native[i] != nullptr) twrt_run_free(e->native[i]);
    }
}

/** Run native run `index`, then every native run at the head of the ring. */
TW_EXPORT int64_t twrt_resume(Engine* e, int32_t index) {
    NativeSection section(e->hdr);
    int32_t i = index;
    for (;;) {
        Run* r = e->native[i];
        int32_t status = fiber_resume(r);
        if (status == ST_DONE) {
            r->st->phase = TW_RUNPHASE_DONE;
            e->hdr->live -= 1;
            fiber_free(r);
        } else if (status == ST_REQUEST) {
            return (static_cast<int64_t>(2) << 32) | static_cast<uint32_t>(i);
        } else if (status == ST_FAILED) {
            r->st->phase = TW_RUNPHASE_FAILED;
            return (static_cast<int64_t>(3) << 32) | static_cast<uint32_t>(i);
        }
        tw_EngineHeader* h = e->hdr;
        if (h->ring_head == h->ring_tail) return 0;  // IDLE
        int32_t j = e->ring[h->ring_head & h->ring_mask];
        if (e->native[j] == nullptr) return (static_cast<int64_t>(1) << 32);  // PYTHON
        h->ring_head += 1;
        i = j;
    }
}

/** Resume a hosted run (an external call of a Python kernel); returns its status. */
TW_EXPORT int32_t twrt_call(Run* r) {
    NativeSection section(r->eng != nullptr ? r->eng->hdr : nullptr);
    int32_t status = fiber_resume(r);
    if (status == ST_DONE) fiber_free(r);
    return status;
}

// Inspection of a run that handed back (requests, errors).
TW_EXPORT const char* twrt_run_request(Run* r, int32_t* argc, int64_t* args) {
    *argc = r->req_argc;
    for (int32_t i = 0; i < r->req_argc; ++i) args[i] = r->req_args[i];
    return r->req_name;
}
TW_EXPORT void twrt_run_reply(Run* r, int64_t value) { r->req_result = value; }
TW_EXPORT const char* twrt_run_error(Run* r, int32_t* cls, int32_t* cb, const char** file, int32_t* line) {
    *cls = r->err_class;
    *cb = r->err_cb;
    *file = r->err_file;
    *line = r->err_line;
    return r->err_msg;
}
TW_EXPORT void twrt_run_fault(Run* r, int32_t* signo, uint64_t* addr, uint64_t* pc, const char** last_file,
                              int32_t* last_line) {
    *signo = r->signo;
    *addr = r->fault_addr;
    *pc = r->fault_pc;
    *last_file = r->last_file;
    *last_line = r->last_line;
}
TW_EXPORT int32_t twrt_run_rc(Run* r) { return r->entry_rc; }
TW_EXPORT int32_t twrt_run_error_message(Run* r) { return r->err_message; }
TW_EXPORT float* twrt_run_dst(Run* r) { return r->dst; }
