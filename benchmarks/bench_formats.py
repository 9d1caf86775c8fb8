"""Throughput of the data-format layer (tilewright.device.formats).

Prints one JSON object.  ``MB_per_s`` is MB/s of *input* data, MB = 1e6 bytes: for the
encoders the float32 matrix (4 bytes per element), for the decoders the encoded tile
bytes.  ``matrix_MB_per_s`` counts the float32 matrix for every case (4 bytes per
element), so encoders and decoders compare directly.  Each figure is the median of
several repetitions timed with time.perf_counter.
Run: ``python benchmarks/bench_formats.py [--size N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from tilewright.device.formats import (
    DataFormat,
    TILE_32x32,
    decode_block,
    decode_tiles,
    encode_block,
    encode_tiles,
    tilize,
    untilize,
)


def median_seconds(fn, repeat: int) -> float:
    fn()  # warm up (caches, lookup tables, page faults)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=2048, help="matrix is size x size float32")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    n = args.size
    rows = cols = n // 32
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((n, n)).astype(np.float32)
    matrix_mb = matrix.nbytes / 1e6

    bf16_bytes = encode_block(matrix, DataFormat.Float16_b)
    bfp8_bytes = encode_block(matrix, DataFormat.Bfp8_b)
    fp32_bytes = encode_block(matrix, DataFormat.Float32)
    bf16_tiles = bf16_bytes.reshape(rows, cols, -1)
    bfp8_tiles = bfp8_bytes.reshape(rows, cols, -1)
    tiled = tilize(matrix)

    cases = {
        # generic two-step paths (what a host-side from_torch / to_torch does)
        "tilize_bf16_encode": (
            lambda: encode_tiles(tilize(matrix), DataFormat.Float16_b),
            matrix_mb,
        ),
        "bfp8_b_encode_tiles": (lambda: encode_tiles(tiled, DataFormat.Bfp8_b), matrix_mb),
        "bfp8_b_decode_tiles": (
            lambda: decode_tiles(bfp8_tiles, DataFormat.Bfp8_b),
            bfp8_bytes.nbytes / 1e6,
        ),
        "bf16_decode_untilize": (
            lambda: untilize(decode_tiles(bf16_tiles, DataFormat.Float16_b)),
            bf16_bytes.nbytes / 1e6,
        ),
        # the compute engine's fused block paths
        "bf16_encode_block": (lambda: encode_block(matrix, DataFormat.Float16_b), matrix_mb),
        "bf16_decode_block": (
            lambda: decode_block(bf16_bytes, DataFormat.Float16_b, TILE_32x32, rows, cols),
            bf16_bytes.nbytes / 1e6,
        ),
        "fp32_encode_block": (lambda: encode_block(matrix, DataFormat.Float32), matrix_mb),
        "fp32_decode_block": (
            lambda: decode_block(fp32_bytes, DataFormat.Float32, TILE_32x32, rows, cols),
            fp32_bytes.nbytes / 1e6,
        ),
        "bfp8_b_encode_block": (lambda: encode_block(matrix, DataFormat.Bfp8_b), matrix_mb),
        "bfp8_b_decode_block": (
            lambda: decode_block(bfp8_bytes, DataFormat.Bfp8_b, TILE_32x32, rows, cols),
            bfp8_bytes.nbytes / 1e6,
        ),
    }

    results = {}
    for name, (fn, megabytes) in cases.items():
        seconds = median_seconds(fn, args.repeat)
        results[name] = {
            "MB_per_s": round(megabytes / seconds, 1),
            "matrix_MB_per_s": round(matrix_mb / seconds, 1),
            "ms": round(seconds * 1e3, 2),
        }

    print(
        json.dumps(
            {
                "benchmark": "formats",
                "matrix": f"{n}x{n} float32, 32x32 tiles",
                "input_MB_definition": (
                    "MB = 1e6 bytes of input: encoders count the float32 matrix "
                    f"({matrix_mb:.2f} MB); decoders count the encoded tile bytes "
                    f"(bf16 {bf16_bytes.nbytes / 1e6:.2f} MB, bfp8_b {bfp8_bytes.nbytes / 1e6:.2f} MB, "
                    f"fp32 {fp32_bytes.nbytes / 1e6:.2f} MB); matrix_MB_per_s counts the "
                    "float32 matrix for every case"
                ),
                "statistic": f"median of {args.repeat} runs (time.perf_counter), after 1 warm-up",
                "results": results,
            }
        )
    )


if __name__ == "__main__":
    main()
