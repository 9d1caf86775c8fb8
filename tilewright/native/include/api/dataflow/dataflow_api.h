// api/dataflow/dataflow_api.h -- tt-metal's data-movement kernel API, emulated by Tilewright.
//
// Every function calls the Python implementation Python kernels use
// (tilewright.device.kernel_api.dataflow / .accessor) through tilewright/bridge.h, on the
// running kernel's core and the virtual device's real memory:
//
//   args / identity     get_arg_val, get_common_arg_val, get_arg_addr, get_compile_time_arg_val,
//                       get_absolute_logical_x/y, my_x[noc], my_y[noc]
//   circular buffers    cb_reserve_back, cb_push_back, cb_wait_front, cb_pop_front,
//                       get_write_ptr, get_read_ptr, cb_pages_reservable_at_back,
//                       cb_pages_available_at_front, get_tile_size, get_tile_hw,
//                       get_tile_num_faces, get_dataformat
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
//
// L1 addresses returned to native code (get_write_ptr, get_read_ptr, get_semaphore,
// get_arg_addr) are host-form pointers; L1 addresses passed in may be either form.
// The NoC is synchronous (data lands when a transfer is issued); barriers account time.
// A semaphore must be waited on with noc_semaphore_wait(_min): a native spin loop on a
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

/** L1 address (host form) of the back of the CB: valid between reserve and push. */
inline uint32_t get_write_ptr(uint32_t operand) { return static_cast<uint32_t>(tw::call("get_write_ptr", operand)); }
/** L1 address (host form) of the front of the CB: valid between wait and pop. */
inline uint32_t get_read_ptr(uint32_t operand) { return static_cast<uint32_t>(tw::call("get_read_ptr", operand)); }

// -- address generators ---------------------------------------------------------------------

/** InterleavedAddrGen<DRAM>{.bank_base_address, .page_size} (tt-metal digest §3.2). */
template <bool DRAM>
struct InterleavedAddrGen {
    uint32_t bank_base_address;
    uint32_t page_size;

    uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t noc = noc_index) const {
        return static_cast<uint64_t>(
            tw::call("InterleavedAddrGen.get_noc_addr", DRAM, bank_base_address, page_size, id, offset, noc));
    }
    uint32_t page_size_bytes() const { return page_size; }
};

/** InterleavedAddrGenFast<DRAM, tile_hw>{.bank_base_address, .page_size, .data_format}. */
template <bool DRAM, uint32_t tile_hw = 1024>
struct InterleavedAddrGenFast {
    uint32_t bank_base_address;
    uint32_t page_size;
    DataFormat data_format;

    uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t noc = noc_index) const {
        return static_cast<uint64_t>(
            tw::call("InterleavedAddrGen.get_noc_addr", DRAM, bank_base_address, page_size, id, offset, noc));
    }
    uint32_t page_size_bytes() const { return page_size; }
};

/** InterleavedPow2AddrGen<DRAM>{.bank_base_address, .log_base_2_of_page_size}. */
template <bool DRAM>
struct InterleavedPow2AddrGen {
    uint32_t bank_base_address;
    uint32_t log_base_2_of_page_size;

    uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t noc = noc_index) const {
        return static_cast<uint64_t>(tw::call("InterleavedAddrGen.get_noc_addr", DRAM, bank_base_address,
                                              1u << log_base_2_of_page_size, id, offset, noc));
    }
    uint32_t page_size_bytes() const { return 1u << log_base_2_of_page_size; }
};

template <bool DRAM>
struct InterleavedPow2AddrGenFast {
    uint32_t bank_base_address;
    uint32_t log_base_2_of_page_size;

    uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t noc = noc_index) const {
        return static_cast<uint64_t>(tw::call("InterleavedAddrGen.get_noc_addr", DRAM, bank_base_address,
                                              1u << log_base_2_of_page_size, id, offset, noc));
    }
    uint32_t page_size_bytes() const { return 1u << log_base_2_of_page_size; }
};

// -- NoC addresses --------------------------------------------------------------------------

/** Unicast NoC address of `addr` on the core at NoC coordinate (noc_x, noc_y). */
inline uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t noc = noc_index) {
    return static_cast<uint64_t>(tw::call("get_noc_addr.xy", noc_x, noc_y, addr, noc));
}

/** NoC address of `addr` on this core (loopback). */
inline uint64_t get_noc_addr(uint32_t addr, uint8_t noc = noc_index) {
    return static_cast<uint64_t>(tw::call("get_noc_addr.local", addr, noc));
}

/** NoC address of page `id` of an address generator / tensor accessor. */
template <typename AddrGen, std::enable_if_t<std::is_class_v<AddrGen>, int> = 0>
inline uint64_t get_noc_addr(uint32_t id, const AddrGen& addrgen, uint32_t offset = 0, uint8_t noc = noc_index) {
    return addrgen.get_noc_addr(id, offset, noc);
}

template <bool DRAM>
inline uint64_t get_noc_addr_from_bank_id(uint32_t bank_id, uint32_t bank_address_offset, uint8_t noc = noc_index) {
    return static_cast<uint64_t>(tw::call("get_noc_addr_from_bank_id", bank_id, bank_address_offset, DRAM, noc));
}

inline uint64_t get_noc_multicast_addr(uint32_t noc_x_start, uint32_t noc_y_start, uint32_t noc_x_end,
                                       uint32_t noc_y_end, uint32_t addr, uint8_t noc = noc_index) {
    return static_cast<uint64_t>(
        tw::call("get_noc_multicast_addr", noc_x_start, noc_y_start, noc_x_end, noc_y_end, addr, noc));
}

// -- NoC transfers ----------------------------------------------------------------------------

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true>
inline void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size, uint8_t noc = noc_index) {
    tw::call("noc_async_read", src_noc_addr, dst_local_l1_addr, size, noc);
}

template <bool enable_noc_tracing = true>
inline void noc_async_read_one_packet(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size,
                                      uint8_t noc = noc_index) {
    tw::call("noc_async_read", src_noc_addr, dst_local_l1_addr, size, noc);
}

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true, bool posted = false>
inline void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size, uint8_t noc = noc_index) {
    tw::call("noc_async_write", src_local_l1_addr, dst_noc_addr, size, noc);
}

template <bool enable_noc_tracing = true, bool posted = false>
inline void noc_async_write_one_packet(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size,
                                       uint8_t noc = noc_index) {
    tw::call("noc_async_write", src_local_l1_addr, dst_noc_addr, size, noc);
}

/** Read page `id` of a tensor accessor (one call into the accessor's Python implementation). */
template <typename DSpec>
inline void noc_async_read_page(uint32_t id, const TensorAccessor<DSpec>& addrgen, uint32_t dst_local_l1_addr,
                                uint32_t offset = 0, uint8_t noc = noc_index) {
    tw::call("accessor.read_page", addrgen.handle(), id, dst_local_l1_addr, offset, noc);
}

template <typename AddrGen, std::enable_if_t<std::is_class_v<AddrGen>, int> = 0>
inline void noc_async_read_page(uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr, uint32_t offset = 0,
                                uint8_t noc = noc_index) {
    noc_async_read(addrgen.get_noc_addr(id, offset, noc), dst_local_l1_addr, addrgen.page_size_bytes(), noc);
}

template <typename DSpec>
inline void noc_async_write_page(uint32_t id, const TensorAccessor<DSpec>& addrgen, uint32_t src_local_l1_addr,
                                 uint32_t size = 0, uint32_t offset = 0, uint8_t noc = noc_index) {
    tw::call("accessor.write_page", addrgen.handle(), id, src_local_l1_addr, size, offset, noc);
}

template <typename AddrGen, std::enable_if_t<std::is_class_v<AddrGen>, int> = 0>
inline void noc_async_write_page(uint32_t id, const AddrGen& addrgen, uint32_t src_local_l1_addr, uint32_t size = 0,
                                 uint32_t offset = 0, uint8_t noc = noc_index) {
    noc_async_write(src_local_l1_addr, addrgen.get_noc_addr(id, offset, noc),
                    size ? size : addrgen.page_size_bytes(), noc);
}

/** Deprecated alias of noc_async_read_page (still widely used). */
template <typename AddrGen>
inline void noc_async_read_tile(uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr, uint32_t offset = 0,
                                uint8_t noc = noc_index) {
    noc_async_read_page(id, addrgen, dst_local_l1_addr, offset, noc);
}

/** Deprecated alias of noc_async_write_page. */
template <typename AddrGen>
inline void noc_async_write_tile(uint32_t id, const AddrGen& addrgen, uint32_t src_local_l1_addr,
                                 uint8_t noc = noc_index) {
    noc_async_write_page(id, addrgen, src_local_l1_addr, 0, 0, noc);
}

/** Read a whole shard (aligned page size x shard volume) of a sharded tensor accessor. */
template <typename DSpec>
inline void noc_async_read_shard(uint32_t shard_id, const TensorAccessor<DSpec>& accessor, uint32_t dst_local_l1_addr,
                                 uint8_t noc = noc_index) {
    tw::call("accessor.read_shard", accessor.handle(), shard_id, dst_local_l1_addr, noc);
}

template <typename DSpec>
inline void noc_async_write_shard(uint32_t shard_id, const TensorAccessor<DSpec>& accessor, uint32_t src_local_l1_addr,
                                  uint8_t noc = noc_index) {
    tw::call("accessor.write_shard", accessor.handle(), shard_id, src_local_l1_addr, noc);
}

/** Write to every worker in the rectangle except the sender (num_dests excludes it). */
inline void noc_async_write_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast, uint32_t size,
                                      uint32_t num_dests, bool linked = false, uint8_t noc = noc_index) {
    tw::call("noc_async_write_multicast", src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, linked, noc);
}

/** Write to every worker in the rectangle including the sender (num_dests includes it). */
inline void noc_async_write_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                                   uint32_t size, uint32_t num_dests, bool linked = false,
                                                   uint8_t noc = noc_index) {
    tw::call("noc_async_write_multicast_loopback_src", src_local_l1_addr, dst_noc_addr_multicast, size, num_dests,
             linked, noc);
}

inline void noc_async_read_barrier(uint8_t noc = noc_index) { tw::call("noc_async_read_barrier", noc); }
inline void noc_async_write_barrier(uint8_t noc = noc_index) { tw::call("noc_async_write_barrier", noc); }
inline void noc_async_writes_flushed(uint8_t noc = noc_index) { tw::call("noc_async_writes_flushed", noc); }
inline void noc_async_posted_writes_flushed(uint8_t noc = noc_index) {
    tw::call("noc_async_posted_writes_flushed", noc);
}
inline void noc_async_atomic_barrier(uint8_t noc = noc_index) { tw::call("noc_async_atomic_barrier", noc); }
inline void noc_async_full_barrier(uint8_t noc = noc_index) { tw::call("noc_async_full_barrier", noc); }

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
inline void noc_async_read_set_state(uint64_t src_noc_addr, uint8_t noc = noc_index, uint32_t vc = 0) {
    (void)vc;
    tw::call("noc_async_read_set_state", src_noc_addr, noc);
}

template <auto... flags>
inline void noc_async_read_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr, uint32_t size,
                                      uint8_t noc = noc_index, uint32_t vc = 0) {
    (void)vc;
    tw::call("noc_async_read_with_state", src_local_l1_addr, dst_local_l1_addr, size, noc);
}

template <auto... flags>
inline void noc_async_read_one_packet_set_state(uint64_t src_noc_addr, uint32_t size, const uint32_t vc = 0,
                                                uint8_t noc = noc_index) {
    (void)vc;
    tw::call("noc_async_read_one_packet_set_state", src_noc_addr, size, noc);
}

template <auto... flags>
inline void noc_async_read_one_packet_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr,
                                                 const uint32_t vc = 0, uint8_t noc = noc_index) {
    (void)vc;
    tw::call("noc_async_read_one_packet_with_state", src_local_l1_addr, dst_local_l1_addr, noc);
}

template <auto... flags>
inline void noc_async_write_set_state(uint64_t dst_noc_addr, uint8_t noc = noc_index, uint8_t vc = 0) {
    (void)vc;
    tw::call("noc_async_write_set_state", dst_noc_addr, noc);
}

template <auto... flags>
inline void noc_async_write_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr, uint32_t size,
                                       uint8_t noc = noc_index) {
    tw::call("noc_async_write_with_state", src_local_l1_addr, dst_local_l1_addr, size, noc);
}

template <auto... flags>
inline void noc_async_write_one_packet_set_state(uint64_t dst_noc_addr, uint32_t size, uint8_t noc = noc_index,
                                                 uint8_t vc = 0) {
    (void)vc;
    tw::call("noc_async_write_one_packet_set_state", dst_noc_addr, size, noc);
}

template <auto... flags>
inline void noc_async_write_one_packet_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr,
                                                  uint8_t noc = noc_index) {
    tw::call("noc_async_write_one_packet_with_state", src_local_l1_addr, dst_local_l1_addr, noc);
}

// -- transaction ids (0..15): the emulated NoC completes every transfer at issue, so a
// transaction id only selects which barrier accounts the time.

inline void noc_async_read_set_trid(uint32_t trid, uint8_t noc = noc_index) {
    tw::call("noc_async_read_set_trid", trid, noc);
}
inline void noc_async_write_set_trid(uint32_t trid, uint8_t noc = noc_index) {
    tw::call("noc_async_write_set_trid", trid, noc);
}
inline void noc_async_read_barrier_with_trid(uint32_t trid, uint8_t noc = noc_index) {
    tw::call("noc_async_read_barrier_with_trid", trid, noc);
}
inline void noc_async_write_barrier_with_trid(uint32_t trid, uint8_t noc = noc_index) {
    tw::call("noc_async_write_barrier_with_trid", trid, noc);
}

template <auto... flags>
inline void noc_async_write_one_packet_with_trid(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size,
                                                 uint32_t trid, uint8_t cmd_buf = write_cmd_buf,
                                                 uint8_t noc = noc_index, uint8_t vc = 0) {
    (void)vc;
    tw::call("noc_async_write_one_packet_with_trid", src_local_l1_addr, dst_noc_addr, size, trid, cmd_buf, noc);
}

template <auto... flags>
inline void noc_async_write_one_packet_with_trid_set_state(uint64_t dst_noc_addr, uint8_t cmd_buf = write_cmd_buf,
                                                           uint8_t noc = noc_index, uint8_t vc = 0) {
    (void)vc;
    tw::call("noc_async_write_one_packet_with_trid_set_state", dst_noc_addr, cmd_buf, noc);
}

template <auto... flags>
inline void noc_async_write_one_packet_with_trid_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_addr,
                                                            uint32_t size, uint32_t trid,
                                                            uint8_t cmd_buf = write_cmd_buf,
                                                            uint8_t noc = noc_index) {
    tw::call("noc_async_write_one_packet_with_trid_with_state", src_local_l1_addr, dst_local_addr, size, trid,
             cmd_buf, noc);
}

/** 32-bit immediate write (byte-enable mask `be`); not to DRAM. */
inline void noc_inline_dw_write(uint64_t addr, uint32_t val, uint8_t be = 0xF, uint8_t noc = noc_index) {
    tw::call("noc_inline_dw_write", addr, val, be, noc);
}

// -- semaphores -------------------------------------------------------------------------------

/** L1 address (host form) of semaphore `semaphore_id` on this core. */
template <typename... CoreType>
inline uint32_t get_semaphore(uint32_t semaphore_id) {
    return static_cast<uint32_t>(tw::call("get_semaphore", semaphore_id));
}

inline void noc_semaphore_set(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val) {
    tw::call("noc_semaphore_set", tw::addr_of(sem_addr), val);
}

/** Block until *sem_addr == val (other kernels run meanwhile). */
inline void noc_semaphore_wait(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val) {
    tw::call("noc_semaphore_wait", tw::addr_of(sem_addr), val);
}

/** Block until *sem_addr >= val. */
inline void noc_semaphore_wait_min(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val) {
    tw::call("noc_semaphore_wait_min", tw::addr_of(sem_addr), val);
}

/** Atomic 32-bit add at a (remote or local) L1 word. */
template <bool posted = false>
inline void noc_semaphore_inc(uint64_t addr, uint32_t incr, uint8_t noc_id = noc_index) {
    tw::call("noc_semaphore_inc", addr, incr, noc_id);
}

inline void noc_semaphore_inc_multicast(uint64_t addr, uint32_t incr, uint32_t num_dests, uint8_t noc = noc_index) {
    tw::call("noc_semaphore_inc_multicast", addr, incr, num_dests, noc);
}

/** Write the local word at src_local_l1_addr to a remote address. */
inline void noc_semaphore_set_remote(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint8_t noc = noc_index) {
    tw::call("noc_semaphore_set_remote", src_local_l1_addr, dst_noc_addr, noc);
}

inline void noc_semaphore_set_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                        uint32_t num_dests, bool linked = false, uint8_t noc = noc_index) {
    tw::call("noc_semaphore_set_multicast", src_local_l1_addr, dst_noc_addr_multicast, num_dests, linked, noc);
}

inline void noc_semaphore_set_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                                     uint32_t num_dests, bool linked = false,
                                                     uint8_t noc = noc_index) {
    tw::call("noc_semaphore_set_multicast_loopback_src", src_local_l1_addr, dst_noc_addr_multicast, num_dests, linked,
             noc);
}
