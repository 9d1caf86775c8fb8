// pingpong.cpp -- producer / consumer through a one-page CB: the kernels block inside
// native code on every page (PRODUCER is a define of the kernel's config).
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

#include <stdexcept>

void kernel_main() {
    const uint32_t pages = get_arg_val<uint32_t>(0);
    if (*reinterpret_cast<volatile uint32_t*>(get_arg_addr(0)) != pages) {
        throw std::runtime_error("get_arg_addr(0) does not point at runtime argument 0");
    }
    uint32_t sum = 0;
    for (uint32_t i = 0; i < pages; ++i) {
#if PRODUCER
        cb_reserve_back(0, 1);
        *reinterpret_cast<volatile uint32_t*>(get_write_ptr(0)) = i + get_absolute_logical_x();
        cb_push_back(0, 1);
#else
        cb_wait_front(0, 1);
        sum += *reinterpret_cast<volatile uint32_t*>(get_read_ptr(0));
        cb_pop_front(0, 1);
#endif
    }
#if !PRODUCER
    // Report the sum in semaphore 0 of this core.
    noc_semaphore_set(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), sum);
#endif
}
