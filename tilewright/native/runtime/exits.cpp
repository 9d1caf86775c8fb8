// exits.cpp -- exit(), abort() and failed assert()s inside native code end the run, not
// the process.
//
// Kernel and external-call objects are linked with -Wl,--wrap=exit,... (native/build.py),
// so their calls to exit, _exit, _Exit, quick_exit, abort and __assert_fail (what
// assert() calls) land here.  Inside a fiber the call stops that run with an error
// record naming what was called, the status, and the call site (the return address,
// resolved to a C++ line by addr2line in Python; a failed assert carries its own file
// and line); the process and the device keep running.  Outside a fiber (a static
// constructor at load time) the real function runs.
#include <assert.h>
#include <unistd.h>

#include <cstdlib>

#include "twrt.h"

namespace twrt {
namespace {

enum ExitKind : int32_t { EXIT_EXIT = 0, EXIT__EXIT = 1, EXIT__EXIT_C = 2, EXIT_QUICK = 3, EXIT_ABORT = 4 };

bool in_run() { return g_cur != nullptr && g_running && on_native_thread(); }

[[noreturn]] void stop_run(int32_t kind, int32_t status, void* return_address) {
    Run* r = g_cur;
    r->err_class = ERR_EXIT;
    r->signo = status;
    r->fault_addr = static_cast<uint64_t>(kind);
    r->fault_pc = reinterpret_cast<uint64_t>(return_address) - 1;  // inside the call instruction
    fiber_exit(r, ST_FAILED);
}

}  // namespace
}  // namespace twrt

using namespace twrt;

TW_EXPORT __attribute__((noreturn)) void __wrap_exit(int status) {
    if (in_run()) stop_run(EXIT_EXIT, status, __builtin_return_address(0));
    std::exit(status);
}

TW_EXPORT __attribute__((noreturn)) void __wrap__exit(int status) {
    if (in_run()) stop_run(EXIT__EXIT, status, __builtin_return_address(0));
    ::_exit(status);
}

TW_EXPORT __attribute__((noreturn)) void __wrap__Exit(int status) {
    if (in_run()) stop_run(EXIT__EXIT_C, status, __builtin_return_address(0));
    std::_Exit(status);
}

TW_EXPORT __attribute__((noreturn)) void __wrap_quick_exit(int status) {
    if (in_run()) stop_run(EXIT_QUICK, status, __builtin_return_address(0));
    std::quick_exit(status);
}

TW_EXPORT __attribute__((noreturn)) void __wrap_abort() {
    if (in_run()) stop_run(EXIT_ABORT, 0, __builtin_return_address(0));
    std::abort();
}

TW_EXPORT __attribute__((noreturn)) void __wrap___assert_fail(const char* expr, const char* file, unsigned line,
                                                 const char* function) {
    if (in_run()) {
        Run* r = g_cur;
        fail(r, ERR_ASSERT, tw::Loc{file, static_cast<int>(line)}, "assertion `%s` failed in %s", expr,
             function != nullptr ? function : "?");
    }
    __assert_fail(expr, file, line, function);
}
