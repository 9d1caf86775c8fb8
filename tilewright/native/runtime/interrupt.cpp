// interrupt.cpp -- one thread in native code at a time, and stopping a fiber from outside.
//
// The runtime's fibers, the current run (g_cur) and the identity L1 window are
// process-wide, so native code runs in one thread at a time: every entry point from
// Python that resumes a fiber or touches the fiber pool holds the NativeSection lock.
// Python calls the runtime with the GIL released (ctypes.CDLL), so while one thread runs
// native kernels other threads keep running Python (their Python kernels, the watchdog).
//
// A fiber that never hands back (an endless loop in C++) is stopped from another thread:
// twrt_interrupt (the watchdog's thread) sends kInterruptSignal to the thread in native
// code; its handler, if the thread is inside a fiber's own code, records the reason and
// the program counter as the run's error and resumes the fiber at the failure stub,
// exactly as a fault does (window.cpp).  The scheduler then returns FAILED to Python.
// A program counter inside the C/C++ runtime libraries (malloc may hold a lock there)
// is declined and the signal retried a little later; after ~0.3 s it is taken anyway (a
// fiber blocked in a system call).  Ctrl-C: while the main thread is in native code, the
// SIGINT handler wakes a helper thread that stops the fiber the same way (reason
// INT_CTRL_C); otherwise SIGINT goes to the handler that was installed before (Python's).
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>

#include "twrt.h"

extern "C" void twrt_switch(void** save_sp, void* load_sp);
extern "C" char twrt_switch_end[];

namespace twrt {

namespace {

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
std::atomic<int> g_owned{0};
std::atomic<unsigned long> g_owner{0};  // pthread_t of the thread in native code

// -- an interruption in progress --------------------------------------------------------------

enum Ack : int { ACK_NONE = 0, ACK_STOPPED = 1, ACK_NOT_IN_FIBER = 2, ACK_RETRY = 3 };
std::atomic<int> g_reason{0};
std::atomic<int> g_force{0};
std::atomic<int> g_ack{ACK_NONE};
pthread_mutex_t g_interrupting = PTHREAD_MUTEX_INITIALIZER;  // one interrupter at a time
int g_signal = 0;                                              // kInterruptSignal

struct Range {
    uintptr_t lo, hi;
};
Range g_foreign[64];
std::atomic<int> g_n_foreign{0};

bool foreign(uintptr_t pc) {
    int n = g_n_foreign.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
        if (pc >= g_foreign[i].lo && pc < g_foreign[i].hi) return true;
    }
    return false;
}

int add_library(struct dl_phdr_info* info, size_t, void*) {
    const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
    static const char* const kRuntimeLibraries[] = {"/libc.so", "/ld-linux", "/libstdc++.so", "/libm.so",
                                                     "/libgcc_s.so", "/libpthread.so"};
    bool match = false;
    for (const char* lib : kRuntimeLibraries) match = match || std::strstr(name, lib) != nullptr;
    if (!match) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        int n = g_n_foreign.load(std::memory_order_relaxed);
        if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || n >= 63) continue;
        g_foreign[n].lo = info->dlpi_addr + ph.p_vaddr;
        g_foreign[n].hi = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
        g_n_foreign.store(n + 1, std::memory_order_release);
    }
    return 0;
}

void find_foreign_code() {
    static bool done = false;
    if (done) return;
    done = true;
    // A context switch is never a place to abandon a fiber.
    g_foreign[0].lo = reinterpret_cast<uintptr_t>(&twrt_switch);
    g_foreign[0].hi = reinterpret_cast<uintptr_t>(&twrt_switch_end[0]);
    g_n_foreign.store(1, std::memory_order_release);
    dl_iterate_phdr(add_library, nullptr);
}

void interrupt_handler(int, siginfo_t*, void* uctx) {
    int saved_errno = errno;
    Run* r = g_cur;
    int reason = g_reason.load();
    if (!g_running || r == nullptr || reason == 0 || !on_native_thread()) {
        g_ack.store(ACK_NOT_IN_FIBER);
        errno = saved_errno;
        return;
    }
    auto* uc = static_cast<ucontext_t*>(uctx);
    uintptr_t pc = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
    if (foreign(pc) && !g_force.load()) {
        g_ack.store(ACK_RETRY);
        errno = saved_errno;
        return;
    }
    r->err_class = ERR_INTERRUPT;
    r->signo = reason;
    r->fault_addr = 0;
    r->fault_pc = pc;
    g_ack.store(ACK_STOPPED);
    redirect_to_exit(uctx);
}

void install_once() {
    g_signal = SIGRTMIN + 6;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = interrupt_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(g_signal, &sa, nullptr);
}

pthread_once_t g_installed = PTHREAD_ONCE_INIT;
void install_interrupt_handler() { pthread_once(&g_installed, install_once); }

void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, nullptr);
}

bool owns(unsigned long thread) { return g_owned.load() && g_owner.load() == thread; }

int32_t interrupt(unsigned long thread, int32_t reason) {
    if (!owns(thread)) return 0;
    pthread_mutex_lock(&g_interrupting);
    find_foreign_code();
    install_interrupt_handler();
    g_reason.store(reason);
    int32_t stopped = 0;
    constexpr int kTries = 400;  // ~1 ms apart
    for (int i = 0; i < kTries && owns(thread); ++i) {
        g_force.store(i >= kTries * 3 / 4 ? 1 : 0);
        g_ack.store(ACK_NONE);
        if (pthread_kill(static_cast<pthread_t>(thread), g_signal) != 0) break;
        for (int w = 0; w < 200 && g_ack.load() == ACK_NONE; ++w) sleep_us(50);
        if (g_ack.load() == ACK_STOPPED) {
            stopped = 1;
            break;
        }
        sleep_us(1000);
    }
    g_reason.store(0);
    pthread_mutex_unlock(&g_interrupting);
    return stopped;
}

// -- Ctrl-C ------------------------------------------------------------------------------------

std::atomic<int> g_sigint_stop{0};     // Python's SIGINT handler is the default one
std::atomic<unsigned long> g_main{0};  // Python's main thread (where KeyboardInterrupt goes)
std::atomic<int> g_redeliver{0};       // the next SIGINT goes straight to Python
struct sigaction g_old_sigint;
sem_t g_sigint_sem;
pid_t g_helper_pid = 0;
pthread_mutex_t g_arm_lock = PTHREAD_MUTEX_INITIALIZER;

void sigint_handler(int sig, siginfo_t* info, void* uctx);

void chain_sigint(int sig, siginfo_t* info, void* uctx) {
    const struct sigaction& old = g_old_sigint;
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction != nullptr && old.sa_sigaction != sigint_handler) {
        old.sa_sigaction(sig, info, uctx);
    } else if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
        signal(sig, SIG_DFL);
        raise(sig);
    } else if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_IGN && old.sa_handler != nullptr) {
        old.sa_handler(sig);
    }
}

void sigint_handler(int sig, siginfo_t* info, void* uctx) {
    int saved_errno = errno;
    if (!g_redeliver.exchange(0) && g_sigint_stop.load() && owns(g_main.load())) {
        sem_post(&g_sigint_sem);  // stop the fiber from the helper thread
    } else {
        chain_sigint(sig, info, uctx);
    }
    errno = saved_errno;
}

void* sigint_helper(void*) {
    for (;;) {
        if (sem_wait(&g_sigint_sem) != 0) continue;
        unsigned long main_thread = g_main.load();
        if (interrupt(main_thread, INT_CTRL_C) == 0) {
            // The main thread left native code meanwhile: Python handles this Ctrl-C.
            g_redeliver.store(1);
            pthread_kill(static_cast<pthread_t>(main_thread), SIGINT);
        }
    }
    return nullptr;
}

void start_helper() {
    pid_t pid = getpid();
    if (g_helper_pid == pid) return;
    g_helper_pid = pid;  // (a forked child starts its own)
    sem_init(&g_sigint_sem, 0, 0);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);  // the helper takes no signals
    pthread_t t;
    if (pthread_create(&t, nullptr, sigint_helper, nullptr) == 0) pthread_detach(t);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace

NativeSection::NativeSection(tw_EngineHeader* hdr) {
    if (pthread_mutex_trylock(&g_lock) != 0) {
        if (hdr != nullptr) hdr->lock_wait = 1;
        pthread_mutex_lock(&g_lock);
        if (hdr != nullptr) hdr->lock_wait = 0;
    }
    static thread_local bool t_altstack = false;
    if (!t_altstack) {
        t_altstack = true;
        thread_altstack();
    }
    g_owner.store(static_cast<unsigned long>(pthread_self()));
    g_owned.store(1);
}

NativeSection::~NativeSection() {
    g_owned.store(0);
    pthread_mutex_unlock(&g_lock);
}

bool on_native_thread() { return owns(static_cast<unsigned long>(pthread_self())); }

}  // namespace twrt

using namespace twrt;

/** Stop the fiber `thread` is running (reason: InterruptReason); 1 if it was stopped, 0 if
 *  the thread is not in native code (or left it while this waited). */
TW_EXPORT int32_t twrt_interrupt(unsigned long thread, int32_t reason) { return interrupt(thread, reason); }

/** Route Ctrl-C during native code: `stop` 1 if Python's SIGINT handler is the default one
 *  (a KeyboardInterrupt), `main_thread` Python's main thread.  Installs the SIGINT handler
 *  again if something replaced it (Python's signal.signal does). */
TW_EXPORT void twrt_sigint_arm(int32_t stop, unsigned long main_thread) {
    g_main.store(main_thread);
    g_sigint_stop.store(stop);
    if (!stop) return;
    install_interrupt_handler();
    pthread_mutex_lock(&g_arm_lock);
    start_helper();
    struct sigaction cur;
    if (sigaction(SIGINT, nullptr, &cur) == 0 && !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == sigint_handler)) {
        struct sigaction sa;
        std::memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = sigint_handler;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        g_old_sigint = cur;
        sigaction(SIGINT, &sa, nullptr);
    }
    pthread_mutex_unlock(&g_arm_lock);
}
