"""Payload staging between workers: an arena grows past its first size, a reader maps it
again when a payload lies beyond its mapping, and an epoch writes over the arena two
epochs old only."""

from __future__ import annotations

import numpy as np

from tilewright.distributed import staging


def test_an_arena_grows_and_readers_follow(monkeypatch):
    monkeypatch.setattr(staging, "_FIRST_SIZE", 1 << 16)
    mine, peers = staging.Staging(), staging.PeerArenas()
    try:
        small = np.arange(100, dtype=np.uint8)
        first = mine.put(small)
        assert bytes(peers.read(first, 100)) == small.tobytes()  # mapped at 64 KiB
        big = (np.arange(200_000) % 251).astype(np.uint8)
        second = mine.put(big)  # past the first size: the memfd grows
        assert second.offset % 64 == 0 and second.offset >= 100
        assert bytes(peers.read(second, big.size)) == big.tobytes()  # mapped again
        assert bytes(peers.read(first, 100)) == small.tobytes()
        mine.begin(1)  # the other arena: epoch 0's payloads stay
        other = mine.put(small[::-1].copy())
        assert other.fd != first.fd and other.offset == 0
        assert bytes(peers.read(second, big.size)) == big.tobytes()
        mine.begin(2)  # epoch 0's arena again, from its start
        assert mine.put(small).offset == 0
    finally:
        peers.close()
        mine.close()
