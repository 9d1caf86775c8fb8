// tilewright/runtime.h -- the native runtime (libtwrt) as kernel code sees it.
//
// Every kernel-API function of these headers is a direct call into libtwrt, which
// implements the tt-metal kernel API on the virtual device's memory and on the state
// it shares with Python kernels (circular buffers, semaphores, wait lists: see
// tilewright/device/shared.py).  A call that must wait switches the kernel's fiber
// to the scheduler; every other call stays in C++.
//
// `tw::Loc` defaults to the caller's file and line (__builtin_FILE / __builtin_LINE
// evaluated at the call site), so a deadlock or an error names the line of the
// kernel that made the call.
#pragma once

#include <cstddef>
#include <cstdint>

#include "twrt_errors.h"  // generated: TW_ERR_* (device/api_messages.py)

#define TW_EXPORT extern "C" __attribute__((visibility("default")))
#define TW_RT extern "C"

namespace tw {

/** Where a kernel-API call was made (the kernel's source file and line). */
struct Loc {
    const char* file;
    int line;
};

#define TW_HERE ::tw::Loc{__builtin_FILE(), __builtin_LINE()}
// Copy-list-initialised: GCC evaluates the builtins at the call site only in this form
// (`Loc{...}` as a default argument would name the header line).
#define TW_LOC ::tw::Loc loc = {__builtin_FILE(), __builtin_LINE()}

/** A pointer as the 32-bit L1 address kernels use (L1 is identity-mapped). */
template <typename T>
inline uint32_t addr_of(T* p) {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p));
}

}  // namespace tw

// -- scheduling, errors, fallbacks ---------------------------------------------------------

/** Call the Python implementation of kernel-API function `name` (rare calls only). */
TW_RT int64_t twrt_request(const char* name, int32_t argc, const int64_t* argv, tw::Loc loc);
/** A compiled kernel's external call (reference C.6): phase 0 before it (Python starts its
 *  contract monitor; the run then reports its CB protocol actions), 1 after it (the monitor
 *  checks the whole contract happened; `value` is the result), 2 when a C++ exception
 *  escaped it (`value`: a pointer to its text).  `contract` indexes the kernel's notes. */
TW_RT void twrt_extern_call(int32_t phase, int32_t contract, int64_t value, tw::Loc loc);
/** Report a kernel error of class `cls` (TW_ERR_KERNEL, TW_ERR_DFB, TW_ERR_NOC, ...: twrt_errors.h). */
TW_RT [[noreturn]] void twrt_fail(int32_t cls, const char* message, tw::Loc loc);
/** tilewright run --trace: the running kernel's modelled clock, and a trace span `name` from
 *  `start` to now whose argument `key` is the printf of `format` ("" key: none; "*": the text is
 *  the JSON object of the arguments); a span is a
 *  flag check when the run is not traced. */
TW_RT uint64_t twrt_trace_clock();
TW_RT void twrt_trace_span(const char* name, uint64_t start, const char* key, const char* format, ...)
    __attribute__((format(printf, 4, 5)));

/** Compiled TT-Lang's float scalars (ttlang/support.h, runtime/scalars.cpp): Python's repr of
 *  `v` into `out` (40 bytes), and Python's divmod of floats (b != 0). */
TW_RT void twrt_float_repr(double v, char* out);
TW_RT void twrt_float_divmod(double a, double b, double* q, double* r);

// -- identity, arguments ----------------------------------------------------------------------

TW_RT uint32_t twrt_my_noc_x(uint32_t noc);
TW_RT uint32_t twrt_my_noc_y(uint32_t noc);
TW_RT uint32_t twrt_logical_x();
TW_RT uint32_t twrt_logical_y();
TW_RT uint32_t twrt_arg(int32_t index, tw::Loc loc);
TW_RT uint32_t twrt_common_arg(int32_t index, tw::Loc loc);
TW_RT uint32_t twrt_arg_addr(int32_t index);
TW_RT uint32_t twrt_common_arg_addr(int32_t index);
TW_RT uint32_t twrt_compile_time_arg(int32_t index, tw::Loc loc);
TW_RT uint8_t twrt_noc_index();

// -- circular buffers --------------------------------------------------------------------------

TW_RT void twrt_cb_reserve_back(int32_t cb, int32_t n, tw::Loc loc);
TW_RT void twrt_cb_push_back(int32_t cb, int32_t n, tw::Loc loc);
TW_RT void twrt_cb_wait_front(int32_t cb, int32_t n, tw::Loc loc);
TW_RT void twrt_cb_pop_front(int32_t cb, int32_t n, tw::Loc loc);
TW_RT bool twrt_cb_pages_reservable_at_back(int32_t cb, int32_t n, tw::Loc loc);
TW_RT bool twrt_cb_pages_available_at_front(int32_t cb, int32_t n, tw::Loc loc);
TW_RT uint32_t twrt_cb_write_ptr(int32_t cb, tw::Loc loc);
TW_RT uint32_t twrt_cb_read_ptr(int32_t cb, tw::Loc loc);
/** Field `what` of the CB's interface: 0 page size, 1 num pages, 2 fifo size, 3 fifo addr,
 *  4 tile size, 5 tile hw, 6 tile faces, 7 data format, 8 fifo limit, 9 received, 10 acked. */
TW_RT uint32_t twrt_cb_info(int32_t cb, int32_t what, tw::Loc loc);

// -- NoC -----------------------------------------------------------------------------------------

TW_RT uint64_t twrt_noc_xy_addr(uint32_t x, uint32_t y, uint32_t addr);
TW_RT uint64_t twrt_noc_local_addr(uint32_t addr, tw::Loc loc);
TW_RT uint64_t twrt_noc_bank_addr(uint32_t bank, uint32_t offset, bool dram, tw::Loc loc);
TW_RT uint64_t twrt_noc_bank_page_addr(bool dram, uint32_t base, uint32_t aligned_page, uint32_t page,
                                       uint32_t offset, tw::Loc loc);
TW_RT uint32_t twrt_bank_count(bool dram);
TW_RT uint32_t twrt_align(bool dram);
TW_RT void twrt_noc_read(uint64_t src, uint32_t dst, uint32_t size, uint32_t noc, tw::Loc loc);
TW_RT void twrt_noc_write(uint32_t src, uint64_t dst, uint32_t size, uint32_t noc, tw::Loc loc);
/** flags: bit 0 loopback (the sender is a destination), bit 1 linked (device-time model). */
TW_RT void twrt_noc_write_mcast(uint32_t src, uint64_t dst, uint32_t size, uint32_t num_dests, uint32_t flags,
                                uint32_t noc, tw::Loc loc);
TW_RT void twrt_noc_barrier(uint32_t noc);
TW_RT void twrt_noc_inline_dw_write(uint64_t addr, uint32_t value, uint32_t be, uint32_t noc, tw::Loc loc);
/** Stateful forms: kind 0 read, 1 read one packet, 2 write, 3 write one packet, 4 write trid. */
TW_RT void twrt_noc_set_state(int32_t kind, uint64_t addr, uint32_t size, uint32_t noc, tw::Loc loc);
TW_RT uint64_t twrt_noc_state_addr(int32_t kind, uint32_t local, uint32_t noc, uint32_t* size, tw::Loc loc);
TW_RT void twrt_noc_check_trid(uint32_t trid, const char* what, tw::Loc loc);

// -- semaphores ----------------------------------------------------------------------------------

TW_RT uint32_t twrt_semaphore(uint32_t id, tw::Loc loc);
TW_RT void twrt_sem_set(uint32_t addr, uint32_t value, tw::Loc loc);
TW_RT void twrt_sem_wait(uint32_t addr, uint32_t value, bool at_least, tw::Loc loc);
TW_RT void twrt_sem_inc(uint64_t addr, uint32_t incr, uint32_t noc, tw::Loc loc);
TW_RT void twrt_sem_inc_mcast(uint64_t addr, uint32_t incr, uint32_t num_dests, uint32_t noc, tw::Loc loc);
/** A plain store into this core's L1 by pointer that other kernels may wait on. */
TW_RT void twrt_l1_written(uint32_t addr, uint32_t size);

// -- tensor accessors -------------------------------------------------------------------------------

/** Accessor description decoded from compile-time-arg words (see api/tensor/tensor_accessor.h). */
struct tw_accessor {
    uint32_t is_dram;
    uint32_t sharded;
    uint32_t base;
    uint32_t page_size;
    uint32_t aligned_page_size;
    uint32_t rank;
    uint32_t num_banks;
    uint32_t tensor_shape[2];
    uint32_t shard_shape[2];
    uint16_t banks[64];  // (x << 8) | y of each bank (sharded)
};
TW_RT void twrt_accessor_init(tw_accessor* acc, const uint32_t* words, uint32_t n_words, uint32_t base,
                              uint32_t page_size, uint32_t offset, tw::Loc loc);
TW_RT void twrt_accessor_from_handle(tw_accessor* acc, int64_t handle, tw::Loc loc);
TW_RT uint64_t twrt_accessor_page_addr(const tw_accessor* acc, uint32_t page, uint32_t offset, tw::Loc loc);
TW_RT uint64_t twrt_accessor_shard_addr(const tw_accessor* acc, uint32_t shard, uint32_t offset, tw::Loc loc);
TW_RT uint32_t twrt_accessor_shard_bytes(const tw_accessor* acc, tw::Loc loc);

// -- compute -----------------------------------------------------------------------------------------

TW_RT void twrt_dst_acquire(tw::Loc loc);
TW_RT void twrt_dst_release(tw::Loc loc);
TW_RT void twrt_dst_check(tw::Loc loc);
/** Unpacker / math / packer configuration change (resets the unpack transpose flag). */
TW_RT void twrt_init(int32_t what, int32_t a, int32_t b, int32_t c, int32_t d, int32_t e, tw::Loc loc);
TW_RT void twrt_check_cb(int32_t cb, tw::Loc loc);
TW_RT void twrt_copy_tile(uint32_t cb, uint32_t itile, uint32_t idst, tw::Loc loc);
/** op: twrt_sfpu_ops.h TW_FPU_*; bcast: 0 none, 1 rows, 2 cols, 3 scalar. */
TW_RT void twrt_binary(int32_t op, int32_t bcast, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t idst,
                       tw::Loc loc);
TW_RT void twrt_dest_reuse(int32_t op, int32_t reuse, uint32_t cb, uint32_t itile, uint32_t idst, tw::Loc loc);
TW_RT void twrt_matmul_tiles(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t idst, uint32_t transpose,
                             tw::Loc loc);
TW_RT void twrt_matmul_block(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t idst, uint32_t transpose,
                             uint32_t ct, uint32_t rt, uint32_t kt, tw::Loc loc);
TW_RT void twrt_reduce_tile(int32_t pool, int32_t dim, uint32_t cb, uint32_t cbs, uint32_t t, uint32_t ts,
                            uint32_t idst, tw::Loc loc);
TW_RT void twrt_transpose_tile(uint32_t cb, uint32_t itile, uint32_t idst, tw::Loc loc);
TW_RT void twrt_transpose_dest(uint32_t idst, tw::Loc loc);
TW_RT void twrt_pack_tile(uint32_t idst, uint32_t cb, uint32_t out_idx, bool out_of_order, tw::Loc loc);
TW_RT void twrt_pack_tile_block(uint32_t idst, uint32_t cb, uint32_t ntiles, tw::Loc loc);
TW_RT void twrt_pack_l1_acc(uint32_t enable, tw::Loc loc);
/** SFPU op `op` (twrt_sfpu_ops.h, generated from device/ops/tile_ops.py) on DST[idst] with up to three
 *  float/int parameters. */
TW_RT void twrt_sfpu(int32_t op, uint32_t idst, uint32_t p0, uint32_t p1, uint32_t p2, tw::Loc loc);
/** SFPU binary op (twrt_sfpu_ops.h TW_SFPU_BINARY_*) on two DST tiles. */
TW_RT void twrt_sfpu_binary(int32_t op, uint32_t idst0, uint32_t idst1, uint32_t odst, tw::Loc loc);
TW_RT void twrt_where_tile(uint32_t idst0, uint32_t idst1, uint32_t idst2, uint32_t odst, tw::Loc loc);
/** DST[idst] = the float with IEEE bits `bits`, everywhere. */
TW_RT void twrt_fill_tile(uint32_t idst, uint32_t bits, tw::Loc loc);
/** DST as SFPI code sees it (sfpi.h): the float tiles of the current acquire, row-major 32x32. */
struct twrt_DstView {
    float* dst;
    int32_t tiles;  // DST tiles of one acquire (the target's rule)
    int32_t fp32;   // fp32_dest_acc_en: DST keeps float32, else bf16
};
/** Start an SFPU call wrapper's SFPI code: DST's view; every tile counts as written. */
TW_RT void twrt_sfpi_begin(twrt_DstView* out, tw::Loc loc);
/** End it: charge `vector_ops` SFPU vector instructions to the math thread. */
TW_RT void twrt_sfpi_end(uint64_t vector_ops, tw::Loc loc);
/** DST[idst] = CB tile broadcast: 1 rows, 2 cols, 3 scalar. */
TW_RT void twrt_unary_bcast(int32_t dim, uint32_t cb, uint32_t itile, uint32_t idst, tw::Loc loc);
TW_RT void twrt_tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t in_idx, uint32_t out_idx,
                             tw::Loc loc);
TW_RT void twrt_untilize_block(uint32_t icb, uint32_t full_ct, uint32_t ocb, uint32_t block_ct, tw::Loc loc);
TW_RT void twrt_pack_untilize_block(uint32_t icb, uint32_t block_rt, uint32_t ocb, uint32_t block_c, uint32_t block_ct,
                                    uint32_t full_ct, tw::Loc loc);
TW_RT void twrt_pack_untilize_dest(uint32_t ocb, uint32_t block_rt, uint32_t block_c, uint32_t block_ct,
                                   uint32_t full_ct, tw::Loc loc);
/** pack_rows: the row count of the last pack_rows_init (twrt_init 6), default 1. */
TW_RT void twrt_pack_rows(uint32_t idst, uint32_t ocb, tw::Loc loc);
