// layout.cpp -- tilize, untilize, pack_untilize and pack_rows (row-major blocks in CBs).
//
// A row-major block in a CB is 32 rows of n*32 values stored row after row; it fills n
// tile-sized pages of a 16/32-bit format.  Semantics: the functions of the same names in
// device/kernel_api/layout.py; messages: the same table (twrt_messages.h); format facts:
// twrt_format_table.h (both generated from the Python tables).
#include <cinttypes>
#include <cmath>

#include "twrt.h"
#include "twrt_format_table.h"
#include "twrt_formats.h"

namespace twrt {

namespace {

constexpr int kTile = 1024;

int32_t row_major_size(Run* r, int32_t cb, const tw_CBState* c, const char* what, tw::Loc loc) {
    FormatInfo info = format_info(c->format_code);
    if (info.bfp_mantissa) fail_row_major_bfp(r, loc, what, cb, c->format_code);
    if (info.element_size == 0) fail_row_major_size(r, loc, what, c->format_code, cb);
    return info.element_size;
}

void tile32(Run* r, int32_t cb, const tw_CBState* c, const char* what, tw::Loc loc) {
    if (c->tile_h != 32 || c->tile_w != 32) fail_tile_shape(r, loc, what, cb, c->tile_h, c->tile_w);
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

// false: the value does not fit the integer format (its range: the format table)
bool write_elem(uint32_t fmt, uint8_t* p, float v) {
    FormatInfo info = format_info(fmt);
    if (info.integer && !(std::isfinite(v) && v == std::trunc(v) && v >= info.int_min && v <= info.int_max))
        return false;
    switch (fmt) {
        case Float16_b: { uint16_t h = uint16_t(bf16_bits(v)); std::memcpy(p, &h, 2); return true; }
        case Float32: std::memcpy(p, &v, 4); return true;
        case Float16: { uint16_t h = half_bits(v); std::memcpy(p, &h, 2); return true; }
        case Int32: { int32_t t = int32_t(double(v)); std::memcpy(p, &t, 4); return true; }
        case UInt32: case RawUInt32: { uint32_t t = uint32_t(double(v)); std::memcpy(p, &t, 4); return true; }
        case UInt16: case RawUInt16: { uint16_t t = uint16_t(v); std::memcpy(p, &t, 2); return true; }
        case Int8: *p = uint8_t(int8_t(v)); return true;
        default: *p = uint8_t(v); return true;  // UInt8, RawUInt8
    }
}

float through_dst(Run* r, float v, bool integer) { return (integer || r->fp32_dest_acc) ? v : round_bf16(v); }

// Tile `itile` of `cb` as DST holds it (integer formats: unrounded), row-major.
void tile_through_dst(Run* r, int32_t cb, tw_CBState* c, uint32_t itile, float* out, tw::Loc loc) {
    uint32_t limit = read_limit(c);
    if (itile >= limit) fail_tile_not_waited(r, loc, itile, cb, limit);
    if (c->tile_h != 32 || c->tile_w != 32) fail_tile_shape(r, loc, "unpack", cb, c->tile_h, c->tile_w);
    int32_t size = format_info(c->format_code).tile_bytes;
    if (size < 0) fail_no_tile_form(r, loc, "unpack", c->format_code, cb);
    if (uint32_t(size) != c->page_size) fail_page_size(r, loc, "unpack", cb, c->page_size, c->format_code, size);
    decode_tile(c->format_code,
                l1_span(r, c->rd_ptr + uint64_t(itile) * c->page_size, c->page_size, "unpack", loc), out);
    bool integer = is_integer(c->format_code);
    for (int i = 0; i < kTile; ++i) out[i] = through_dst(r, out[i], integer);
}

// The first `n` waited tiles of `cb` as DST holds them (a partial block is an error).
float* waited_tiles(Run* r, int32_t cb, tw_CBState* c, uint32_t n, const char* what, tw::Loc loc) {
    uint32_t waited = read_limit(c);
    if (waited < n) fail_pages_not_waited(r, loc, what, n, cb, waited);
    float* tiles = new float[size_t(n) * kTile];
    for (uint32_t t = 0; t < n; ++t) tile_through_dst(r, cb, c, t, tiles + size_t(t) * kTile, loc);
    return tiles;
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
        fail_row_major_fit(r, loc, what, rows, row_width, c->format_code, region, cb, slot, c->num_pages,
                           c->page_size);
    uint64_t pages = (region + c->page_size - 1) / c->page_size;
    uint32_t limit = write_limit(c);
    if (slot + pages > limit) fail_slots_unreserved(r, loc, what, pages, cb, slot, limit);
    uint8_t* region_mem = l1_span(r, base, region, what, loc);
    for (uint32_t tr = 0; tr < rows_t; ++tr) {
        for (uint32_t tc = 0; tc < cols_t; ++tc) {
            const float* t = tiles + (size_t(tr) * cols_t + tc) * kTile;
            for (int i = 0; i < 32; ++i) {
                uint8_t* row = region_mem + (uint64_t(tr * 32 + i) * row_width + col_offset + tc * 32) * es;
                for (int j = 0; j < 32; ++j)
                    if (!write_elem(c->format_code, row + j * es, t[i * 32 + j]))
                        fail_row_major_value(r, loc, what, t[i * 32 + j], c->format_code, cb);
            }
        }
    }
}

void untilize_checks(Run* r, uint32_t block_ct, uint32_t full_ct, const char* what, tw::Loc loc) {
    if (int32_t(block_ct) < 1 || int32_t(full_ct) < 1 || full_ct % block_ct) fail_untilize_dims(r, loc, what);
    int cap = dst_capacity(r);
    if (block_ct > uint32_t(cap)) fail_untilize_dst(r, loc, what, block_ct, cap);
}

void pack_untilize_index(Run* r, uint32_t block_rt, uint32_t block_c, uint32_t block_ct, uint32_t full_ct,
                         const char* what, tw::Loc loc) {
    if (int32_t(block_rt) < 1 || block_c >= full_ct / block_ct) fail_pack_untilize_index(r, loc, what, full_ct / block_ct);
}

}  // namespace

}  // namespace twrt

using namespace twrt;

TW_EXPORT void twrt_tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t in_idx, uint32_t out_idx,
                                 tw::Loc loc) {
    Run* r = compute_run(loc);
    tw_CBState* src = cb_of(r, int32_t(icb), loc);
    tw_CBState* dst = cb_of(r, int32_t(ocb), loc);
    char what[96];
    fmt_tilize_what(what, sizeof what, "tilize_block", int32_t(icb), int32_t(block), int32_t(ocb));
    if (int32_t(block) < 1 || int32_t(in_idx) < 0) fail_tilize_args(r, loc, what);
    tile32(r, int32_t(icb), src, what, loc);
    tile32(r, int32_t(ocb), dst, what, loc);
    int32_t es = row_major_size(r, int32_t(icb), src, what, loc);
    uint64_t width = uint64_t(block) * 32;
    uint64_t count = 31 * width + (uint64_t(in_idx) + block) * 32;
    uint64_t needed = count * es;
    uint32_t waited = read_limit(src);
    uint64_t available = uint64_t(waited) * src->page_size;
    if (needed > available)
        fail_tilize_partial(r, loc, what, width, src->format_code, needed, (needed + src->page_size - 1) / src->page_size,
                            waited, available, int32_t(icb));
    if (src->rd_ptr + needed > src->fifo_limit) fail_tilize_wrap(r, loc, what, int32_t(icb));
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
    fmt_untilize_what(what, sizeof what, int32_t(icb), int32_t(full_ct), int32_t(ocb));
    untilize_checks(r, block_ct, full_ct, what, loc);
    float* tiles = waited_tiles(r, int32_t(icb), src, full_ct, what, loc);
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
    fmt_pack_untilize_what(what, sizeof what, int32_t(block_ct), int32_t(full_ct), int32_t(icb), int32_t(block_rt),
                           int32_t(ocb));
    untilize_checks(r, block_ct, full_ct, what, loc);
    pack_untilize_index(r, block_rt, block_c, block_ct, full_ct, what, loc);
    uint32_t n = block_rt * block_ct;
    float* tiles = waited_tiles(r, int32_t(icb), src, n, what, loc);
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
    fmt_pack_untilize_dest_what(what, sizeof what, int32_t(block_ct), int32_t(full_ct), int32_t(ocb),
                                int32_t(block_rt));
    untilize_checks(r, block_ct, full_ct, what, loc);
    pack_untilize_index(r, block_rt, block_c, block_ct, full_ct, what, loc);
    uint32_t n = block_rt * block_ct;
    check_dst(r, int64_t(n) - 1, loc);
    write_row_major(r, int32_t(ocb), dst, 0, r->dst, block_rt, block_ct, block_c * block_ct * 32, full_ct * 32, what,
                    loc);
    tile_pack(r, uint64_t(n) * dst->page_size, false);
}

TW_EXPORT void twrt_pack_rows(uint32_t idst, uint32_t ocb, tw::Loc loc) {
    // DST holds row-major data (a page unpacked as a tile); pack its first num_rows rows of 16
    // datums (pack_rows_init), in storage order, to the next slot of ocb.
    Run* r = compute_run(loc);
    check_dst(r, idst, loc);
    tw_CBState* c = cb_of(r, int32_t(ocb), loc);
    const char* what = "pack_rows";
    int32_t es = row_major_size(r, int32_t(ocb), c, what, loc);
    uint32_t num_rows = r->pack_rows;
    if (num_rows < 1 || num_rows > 64) fail_pack_rows_count(r, loc, num_rows);
    uint32_t bytes = num_rows * 16 * uint32_t(es);
    uint32_t slot = c->pack_counter;
    if (slot >= c->num_pages || bytes > c->page_size) fail_pack_rows_fit(r, loc, num_rows, bytes, c->page_size, ocb);
    uint32_t addr = slot_addr(r, int32_t(ocb), c, slot, what, loc);
    const float* d = r->dst + size_t(idst) * kTile;
    float values[kTile];
    for (uint32_t i = 0; i < num_rows * 16; ++i) {
        int face = i / 256, rr = (i % 256) / 16, cc = i % 16;
        values[i] = d[((face / 2) * 16 + rr) * 32 + (face % 2) * 16 + cc];
        FormatInfo info = format_info(c->format_code);
        float v = values[i];
        if (info.integer && !(std::isfinite(v) && v == std::trunc(v) && v >= info.int_min && v <= info.int_max))
            fail_row_major_value(r, loc, what, v, c->format_code, int32_t(ocb));
    }
    uint8_t* page = l1_span(r, addr, bytes, what, loc);
    for (uint32_t i = 0; i < num_rows * 16; ++i) write_elem(c->format_code, page + i * es, values[i]);
    c->pack_counter += 1;
    tile_pack(r, c->page_size, false);
}
