// twrt.h -- internals of the native runtime (libtwrt): runs, fibers, the scheduler.
//
// The runtime implements the tt-metal kernel API for native kernels.  State shared with
// Python (CB interfaces, wait lists, the run table, the ready ring) has the layouts of
// twrt_layout.h, generated from tilewright/device/shared.py.  Each native kernel run (a
// whole kernel, or one external call made by a Python kernel) executes on a fiber; the
// runtime switches fibers itself and returns to Python only when Python must act.
#pragma once

#include <signal.h>

#include <cstdarg>
#include <cstdio>
#include <initializer_list>
#include <cstdint>
#include <cstring>

#include "tilewright/runtime.h"
#include "twrt_costs.h"
#include "twrt_errors.h"
#include "twrt_layout.h"

namespace twrt {

/** Status of a fiber when it hands control back (also the resume result codes). */
enum Status : int32_t {
    ST_RUNNING = 0,
    ST_BLOCKED = 1,  // on a wait list (or polling): someone makes it ready
    ST_DONE = 2,
    ST_REQUEST = 3,  // asks Python to run `req_name`
    ST_FAILED = 4,
};

// ErrClass (ERR_KERNEL, ERR_DFB, ...): twrt_errors.h, generated from
// tilewright/device/api_messages.py ERROR_CLASSES.

/** Why a fiber was stopped from outside (twrt_interrupt, Ctrl-C). */
enum InterruptReason : int32_t {
    INT_WATCHDOG = 1,  // no progress for EngineOptions.watchdog seconds
    INT_CTRL_C = 2,    // SIGINT while the main thread ran native code
};

constexpr size_t kStackBytes = 1u << 20;  // a fiber's stack (committed lazily)
constexpr size_t kGuardBytes = 1u << 16;  // the inaccessible guard below it

struct Fiber {
    void* sp = nullptr;      // saved stack pointer of the suspended fiber
    void* ret_sp = nullptr;  // where the fiber returns to (the scheduler or a hosted call)
    uint8_t* stack = nullptr;
    size_t stack_size = 0;
};

struct Engine;

/** The native side of one kernel run. */
struct Run {
    Engine* eng = nullptr;  // null for hosted external calls
    tw_RunState* st = nullptr;
    int32_t index = -1;
    tw_DeviceInfo* dev = nullptr;
    int32_t core = 0;
    tw_CBState* cbs = nullptr;     // this core's CB interfaces
    tw_CoreState* cs = nullptr;    // this core's state
    uint8_t* l1 = nullptr;         // this core's L1 (permanent mapping)
    int32_t kind_compute = 0;
    uint32_t noc = 0;
    // arguments
    uint32_t rta_addr = 0, n_rta = 0, crta_addr = 0, n_crta = 0;
    const uint32_t* cta = nullptr;
    uint32_t n_cta = 0;
    // compute configuration
    int32_t fp32_dest_acc = 0, dst_full_sync = 0, approx = 0, fidelity = 4;
    int32_t dst_tiles = 8;  // DST tiles of one acquire: Python's rule (kernel_api.compute.dst_tiles)
    // entry point
    int32_t (*entry)(const int64_t*, int64_t*) = nullptr;
    const int64_t* argv = nullptr;
    int64_t* result = nullptr;
    int64_t own_argv[1] = {};  // argv / result of a run twrt_runs_new made
    int64_t own_result = 0;
    int32_t entry_rc = 0;
    Fiber fiber;
    int32_t status = ST_RUNNING;
    int32_t observed = 0;  // report CB protocol actions to Python (contract checking)
    // a request to Python
    const char* req_name = nullptr;
    int32_t req_argc = 0;
    int64_t req_args[16] = {};
    int64_t req_result = 0;
    // the error of a failed run
    int32_t err_class = 0;
    char err_msg[1024] = {};
    const char* err_file = nullptr;
    int32_t err_line = 0;
    int32_t err_cb = -1;
    int32_t err_message = 0;  // the kernel-API message (twrt_messages.h MSG_*), 0: none
    int32_t signo = 0;
    uint64_t fault_addr = 0, fault_pc = 0;
    // the last kernel-API call (for fault reports)
    const char* last_file = nullptr;
    int32_t last_line = 0;
    // kernel-API register state
    uint64_t noc_state_addr[5][2] = {};
    uint32_t noc_state_size[5][2] = {};
    uint8_t noc_state_set[5][2] = {};
    int32_t unpack_transpose = 0;
    int32_t l1_acc = 0;
    int32_t mm_block_set = 0, mm_transpose = 0, mm_ct = 1, mm_rt = 1, mm_kt = 1;
    uint32_t pack_rows = 1;  // rows of 16 datums per pack_rows (pack_rows_init)
    float* dst = nullptr;  // the physical DST tiles of 32x32 (compute kernels)
    int32_t dst_capacity = 0;  // tiles allocated at dst (the DST pool's size class)
    uint32_t dst_dirty = 0;  // DST tiles written since they were last cleared
};

struct Engine {
    tw_EngineHeader* hdr = nullptr;
    tw_RunState* runs = nullptr;
    int32_t* ring = nullptr;
    Run** native = nullptr;  // by run index (null for Python runs)
    int32_t n = 0;
};

extern Run* g_cur;  // the run whose fiber is executing (null in Python)
// 1 while a fiber's own code runs (the kernel, the kernel API it calls, libraries it
// calls), 0 in the scheduler, in a context switch and in Python: where an interruption
// may abandon the fiber.
extern volatile sig_atomic_t g_running;

// fiber.cpp
void fiber_init(Run* r);
void fiber_free(Run* r);
int32_t fiber_resume(Run* r);  // run until the fiber hands back; returns its status
[[noreturn]] void fiber_exit(Run* r, int32_t status);
void fiber_yield(Run* r, int32_t status);

// window.cpp
bool window_install();
void window_enter(Run* r);  // before resuming r's fiber
void window_leave();
void redirect_to_exit(void* uctx);
void thread_altstack();  // give the calling thread an alternate signal stack if it has none  // in a signal handler: resume the fiber at the failure stub

// interrupt.cpp: one thread runs native code at a time (fibers, g_cur and the identity
// window are process-wide).  Every entry point from Python that touches them holds a
// NativeSection; `hdr` (may be null) gets lock_wait = 1 while the thread waits for it.
struct NativeSection {
    explicit NativeSection(tw_EngineHeader* hdr);
    ~NativeSection();
    NativeSection(const NativeSection&) = delete;
    NativeSection& operator=(const NativeSection&) = delete;
};
bool on_native_thread();  // async-signal-safe: is the calling thread the one in native code?

// sched.cpp
void make_ready(Engine* e, int32_t index, uint64_t now);
void wait_on(Run* r, tw_WaitList* q, int32_t kind, int32_t obj, int64_t a, tw::Loc loc);
void wake_all(Run* waker, tw_WaitList* q);
void poll_yield(Run* r, int32_t kind, int32_t obj, int64_t a, tw::Loc loc);
int64_t request(Run* r, const char* name, int32_t argc, const int64_t* argv, tw::Loc loc);
[[noreturn]] void fail(Run* r, int32_t cls, tw::Loc loc, const char* fmt, ...) __attribute__((format(printf, 4, 5)));
/** A kernel-API diagnostic `msg` of the message table (twrt_messages.h's fail_<name>). */
[[noreturn]] void fail_msg(Run* r, int32_t cls, int32_t msg, tw::Loc loc, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));

[[noreturn]] void l1_overflow(Run* r, uint64_t addr, uint64_t size, const char* what, tw::Loc loc);

/** The host-form pointer of local L1 range [addr, addr + size) of r's core.  Cores' L1s
 *  sit side by side in the device's arena, so a range past the end would reach the next
 *  core's memory: that is an error of the run (ERR_L1) instead. */
inline uint8_t* l1_span(Run* r, uint64_t addr, uint64_t size, const char* what, tw::Loc loc) {
    if (addr + size > r->dev->l1_size) l1_overflow(r, addr, size, what, loc);
    return r->l1 + addr;
}

inline Run* cur() { return g_cur; }
inline void tick(Run* r, uint64_t cycles) {
    r->st->clock += cycles;
    r->st->ops += 1;
}
inline void note(Run* r, tw::Loc loc) {
    r->last_file = loc.file;
    r->last_line = loc.line;
}

// perf.cpp: the device-time model (tilewright/device/perf; the same arithmetic)
constexpr int32_t kUnpack = 0, kPack = 2;  // the processor of a compute kernel's CB call
tw_PerfRun& perf_of(Run* r);
uint32_t perf_noc(Run* r, uint32_t noc);
void perf_read(Run* r, int32_t owner, uint32_t size, uint32_t noc);
uint64_t perf_write(Run* r, int32_t owner, uint32_t size, uint32_t noc, bool posted);
uint64_t perf_mcast(Run* r, const int32_t* cores, int32_t n, uint32_t size, uint32_t noc, bool linked);
void perf_barrier(Run* r, uint32_t noc);
tw_PerfRun& pipe_enter(Run* r, int32_t stage);
void pipe_leave(Run* r, tw_PerfRun& pr, int32_t stage);
void pipe_acquire(Run* r);
void pipe_handoff(Run* r);
void pipe_release(Run* r);
void tile_copy(Run* r, uint64_t nbytes, uint64_t tiles);
void tile_transpose(Run* r, uint64_t nbytes);
void tile_binary(Run* r, uint64_t nbytes0, uint64_t nbytes1, bool mul);
void tile_dest_reuse(Run* r, uint64_t nbytes, bool mul);
void tile_matmul(Run* r, uint64_t in0_bytes, uint64_t in1_bytes, uint64_t tiles);
void tile_reduce(Run* r, uint64_t nbytes, uint64_t scaler_bytes, bool is_max);
void tile_sfpu(Run* r, int32_t instructions);
void tile_pack(Run* r, uint64_t nbytes, bool l1_acc);
void tile_through(Run* r, uint64_t in_bytes, uint64_t out_bytes, uint64_t tiles);
bool dry_run(Run* r);  // tilewright run --dry-run: no bytes move

/** Run notify() as if at time `when`: a write wakes its waiters when it lands. */
template <class F>
inline void wake_at(Run* r, uint64_t when, F notify) {
    uint64_t now = r->st->clock;
    if (when > now) r->st->clock = when;
    notify();
    r->st->clock = now;
}

// dataflow.cpp (used by compute.cpp too)
tw_CBState* cb_of(Run* r, int32_t cb, tw::Loc loc);
void notify_write(tw_DeviceInfo* dev, int32_t core, uint32_t start, uint32_t end);

// compute.cpp (used by layout.cpp too): the compute kernel's run, DST, and the pages a
// kernel may read (waited; filled if it waited for none) and write (reserved; free if it
// reserved none) -- device/cb.py read_limit / write_limit.
Run* compute_run(tw::Loc loc);
int dst_capacity(Run* r);
void check_dst(Run* r, int64_t idst, tw::Loc loc);
uint32_t read_limit(const tw_CBState* c);
uint32_t write_limit(const tw_CBState* c);
/** L1 address of tile slot `slot` of the reservation (checked against it). */
uint32_t slot_addr(Run* r, int32_t cb, tw_CBState* c, uint32_t slot, const char* what, tw::Loc loc);
void pack_tile_values(Run* r, int32_t cb, uint32_t slot, const float* values, const char* what, tw::Loc loc);

}  // namespace twrt

// fail_<name> of every kernel-API diagnostic (generated from device/api_messages.py).
#include "twrt_messages.h"
