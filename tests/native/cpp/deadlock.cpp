// deadlock.cpp -- waits for a page nobody pushes.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

static int tw_deadlock_unwound = 0;

struct Unwind {
    ~Unwind() { tw_deadlock_unwound += 1; }
};

void kernel_main() {
    Unwind guard;
    cb_wait_front(0, 1);
}
