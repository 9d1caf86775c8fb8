// window.cpp -- the identity window (local L1 addresses are pointers) and fault reports.
//
// While a native kernel of core C runs, C's L1 is mapped at virtual addresses equal to
// its local L1 addresses, [kWindowLo, l1_size), from the device's memfd.  The window is
// switched lazily: resuming a run of another core only revokes a mapped window (one
// mmap of PROT_NONE); the first access of the new run faults, and the SIGSEGV handler
// maps the right core and lets the access retry.  Kernels that never dereference L1
// never pay for a mapping.
//
// Any other SIGSEGV / SIGBUS / SIGFPE / SIGILL inside a fiber becomes an error
// of that run: the handler records the signal, the address and the program counter and
// resumes the fiber at a stub (on a spare stack) that hands back to the scheduler as a
// failure.  Signals outside fibers go to the handlers that were there before.
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "twrt.h"

namespace twrt {

namespace {

constexpr uintptr_t kWindowLo = 1u << 16;
uintptr_t g_window_hi = 0;       // end of the reserved range
bool g_window_ok = false;
// What the window shows (serial 0: nothing).  Devices are told apart by serial, not by
// address: a closed device's DeviceInfo memory and memfd number can be reused.
uint64_t g_mapped_serial = 0;
int32_t g_mapped_core = -1;

inline bool shows(const Run* r) { return g_mapped_serial == r->dev->serial && g_mapped_core == r->core; }
volatile sig_atomic_t g_in_fiber = 0;

struct sigaction g_old[32];
// SIGABRT: abort() called from a library (std::terminate, a failed libstdc++ check);
// the kernel's own abort() calls are wrapped (exits.cpp).
const int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

alignas(16) uint8_t g_exit_stack[64 * 1024];
alignas(16) uint8_t g_alt_stack[64 * 1024];

bool reserve(uintptr_t hi) {
    void* p = mmap(reinterpret_cast<void*>(kWindowLo), hi - kWindowLo, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED) return false;
    if (reinterpret_cast<uintptr_t>(p) != kWindowLo) {  // old kernels ignore NOREPLACE
        munmap(p, hi - kWindowLo);
        return false;
    }
    return true;
}

void revoke() {
    mmap(reinterpret_cast<void*>(kWindowLo), g_window_hi - kWindowLo, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    g_mapped_serial = 0;
    g_mapped_core = -1;
}

bool map_core(Run* r) {
    const tw_DeviceInfo* d = r->dev;
    if (d->l1_fd < 0 || d->l1_size > g_window_hi) return false;
    size_t len = d->l1_size - kWindowLo;
    off_t off = static_cast<off_t>(r->core) * static_cast<off_t>(d->l1_slot) + static_cast<off_t>(kWindowLo);
    void* p = mmap(reinterpret_cast<void*>(kWindowLo), len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                   d->l1_fd, off);
    if (p == MAP_FAILED) return false;
    g_mapped_serial = d->serial;
    g_mapped_core = r->core;
    return true;
}

extern "C" void twrt_fault_exit() {
    Run* r = g_cur;
    fiber_exit(r, ST_FAILED);
}

void handler(int sig, siginfo_t* info, void* uctx) {
    Run* r = g_cur;
    uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
    // Only the thread running native code has a fiber: another thread's fault (Python
    // code of a second device's thread) goes to the previous handlers.
    if (g_in_fiber && r != nullptr && on_native_thread()) {
        if (sig == SIGSEGV && g_window_ok && addr >= kWindowLo && addr < g_window_hi &&
            !shows(r)) {
            if (g_mapped_serial != 0) revoke();
            if (addr < r->dev->l1_size && map_core(r)) return;  // retry the access
        }
        auto* uc = static_cast<ucontext_t*>(uctx);
        r->signo = sig;
        r->fault_addr = sig == SIGABRT ? 0 : addr;  // raise() leaves no address
        r->fault_pc = static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RIP]);
        r->err_class = ERR_FAULT;
        redirect_to_exit(uctx);
        return;
    }
    struct sigaction& old = g_old[sig];
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction != nullptr) {
        old.sa_sigaction(sig, info, uctx);
        return;
    }
    if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN && old.sa_handler != nullptr) {
        old.sa_handler(sig);
        return;
    }
    sigaction(sig, &old, nullptr);  // the default action happens when the access retries
}

}  // namespace

void redirect_to_exit(void* uctx) {
    auto* uc = static_cast<ucontext_t*>(uctx);
    g_in_fiber = 0;
    g_running = 0;
    uintptr_t sp = (reinterpret_cast<uintptr_t>(g_exit_stack + sizeof(g_exit_stack)) & ~uintptr_t(15)) - 8;
    uc->uc_mcontext.gregs[REG_RSP] = static_cast<greg_t>(sp);
    uc->uc_mcontext.gregs[REG_RIP] = reinterpret_cast<greg_t>(&twrt_fault_exit);
}

// Put the handler back in front of any installed after it (a library that sets its own
// crash handler once loaded -- Ray's core worker does -- would otherwise take the window's
// first-access faults, and the kernel would die of them); what it displaced becomes the
// handler signals outside fibers go on to.  Cheap: one query per signal.
void claim_signals() {
    for (int sig : kSignals) {
        struct sigaction cur;
        if (sigaction(sig, nullptr, &cur) != 0) continue;
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == handler) continue;
        struct sigaction sa;
        std::memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = handler;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, &g_old[sig]);
    }
}

bool window_install() {
    static bool done = false;
    if (done) {
        claim_signals();  // every engine: a handler installed since displaced ours
        return g_window_ok;
    }
    done = true;
    // Room for the largest L1 of any architecture (Blackhole: 1.5 MiB) and then some.
    for (uintptr_t hi : {uintptr_t(4) << 20, uintptr_t(3) << 20, uintptr_t(2) << 20}) {
        if (reserve(hi)) {
            g_window_hi = hi;
            g_window_ok = true;
            break;
        }
    }
    stack_t ss;
    if (sigaltstack(nullptr, &ss) == 0 && (ss.ss_flags & SS_DISABLE)) {
        ss.ss_sp = g_alt_stack;
        ss.ss_size = sizeof(g_alt_stack);
        ss.ss_flags = 0;
        sigaltstack(&ss, nullptr);
    }
    claim_signals();
    return g_window_ok;
}

void thread_altstack() {
    // Faults (a fiber's stack overflow among them) are handled on an alternate stack;
    // window_install gave the first thread one, every other thread gets its own here.
    stack_t ss;
    if (sigaltstack(nullptr, &ss) != 0 || !(ss.ss_flags & SS_DISABLE)) return;
    constexpr size_t kSize = 64 * 1024;
    void* p = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    ss.ss_sp = p;  // kept for the thread's life (a thread that ran native code)
    ss.ss_size = kSize;
    ss.ss_flags = 0;
    sigaltstack(&ss, nullptr);
}

void window_enter(Run* r) {
    if (g_mapped_serial != 0 && !shows(r)) revoke();
    g_in_fiber = 1;
}

void window_leave() { g_in_fiber = 0; }

}  // namespace twrt

extern "C" __attribute__((visibility("default"))) uint64_t twrt_window_range() {
    return (static_cast<uint64_t>(twrt::g_window_hi) << 32) | twrt::kWindowLo;
}
