// barrier.cpp -- semaphores across cores: core (0, 0) multicasts a flag to a row of
// cores (noc_semaphore_set_multicast), each one answers with noc_semaphore_inc, and
// the sender waits for all answers (noc_semaphore_wait_min).
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/debug/dprint.h"

void kernel_main() {
    const uint32_t x_end = get_arg_val<uint32_t>(0);  // NoC x of the last core of the row
    const uint32_t y = get_arg_val<uint32_t>(1);
    const uint32_t x_start = get_arg_val<uint32_t>(2);
    const uint32_t others = get_arg_val<uint32_t>(3);
    const uint32_t go = get_semaphore(0);
    const uint32_t done = get_semaphore(1);
    volatile uint32_t* go_ptr = reinterpret_cast<volatile uint32_t*>(go);
    if (my_x[noc_index] == x_start) {
        noc_semaphore_set(go_ptr, 7);
        noc_semaphore_set_multicast(go, get_noc_multicast_addr(x_start + 1, y, x_end, y, go), others);
        noc_semaphore_wait_min(reinterpret_cast<volatile uint32_t*>(done), others);
        DPRINT << "sender saw " << *reinterpret_cast<volatile uint32_t*>(done) << " answers" << ENDL();
    } else {
        noc_semaphore_wait(go_ptr, 7);
        noc_semaphore_inc(get_noc_addr(x_start, y, done), 1);
    }
}
