"""NoC and DRAM transfer timing: routes, hops, link / NIU / DRAM-bank contention, multicast.

A transfer is issued by one RISC of one core on NoC 0 or 1 and split into packets of at
most ``max_packet`` bytes.  Each packet:

* costs its issuer ``issue_write`` / ``issue_read`` cycles; a write also waits for the
  command buffer, i.e. for the previous packet of that NoC to have left the NIU;
* is serialised through every resource on its path -- the sending NIU, each link of the
  dimension-order route on the torus (NoC 0: +x then +y; NoC 1: -y then -x), the receiving
  NIU, and for DRAM the bank and the requester's DRAM port -- taking free cycles from the
  device's occupancy calendar (:mod:`.state`), which every kernel of the device shares;
* completes ``hops x hop + base`` after its last flit left: writes when the acknowledgement
  is back (the route back, on the same NoC, wraps around the torus), reads when the data
  arrived; DRAM adds the controller's latency.

A multicast sends the packet once along the route to the destination rectangle and its
first row; one that does not follow a linked multicast first holds the path for
``mcast_setup + mcast_setup_per_span x (rows + columns)`` cycles (what linked multicast
saves).  A barrier waits for the latest completion of the run's reads or writes.

The same arithmetic runs in ``native/runtime/perf.cpp`` for C++ kernels (integer cycles),
pinned by the engine-differential tests in ``tests/device/perf``.
"""

from __future__ import annotations

import ctypes

from tilewright.device.perf import costs
from tilewright.device.perf.arch import ArchPerf, arch_perf, floorplan
from tilewright.device.perf.state import (
    BUCKET_SHIFT,
    BUCKETS,
    EPOCH_SHIFT,
    NocPerf,
    PerfRun,
    Resource,
)

_BUCKET = 1 << BUCKET_SHIFT  # cycles per calendar bucket

__all__ = ["NocModel"]


def _ceil(a: int, num: int, den: int) -> int:
    """``a * den / num`` cycles, rounded up: ``a`` bytes at ``num`` bytes per ``den`` cycles."""
    return -(-a * den // num)


class NocModel:
    """The NoC / DRAM model of one device (state in shared memory, see :class:`NocPerf`)."""

    def __init__(self, device) -> None:
        # ``device``: the Device that owns the model (its arch, chip descriptor and grid);
        # untyped because device.py creates the model (no import cycle, tests/test_layers.py).
        self.arch: ArchPerf = arch_perf(device.arch_kind)
        a = self.arch
        cd = device.chip_desc
        banks = [(d.x, d.y) for d in cd.dram_bank_to_logical_worker_noc0]
        banks += [(-1, -1)] * (device.num_dram_channels - len(banks))
        self.plan = floorplan(a, device.grid_x, device.grid_y, banks[: device.num_dram_channels])
        sx, sy = self.plan.size
        n_res = Resource.count(sx, sy, len(self.plan.dram))
        self._workers = (ctypes.c_int32 * (2 * len(self.plan.workers)))(
            *[v for xy in self.plan.workers for v in xy]
        )
        self._dram = (ctypes.c_int32 * max(2, 2 * len(self.plan.dram)))(
            *[v for xy in self.plan.dram for v in xy]
        )
        self._tags = (ctypes.c_uint64 * (n_res * BUCKETS))()
        self._used = (ctypes.c_uint32 * (n_res * BUCKETS))()
        self.tags = memoryview(self._tags).cast("B").cast("Q")
        self.used = memoryview(self._used).cast("B").cast("I")
        p = self.state = NocPerf()
        p.size_x, p.size_y = sx, sy
        p.flit_bytes, p.max_packet = a.flit_bytes, a.max_packet
        p.issue_write, p.issue_read, p.hop = a.issue_write, a.issue_read, a.hop
        p.base_write, p.base_read = a.base_write, a.base_read
        p.write_bytes, p.write_cycles = a.write_rate
        p.read_bytes, p.read_cycles = a.read_rate
        p.mcast_setup, p.mcast_setup_per_span = a.mcast_setup, a.mcast_setup_per_span
        p.read_ahead = a.read_window * _ceil(a.max_packet, *a.read_rate)
        p.dram_latency = a.dram_latency
        p.dram_bank_bytes, p.dram_bank_cycles = a.dram_bank_rate
        p.dram_core_bytes, p.dram_core_cycles = a.dram_core_rate
        p.unpack_bytes, p.unpack_pair_bytes, p.pack_bytes = (
            a.unpack_bytes,
            a.unpack_pair_bytes,
            a.pack_bytes,
        )
        p.num_workers, p.num_dram, p.num_resources = len(self.plan.workers), len(banks), n_res
        p.worker_xy = ctypes.addressof(self._workers)
        p.dram_xy = ctypes.addressof(self._dram)
        p.tags, p.used = ctypes.addressof(self._tags), ctypes.addressof(self._used)
        self._epoch = 0
        self._links: dict[tuple[int, tuple[int, int], tuple[int, int]], tuple[int, ...]] = {}
        self.size = (sx, sy)
        self.workers = self.plan.workers
        self.dram = self.plan.dram

    def reset(self) -> None:
        """A launch starts with an idle NoC (its clocks start at 0): a new epoch."""
        self.state.epoch += 1
        self._epoch = self.state.epoch << EPOCH_SHIFT

    # -- geometry --------------------------------------------------------------------------

    def hops(self, noc: int, src: tuple[int, int], dst: tuple[int, int]) -> int:
        sx, sy = self.size
        if noc == 0:
            return (dst[0] - src[0]) % sx + (dst[1] - src[1]) % sy
        return (src[0] - dst[0]) % sx + (src[1] - dst[1]) % sy

    def links(self, noc: int, src: tuple[int, int], dst: tuple[int, int]) -> tuple[int, ...]:
        """The links of the route from ``src`` to ``dst`` on NoC ``noc``, in order: the
        geometry's alone, so computed once per route (a page moved is a route looked up)."""
        key = (noc, src, dst)
        found = self._links.get(key)
        if found is None:
            found = self._links[key] = self._route(noc, src, dst)
        return found

    def _route(self, noc: int, src: tuple[int, int], dst: tuple[int, int]) -> tuple[int, ...]:
        out: list[int] = []
        sx, sy = self.size
        x, y = src
        dx, dy = dst
        p = self.state
        if noc == 0:  # X first, towards +x; then Y, towards +y
            while x != dx:
                out.append(Resource.link(p, 0, x, y, 0))
                x = (x + 1) % sx
            while y != dy:
                out.append(Resource.link(p, 0, x, y, 1))
                y = (y + 1) % sy
        else:  # Y first, towards -y; then X, towards -x
            while y != dy:
                out.append(Resource.link(p, 1, x, y, 1))
                y = (y - 1) % sy
            while x != dx:
                out.append(Resource.link(p, 1, x, y, 0))
                x = (x - 1) % sx
        return tuple(out)

    # -- the occupancy calendar ------------------------------------------------------------

    def reserve(self, items: list[tuple[int, int]], t: int) -> int:
        """Serialise one packet through ``items`` ((resource, cycles) pairs) from ``t``: it
        starts when every resource is free and ends when the slowest has passed it.

        First the earliest time at or after ``t`` at which every resource has a free cycle
        (each bucket's ``used`` cycles are taken from its start), then ``need`` cycles of
        each taken from there, bucket by bucket; the packet ends when the last is taken.
        The same steps as the native runtime's ``reserve`` (runtime/perf.cpp), written
        for the interpreter: one function with local names, the bucket arithmetic done
        once per bucket visited rather than once per resource and step (a packet meets
        about 14 resources, most of them free at its start).  The Python engine reserves
        once per page it moves, and this leads an interpreted elementwise call's profile
        (a quarter of it): as two methods per step it was 15-20% slower, with the
        arithmetic per resource 6-10%.  ``tests/device/perf/test_noc.py`` checks it
        against the calendar's definition."""
        tags, used, epoch = self.tags, self.used, self._epoch
        # The bucket under the time being looked at -- its index k, ring offset, tag and
        # first cycle -- is carried along and stepped to the next bucket, not recomputed
        # per resource: most resources are free at s (one look each).
        s = t
        k = s >> BUCKET_SHIFT
        off, tag, start = k % BUCKETS, epoch | (k + 1), k << BUCKET_SHIFT
        for res, _ in items:
            base = res * BUCKETS
            while True:
                slot = base + off
                if tags[slot] != tag:
                    break
                busy = start + used[slot]
                if busy <= s:
                    break
                nxt = start + _BUCKET
                if busy < nxt:
                    s = busy
                    break
                s = nxt
                k += 1
                off, tag, start = k % BUCKETS, epoch | (k + 1), nxt
        end = s
        for res, need in items:
            base = res * BUCKETS
            t = s
            kk, koff, ktag, kstart = k, off, tag, start
            while need > 0:
                slot = base + koff
                if tags[slot] != ktag:
                    tags[slot] = ktag
                    used[slot] = 0
                    free = kstart
                else:
                    free = kstart + used[slot]
                kend = kstart + _BUCKET
                first = t if t > free else free
                if first < kend:
                    take = kend - first
                    if need < take:
                        take = need
                    used[slot] = first + take - kstart
                    need -= take
                    t = first + take
                    if need == 0:
                        break
                t = kend  # on to the next bucket
                kk += 1
                koff, ktag, kstart = kk % BUCKETS, epoch | (kk + 1), kend
            if t > end:
                end = t
        return end

    # -- transfers ---------------------------------------------------------------------------

    def write(
        self,
        pr: PerfRun,
        now: int,
        noc: int,
        src: tuple[int, int],
        dst: tuple[int, int],
        nbytes: int,
        bank: int = -1,
        posted: bool = False,
    ) -> tuple[int, int]:
        """A unicast write of ``nbytes`` from ``src`` to ``dst`` (DRAM ``bank`` or -1) issued at
        ``now``: (the issuer's clock afterwards, when the last byte lands at ``dst``)."""
        p = self.state
        links = self.links(noc, src, dst)
        back = self.hops(noc, dst, src)
        fwd = len(links)
        inj = Resource.niu(p, noc, src[0], src[1], 0)
        ej = Resource.niu(p, noc, dst[0], dst[1], 1)
        dram = bank >= 0
        lat = (fwd + back) * p.hop + p.base_write + (p.dram_latency if dram else 0)
        landed = 0
        left = nbytes
        while True:
            b = min(left, p.max_packet)
            left -= b
            start = max(now + p.issue_write, pr.noc_ready[noc])
            ser = _ceil(b, p.write_bytes, p.write_cycles)
            items = [(inj, ser), *((lk, ser) for lk in links), (ej, ser)]
            if dram:
                items.append(
                    (Resource.dram_bank(p, bank), _ceil(b, p.dram_bank_bytes, p.dram_bank_cycles))
                )
            end = self.reserve(items, start)
            pr.noc_ready[noc] = end
            now = start
            landed = end + fwd * p.hop + p.base_write // 2
            if not posted:
                _done(pr.write_done, pr.write_dram, noc, end + lat, dram)
            if left <= 0:
                return now, landed

    def read(
        self,
        pr: PerfRun,
        now: int,
        noc: int,
        req: tuple[int, int],
        src: tuple[int, int],
        nbytes: int,
        bank: int = -1,
    ) -> int:
        """A read by ``req`` of ``nbytes`` at ``src`` (DRAM ``bank`` or -1): the issuer's clock."""
        p = self.state
        links = self.links(noc, src, req)
        ask = self.hops(noc, req, src) * p.hop
        inj = Resource.niu(p, noc, src[0], src[1], 0)
        ej = Resource.niu(p, noc, req[0], req[1], 1)
        dram = bank >= 0
        if dram:
            ask += p.dram_latency
            port = Resource.dram_port(p, req[0], req[1])
            bank_res = Resource.dram_bank(p, bank)
        lat = len(links) * p.hop + p.base_read
        left = nbytes
        while True:
            b = min(left, p.max_packet)
            left -= b
            now += p.issue_read
            if pr.read_done[noc] > now + p.read_ahead:  # the NIU's read buffers are full
                now = pr.read_done[noc] - p.read_ahead
            ser = _ceil(b, p.read_bytes, p.read_cycles)
            items = [(inj, ser), *((lk, ser) for lk in links), (ej, ser)]
            if dram:
                items.append((bank_res, _ceil(b, p.dram_bank_bytes, p.dram_bank_cycles)))
                items.append((port, _ceil(b, p.dram_core_bytes, p.dram_core_cycles)))
            end = self.reserve(items, now + ask)
            _done(pr.read_done, pr.read_dram, noc, end + lat, dram)
            if left <= 0:
                return now

    def multicast(
        self,
        pr: PerfRun,
        now: int,
        noc: int,
        src: tuple[int, int],
        rect: tuple[int, int, int, int],
        nbytes: int,
        linked: bool,
    ) -> tuple[int, int]:
        """A multicast write to the physical rectangle ``rect`` (x0, y0, x1, y1):
        (the issuer's clock afterwards, when the data has landed everywhere)."""
        p = self.state
        x0, y0, x1, y1 = rect
        entry = (x0, y0) if noc == 0 else (x1, y1)
        row_end = (x1, entry[1]) if noc == 0 else (x0, entry[1])
        trunk = self.links(noc, src, entry) + self.links(noc, entry, row_end)
        sx, sy = self.size
        span = (x1 - x0) % sx + (y1 - y0) % sy
        far = self.hops(noc, src, entry) + span
        # every destination acknowledges on the same NoC: the longest way back (around the torus)
        back = max(self.hops(noc, c, src) for c in ((x0, y0), (x1, y0), (x0, y1), (x1, y1)))
        setup = p.mcast_setup + p.mcast_setup_per_span * (span + 2)
        inj = Resource.niu(p, noc, src[0], src[1], 0)
        landed = 0
        left = nbytes
        while True:
            b = min(left, p.max_packet)
            left -= b
            start = max(now + p.issue_write, pr.noc_ready[noc])
            need = _ceil(b, p.write_bytes, p.write_cycles)
            if not pr.mcast_linked[noc]:
                need += setup
            end = self.reserve([(inj, need), *((lk, need) for lk in trunk)], start)
            pr.noc_ready[noc] = end
            pr.mcast_linked[noc] = int(linked)
            now = start
            landed = end + far * p.hop + p.base_write // 2
            _done(
                pr.write_done, pr.write_dram, noc, end + (far + back) * p.hop + p.base_write, False
            )
            if left <= 0:
                return now, landed

    def barrier(self, pr: PerfRun, now: int, noc: int, reads: bool, writes: bool) -> int:
        """Wait for the run's reads and / or writes on ``noc`` (both NoCs if ``noc`` < 0)."""
        now += costs.BARRIER_OP
        t, dram = now, False
        for n in (0, 1) if noc < 0 else (noc,):
            if reads and pr.read_done[n] > t:
                t, dram = pr.read_done[n], bool(pr.read_dram[n])
            if writes and pr.write_done[n] > t:
                t, dram = pr.write_done[n], bool(pr.write_dram[n])
        if t > now:
            if dram:
                pr.busy_dram += t - now
            else:
                pr.busy_noc += t - now
        return t


def _done(done, is_dram, noc: int, t: int, dram: bool) -> None:
    if t > done[noc]:
        done[noc] = t
        is_dram[noc] = int(dram)
