// api/dataflow/dataflow_api.h -- tt-metal's data-movement kernel API on the native runtime.
//
// Every function calls the native runtime (tilewright/runtime.h), which acts on the
// running kernel's core, the virtual device's memory and the CB / semaphore state shared
// with Python kernels; only a call that must wait leaves C++:
//
//   args / identity     get_arg_val, get_common_arg_val, get_arg_addr, get_compile_time_arg_val,
//                       get_named_compile_time_arg_val, get_absolute_logical_x/y, my_x[noc], my_y[noc]
//   circular buffers    cb_reserve_back, cb_push_back, cb_wait_front, cb_pop_front,
//                       get_write_ptr, get_read_ptr, cb_pages_reservable_at_back,
//                       cb_pages_available_at_front, get_tile_size, get_tile_hw,
//                       get_tile_num_faces, get_dataformat, get_local_cb_interface
//   NoC addresses       get_noc_addr (x/y/addr, local addr, page id + address generator),
//                       get_noc_addr_from_bank_id<DRAM>, get_noc_multicast_addr
//   NoC transfers       noc_async_read/write (+ _one_packet, _page, _tile, _shard),
//                       stateful forms (*_set_state / *_with_state, one-packet too),
//                       transaction ids (*_set_trid, *_barrier_with_trid, *_with_trid),
//                       multicast (+ loopback), barriers, noc_inline_dw_write
//   semaphores          get_semaphore, noc_semaphore_set/wait/wait_min/inc/inc_multicast,
//                       noc_semaphore_set_remote, noc_semaphore_set_multicast(_loopback_src)
//   address generators  InterleavedAddrGen(Fast), InterleavedPow2AddrGen(Fast),
//                       TensorAccessor / TensorAccessorArgs (api/tensor/tensor_accessor.h)
//   object style        Noc, CircularBuffer, DataflowBuffer, endpoints (also as experimental::...;
//                       api/dataflow/objects.h)
//
// L1 addresses are pointers (the running core's L1 is mapped at its own addresses).  The
// NoC is synchronous (data lands when a transfer is issued); barriers account time.  A
// semaphore must be waited on with noc_semaphore_wait(_min): a native spin loop on a
// volatile pointer never yields to the other kernels.
#pragma once

#if defined(TW_KERNEL_KIND_COMPUTE)
#error "api/dataflow/dataflow_api.h is the data-movement kernel API; a compute kernel cannot include it (use api/compute/*.h)"
#endif

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "api/tensor/local_tensor_accessor.h"
#include "api/tensor/tensor_accessor.h"
#include "tilewright/cb.h"
#include "tilewright/common.h"

#ifndef NOC_MAX_BURST_SIZE
#define NOC_MAX_BURST_SIZE 8192
#endif

// -- circular-buffer pointers (data movement only) ----------------------------------------

/** L1 address of the back of the CB: valid between reserve and push. */
inline uint32_t get_write_ptr(uint32_t operand, TW_LOC) { return twrt_cb_write_ptr(int32_t(operand), loc); }
/** L1 address of the front of the CB: valid between wait and pop. */
inline uint32_t get_read_ptr(uint32_t operand, TW_LOC) { return twrt_cb_read_ptr(int32_t(operand), loc); }

// -- address generators ---------------------------------------------------------------------

namespace tw {
inline uint32_t aligned(uint32_t page_size, bool dram) {
    const uint32_t a = twrt_align(dram);
    return (page_size + a - 1) / a * a;
}
}  // namespace tw

/** InterleavedAddrGen<DRAM>{.bank_base_address, .page_size} (tt-metal digest §3.2). */
template <bool DRAM>
struct InterleavedAddrGen {
    uint32_t bank_base_address;
    uint32_t page_size;

    uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t noc = noc_index, TW_LOC) const {
        (void)noc;
        return twrt_noc_bank_page_addr(DRAM, bank_base_address, tw::aligned(page_size, DRAM), id, offset, loc);
    }
    uint32_t page_size_bytes() const { return page_size; }
};

/** InterleavedAddrGenFast<DRAM, tile_hw>{.bank_base_address, .page_size, .data_format}. */
template <bool DRAM, uint32_t tile_hw = 1024>
struct InterleavedAddrGenFast {
    uint32_t bank_base_address;
    uint32_t page_size;
    DataFormat data_format;

    uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t noc = noc_index, TW_LOC) const {
        (void)noc;
        return twrt_noc_bank_page_addr(DRAM, bank_base_address, tw::aligned(page_size, DRAM), id, offset, loc);
    }
    uint32_t page_size_bytes() const { return page_size; }
};

/** InterleavedPow2AddrGen<DRAM>{.bank_base_address, .log_base_2_of_page_size}. */
template <bool DRAM>
struct InterleavedPow2AddrGen {
    uint32_t bank_base_address;
    uint32_t log_base_2_of_page_size;

    uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t noc = noc_index, TW_LOC) const {
        (void)noc;
        return twrt_noc_bank_page_addr(DRAM, bank_base_address, tw::aligned(1u << log_base_2_of_page_size, DRAM), id,
                                       offset, loc);
    }
    uint32_t page_size_bytes() const { return 1u << log_base_2_of_page_size; }
};

template <bool DRAM>
struct InterleavedPow2AddrGenFast : InterleavedPow2AddrGen<DRAM> {};

// -- NoC addresses --------------------------------------------------------------------------

/** Unicast NoC address of `addr` on the core at NoC coordinate (noc_x, noc_y). */
inline uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t noc = noc_index) {
    (void)noc;
    return twrt_noc_xy_addr(noc_x, noc_y, addr);
}

/** NoC address of `addr` on this core (loopback). */
inline uint64_t get_noc_addr(uint32_t addr, uint8_t noc = noc_index, TW_LOC) {
    (void)noc;
    return twrt_noc_local_addr(addr, loc);
}

/** NoC address of page `id` of an address generator / tensor accessor. */
template <typename AddrGen, std::enable_if_t<std::is_class_v<AddrGen>, int> = 0>
inline uint64_t get_noc_addr(uint32_t id, const AddrGen& addrgen, uint32_t offset = 0, uint8_t noc = noc_index) {
    return addrgen.get_noc_addr(id, offset, noc);
}

template <bool DRAM>
inline uint64_t get_noc_addr_from_bank_id(uint32_t bank_id, uint32_t bank_address_offset, uint8_t noc = noc_index,
                                          TW_LOC) {
    (void)noc;
    return twrt_noc_bank_addr(bank_id, bank_address_offset, DRAM, loc);
}

inline uint64_t get_noc_multicast_addr(uint32_t noc_x_start, uint32_t noc_y_start, uint32_t noc_x_end,
                                       uint32_t noc_y_end, uint32_t addr, uint8_t noc = noc_index) {
    (void)noc;
    return (uint64_t(noc_x_start & 63) << 48) | (uint64_t(noc_y_start & 63) << 54) | (uint64_t(noc_x_end & 63) << 36) |
           (uint64_t(noc_y_end & 63) << 42) | (uint64_t(addr) & ((uint64_t(1) << 36) - 1));
}

// -- NoC transfers ----------------------------------------------------------------------------

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true>
inline void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size, uint8_t noc = noc_index,
                           TW_LOC) {
    twrt_noc_read(src_noc_addr, dst_local_l1_addr, size, noc, loc);
}

template <bool enable_noc_tracing = true>
inline void noc_async_read_one_packet(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size,
                                      uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_read(src_noc_addr, dst_local_l1_addr, size, noc, loc);
}

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true, bool posted = false>
inline void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size, uint8_t noc = noc_index,
                            TW_LOC) {
    twrt_noc_write(src_local_l1_addr, dst_noc_addr, size, noc, loc);
}

template <bool enable_noc_tracing = true, bool posted = false>
inline void noc_async_write_one_packet(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size,
                                       uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_write(src_local_l1_addr, dst_noc_addr, size, noc, loc);
}

/** Read page `id` of a tensor accessor / address generator into L1. */
template <typename AddrGen, std::enable_if_t<std::is_class_v<AddrGen>, int> = 0>
inline void noc_async_read_page(uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr, uint32_t offset = 0,
                                uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_read(addrgen.get_noc_addr(id, offset, noc), dst_local_l1_addr, addrgen.page_size_bytes(), noc, loc);
}

template <typename AddrGen, std::enable_if_t<std::is_class_v<AddrGen>, int> = 0>
inline void noc_async_write_page(uint32_t id, const AddrGen& addrgen, uint32_t src_local_l1_addr, uint32_t size = 0,
                                 uint32_t offset = 0, uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_write(src_local_l1_addr, addrgen.get_noc_addr(id, offset, noc), size ? size : addrgen.page_size_bytes(),
                   noc, loc);
}

/** Deprecated alias of noc_async_read_page (still widely used). */
template <typename AddrGen>
inline void noc_async_read_tile(uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr, uint32_t offset = 0,
                                uint8_t noc = noc_index, TW_LOC) {
    noc_async_read_page(id, addrgen, dst_local_l1_addr, offset, noc, loc);
}

/** Deprecated alias of noc_async_write_page. */
template <typename AddrGen>
inline void noc_async_write_tile(uint32_t id, const AddrGen& addrgen, uint32_t src_local_l1_addr,
                                 uint8_t noc = noc_index, TW_LOC) {
    noc_async_write_page(id, addrgen, src_local_l1_addr, 0, 0, noc, loc);
}

/** Read a whole shard (aligned page size x shard volume) of a sharded tensor accessor. */
template <typename DSpec>
inline void noc_async_read_shard(uint32_t shard_id, const TensorAccessor<DSpec>& accessor, uint32_t dst_local_l1_addr,
                                 uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_read(accessor.get_shard_noc_addr(shard_id, 0, noc, loc), dst_local_l1_addr,
                  twrt_accessor_shard_bytes(accessor.raw(), loc), noc, loc);
}

template <typename DSpec>
inline void noc_async_write_shard(uint32_t shard_id, const TensorAccessor<DSpec>& accessor, uint32_t src_local_l1_addr,
                                  uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_write(src_local_l1_addr, accessor.get_shard_noc_addr(shard_id, 0, noc, loc),
                   twrt_accessor_shard_bytes(accessor.raw(), loc), noc, loc);
}

/** Write to every worker in the rectangle except the sender (num_dests excludes it). */
inline void noc_async_write_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast, uint32_t size,
                                      uint32_t num_dests, bool linked = false, uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_write_mcast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, linked ? 2 : 0, noc, loc);
}

/** Write to every worker in the rectangle including the sender (num_dests includes it). */
inline void noc_async_write_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                                   uint32_t size, uint32_t num_dests, bool linked = false,
                                                   uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_write_mcast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, linked ? 3 : 1, noc, loc);
}

inline void noc_async_read_barrier(uint8_t noc = noc_index) { twrt_noc_barrier(noc); }
inline void noc_async_write_barrier(uint8_t noc = noc_index) { twrt_noc_barrier(noc); }
inline void noc_async_writes_flushed(uint8_t noc = noc_index) { twrt_noc_barrier(noc); }
inline void noc_async_posted_writes_flushed(uint8_t noc = noc_index) { twrt_noc_barrier(noc); }
inline void noc_async_atomic_barrier(uint8_t noc = noc_index) { twrt_noc_barrier(noc); }
inline void noc_async_full_barrier(uint8_t noc = noc_index) { twrt_noc_barrier(noc); }

// -- stateful transfers ---------------------------------------------------------------------
//
// *_set_state programs the NoC command buffer with the target node (and, for one-packet
// forms, the size); *_with_state supplies the 32-bit local address on that node.  Same
// copy as noc_async_read / noc_async_write; a with_state without a set_state on that NoC
// is an error (hardware would reuse stale command-buffer contents).

/** NoC command buffer names (accepted for signature compatibility; one buffer per kind here). */
inline constexpr uint8_t write_cmd_buf = 0;
inline constexpr uint8_t read_cmd_buf = 1;
inline constexpr uint8_t write_reg_cmd_buf = 2;
inline constexpr uint8_t write_at_cmd_buf = 3;

template <auto... flags>
inline void noc_async_read_set_state(uint64_t src_noc_addr, uint8_t noc = noc_index, uint32_t vc = 0, TW_LOC) {
    (void)vc;
    twrt_noc_set_state(0, src_noc_addr, 0, noc, loc);
}

template <auto... flags>
inline void noc_async_read_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr, uint32_t size,
                                      uint8_t noc = noc_index, uint32_t vc = 0, TW_LOC) {
    (void)vc;
    twrt_noc_read(twrt_noc_state_addr(0, src_local_l1_addr, noc, nullptr, loc), dst_local_l1_addr, size, noc, loc);
}

template <auto... flags>
inline void noc_async_read_one_packet_set_state(uint64_t src_noc_addr, uint32_t size, const uint32_t vc = 0,
                                                uint8_t noc = noc_index, TW_LOC) {
    (void)vc;
    twrt_noc_set_state(1, src_noc_addr, size, noc, loc);
}

template <auto... flags>
inline void noc_async_read_one_packet_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr,
                                                 const uint32_t vc = 0, uint8_t noc = noc_index, TW_LOC) {
    (void)vc;
    uint32_t size = 0;
    uint64_t src = twrt_noc_state_addr(1, src_local_l1_addr, noc, &size, loc);
    twrt_noc_read(src, dst_local_l1_addr, size, noc, loc);
}

template <auto... flags>
inline void noc_async_write_set_state(uint64_t dst_noc_addr, uint8_t noc = noc_index, uint8_t vc = 0, TW_LOC) {
    (void)vc;
    twrt_noc_set_state(2, dst_noc_addr, 0, noc, loc);
}

template <auto... flags>
inline void noc_async_write_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr, uint32_t size,
                                       uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_write(src_local_l1_addr, twrt_noc_state_addr(2, dst_local_l1_addr, noc, nullptr, loc), size, noc, loc);
}

template <auto... flags>
inline void noc_async_write_one_packet_set_state(uint64_t dst_noc_addr, uint32_t size, uint8_t noc = noc_index,
                                                 uint8_t vc = 0, TW_LOC) {
    (void)vc;
    twrt_noc_set_state(3, dst_noc_addr, size, noc, loc);
}

template <auto... flags>
inline void noc_async_write_one_packet_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr,
                                                  uint8_t noc = noc_index, TW_LOC) {
    uint32_t size = 0;
    uint64_t dst = twrt_noc_state_addr(3, dst_local_l1_addr, noc, &size, loc);
    twrt_noc_write(src_local_l1_addr, dst, size, noc, loc);
}

// -- transaction ids (0..15): the emulated NoC completes every transfer at issue, so a
// transaction id only selects which barrier accounts the time.

inline void noc_async_read_set_trid(uint32_t trid, uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_check_trid(trid, "noc_async_read_set_trid", loc);
    twrt_noc_barrier(noc);
}
inline void noc_async_write_set_trid(uint32_t trid, uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_check_trid(trid, "noc_async_write_set_trid", loc);
    twrt_noc_barrier(noc);
}
inline void noc_async_read_barrier_with_trid(uint32_t trid, uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_check_trid(trid, "noc_async_read_barrier_with_trid", loc);
    twrt_noc_barrier(noc);
}
inline void noc_async_write_barrier_with_trid(uint32_t trid, uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_check_trid(trid, "noc_async_write_barrier_with_trid", loc);
    twrt_noc_barrier(noc);
}

template <auto... flags>
inline void noc_async_write_one_packet_with_trid(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size,
                                                 uint32_t trid, uint8_t cmd_buf = write_cmd_buf,
                                                 uint8_t noc = noc_index, uint8_t vc = 0, TW_LOC) {
    (void)vc, (void)cmd_buf;
    twrt_noc_check_trid(trid, "noc_async_write_one_packet_with_trid", loc);
    twrt_noc_write(src_local_l1_addr, dst_noc_addr, size, noc, loc);
}

template <auto... flags>
inline void noc_async_write_one_packet_with_trid_set_state(uint64_t dst_noc_addr, uint8_t cmd_buf = write_cmd_buf,
                                                           uint8_t noc = noc_index, uint8_t vc = 0, TW_LOC) {
    (void)vc, (void)cmd_buf;
    twrt_noc_set_state(4, dst_noc_addr, 0, noc, loc);
}

template <auto... flags>
inline void noc_async_write_one_packet_with_trid_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_addr,
                                                            uint32_t size, uint32_t trid,
                                                            uint8_t cmd_buf = write_cmd_buf,
                                                            uint8_t noc = noc_index, TW_LOC) {
    (void)cmd_buf;
    twrt_noc_check_trid(trid, "noc_async_write_one_packet_with_trid_with_state", loc);
    twrt_noc_write(src_local_l1_addr, twrt_noc_state_addr(4, dst_local_addr, noc, nullptr, loc), size, noc, loc);
}

/** 32-bit immediate write (byte-enable mask `be`); not to DRAM. */
inline void noc_inline_dw_write(uint64_t addr, uint32_t val, uint8_t be = 0xF, uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_inline_dw_write(addr, val, be, noc, loc);
}

// -- semaphores -------------------------------------------------------------------------------

/** L1 address of semaphore `semaphore_id` on this core (a pointer in native code). */
template <typename... CoreType>
inline uint32_t get_semaphore(uint32_t semaphore_id, TW_LOC) {
    return twrt_semaphore(semaphore_id, loc);
}

inline void noc_semaphore_set(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val, TW_LOC) {
    twrt_sem_set(tw::addr_of(sem_addr), val, loc);
}

/** Block until *sem_addr == val (other kernels run meanwhile). */
inline void noc_semaphore_wait(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val, TW_LOC) {
    twrt_sem_wait(tw::addr_of(sem_addr), val, false, loc);
}

/** Block until *sem_addr >= val. */
inline void noc_semaphore_wait_min(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val, TW_LOC) {
    twrt_sem_wait(tw::addr_of(sem_addr), val, true, loc);
}

/** Atomic 32-bit add at a (remote or local) L1 word. */
template <bool posted = false>
inline void noc_semaphore_inc(uint64_t addr, uint32_t incr, uint8_t noc_id = noc_index, TW_LOC) {
    twrt_sem_inc(addr, incr, noc_id, loc);
}

inline void noc_semaphore_inc_multicast(uint64_t addr, uint32_t incr, uint32_t num_dests, uint8_t noc = noc_index,
                                        TW_LOC) {
    twrt_sem_inc_mcast(addr, incr, num_dests, noc, loc);
}

/** Write the local word at src_local_l1_addr to a remote address. */
inline void noc_semaphore_set_remote(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint8_t noc = noc_index,
                                     TW_LOC) {
    twrt_noc_write(src_local_l1_addr, dst_noc_addr, 4, noc, loc);
}

inline void noc_semaphore_set_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                        uint32_t num_dests, bool linked = false, uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_write_mcast(src_local_l1_addr, dst_noc_addr_multicast, 4, num_dests, linked ? 2 : 0, noc, loc);
}

inline void noc_semaphore_set_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                                     uint32_t num_dests, bool linked = false,
                                                     uint8_t noc = noc_index, TW_LOC) {
    twrt_noc_write_mcast(src_local_l1_addr, dst_noc_addr_multicast, 4, num_dests, linked ? 3 : 1, noc, loc);
}

#include "api/dataflow/objects.h"
