// api/tensor/tensor_accessor.h -- TensorAccessor: page id -> NoC address of a device tensor.
//
// The accessor's description (interleaved DRAM/L1, or sharded L1 with its shard shape and
// banks) is decoded once, when it is built, from the kernel's compile-time args
// (TensorAccessorArgs, the encoding of tilewright.device.kernel_api.accessor) or, for a
// tensor passed to an external call, from the tensor itself; address math then runs in
// the native runtime with the digest §3.2 / §3.3 rules.
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

    TensorAccessor(tw::HandleTag, int64_t handle, TW_LOC) { twrt_accessor_from_handle(&acc_, handle, loc); }

    template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET>
    TensorAccessor(const TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>&, std::size_t bank_base_address,
                   uint32_t page_size = 0, TW_LOC) {
        uint32_t words[64];
        const uint32_t n = tw::accessor_words(CTA_OFFSET, words, 64, loc);
        twrt_accessor_init(&acc_, words, n, static_cast<uint32_t>(bank_base_address), page_size, CTA_OFFSET, loc);
    }

    uint64_t get_noc_addr(uint32_t page_id, uint32_t offset = 0, uint8_t noc = noc_index, TW_LOC) const {
        (void)noc;
        return twrt_accessor_page_addr(&acc_, page_id, offset, loc);
    }
    uint64_t get_shard_noc_addr(uint32_t shard_id, uint32_t offset = 0, uint8_t noc = noc_index, TW_LOC) const {
        (void)noc;
        return twrt_accessor_shard_addr(&acc_, shard_id, offset, loc);
    }
    uint32_t get_aligned_page_size() const { return acc_.aligned_page_size; }
    uint32_t page_size_bytes() const { return acc_.page_size; }
    uint32_t get_bank_base_address() const { return acc_.base; }

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

    const tw_accessor* raw() const { return &acc_; }

private:
    tw_accessor acc_;
};

template <std::size_t C, std::size_t R>
TensorAccessor(const TensorAccessorArgs<C, R>&, std::size_t) -> TensorAccessor<TensorAccessorArgs<C, R>>;
template <std::size_t C, std::size_t R>
TensorAccessor(const TensorAccessorArgs<C, R>&, std::size_t, uint32_t) -> TensorAccessor<TensorAccessorArgs<C, R>>;

namespace tw {
/** The accessor generated code passes for a tensor function argument. */
inline TensorAccessor<RuntimeDistribution> accessor_arg(int64_t handle, TW_LOC) {
    return TensorAccessor<RuntimeDistribution>(HandleTag{}, handle, loc);
}
}  // namespace tw
