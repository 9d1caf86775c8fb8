// tilewright/compute_layout.h -- the layout part of the emulated compute API: tilize, untilize,
// pack_untilize, transpose (tt-metal api/compute/{tilize,untilize,pack_untilize,transpose_wh,
// transpose_wh_dest}.h).  Included by api/compute/compute_kernel_api.h.
//
// A row-major block in a CB is 32 rows of n*32 values stored row after row; it fills n
// tile-sized pages of a 16/32-bit format.  Semantics: tilewright.device.kernel_api.compute.
#pragma once

#include <cstdint>

#include "api/compute/compute_kernel_api.h"

namespace ckernel {

// -- tilize ---------------------------------------------------------------------------------

inline void tilize_init(uint32_t icb, uint32_t block, uint32_t ocb) { detail::init(icb, block, ocb); }
inline void tilize_init_short(uint32_t icb, uint32_t block, uint32_t ocb) { detail::init(icb, block, ocb); }
inline void tilize_init_short_with_dt(uint32_t old_icb, uint32_t new_icb, uint32_t block, uint32_t ocb) {
    tw::call("tilize_init_short_with_dt", old_icb, new_icb, block, ocb);
}
inline void tilize_uninit(uint32_t icb, uint32_t ocb) { detail::init(icb, ocb); }
inline void tilize_uninit_with_dt(uint32_t old_icb, uint32_t new_icb, uint32_t ocb) {
    tw::call("tilize_uninit_with_dt", old_icb, new_icb, ocb);
}

/** Tilize the row-major block (32 rows x block*32 values) at the front of icb into block tiles. */
inline void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                         uint32_t output_tile_index = 0) {
    tw::call("tilize_block", icb, block, ocb, input_tile_index, output_tile_index);
}

// -- untilize -------------------------------------------------------------------------------

/** untilize_init(icb) (newer) or untilize_init<N>(icb, ocb) (older). */
template <auto... flags>
inline void untilize_init(uint32_t icb, uint32_t ocb = 16) {
    detail::init(icb, ocb);
}
inline void untilize_init_short(uint32_t icb) { detail::init(icb); }
inline void untilize_uninit(uint32_t icb) { detail::init(icb); }

/** Untilize full_ct_dim tiles into a row-major block at the next slot of ocb (block_ct_dim per DST pass). */
template <uint32_t block_ct_dim = 1>
inline void untilize_block(uint32_t icb, uint32_t full_ct_dim, uint32_t ocb) {
    tw::call("untilize_block", icb, full_ct_dim, ocb, block_ct_dim);
}

template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, auto... flags>
inline void pack_untilize_init(uint32_t icb, uint32_t ocb) {
    tw::call("pack_untilize_init", icb, ocb, block_ct_dim, full_ct_dim);
}

/** Untilize block_rt_dim x block_ct_dim tiles into columns block_c_index*block_ct_dim*32.. of ocb's rows. */
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, auto... flags>
inline void pack_untilize_block(uint32_t icb, uint32_t block_rt_dim, uint32_t ocb, uint32_t block_c_index = 0) {
    tw::call("pack_untilize_block", icb, block_rt_dim, ocb, block_c_index, block_ct_dim, full_ct_dim);
}

inline void pack_untilize_uninit(uint32_t ocb) { detail::init(ocb); }

template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, auto... flags>
inline void pack_untilize_dest_init(uint32_t ocb, uint32_t face_r_dim = 16, uint32_t num_faces = 4) {
    (void)face_r_dim, (void)num_faces;
    detail::init(ocb);
}

/** Untilize DST tiles 0 .. block_rt_dim*block_ct_dim-1 into ocb (as pack_untilize_block). */
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, auto... flags>
inline void pack_untilize_dest(uint32_t ocb, uint32_t block_rt_dim = 1, uint32_t block_c_index = 0,
                               uint32_t face_r_dim = 16, uint32_t num_faces = 4) {
    (void)face_r_dim, (void)num_faces;
    tw::call("pack_untilize_dest", ocb, block_rt_dim, block_c_index, block_ct_dim, full_ct_dim);
}

// -- transpose --------------------------------------------------------------------------------

inline void transpose_wh_init(uint32_t icb, uint32_t ocb) { tw::call("transpose_wh_init", icb, ocb); }
inline void transpose_wh_init_short(uint32_t icb) { tw::call("transpose_wh_init", icb, 16); }

/** DST[idst] = CB[itile] transposed. */
inline void transpose_wh_tile(uint32_t icb, uint32_t itile, uint32_t idst) {
    tw::call("transpose_wh_tile", icb, itile, idst);
}

template <auto... flags>
inline void transpose_wh_dest_init_short() {
    tw::call("transpose_wh_dest_init_short");
}

/** Transpose DST[idst] in place. */
template <auto... flags>
inline void transpose_wh_dest(uint32_t idst) {
    tw::call("transpose_wh_dest", idst);
}

}  // namespace ckernel
