// ttnn/cpp/ttnn/kernel_lib/dest_helpers.hpp -- DST capacity as compute_kernel_lib reads it:
// DEST_AUTO_LIMIT, the tiles one tile_regs_acquire holds under the kernel's compute config
// (16-bit / 32-bit DST, half / full sync).  The build defines TW_DST_TILES from the target's
// rule (device/kernel_api/compute.py dst_tiles, the number the runtime checks DST indices
// against), so the constant and the run-time check cannot disagree.
#pragma once

#include <cstdint>

namespace compute_kernel_lib {

#ifdef TW_DST_TILES
inline constexpr uint32_t DEST_AUTO_LIMIT = TW_DST_TILES;
#else
// A build without a compute config (a header test): Wormhole's half-sync capacity.
inline constexpr uint32_t DEST_AUTO_LIMIT = DST_ACCUM_MODE ? 4 : 8;
#endif

constexpr uint32_t get_dest_limit() { return DEST_AUTO_LIMIT; }

}  // namespace compute_kernel_lib
