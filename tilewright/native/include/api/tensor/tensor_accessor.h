// api/tensor/tensor_accessor.h -- TensorAccessor: page id -> NoC address of a device tensor.
//
// A handle to the Python TensorAccessor of the running kernel (interleaved DRAM/L1 and
// sharded L1 tensors; tilewright.device.kernel_api.accessor holds the address math of
// tt-metal digest §3.2-3.3).  Built either from TensorAccessorArgs (tt-metal style) or by
// the generated code of ttl.call_extern_func for a tensor function argument.
// Handles are valid for the duration of the external call that created or received them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "api/tensor/noc_traits.h"
#include "api/tensor/tensor_accessor_args.h"
#include "tilewright/common.h"

namespace tw {
/** The distribution spec type of accessors passed in by generated code. */
struct RuntimeDistribution {};
struct HandleTag {};
}  // namespace tw

template <typename DSpecT>
struct TensorAccessor {
    using DSpec = DSpecT;

    TensorAccessor(tw::HandleTag, int32_t handle) : handle_(handle) {}

    template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET>
    TensorAccessor(const TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>&, std::size_t bank_base_address,
                   uint32_t page_size = 0)
        : handle_(static_cast<int32_t>(
              tw::call("TensorAccessor", CTA_OFFSET, CRTA_OFFSET, bank_base_address, page_size))) {}

    uint64_t get_noc_addr(uint32_t page_id, uint32_t offset = 0, uint8_t noc = noc_index) const {
        return static_cast<uint64_t>(tw::call("accessor.get_noc_addr", handle_, page_id, offset, noc));
    }
    uint64_t get_shard_noc_addr(uint32_t shard_id, uint32_t offset = 0, uint8_t noc = noc_index) const {
        return static_cast<uint64_t>(tw::call("accessor.get_shard_noc_addr", handle_, shard_id, offset, noc));
    }
    uint32_t get_aligned_page_size() const { return query(1); }
    uint32_t page_size_bytes() const { return query(0); }
    uint32_t get_bank_base_address() const { return query(2); }

    bool is_local_bank(uint32_t virtual_x, uint32_t virtual_y, uint8_t noc = noc_index) const {
        return virtual_x == my_x[noc] && virtual_y == my_y[noc];
    }
    bool is_local_addr(uint64_t noc_addr, uint8_t noc = noc_index) const {
        return is_local_bank(NOC_UNICAST_ADDR_X(noc_addr), NOC_UNICAST_ADDR_Y(noc_addr), noc);
    }
    bool is_local_page(uint32_t page_id, uint8_t noc = noc_index) const {
        return is_local_addr(get_noc_addr(page_id, 0, noc), noc);
    }
    bool is_local_shard(uint32_t shard_id, uint8_t noc = noc_index) const {
        return is_local_addr(get_shard_noc_addr(shard_id, 0, noc), noc);
    }

    int32_t handle() const { return handle_; }

private:
    uint32_t query(int what) const { return static_cast<uint32_t>(tw::call("accessor.query", handle_, what)); }
    int32_t handle_;
};

template <std::size_t C, std::size_t R>
TensorAccessor(const TensorAccessorArgs<C, R>&, std::size_t) -> TensorAccessor<TensorAccessorArgs<C, R>>;
template <std::size_t C, std::size_t R>
TensorAccessor(const TensorAccessorArgs<C, R>&, std::size_t, uint32_t) -> TensorAccessor<TensorAccessorArgs<C, R>>;

namespace tw {
/** The accessor generated code passes for a tensor function argument (handle from Python). */
inline TensorAccessor<RuntimeDistribution> accessor_arg(int64_t handle) {
    return TensorAccessor<RuntimeDistribution>(HandleTag{}, static_cast<int32_t>(handle));
}
}  // namespace tw
