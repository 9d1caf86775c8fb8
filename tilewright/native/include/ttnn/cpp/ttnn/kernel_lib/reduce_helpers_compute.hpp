// ttnn/cpp/ttnn/kernel_lib/reduce_helpers_compute.hpp -- compute_kernel_lib::reduce, the one
// reduce helper of ttnn's reduction kernels: SUM / AVG / MAX over rows (REDUCE_ROW: Ht
// tiles out per batch), columns (REDUCE_COL: Wt tiles) or both (REDUCE_SCALAR: one tile),
// owning the DST handshake, reduce_init / reduce_uninit, the CB protocol and the packs.
// Tilewright's own implementation of tt-metal's public interface.
//
//   compute_kernel_lib::reduce<SUM, REDUCE_ROW, cb_in, cb_scaler, cb_out>(
//       compute_kernel_lib::ReduceInputBlockShape::of(Ht, Wt, NC));
//
// Input order, as tt-metal's reduce readers send it: row-major tiles, except REDUCE_COL
// with a streaming policy (WaitAndPopPerTile, BulkWaitBulkPop), which takes the columns in
// chunks of DEST_AUTO_LIMIT: for each chunk, for each row, the chunk's tiles.  The scaler
// tile (tile 0 of the scaler CB) is waited for once and left in the CB.  Not provided (a
// static_assert naming it): Accumulate, ReduceFp32Mode::Accurate; a partial scaler is a
// run-time error of the same kind at the call (ASSERT in tt-metal).
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/compute/compute_kernel_api.h"
#include "ttnn/cpp/ttnn/kernel_lib/dest_helpers.hpp"

namespace compute_kernel_lib {

enum class ReduceDataFormatReconfigMode { NONE, INPUT, OUTPUT, INPUT_AND_OUTPUT };
enum class ReduceInputPolicy { WaitAndPopPerTile, BulkWaitBulkPop, WaitUpfrontNoPop, NoWaitNoPop };
enum class ReduceFp32Mode { Fast, Accurate };

struct ReduceInputMemoryLayout {
    uint32_t row_stride = 0;  // 0: contiguous rows (Wt)
    explicit constexpr ReduceInputMemoryLayout() = default;
    explicit constexpr ReduceInputMemoryLayout(uint32_t row) : row_stride(row) {}
    static constexpr ReduceInputMemoryLayout contiguous() { return ReduceInputMemoryLayout(); }
    static constexpr ReduceInputMemoryLayout with_row_stride(uint32_t s) { return ReduceInputMemoryLayout(s); }
};

struct ReduceInputBlockShape {
    uint32_t rows;
    uint32_t cols;
    uint32_t batches;
    static constexpr ReduceInputBlockShape of(uint32_t r, uint32_t c, uint32_t b = 1) { return {r, c, b}; }
    static constexpr ReduceInputBlockShape single() { return {1, 1, 1}; }
    static constexpr ReduceInputBlockShape row(uint32_t c, uint32_t b = 1) { return {1, c, b}; }
    static constexpr ReduceInputBlockShape col(uint32_t r, uint32_t b = 1) { return {r, 1, b}; }
};

struct ReducePartialScaler {
    bool use_partial = false;
    static constexpr ReducePartialScaler none() { return {false}; }
    static constexpr ReducePartialScaler with_partial() { return {true}; }
};

struct AccumulationConfig {
    uint32_t cb_accumulator = 0;
    uint32_t dst_index = 0;
    static constexpr AccumulationConfig with_cb(uint32_t cb, uint32_t dst = 0) { return {cb, dst}; }
};
struct Accumulate {
    AccumulationConfig config;
    uint32_t iteration = 0;
    explicit constexpr Accumulate(AccumulationConfig cfg, uint32_t iter = 0) : config(cfg), iteration(iter) {}
    explicit constexpr Accumulate(uint32_t cb, uint32_t iter = 0) : config{cb, 0}, iteration(iter) {}
    static constexpr Accumulate at(uint32_t cb, uint32_t iter, uint32_t dst = 0) {
        return Accumulate(AccumulationConfig{cb, dst}, iter);
    }
    constexpr bool is_first() const { return iteration == 0; }
};
struct NoAccumulation {};
struct NoOp {
    ALWI void operator()(uint32_t = 0) const {}
};

/** The reduction of one shape (see the file comment); `post_reduce_op(dst)` runs on each
 * result tile in DST before it is packed. */
template <PoolType reduce_type, ReduceDim reduce_dim, uint32_t in_cb, uint32_t scaler_cb, uint32_t out_cb,
          ReduceInputPolicy policy = ReduceInputPolicy::WaitAndPopPerTile,
          ReduceDataFormatReconfigMode reconfig = ReduceDataFormatReconfigMode::INPUT_AND_OUTPUT,
          ReduceFp32Mode fp32_mode = ReduceFp32Mode::Fast, typename AccumulateT = NoAccumulation,
          typename PostReduceOp = NoOp>
ALWI void reduce(ReduceInputBlockShape shape,
                 ReduceInputMemoryLayout layout = ReduceInputMemoryLayout::contiguous(),
                 AccumulateT accumulate = AccumulateT{}, PostReduceOp post_reduce_op = PostReduceOp{},
                 ReducePartialScaler partial = ReducePartialScaler::none(), TW_LOC) {
    static_assert(std::is_same_v<AccumulateT, NoAccumulation>,
                  "compute_kernel_lib::reduce: Accumulate is not provided by Tilewright");
    static_assert(fp32_mode == ReduceFp32Mode::Fast,
                  "compute_kernel_lib::reduce: ReduceFp32Mode::Accurate is not provided by Tilewright");
    (void)accumulate;
    if (partial.use_partial)
        twrt_fail(TW_ERR_KERNEL, "compute_kernel_lib::reduce: ReducePartialScaler::with_partial() is not provided", loc);
    constexpr bool streaming = policy == ReduceInputPolicy::WaitAndPopPerTile;
    constexpr bool bulk = policy == ReduceInputPolicy::BulkWaitBulkPop;
    constexpr bool upfront = policy == ReduceInputPolicy::WaitUpfrontNoPop;
    const uint32_t Ht = shape.rows, Wt = shape.cols, NC = shape.batches;
    const uint32_t stride = layout.row_stride ? layout.row_stride : Wt;

    if constexpr (reconfig == ReduceDataFormatReconfigMode::INPUT ||
                  reconfig == ReduceDataFormatReconfigMode::INPUT_AND_OUTPUT)
        reconfig_data_format(in_cb, scaler_cb, loc);
    if constexpr (reconfig == ReduceDataFormatReconfigMode::OUTPUT ||
                  reconfig == ReduceDataFormatReconfigMode::INPUT_AND_OUTPUT)
        pack_reconfig_data_format(out_cb, loc);
    reduce_init<reduce_type, reduce_dim>(in_cb, scaler_cb, out_cb, loc);
    cb_wait_front(scaler_cb, 1, loc);
    if constexpr (upfront) cb_wait_front(in_cb, NC * Ht * stride, loc);

    auto pack_out = [&](uint32_t d) { post_reduce_op(d); };  // each result tile, in DST
    for (uint32_t nc = 0; nc < NC; ++nc) {
        const uint32_t base = nc * Ht * stride;  // the batch's first tile (indexed policies)
        if constexpr (reduce_dim == REDUCE_ROW) {
            for (uint32_t r = 0; r < Ht; ++r) {
                if constexpr (bulk) cb_wait_front(in_cb, Wt, loc);
                tile_regs_acquire(loc);
                for (uint32_t c = 0; c < Wt; ++c) {
                    if constexpr (streaming) {
                        cb_wait_front(in_cb, 1, loc);
                        reduce_tile<reduce_type, reduce_dim>(in_cb, scaler_cb, 0, 0, 0, loc);
                        cb_pop_front(in_cb, 1, loc);
                    } else {
                        uint32_t t = bulk ? c : base + r * stride + c;
                        reduce_tile<reduce_type, reduce_dim>(in_cb, scaler_cb, t, 0, 0, loc);
                    }
                }
                pack_out(0);
                tile_regs_commit(loc);
                tile_regs_wait(loc);
                cb_reserve_back(out_cb, 1, loc);
                pack_tile(0, out_cb, 0, loc);
                cb_push_back(out_cb, 1, loc);
                tile_regs_release(loc);
                if constexpr (bulk) cb_pop_front(in_cb, Wt, loc);
            }
        } else if constexpr (reduce_dim == REDUCE_COL) {
            for (uint32_t c0 = 0; c0 < Wt; c0 += DEST_AUTO_LIMIT) {
                const uint32_t chunk = Wt - c0 < DEST_AUTO_LIMIT ? Wt - c0 : DEST_AUTO_LIMIT;
                if constexpr (bulk) cb_wait_front(in_cb, Ht * chunk, loc);
                tile_regs_acquire(loc);
                for (uint32_t r = 0; r < Ht; ++r) {
                    for (uint32_t j = 0; j < chunk; ++j) {
                        if constexpr (streaming) {
                            cb_wait_front(in_cb, 1, loc);
                            reduce_tile<reduce_type, reduce_dim>(in_cb, scaler_cb, 0, 0, j, loc);
                            cb_pop_front(in_cb, 1, loc);
                        } else {
                            uint32_t t = bulk ? r * chunk + j : base + r * stride + c0 + j;
                            reduce_tile<reduce_type, reduce_dim>(in_cb, scaler_cb, t, 0, j, loc);
                        }
                    }
                }
                for (uint32_t j = 0; j < chunk; ++j) pack_out(j);
                tile_regs_commit(loc);
                tile_regs_wait(loc);
                cb_reserve_back(out_cb, chunk, loc);
                for (uint32_t j = 0; j < chunk; ++j) pack_tile(j, out_cb, 0, loc);
                cb_push_back(out_cb, chunk, loc);
                tile_regs_release(loc);
                if constexpr (bulk) cb_pop_front(in_cb, Ht * chunk, loc);
            }
        } else {
            if constexpr (bulk) cb_wait_front(in_cb, Ht * Wt, loc);
            tile_regs_acquire(loc);
            for (uint32_t r = 0; r < Ht; ++r) {
                for (uint32_t c = 0; c < Wt; ++c) {
                    if constexpr (streaming) {
                        cb_wait_front(in_cb, 1, loc);
                        reduce_tile<reduce_type, reduce_dim>(in_cb, scaler_cb, 0, 0, 0, loc);
                        cb_pop_front(in_cb, 1, loc);
                    } else {
                        uint32_t t = bulk ? r * Wt + c : base + r * stride + c;
                        reduce_tile<reduce_type, reduce_dim>(in_cb, scaler_cb, t, 0, 0, loc);
                    }
                }
            }
            pack_out(0);
            tile_regs_commit(loc);
            tile_regs_wait(loc);
            cb_reserve_back(out_cb, 1, loc);
            pack_tile(0, out_cb, 0, loc);
            cb_push_back(out_cb, 1, loc);
            tile_regs_release(loc);
            if constexpr (bulk) cb_pop_front(in_cb, Ht * Wt, loc);
        }
    }
    reduce_uninit(loc);
}

}  // namespace compute_kernel_lib
