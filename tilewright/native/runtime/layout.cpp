// layout.cpp -- tilize, untilize, pack_untilize and pack_rows (row-major blocks in CBs).
//
// A row-major block in a CB is 32 rows of n*32 values stored row after row; it fills n
// tile-sized pages of a 16/32-bit format.  Semantics and messages: the functions of the
// same names in device/kernel_api/compute.py.
#include <cinttypes>
#include <cmath>

#include "twrt.h"
#include "twrt_formats.h"

namespace twrt {

namespace {

constexpr int kTile = 1024;

int32_t elem_size(uint32_t fmt) {
    switch (fmt) {
        case 0: case 8: case 24: case 0xF2: return 4;    // Float32, Int32, UInt32, RawUInt32
        case 1: case 5: case 9: case 0xF1: return 2;     // Float16, Float16_b, UInt16, RawUInt16
        case 14: case 30: case 0xF0: return 1;           // Int8, UInt8, RawUInt8
        default: return 0;
    }
}

bool is_bfp(uint32_t fmt) { return fmt == 2 || fmt == 3 || fmt == 6 || fmt == 7 || fmt == 11 || fmt == 15; }

int32_t row_major_size(Run* r, int32_t cb, const tw_CBState* c, const char* what, tw::Loc loc) {
    if (is_bfp(c->format_code))
        fail(r, ERR_KERNEL, loc,
             "%s: {cb:%d} holds a block-float format, which has no row-major form (a row-major block needs a 16- or "
             "32-bit format)",
             what, cb);
    int32_t e = elem_size(c->format_code);
    if (e == 0) fail(r, ERR_FORMAT, loc, "%s: format %u of {cb:%d} has no element size", what, c->format_code, cb);
    return e;
}

void tile32(Run* r, int32_t cb, const tw_CBState* c, const char* what, tw::Loc loc) {
    if (c->tile_h != 32 || c->tile_w != 32)
        fail(r, ERR_KERNEL, loc, "%s: the compute API here handles 32x32 tiles; {cb:%d} has a %ux%u tile", what, cb,
             c->tile_h, c->tile_w);
}

float read_elem(uint32_t fmt, const uint8_t* p) {
    switch (fmt) {
        case 5: { uint16_t h; std::memcpy(&h, p, 2); uint32_t b = uint32_t(h) << 16; float f; std::memcpy(&f, &b, 4); return f; }
        case 0: { float f; std::memcpy(&f, p, 4); return f; }
        case 1: { uint16_t h; std::memcpy(&h, p, 2); return half_value(h); }
        case 8: { int32_t v; std::memcpy(&v, p, 4); return float(v); }
        case 24: case 0xF2: { uint32_t v; std::memcpy(&v, p, 4); return float(v); }
        case 9: case 0xF1: { uint16_t v; std::memcpy(&v, p, 2); return float(v); }
        case 14: return float(int8_t(*p));
        default: return float(*p);
    }
}

// false: the value does not fit the integer format
bool write_elem(uint32_t fmt, uint8_t* p, float v) {
    auto ints = [&](double lo, double hi) { return std::isfinite(v) && v == std::trunc(v) && v >= lo && v <= hi; };
    switch (fmt) {
        case 5: { uint16_t h = uint16_t(bf16_bits(v)); std::memcpy(p, &h, 2); return true; }
        case 0: std::memcpy(p, &v, 4); return true;
        case 1: { uint16_t h = half_bits(v); std::memcpy(p, &h, 2); return true; }
        case 8: { if (!ints(-2147483648.0, 2147483647.0)) return false; int32_t t = int32_t(double(v)); std::memcpy(p, &t, 4); return true; }
        case 24: case 0xF2: { if (!ints(0, 4294967295.0)) return false; uint32_t t = uint32_t(double(v)); std::memcpy(p, &t, 4); return true; }
        case 9: case 0xF1: { if (!ints(0, 65535)) return false; uint16_t t = uint16_t(v); std::memcpy(p, &t, 2); return true; }
        case 14: { if (!ints(-128, 127)) return false; *p = uint8_t(int8_t(v)); return true; }
        default: { if (!ints(0, 255)) return false; *p = uint8_t(v); return true; }
    }
}

int capacity(Run* r) {
    int n = r->dst_full_sync ? 16 : 8;
    return r->fp32_dest_acc ? n / 2 : n;
}

Run* compute_run(tw::Loc loc) {
    Run* r = cur();
    note(r, loc);
    if (!r->kind_compute)
        fail(r, ERR_KERNEL, loc, "this kernel is a data-movement kernel; the compute API runs on compute kernels");
    return r;
}

float through_dst(Run* r, float v, bool integer) { return (integer || r->fp32_dest_acc) ? v : round_bf16(v); }

// Tile `itile` of `cb` as DST holds it (integer formats: unrounded), row-major.
void tile_through_dst(Run* r, int32_t cb, tw_CBState* c, uint32_t itile, float* out, tw::Loc loc) {
    uint32_t filled = (c->received - c->acked) & 0xFFFF;
    if (itile >= filled)
        fail(r, ERR_KERNEL, loc, "tile %u of {cb:%d} is not available: %u pages are waited at the front", itile, cb,
             filled);
    decode_tile(c->format_code,
                l1_span(r, c->rd_ptr + uint64_t(itile) * c->page_size, c->page_size, "unpack", loc), out);
    bool integer = is_integer(c->format_code);
    for (int i = 0; i < kTile; ++i) out[i] = through_dst(r, out[i], integer);
}

/** Store rows x cols tiles (row-major tile grid `tiles`) row-major into cb from tile slot
 *  `slot`: row i starts i * row_width values after the slot, columns col_offset.. */
void write_row_major(Run* r, int32_t cb, tw_CBState* c, uint32_t slot, const float* tiles, uint32_t rows_t,
                     uint32_t cols_t, uint32_t col_offset, uint32_t row_width, const char* what, tw::Loc loc) {
    int32_t es = row_major_size(r, cb, c, what, loc);
    uint32_t rows = rows_t * 32;
    uint64_t region = uint64_t(rows) * row_width * es;
    uint64_t base = c->wr_ptr + uint64_t(slot) * c->page_size;
    if (base + c->page_size > c->fifo_limit && slot < c->num_pages) base -= uint64_t(c->num_pages) * c->page_size;
    if (slot >= c->num_pages || base + region > c->fifo_limit)
        fail(r, ERR_KERNEL, loc,
             "%s: the row-major block (%u rows of %u values, %" PRIu64 " bytes) does not fit in {cb:%d} from tile "
             "slot %u (%u pages of %u bytes)",
             what, rows, row_width, region, cb, slot, c->num_pages, c->page_size);
    uint8_t* region_mem = l1_span(r, base, region, what, loc);
    for (uint32_t tr = 0; tr < rows_t; ++tr) {
        for (uint32_t tc = 0; tc < cols_t; ++tc) {
            const float* t = tiles + (size_t(tr) * cols_t + tc) * kTile;
            for (int i = 0; i < 32; ++i) {
                uint8_t* row = region_mem + (uint64_t(tr * 32 + i) * row_width + col_offset + tc * 32) * es;
                for (int j = 0; j < 32; ++j)
                    if (!write_elem(c->format_code, row + j * es, t[i * 32 + j]))
                        fail(r, ERR_FORMAT, loc, "%s: value %g cannot be stored in the integer format of {cb:%d}",
                             what, double(t[i * 32 + j]), cb);
            }
        }
    }
}

void untilize_checks(Run* r, uint32_t block_ct, uint32_t full_ct, const char* what, tw::Loc loc) {
    int cap = capacity(r);
    if (block_ct < 1 || full_ct < 1 || full_ct % block_ct)
        fail(r, ERR_KERNEL, loc, "%s: full_ct_dim must be a positive multiple of block_ct_dim", what);
    if (block_ct > uint32_t(cap))
        fail(r, ERR_KERNEL, loc, "%s: block_ct_dim=%u tiles do not fit the %d DST tiles of one acquire", what,
             block_ct, cap);
}

}  // namespace

void pack_tile_values(Run* r, int32_t cb, uint32_t slot, const float* values, const char* what, tw::Loc loc);

}  // namespace twrt

using namespace twrt;

TW_EXPORT void twrt_tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t in_idx, uint32_t out_idx,
                                 tw::Loc loc) {
    Run* r = compute_run(loc);
    tw_CBState* src = cb_of(r, int32_t(icb), loc);
    tw_CBState* dst = cb_of(r, int32_t(ocb), loc);
    char what[96];
    std::snprintf(what, sizeof what, "tilize_block({cb:%u}, block=%u, {cb:%u})", icb, block, ocb);
    if (int32_t(block) < 1 || int32_t(in_idx) < 0)
        fail(r, ERR_KERNEL, loc, "%s: block must be at least 1 and input_tile_index non-negative", what);
    tile32(r, int32_t(icb), src, what, loc);
    tile32(r, int32_t(ocb), dst, what, loc);
    int32_t es = row_major_size(r, int32_t(icb), src, what, loc);
    uint64_t width = uint64_t(block) * 32;
    uint64_t count = 31 * width + (uint64_t(in_idx) + block) * 32;
    uint64_t needed = count * es;
    uint32_t filled = (src->received - src->acked) & 0xFFFF;
    uint64_t available = uint64_t(filled) * src->page_size;
    if (needed > available)
        fail(r, ERR_KERNEL, loc,
             "%s: the row-major block is 32 rows of %" PRIu64 " values (%" PRIu64 " bytes, %" PRIu64
             " pages) but only %u pages (%" PRIu64 " bytes) are waited at the front of {cb:%u}: a partial block",
             what, width, needed, (needed + src->page_size - 1) / src->page_size, filled, available, icb);
    if (src->rd_ptr + needed > src->fifo_limit)
        fail(r, ERR_KERNEL, loc, "%s: the row-major block wraps past the end of {cb:%u}'s FIFO", what, icb);
    bool integer = is_integer(src->format_code);
    const uint8_t* base = l1_span(r, src->rd_ptr, needed, what, loc);
    float t[kTile];
    for (uint32_t k = 0; k < block; ++k) {
        uint64_t col0 = 32 * (uint64_t(in_idx) + k);
        for (int i = 0; i < 32; ++i)
            for (int j = 0; j < 32; ++j)
                t[i * 32 + j] = through_dst(r, read_elem(src->format_code, base + (i * width + col0 + j) * es), integer);
        pack_tile_values(r, int32_t(ocb), out_idx + k, t, what, loc);
    }
    tile_through(r, uint64_t(block) * src->page_size, uint64_t(block) * dst->page_size, block);
}

TW_EXPORT void twrt_untilize_block(uint32_t icb, uint32_t full_ct, uint32_t ocb, uint32_t block_ct, tw::Loc loc) {
    Run* r = compute_run(loc);
    tw_CBState* src = cb_of(r, int32_t(icb), loc);
    tw_CBState* dst = cb_of(r, int32_t(ocb), loc);
    char what[96];
    std::snprintf(what, sizeof what, "untilize_block({cb:%u}, full_ct_dim=%u, {cb:%u})", icb, full_ct, ocb);
    untilize_checks(r, block_ct, full_ct, what, loc);
    uint32_t filled = (src->received - src->acked) & 0xFFFF;
    if (filled < full_ct)
        fail(r, ERR_KERNEL, loc, "%s: needs %u tiles at the front of {cb:%u}, only %u are waited: a partial block",
             what, full_ct, icb, filled);
    float* tiles = new float[size_t(full_ct) * kTile];
    for (uint32_t t = 0; t < full_ct; ++t) tile_through_dst(r, int32_t(icb), src, t, tiles + size_t(t) * kTile, loc);
    write_row_major(r, int32_t(ocb), dst, dst->pack_counter, tiles, 1, full_ct, 0, full_ct * 32, what, loc);
    delete[] tiles;
    dst->pack_counter += full_ct;
    tile_through(r, uint64_t(full_ct) * src->page_size, uint64_t(full_ct) * dst->page_size, full_ct);
}

TW_EXPORT void twrt_pack_untilize_block(uint32_t icb, uint32_t block_rt, uint32_t ocb, uint32_t block_c,
                                        uint32_t block_ct, uint32_t full_ct, tw::Loc loc) {
    Run* r = compute_run(loc);
    tw_CBState* src = cb_of(r, int32_t(icb), loc);
    tw_CBState* dst = cb_of(r, int32_t(ocb), loc);
    char what[112];
    std::snprintf(what, sizeof what, "pack_untilize_block<%u, %u>({cb:%u}, %u, {cb:%u})", block_ct, full_ct, icb,
                  block_rt, ocb);
    untilize_checks(r, block_ct, full_ct, what, loc);
    if (int32_t(block_rt) < 1 || block_c >= full_ct / block_ct)
        fail(r, ERR_KERNEL, loc, "%s: block_rt_dim must be >= 1 and block_c_index < %u", what, full_ct / block_ct);
    uint32_t n = block_rt * block_ct;
    uint32_t filled = (src->received - src->acked) & 0xFFFF;
    if (filled < n)
        fail(r, ERR_KERNEL, loc, "%s: needs %u tiles at the front of {cb:%u}, only %u are waited: a partial block",
             what, n, icb, filled);
    float* tiles = new float[size_t(n) * kTile];
    for (uint32_t t = 0; t < n; ++t) tile_through_dst(r, int32_t(icb), src, t, tiles + size_t(t) * kTile, loc);
    write_row_major(r, int32_t(ocb), dst, 0, tiles, block_rt, block_ct, block_c * block_ct * 32, full_ct * 32, what,
                    loc);
    delete[] tiles;
    tile_through(r, uint64_t(n) * src->page_size, uint64_t(n) * dst->page_size, n);
}

TW_EXPORT void twrt_pack_untilize_dest(uint32_t ocb, uint32_t block_rt, uint32_t block_c, uint32_t block_ct,
                                       uint32_t full_ct, tw::Loc loc) {
    Run* r = compute_run(loc);
    tw_CBState* dst = cb_of(r, int32_t(ocb), loc);
    char what[112];
    std::snprintf(what, sizeof what, "pack_untilize_dest<%u, %u>({cb:%u}, %u)", block_ct, full_ct, ocb, block_rt);
    untilize_checks(r, block_ct, full_ct, what, loc);
    if (int32_t(block_rt) < 1 || block_c >= full_ct / block_ct)
        fail(r, ERR_KERNEL, loc, "%s: block_rt_dim must be >= 1 and block_c_index < %u", what, full_ct / block_ct);
    uint32_t n = block_rt * block_ct;
    if (n > uint32_t(capacity(r)))
        fail(r, ERR_KERNEL, loc,
             "DST index %u is out of range: this compute kernel has %d DST tiles per acquire (fp32_dest_acc_en=%s, "
             "dst_full_sync_en=%s)",
             n - 1, capacity(r), r->fp32_dest_acc ? "True" : "False", r->dst_full_sync ? "True" : "False");
    write_row_major(r, int32_t(ocb), dst, 0, r->dst, block_rt, block_ct, block_c * block_ct * 32, full_ct * 32, what,
                    loc);
    tile_pack(r, uint64_t(n) * dst->page_size, false);
}

TW_EXPORT void twrt_pack_rows(uint32_t idst, uint32_t ocb, uint32_t num_rows, tw::Loc loc) {
    // DST holds row-major data (a page unpacked as a tile); pack its first num_rows rows of 16
    // datums, in storage order, to the next slot of ocb.
    Run* r = compute_run(loc);
    int cap = capacity(r);
    if (int32_t(idst) >= cap)
        fail(r, ERR_KERNEL, loc, "pack_rows: DST index %u is out of range (%d DST tiles per acquire)", idst, cap);
    tw_CBState* c = cb_of(r, int32_t(ocb), loc);
    const char* what = "pack_rows";
    int32_t es = row_major_size(r, int32_t(ocb), c, what, loc);
    if (num_rows < 1 || num_rows > 64)
        fail(r, ERR_KERNEL, loc, "pack_rows: num_rows must be 1..64 (a tile holds 64 rows of 16 datums), got %u",
             num_rows);
    uint32_t bytes = num_rows * 16 * uint32_t(es);
    uint32_t slot = c->pack_counter;
    if (slot >= c->num_pages || bytes > c->page_size)
        fail(r, ERR_KERNEL, loc, "pack_rows: %u rows of 16 datums (%u bytes) do not fit a %u-byte page of {cb:%u}",
             num_rows, bytes, c->page_size, ocb);
    uint32_t addr = c->wr_ptr + slot * c->page_size;
    if (addr + c->page_size > c->fifo_limit) addr -= c->num_pages * c->page_size;
    const float* d = r->dst + size_t(idst) * kTile;
    uint8_t* page = l1_span(r, addr, bytes, "pack_rows", loc);
    for (uint32_t i = 0; i < num_rows * 16; ++i) {
        int face = i / 256, rr = (i % 256) / 16, cc = i % 16;
        float v = d[((face / 2) * 16 + rr) * 32 + (face % 2) * 16 + cc];
        if (!write_elem(c->format_code, page + i * es, v))
            fail(r, ERR_FORMAT, loc, "pack_rows: value %g cannot be stored in the integer format of {cb:%u}", double(v),
                 ocb);
    }
    c->pack_counter += 1;
    tile_pack(r, c->page_size, false);
}
