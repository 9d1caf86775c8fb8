// tilewright/compute_layout.h -- the layout part of the compute API: tilize (and fast_tilize),
// untilize, pack_untilize, pack_rows, transpose (tt-metal api/compute/{tilize,untilize,
// pack_untilize,pack_rows,transpose_wh,transpose_wh_dest}.h).  Included by
// api/compute/compute_kernel_api.h.
//
// A row-major block in a CB is 32 rows of n*32 values stored row after row; it fills n
// tile-sized pages of a 16/32-bit format.
#pragma once

#include <cstdint>

#include "api/compute/compute_kernel_api.h"

namespace ckernel {

// -- tilize ---------------------------------------------------------------------------------

inline void tilize_init(uint32_t icb, uint32_t block, uint32_t ocb, TW_LOC) { detail::init_cbs(loc, icb, ocb); }
inline void tilize_init_short(uint32_t icb, uint32_t block, uint32_t ocb, TW_LOC) { detail::init_cbs(loc, icb, ocb); }
inline void tilize_init_short_with_dt(uint32_t old_icb, uint32_t new_icb, uint32_t block, uint32_t ocb, TW_LOC) {
    detail::init_cbs(loc, old_icb, new_icb, ocb);
}
inline void tilize_uninit(uint32_t icb, uint32_t ocb, TW_LOC) { detail::init_cbs(loc, icb, ocb); }
inline void tilize_uninit_with_dt(uint32_t old_icb, uint32_t new_icb, uint32_t ocb, TW_LOC) {
    detail::init_cbs(loc, old_icb, new_icb, ocb);
}

/** Tilize the row-major block (32 rows x block*32 values) at the front of icb into block tiles. */
inline void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                         uint32_t output_tile_index = 0, TW_LOC) {
    twrt_tilize_block(icb, block, ocb, input_tile_index, output_tile_index, loc);
}

// fast_tilize: the same result as tilize on the emulated packer (the hardware path differs
// only in speed).
inline void fast_tilize_init(uint32_t icb, uint32_t full_dim, uint32_t ocb, TW_LOC) { detail::init_cbs(loc, icb, ocb); }
inline void fast_tilize_init_with_dt(uint32_t icb, uint32_t full_dim, uint32_t ocb, TW_LOC) {
    detail::init_cbs(loc, icb, ocb);
}
inline void fast_tilize_uninit(uint32_t icb, uint32_t ocb, TW_LOC) { detail::init_cbs(loc, icb, ocb); }
inline void fast_tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                              uint32_t output_tile_index = 0, TW_LOC) {
    twrt_tilize_block(icb, block, ocb, input_tile_index, output_tile_index, loc);
}

// -- untilize -------------------------------------------------------------------------------

/** untilize_init(icb) (newer) or untilize_init<N>(icb, ocb) (older). */
template <auto... flags>
inline void untilize_init(uint32_t icb, uint32_t ocb = 16, TW_LOC) {
    detail::init_cbs(loc, icb);
}
inline void untilize_init_short(uint32_t icb, TW_LOC) { detail::init_cbs(loc, icb); }
inline void untilize_uninit(uint32_t icb, TW_LOC) { detail::init_cbs(loc, icb); }

/** Untilize full_ct_dim tiles into a row-major block at the next slot of ocb (block_ct_dim per DST pass). */
template <uint32_t block_ct_dim = 1>
inline void untilize_block(uint32_t icb, uint32_t full_ct_dim, uint32_t ocb, TW_LOC) {
    twrt_untilize_block(icb, full_ct_dim, ocb, block_ct_dim, loc);
}

template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, auto... flags>
inline void pack_untilize_init(uint32_t icb, uint32_t ocb, TW_LOC) {
    detail::init_cbs(loc, icb, ocb);
}

/** Untilize block_rt_dim x block_ct_dim tiles into columns block_c_index*block_ct_dim*32.. of ocb's rows. */
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, auto... flags>
inline void pack_untilize_block(uint32_t icb, uint32_t block_rt_dim, uint32_t ocb, uint32_t block_c_index = 0, TW_LOC) {
    twrt_pack_untilize_block(icb, block_rt_dim, ocb, block_c_index, block_ct_dim, full_ct_dim, loc);
}

inline void pack_untilize_uninit(uint32_t ocb, TW_LOC) { detail::init_cbs(loc, ocb); }

template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, auto... flags>
inline void pack_untilize_dest_init(uint32_t ocb, uint32_t face_r_dim = 16, uint32_t num_faces = 4, TW_LOC) {
    (void)face_r_dim, (void)num_faces;
    detail::init_cbs(loc, ocb);
}

/** Untilize DST tiles 0 .. block_rt_dim*block_ct_dim-1 into ocb (as pack_untilize_block). */
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, auto... flags>
inline void pack_untilize_dest(uint32_t ocb, uint32_t block_rt_dim = 1, uint32_t block_c_index = 0,
                               uint32_t face_r_dim = 16, uint32_t num_faces = 4, TW_LOC) {
    (void)face_r_dim, (void)num_faces;
    twrt_pack_untilize_dest(ocb, block_rt_dim, block_c_index, block_ct_dim, full_ct_dim, loc);
}

// -- pack_rows: DST holds row-major data (a page unpacked as a tile); pack its first num_rows
// rows of 16 datums, in storage order, to the next slot of the output CB.

// The row count is per kernel run (the runtime keeps it).
inline void pack_rows_init(uint32_t num_rows, TW_LOC) { twrt_init(6, int32_t(num_rows), 0, 0, 0, 0, loc); }
template <uint32_t row_num_datums = 16>
inline void pack_rows_init(uint32_t ocb, uint32_t num_rows, TW_LOC) {
    twrt_check_cb(int32_t(ocb), loc);
    twrt_init(6, int32_t(num_rows * row_num_datums / 16), 0, 0, 0, 0, loc);
}
inline void pack_rows_uninit(TW_LOC) { detail::init(loc); }
template <uint32_t row_num_datums = 16>
inline void pack_rows(uint32_t idst, uint32_t ocb, uint32_t output_index = 0, TW_LOC) {
    (void)output_index;
    twrt_pack_rows(idst, ocb, loc);
}

// -- transpose --------------------------------------------------------------------------------

inline void transpose_wh_init(uint32_t icb, uint32_t ocb, TW_LOC) { detail::init_cbs(loc, icb); }
inline void transpose_wh_init_short(uint32_t icb, TW_LOC) { detail::init_cbs(loc, icb); }

/** DST[idst] = CB[itile] transposed. */
inline void transpose_wh_tile(uint32_t icb, uint32_t itile, uint32_t idst, TW_LOC) {
    twrt_transpose_tile(icb, itile, idst, loc);
}

template <auto... flags>
inline void transpose_wh_dest_init_short(TW_LOC) {
    twrt_init(5, 0, 0, 0, 0, 0, loc);
}

/** Transpose DST[idst] in place. */
template <auto... flags>
inline void transpose_wh_dest(uint32_t idst, TW_LOC) {
    twrt_transpose_dest(idst, loc);
}

}  // namespace ckernel
