// fiber.cpp -- native kernel runs as fibers: an mmap'd stack with a guard page and a
// hand-written context switch (callee-saved registers, MXCSR and the x87 control word).
//
// A fiber is resumed from the scheduler loop (or from a hosted external call) with
// fiber_resume(); it hands control back with fiber_yield() (blocked, a request to
// Python) or fiber_exit() (done, failed).  No Python code ever runs on a fiber stack.
#include <sys/mman.h>

#include <exception>
#include <new>

#include "twrt.h"

#if !defined(__x86_64__)
#error "the Tilewright native runtime switches fibers with x86-64 assembly; this host is not x86-64"
#endif

extern "C" void twrt_switch(void** save_sp, void* load_sp);

// twrt_switch(save, load): push the callee-saved state, store the stack pointer in *save,
// load `load` as the stack pointer, pop the state saved there, return into that fiber.
asm(R"(
    .text
    .globl twrt_switch
    .type twrt_switch, @function
    .hidden twrt_switch
twrt_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $16, %rsp
    stmxcsr 8(%rsp)
    fnstcw (%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    fldcw (%rsp)
    ldmxcsr 8(%rsp)
    addq $16, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .globl twrt_switch_end
    .hidden twrt_switch_end
twrt_switch_end:
    .size twrt_switch, .-twrt_switch
)");

namespace twrt {

Run* g_cur = nullptr;
volatile sig_atomic_t g_running = 0;

namespace {

constexpr size_t kStackSize = 1u << 20;  // committed lazily (MAP_NORESERVE)
constexpr size_t kGuard = kGuardBytes;

// Stacks are recycled: a launch of many cores would otherwise map and unmap thousands.
uint8_t* g_free_stacks[256];
int g_n_free = 0;

uint8_t* stack_alloc() {
    if (g_n_free > 0) return g_free_stacks[--g_n_free];
    void* p = mmap(nullptr, kStackSize + kGuard, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    mprotect(p, kGuard, PROT_NONE);  // stack overflow faults instead of corrupting memory
    return static_cast<uint8_t*>(p);
}

void stack_free(uint8_t* s) {
    if (g_n_free < 256) {
        g_free_stacks[g_n_free++] = s;
    } else {
        munmap(s, kStackSize + kGuard);
    }
}

void copy_error(Run* r, const char* text) {
    std::strncpy(r->err_msg, text ? text : "", sizeof(r->err_msg) - 1);
    r->err_msg[sizeof(r->err_msg) - 1] = 0;
}

// The first frame of every fiber: run the entry point, catch what escapes it.
extern "C" void twrt_fiber_main() {
    g_running = 1;
    Run* r = g_cur;
    try {
        r->entry_rc = r->entry(r->argv, r->result);
    } catch (const std::exception& e) {
        r->err_class = ERR_CPP;
        copy_error(r, e.what());
        fiber_exit(r, ST_FAILED);
    } catch (...) {
        r->err_class = ERR_CPP;
        copy_error(r, "a non-standard C++ exception");
        fiber_exit(r, ST_FAILED);
    }
    fiber_exit(r, ST_DONE);
}

}  // namespace

void fiber_init(Run* r) {
    if (r->fiber.stack == nullptr) {
        r->fiber.stack = stack_alloc();
        r->fiber.stack_size = kStackSize;
    }
    if (r->fiber.stack == nullptr) throw std::bad_alloc();
    // Initial frame, from the top: a zero "return address" (keeps the ABI's 16-byte
    // alignment at function entry), twrt_fiber_main as the address twrt_switch returns
    // to, six zeroed callee-saved registers, the x87 control word and MXCSR defaults.
    auto* top = reinterpret_cast<uint64_t*>(r->fiber.stack + kGuard + kStackSize);
    top -= 2;
    top[1] = 0;
    top[0] = reinterpret_cast<uint64_t>(&twrt_fiber_main);
    top -= 6;
    for (int i = 0; i < 6; ++i) top[i] = 0;
    top -= 2;
    top[0] = 0x037F;  // x87 control word (fnstcw stores 16 bits; the rest is ignored)
    top[1] = 0x1F80;  // MXCSR (ldmxcsr reads the low 32 bits of this slot)
    r->fiber.sp = top;
    r->status = ST_RUNNING;
}

void fiber_free(Run* r) {
    if (r->fiber.stack != nullptr) {
        stack_free(r->fiber.stack);
        r->fiber.stack = nullptr;
    }
}

int32_t fiber_resume(Run* r) {
    Run* prev = g_cur;
    window_enter(r);
    g_cur = r;
    r->status = ST_RUNNING;
    twrt_switch(&r->fiber.ret_sp, r->fiber.sp);
    g_cur = prev;
    window_leave();
    return r->status;
}

void fiber_yield(Run* r, int32_t status) {
    r->status = status;
    g_running = 0;
    twrt_switch(&r->fiber.sp, r->fiber.ret_sp);
    g_running = 1;
}

void fiber_exit(Run* r, int32_t status) {
    r->status = status;
    g_running = 0;
    void* dead;
    twrt_switch(&dead, r->fiber.ret_sp);
    __builtin_unreachable();
}

}  // namespace twrt

/** The guard page range below run `r`'s fiber stack (a fault there is a stack overflow). */
TW_EXPORT uint64_t twrt_run_guard(twrt::Run* r, uint64_t* size) {
    *size = twrt::kGuardBytes;
    return reinterpret_cast<uint64_t>(r->fiber.stack);
}
