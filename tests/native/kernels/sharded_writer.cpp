// Sharded output: c_16 is allocated over this core's shard of the output tensor; waiting for
// the tiles is all the writer does.  Runtime arg 0: tiles.
#include <cstdint>

void kernel_main() {
    const uint32_t num_tiles = get_arg_val<uint32_t>(0);
    cb_wait_front(tt::CBIndex::c_16, num_tiles);
}
