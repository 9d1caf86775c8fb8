// tilewright/bridge.h -- how Tilewright's emulated kernel API reaches the virtual device.
//
// Native code (external C++ called with ttl.call_extern_func) runs inside a kernel
// of Tilewright's engine.  Every kernel-API function in these headers is a thin
// inline wrapper that calls back into Python through one function pointer,
//
//     int64_t call(const char* name, int32_t argc, const int64_t* argv);
//
// where `name` is the tt-metal API name ("cb_reserve_back", "noc_async_read", ...)
// and the Python side (tilewright/native/bridge.py) dispatches it through a table to
// the same implementation Python kernels use (tilewright.device.kernel_api), so the
// semantics are defined once.  A blocking call (cb_wait_front, a semaphore wait)
// suspends the kernel inside the callback; the engine runs other kernels meanwhile
// (greenlet keeps this native frame on its saved stack).
//
// Errors: a callback that fails stores the Python exception, sets `error` and
// returns; the wrapper then throws tw::Abort, which unwinds the external function to
// the generated entry point, which returns to Python, which re-raises the stored
// exception.  External functions must therefore let C++ exceptions pass (no
// `noexcept` on paths that call the kernel API).
//
// L1 addresses are host-form pointers (the core's L1 lives below 2 GiB), so
// `reinterpret_cast<uint32_t*>(get_write_ptr(cb))` works as on hardware.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>

#define TW_EXPORT extern "C" __attribute__((visibility("default")))

namespace tw {

/** The callback table Python hands to every loaded shared object (tw_bind). */
struct Api {
    uint32_t version;
    int32_t error;  // nonzero: the last callback raised; cleared by check()
    int64_t (*call)(const char* name, int32_t argc, const int64_t* argv);
};

constexpr uint32_t kApiVersion = 1;

/** Thrown to unwind native code after a failing callback (caught by the entry point). */
struct Abort {};

inline Api* g_api = nullptr;

inline void check() {
    if (__builtin_expect(g_api->error != 0, 0)) {
        g_api->error = 0;
        if (std::uncaught_exceptions() == 0) {
            throw Abort{};
        }
    }
}

/** Call the Python implementation of kernel-API function `name` with integer args. */
template <typename... A>
inline int64_t call(const char* name, A... args) {
    static_assert(sizeof...(A) <= 12, "tw::call takes at most 12 arguments");
    const int64_t argv[sizeof...(A) + 1] = {static_cast<int64_t>(args)..., 0};
    const int64_t result = g_api->call(name, static_cast<int32_t>(sizeof...(A)), argv);
    check();
    return result;
}

/** A pointer as the 32-bit L1 address kernels use (host form, below 2 GiB). */
template <typename T>
inline uint32_t addr_of(T* p) {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p));
}

}  // namespace tw
