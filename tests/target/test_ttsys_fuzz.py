"""Fuzzing the .ttsys reader: malformed input yields SystemDescError or a model, nothing else.

The raw reader (``_Reader``, without the public safety net that converts stray exceptions)
is exercised, so a missing bounds check fails here as an IndexError, struct.error, ...
Six strategies, 750 cases in all: byte flips, truncations, insertions, random bytes, and
two that repair the size prefix after mutating so the deeper structure checks are reached.
"""

from __future__ import annotations

import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilewright.errors import SystemDescError
from tilewright.target import SystemDescRoot, decode_ttsys, encode_ttsys
from tilewright.target.ttsys import _Reader

from .helpers import BOARDS, real_bytes

REAL = {board: real_bytes(board) for board in BOARDS}
# Examples per strategy; CI runs them all (>= 500 in total, asserted below).
CASES = {
    "FLIPS": 200,
    "TRUNCATIONS": 100,
    "INSERTIONS": 150,
    "RANDOM": 100,
    "OVERWRITES": 150,
    "DELETIONS": 100,
}
FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _decode_or_reject(data: bytes) -> None:
    """Only two outcomes are allowed: a model, or a SystemDescError with a message."""
    for strict in (False, True):
        try:
            root = _Reader(data, strict).root()
        except SystemDescError as err:
            assert err.message and err.rule.startswith("system-desc.")
            continue
        assert isinstance(root, SystemDescRoot)
        # Whatever decodes must be well-formed enough to encode again.
        encode_ttsys(root)


def _fix_prefix(data: bytearray) -> bytes:
    if len(data) >= 4:
        struct.pack_into("<I", data, 0, len(data) - 4)
    return bytes(data)


boards = st.sampled_from(BOARDS)


@settings(FUZZ, max_examples=CASES["FLIPS"])
@given(
    boards, st.lists(st.tuples(st.integers(0, 4000), st.integers(1, 255)), min_size=1, max_size=8)
)
def test_byte_flips(board, flips):
    data = bytearray(REAL[board])
    for pos, mask in flips:
        data[pos % len(data)] ^= mask
    _decode_or_reject(bytes(data))


@settings(FUZZ, max_examples=CASES["TRUNCATIONS"])
@given(boards, st.integers(0, 4000))
def test_truncations(board, length):
    data = REAL[board]
    _decode_or_reject(data[: length % len(data)])
    _decode_or_reject(_fix_prefix(bytearray(data[: length % len(data)])))


@settings(FUZZ, max_examples=CASES["INSERTIONS"])
@given(boards, st.integers(0, 4000), st.binary(min_size=1, max_size=16), st.booleans())
def test_insertions(board, pos, blob, fix):
    data = REAL[board]
    at = pos % (len(data) + 1)
    mutated = bytearray(data[:at] + blob + data[at:])
    _decode_or_reject(_fix_prefix(mutated) if fix else bytes(mutated))


@settings(FUZZ, max_examples=CASES["RANDOM"])
@given(st.binary(max_size=512), st.booleans())
def test_random_bytes(blob, looks_like_ttsys):
    data = bytearray(blob)
    if looks_like_ttsys and len(data) >= 12:
        data[8:12] = b"TTSY"
        data = bytearray(_fix_prefix(data))
    _decode_or_reject(bytes(data))


@settings(FUZZ, max_examples=CASES["OVERWRITES"])
@given(
    boards,
    st.lists(
        st.tuples(st.integers(12, 4000), st.sampled_from("BHIi"), st.integers(0, 2**32 - 1)),
        min_size=1,
        max_size=4,
    ),
)
def test_overwritten_words_behind_a_valid_header(board, writes):
    """Overwrite offsets, lengths and vtable entries with arbitrary values (prefix intact)."""
    data = bytearray(REAL[board])
    for pos, fmt, value in writes:
        size = struct.calcsize(fmt)
        at = pos % (len(data) - size)
        bits = value % (1 << (8 * size))
        struct.pack_into("<" + fmt.upper(), data, at, bits)
    _decode_or_reject(bytes(data))


@settings(FUZZ, max_examples=CASES["DELETIONS"])
@given(boards, st.integers(12, 4000), st.integers(1, 64))
def test_deleted_spans_with_repaired_prefix(board, pos, count):
    data = REAL[board]
    at = 12 + pos % (len(data) - 12)
    _decode_or_reject(_fix_prefix(bytearray(data[:at] + data[at + count :])))


def test_fuzz_budget_is_at_least_500_cases():
    assert sum(CASES.values()) >= 500


def test_public_decoder_only_raises_system_desc_error():
    # The public entry point adds a safety net; it must not change valid results.
    for data in REAL.values():
        assert encode_ttsys(decode_ttsys(data)) == data
