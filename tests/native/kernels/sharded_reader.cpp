// Sharded input: c_0 is allocated over this core's shard of the input tensor, so the data is
// already in L1; the reader only hands the tiles to compute.  Runtime arg 0: tiles.
#include <cstdint>

void kernel_main() {
    const uint32_t num_tiles = get_arg_val<uint32_t>(0);
    cb_reserve_back(tt::CBIndex::c_0, num_tiles);
    cb_push_back(tt::CBIndex::c_0, num_tiles);
}
