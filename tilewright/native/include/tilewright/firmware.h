// tilewright/firmware.h -- names tt-metal's firmware build puts in scope of data-movement kernels.
//
// tt-metal compiles a data-movement kernel with its firmware headers around it; code that
// compilers emit (the TT-Lang compiler's kernels, tt-mlir's TTKernel helpers) uses names
// from them beside the documented kernel API:
//
//   risc_common.h       invalidate_l1_cache()          -- no L1 data cache here: nothing to drop
//   noc_parameters.h    NOC_MULTICAST_ADDR(x0, y0, x1, y1, addr)
//   dataflow_api.h      DYNAMIC_NOC_X / DYNAMIC_NOC_Y (noc, coordinate)
//   firmware globals    worker_logical_col_to_virtual_col[x], worker_logical_row_to_virtual_row[y]
//
// Tilewright's NoC addresses carry NoC-0 coordinates on both NoCs (the emulated NoC decodes
// them), so DYNAMIC_NOC_X/Y, which mirror a coordinate for NoC 1 on hardware, leave it as it
// is; a multicast rectangle may name its corners in either order (NoC 1 code names the far
// corner first).  The virtual ("translated") coordinate of a worker is its logical one plus
// the chip's translation offset -- the running core's NoC coordinate minus its logical one.
//
// tt-mlir's experimental semaphore helpers (emitted inline into the compiler's kernels under
// an include guard) spin on a volatile pointer, which never yields to the other kernels on
// this engine; the guard is defined here first, with helpers that wait the same way
// noc_semaphore_wait does.
#pragma once

#include <cstdint>

#include "tilewright/runtime.h"

inline void invalidate_l1_cache() {}

#define NOC_MULTICAST_ADDR(x_start, y_start, x_end, y_end, addr)                                   \
    ((uint64_t(uint32_t(y_start) & 63) << 54) | (uint64_t(uint32_t(x_start) & 63) << 48) |        \
     (uint64_t(uint32_t(y_end) & 63) << 42) | (uint64_t(uint32_t(x_end) & 63) << 36) |            \
     (uint64_t(addr) & ((uint64_t(1) << 36) - 1)))
#define DYNAMIC_NOC_X(noc, x) (static_cast<void>(noc), (x))
#define DYNAMIC_NOC_Y(noc, y) (static_cast<void>(noc), (y))

namespace tw {
/** A firmware coordinate table: logical column (or row) -> virtual coordinate. */
struct VirtualCoordTable {
    bool column;
    uint32_t operator[](uint32_t logical) const {
        return column ? logical + (twrt_my_noc_x(0) - twrt_logical_x())
                      : logical + (twrt_my_noc_y(0) - twrt_logical_y());
    }
};
}  // namespace tw

inline constexpr tw::VirtualCoordTable worker_logical_col_to_virtual_col{true};
inline constexpr tw::VirtualCoordTable worker_logical_row_to_virtual_row{false};

#ifndef TTMLIR_TARGET_TTKERNEL_LLKS_EXPERIMENTAL_SEMAPHORE_H
#define TTMLIR_TARGET_TTKERNEL_LLKS_EXPERIMENTAL_SEMAPHORE_H
namespace experimental {
/** Wait until *sem_addr == val (tt-mlir's helper; other kernels run meanwhile). */
inline void semaphore_wait(volatile uint32_t* sem_addr, uint32_t val, TW_LOC) {
    twrt_sem_wait(tw::addr_of(sem_addr), val, false, loc);
}
/** Wait until *sem_addr >= val. */
inline void semaphore_wait_min(volatile uint32_t* sem_addr, uint32_t val, TW_LOC) {
    twrt_sem_wait(tw::addr_of(sem_addr), val, true, loc);
}
}  // namespace experimental
#endif
