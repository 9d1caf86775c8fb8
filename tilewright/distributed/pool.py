"""The driver's side: Ray actors holding host groups of a mesh's chips, and the launches
shipped to them.

``start(workers=N)`` starts (or joins, with ``address``) a Ray cluster and N
:class:`~tilewright.distributed.host.ChipHost` actors.  Meshes opened afterwards keep
their DRAM in shared memory, and their chips are split into N *host groups*: row-major
ranges of the mesh, which are rectangles when N divides the rows (or, on one row, the
columns) -- tt-metal's multi-host split of a Galaxy.  A chip's launches then run in its
group's worker (``device/offload.py`` says when the driver waits for them).

A mesh workload whose chips are in several workers runs as a *split run*
(:meth:`WorkerPool.run_workload`, ``host.SplitRun``): every worker runs its chips' share,
and at each quiescent point of the schedule the driver collects the fabric packets between
workers and hands each worker those that land on its chips.

What still runs in the driver, counted per reason and reported by :func:`report`:
programs with Python kernels not marked ``portable`` (the Python kernel API, interpreted
TT-Lang: functions that may close over interpreter state), kernels with external C++
calls (their checks call back into the driver's interpreter state), and chips opened
before the workers started (their DRAM is private).  Traced launches are recorded in the
workers and replayed into the driver's trace (``device/trace.py``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import weakref
from collections import Counter
from typing import TYPE_CHECKING

from tilewright.device import offload, session
from tilewright.device.engine import deadlock_headline
from tilewright.device.launch import _plan_key, program_dispatch_ns
from tilewright.distributed import channel, wire
from tilewright.distributed.host import ABORT, GO, RUNNING, STOP, ChipHost, ChipSpec
from tilewright.errors import DeadlockError, DeviceError, TilewrightError, user_location
from tilewright.lang import state

if TYPE_CHECKING:
    from tilewright.device.device import Device
    from tilewright.device.program import Program

__all__ = ["WorkerPool", "import_ray", "RAY_HINT"]

RAY_HINT = "pip install 'tilewright[distributed]' (Ray from PyPI)"
_BLOBS_KEPT = 256  # programs whose structure blob is kept (one per chip and operation)
_LOCAL_OBJECT_STORE = 256 << 20  # launches carry KBs; Ray's default is 30% of RAM
_START_SECONDS = 60


def import_ray():
    """The ``ray`` module, or a clear error saying how to get it."""
    try:
        # deferred: Ray is optional (the distributed extra), loaded when workers start
        import ray  # noqa: PLC0415
    except ImportError:
        raise DeviceError(
            "worker processes (--workers / --ray-address) run on Ray, which is not installed",
            hint=RAY_HINT,
        ) from None
    return ray


class WorkerPool:
    """N chip-host actors and which chip runs where."""

    def __init__(self, workers: int, address: str | None = None) -> None:
        if workers < 1:
            raise DeviceError(f"--workers {workers}: at least one worker process")
        ray = self.ray = import_ray()
        # Ray's crash handler (absl's) would sit in front of the native runtime's SIGSEGV
        # handler, which maps L1 on a kernel's first access; the runtime re-claims its
        # handler at every engine start anyway (runtime/window.cpp), this keeps the chain
        # short in the driver and in the workers (which inherit the environment).
        os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
        # Ray's tqdm support replaces builtins.print (and keeps it replaced after shutdown):
        # a TT-Lang kernel's print would then not be print, and would not compile.
        os.environ.setdefault("RAY_TQDM_PATCH_PRINT", "0")
        self._started_ray = not ray.is_initialized()
        if self._started_ray:
            if address is None:
                ray.init(
                    num_cpus=workers,
                    include_dashboard=False,
                    object_store_memory=_LOCAL_OBJECT_STORE,
                    logging_level="ERROR",
                    log_to_driver=True,
                )
            else:
                ray.init(address=address, logging_level="ERROR", log_to_driver=True)
        # The workers map the driver's device memory through /proc: they must run on the
        # driver's host, so they are pinned to its node (other hosts are not built yet).
        here = ray.get_runtime_context().get_node_id()
        pin = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(
            node_id=here, soft=False
        )
        actor = ray.remote(num_cpus=1, max_restarts=0)(ChipHost).options(scheduling_strategy=pin)
        self.hosts = [actor.remote() for _ in range(workers)]
        self.host_chips: list[list[int]] = [[] for _ in range(workers)]
        self.dead: dict[int, str] = {}  # host index -> what killed it
        self.sent: list[set[tuple[int, str]]] = [set() for _ in range(workers)]
        self.ran_remote = 0
        self.ran_here: Counter[str] = Counter()
        self._queued: list[list[tuple]] = [[] for _ in range(workers)]
        self._sent_batches: dict[int, tuple] = {}  # id(queue) -> (queue, ref or outcomes)
        self._blobs: dict[int, tuple] = {}  # id(program) -> (program, plan key, blob, digest)
        self.devices: weakref.WeakSet = weakref.WeakSet()  # chips given a ``remote``
        self._mesh_keys = itertools.count(1)
        self._authkey = os.urandom(32)
        self._channels: dict[int, channel.Connection] = {}  # host -> its barrier channel
        self._serials = itertools.count(1)
        self.split_runs = 0
        self.split_rounds = 0
        self._check_placed(workers)

    def _check_placed(self, workers: int) -> None:
        """Every worker started, on this host, within a minute (a cluster whose node for the
        driver has fewer free CPUs than workers would otherwise leave them pending for ever)."""
        ray = self.ray
        try:
            pids = ray.get([h.pid.remote() for h in self.hosts], timeout=_START_SECONDS)
        except ray.exceptions.GetTimeoutError:
            free = ray.available_resources().get("CPU", 0)
            for host in self.hosts:  # started or pending: none is wanted now
                ray.kill(host)
            self.hosts = []
            if self._started_ray:
                ray.shutdown()
            raise DeviceError(
                f"--workers {workers}: the workers did not start within {_START_SECONDS} s on "
                f"this host's Ray node ({free:g} CPUs free in the cluster); each worker takes "
                "one CPU of the driver's node",
                hint="ask for fewer workers, or start the node with more CPUs "
                "(ray start --num-cpus N)",
            ) from None
        if len(set(pids)) != workers:  # pragma: no cover - Ray gives every actor a process
            raise DeviceError(f"--workers {workers}: the workers share processes ({pids})")

    # -- placing chips --------------------------------------------------------------------

    def attach_mesh(self, mesh) -> None:
        """Give every chip of a newly opened root mesh to its host group's worker (and
        tell the others of it: a fabric packet is checked against its destination)."""
        devices = list(mesh.devices)
        n, workers = len(devices), len(self.hosts)
        key = next(self._mesh_keys)
        for k, device in enumerate(devices):
            self.devices.add(device)
            memory = device.memory_ref()
            if memory is None:  # opened before the workers started
                device.remote = _Here(self, "chip opened before the workers started (private DRAM)")
                continue
            host = k * workers // n
            spec = ChipSpec(
                device.system_desc,
                device.chip,
                device.device_id,
                device.l1_small_size,
                device.engine.options,
                memory,
                device.place_prefix,
                key,
                mesh.fabric,
            )
            for h, actor in enumerate(self.hosts):  # in order before the chip's launches
                actor.add_chip.remote(spec, h == host)
            device.remote = _Chip(self, host, spec)
            self.host_chips[host].append(device.device_id)

    # -- running launches -----------------------------------------------------------------

    def submit(self, chip: _Chip, device: Device, program: Program, place_word: str):
        reason = wire.ineligible(program)
        if reason is not None:
            self.ran_here[reason] += 1
            return None
        host = chip.host
        loc = user_location()
        if host in self.dead:
            raise self._died(chip, program.name, loc, self.dead[host])
        blob, digest = self._structure(device, program, place_word)
        key = (chip.spec.device_id, digest)
        first = key not in self.sent[host]
        self.sent[host].add(key)
        job = (
            chip.spec.device_id,
            digest,
            blob if first else None,
            wire.args_of(program),
            device.l1_allocator.lowest_allocated_address(),
            place_word,
            session.OPTIONS.trace,
        )
        # Queued: a batch's launches go out as one call per worker when the first of them
        # is waited for (Ray's per-call cost is about a millisecond on 2 cores).
        queue = self._queued[host]
        slot = (queue, len(queue))
        queue.append(job)

        def fetch():
            outcome = self._outcome(chip, program.name, loc, slot)
            if outcome[0] == "missing":  # the worker let that structure go: send it again
                resend = (*job[:2], blob, *job[3:])
                outcome = self._get(chip, program.name, loc, self.hosts[host].run.remote(*resend))
            printed = outcome[-1]
            if printed:  # the kernels' debug prints, now that the launch is waited for
                sys.stdout.write(printed)
            if outcome[-2] is not None:  # traced: recorded where one process would have
                ok = outcome[0] == "ok"
                _replay(device, program, outcome[-2], outcome[2] if ok else None)
            if outcome[0] == "error":
                raise outcome[1]
            return outcome[1], outcome[2]

        self.ran_remote += 1
        launch = offload.RemoteLaunch(device, fetch, program_dispatch_ns(device, program))
        return offload.batched(launch)

    # -- mesh workloads: split runs ---------------------------------------------------------

    def run_workload(self, mesh, workload, items: list, place_word: str):
        """A mesh workload over the workers holding the mesh's chips (``offload.RemoteChip.
        run_workload``): each runs its chips' share, and at every quiescent point of the
        schedule the packets between workers change hands here (``host.SplitRun``)."""
        reason = self._workload_reason(mesh, items)
        if reason is not None:
            self.ran_here[reason] += 1
            return None
        name = workload.name
        loc = user_location()
        devices = mesh.root.devices
        owner = {dev.device_id: dev.remote.host for dev in devices}
        hosts = sorted(set(owner.values()))
        first_chip = {h: next(d.remote for d in devices if d.remote.host == h) for h in hosts}
        for h in hosts:
            if h in self.dead:
                raise self._died(first_chip[h], name, loc, self.dead[h])
        jobs: dict[int, list[tuple]] = {h: [] for h in hosts}
        for coord, program in items:
            device = mesh.device_at(coord)
            blob, digest = self._structure(device, program, place_word)
            jobs[owner[device.device_id]].append(
                (
                    device.device_id,
                    digest,
                    blob,  # always: a worker keeps structures per chip, and these are new
                    wire.args_of(program),
                    device.l1_allocator.lowest_allocated_address(),
                )
            )
        self._send_queued()  # earlier launches of these workers run first (actor order)
        key = devices[0].remote.spec.mesh
        split = _Split(self, mesh, hosts, first_chip, workload, loc)
        events = split.call(
            {
                h: self.hosts[h].split_start.remote(
                    key, jobs[h], place_word, split.serial, session.OPTIONS.trace
                )
                for h in hosts
            }
        )
        split.give_up_on_error(events)
        events = split.exchange({h: GO for h in hosts})
        self.split_runs += 1
        self.ran_remote += 1
        epoch = 0
        while True:
            split.give_up_on_error(events)
            waiting = {h: ev for h, ev in events.items() if ev[0] == "round"}
            if not waiting:
                break
            batches: dict[int, list] = {h: [] for h in waiting}
            for ev in waiting.values():
                for packet in ev[1]:
                    batches[owner[packet.dst]].append(packet)
            go = [h for h in waiting if batches[h] or waiting[h][2]]
            if not go:  # quiescent everywhere, nothing in flight: the end
                events.update(split.exchange({h: STOP for h in waiting}))
                continue
            epoch += 1
            self.split_rounds += 1
            for h in waiting:
                events[h] = ("round", [], False)  # a share not handed packets stays parked
            events.update(split.exchange({h: (epoch, batches[h]) for h in go}))
        split.replay_prints(events)
        return split.result(events)

    def _workload_reason(self, mesh, items: list) -> str | None:
        """Why a mesh workload runs in the driver (None: it runs in the workers)."""
        for dev in mesh.root.devices:
            if not isinstance(dev.remote, _Chip):
                return getattr(dev.remote, "reason", "chip without a worker")
        for _coord, program in items:
            reason = wire.ineligible(program, in_workload=True)
            if reason is not None:
                return reason
        return None

    def _send_queued(self) -> None:
        """Every worker's queued launches, one call each (they run at the same time)."""
        for host, queue in enumerate(self._queued):
            if queue:
                self._sent_batches[id(queue)] = (queue, self.hosts[host].run_many.remote(queue))
                self._queued[host] = []

    def _outcome(self, chip: _Chip, name: str, loc, slot) -> tuple:
        queue, index = slot
        if any(q is queue for q in self._queued):
            self._send_queued()
        sent = self._sent_batches.get(id(queue))
        if sent is None or sent[0] is not queue:  # pragma: no cover - every slot is sent once
            raise RuntimeError("a queued launch was never sent")
        outcomes = sent[1]
        if not isinstance(outcomes, list):  # the call's reference: the list once fetched
            try:
                outcomes = self._get(chip, name, loc, outcomes)
            finally:
                if not isinstance(outcomes, list):
                    self._sent_batches.pop(id(queue), None)
            self._sent_batches[id(queue)] = (queue, outcomes)
        if index == len(queue) - 1:  # the last one of the call: forget it
            self._sent_batches.pop(id(queue), None)
        return outcomes[index]

    def _structure(self, device, program, place_word: str) -> tuple[bytes, str]:
        """The program's structure blob, pickled again only when what a launch plan keys
        on changed (a warm call changes runtime args only)."""
        key = _plan_key(device, program, place_word)
        memo = self._blobs.get(id(program))
        if memo is not None and memo[0] is program and memo[1] == key:
            return memo[2], memo[3]
        blob, digest = wire.structure_of(program, wire.waits_of(state.CURRENT))
        self._blobs[id(program)] = (program, key, blob, digest)
        if len(self._blobs) > _BLOBS_KEPT:
            self._blobs.pop(next(iter(self._blobs)))
        return blob, digest

    def _channel(self, chip: _Chip, name: str, loc) -> channel.Connection:
        """The barrier channel of ``chip``'s worker (opened on its first split run)."""
        conn = self._channels.get(chip.host)
        if conn is None:
            address = self._get(
                chip, name, loc, self.hosts[chip.host].open_channel.remote(self._authkey)
            )
            conn = self._channels[chip.host] = channel.connect(address, self._authkey)
        return conn

    def _get(self, chip: _Chip, name: str, loc, ref):
        ray = self.ray
        try:
            return self.wait(ref)
        except ray.exceptions.RayActorError as exc:
            cause = _first_line(exc)
            self.dead[chip.host] = cause
            raise self._died(chip, name, loc, cause) from None

    def wait(self, refs):
        """``ray.get(refs)``; Ctrl-C stops every worker now (their launches would otherwise
        run on while the driver waits for them): what they were doing is lost, the
        interrupt goes on."""
        try:
            return self.ray.get(refs)
        except KeyboardInterrupt:
            self.interrupted()
            raise

    def interrupted(self) -> None:
        """Ctrl-C while waiting for the workers: every one is stopped now."""
        for host, actor in enumerate(self.hosts):
            self.dead.setdefault(host, "interrupted (Ctrl-C)")
            self.ray.kill(actor)

    def _died(self, chip: _Chip, name: str, loc, cause: str) -> TilewrightError:
        chips = ", ".join(str(c) for c in self.host_chips[chip.host])
        return DeviceError(
            f"the worker process running chip {chip.spec.device_id} died during the launch of "
            f"'{name}' (worker {chip.host}, chips {chips}): {cause}",
            loc=loc,
            rule="worker-died",
            hint="a crash or an out-of-memory kill in that process; run without --workers "
            "(or with --isolate) to see the failing kernel",
        )

    # -- the end --------------------------------------------------------------------------

    def report(self) -> str:
        """One line: how many launches the workers ran, and what ran here and why."""
        text = f"tilewright: {len(self.hosts)} worker processes ran {self.ran_remote} launches"
        if self.split_runs:
            text += (
                f" ({self.split_runs} of them mesh workloads across workers, "
                f"{self.split_rounds} packet exchanges)"
            )
        here = {r: n for r, n in self.ran_here.items() if n}
        if here:
            parts = "; ".join(f"{n} x {r}" for r, n in sorted(here.items()))
            text += f"; the driver ran {sum(here.values())} -- {parts}"
        return text

    def close(self) -> None:
        for device in list(self.devices):  # open chips run in the driver from now on
            device.remote = None
        live = [h for i, h in enumerate(self.hosts) if i not in self.dead]
        # Their queued calls (a closed mesh's drop_chip) end before the kill; a worker that
        # is gone or stuck is killed anyway.
        with contextlib.suppress(Exception):
            self.ray.get([h.pid.remote() for h in live], timeout=30)
        for host in self.hosts:
            try:
                self.ray.kill(host)
            except Exception:  # noqa: BLE001, S110 - already gone
                pass
        self.hosts = []
        for conn in self._channels.values():
            conn.close()
        self._channels.clear()
        if self._started_ray:
            self.ray.shutdown()


_ENDED = ("ok", "error", "deadlock")
"""A share's ends that carry its trace recording and prints (the last two fields)."""


class _Split:
    """The driver's bookkeeping of one split run: calls to its shares, their deaths, their
    kernels' prints and trace, the merged result."""

    def __init__(
        self, pool: WorkerPool, mesh, hosts: list[int], first_chip: dict, workload, loc
    ) -> None:
        self.pool = pool
        self.device = mesh.devices[0]  # where the run's result and trace are recorded
        self.hosts = hosts
        self.first_chip = first_chip
        self.workload = workload
        self.name = workload.name
        self.loc = loc
        self.serial = next(pool._serials)
        self.conns = {h: pool._channel(first_chip[h], self.name, loc) for h in hosts}

    def exchange(self, messages: dict[int, object]) -> dict[int, tuple]:
        """Hand each share its message over its barrier channel; every share's answer (a
        dead worker ends the run, the others are told to give up first)."""
        try:
            for h, message in messages.items():
                try:
                    channel.send(self.conns[h], self.serial, message)
                except channel.Lost as exc:
                    raise channel.Lost(exc.args[0], h) from None
            return channel.gather({h: self.conns[h] for h in messages}, self.serial)  # type: ignore[return-value]
        except KeyboardInterrupt:
            self.pool.interrupted()
            raise
        except channel.Lost as exc:
            raise self._lost(exc.args[1], exc.args[0]) from None

    def _lost(self, h: int, what: str) -> TilewrightError:
        """Share ``h``'s channel broke: its worker died (Ray says of what)."""
        self.pool._channels.pop(h, None)
        self._abort_others(h)
        chip = self.first_chip[h]
        try:
            self.pool._get(chip, self.name, self.loc, self.pool.hosts[h].pid.remote())
        except DeviceError as exc:
            return exc
        cause = f"its barrier channel closed ({what})"  # alive, yet the socket is gone
        self.pool.dead[h] = cause
        return self.pool._died(chip, self.name, self.loc, cause)

    def _abort_others(self, h: int) -> None:
        """No share may wait at a barrier for ever: all but ``h`` give up (what they answer
        is left in their channels, for the next run to drop)."""
        for other in self.hosts:
            if other != h and other not in self.pool.dead and other in self.conns:
                with contextlib.suppress(channel.Lost):
                    channel.send(self.conns[other], self.serial, ABORT)

    def call(self, refs: dict[int, object]) -> dict[int, tuple]:
        """Every share's answer (in host order); a dead worker ends the run, the others are
        told to give up first."""
        hosts = sorted(refs)
        try:  # all at once: the usual case, one wait for every share
            return dict(zip(hosts, self.pool.wait([refs[h] for h in hosts])))
        except self.pool.ray.exceptions.RayActorError:
            return self._find_the_dead(refs)

    def _find_the_dead(self, refs: dict[int, object]) -> dict[int, tuple]:
        out = {}
        for h in sorted(refs):  # each answer is ready or its worker is gone
            try:
                out[h] = self.pool._get(self.first_chip[h], self.name, self.loc, refs[h])
            except DeviceError:
                self._abort_others(h)
                raise
        return out

    def give_up_on_error(self, events: dict[int, tuple]) -> None:
        """If a share failed: the others (still preparing or at a barrier) give up, their
        prints are replayed, and the first failure in chip order is raised."""
        failed = [ev for _h, ev in sorted(events.items()) if ev[0] == "error"]
        if not failed:
            return
        running = [h for h, ev in events.items() if ev[0] in RUNNING]
        events.update(self.exchange({h: ABORT for h in running}))
        self.replay_prints(events)
        self.replay_trace(events, None)
        raise failed[0][1]

    def replay_prints(self, events: dict[int, tuple]) -> None:
        """The shares' kernel prints, in chip order, now that the run has ended."""
        for _h, ev in sorted(events.items()):
            if ev[0] in _ENDED and ev[-1]:
                sys.stdout.write(ev[-1])

    def replay_trace(self, events: dict[int, tuple], makespan: int | None) -> None:
        """The shares' recordings (traced runs) as one launch over every chip, in chip
        order; ``makespan`` None for a run that raised."""
        keys: list = []
        recorded: list = []
        for _h, ev in sorted(events.items()):
            if ev[0] not in _ENDED or ev[-2] is None:
                continue
            first = len(keys)
            keys += ev[-2][0]
            recorded += [(ph, first + i, *rest) for ph, i, *rest in ev[-2][1]]
        if keys:
            _replay(self.device, self.workload, (keys, recorded), makespan)

    def result(self, events: dict[int, tuple]):
        """The run's statistics (the shares' runs in chip order), or its deadlock report
        merged from the shares', as one engine run over every chip would give."""
        ends = [events[h] for h in sorted(events)]
        if any(ev[0] == "deadlock" for ev in ends):
            self.replay_trace(events, None)
            blocked = sum(ev[1] for ev in ends if ev[0] == "deadlock")
            total = sum(ev[2] if ev[0] == "deadlock" else len(ev[1][0]) for ev in ends)
            body = [ev[3] for ev in ends if ev[0] == "deadlock" and ev[3]]
            raise DeadlockError("\n".join([deadlock_headline(blocked, total), *body]))
        labels: list = []
        python: list = []
        tables = []
        for ev in ends:
            raw = ev[1]
            labels += raw[0]
            python += raw[1]
            tables.append(raw[2])
        merged = (labels, python, b"".join(tables))
        makespan = max((ev[2] for ev in ends), default=0)
        self.replay_trace(events, makespan)
        return offload.RemoteLaunch(self.device, lambda: (merged, makespan), 0)


def _replay(device, program, recorded, makespan: int | None) -> None:
    """A launch a worker recorded (``trace.Recorder``), into this process's trace where one
    process would have recorded it (``trace.Tracer.replay``)."""
    tracer = session.tracer_for(device)
    if tracer is None:  # pragma: no cover - workers record only while tracing
        return
    chip = device.mesh.root.device_by_id if device.mesh is not None else lambda _id: device
    tracer.replay(program, device.perf.arch, recorded, chip, makespan)


class _Here:
    """``device.remote`` of a chip the driver runs: each launch counted under ``reason``."""

    __slots__ = ("pool", "reason")

    def __init__(self, pool: WorkerPool, reason: str) -> None:
        self.pool = pool
        self.reason = reason

    def submit(self, device, program, place_word):
        self.pool.ran_here[self.reason] += 1

    def note_local(self, reason: str) -> None:
        self.pool.ran_here[reason] += 1

    def release(self, device) -> None:
        """Nothing to let go: no worker holds this chip."""

    def run_workload(self, mesh, workload, items, place_word):
        self.pool.ran_here[self.reason] += 1


class _Chip:
    """``device.remote`` of a chip a worker runs (``offload.RemoteChip``)."""

    __slots__ = ("pool", "host", "spec")

    def __init__(self, pool: WorkerPool, host: int, spec: ChipSpec) -> None:
        self.pool = pool
        self.host = host
        self.spec = spec

    def submit(self, device, program, place_word):
        return self.pool.submit(self, device, program, place_word)

    def note_local(self, reason: str) -> None:
        self.pool.ran_here[reason] += 1

    def run_workload(self, mesh, workload, items, place_word):
        return self.pool.run_workload(mesh, workload, items, place_word)

    def release(self, device) -> None:
        """The driver closes the chip: its worker unmaps it (after its queued launches)."""
        pool = self.pool
        if pool.hosts:
            for h, actor in enumerate(pool.hosts):
                if h not in pool.dead:
                    actor.drop_chip.remote(self.spec.device_id)
        pool.sent[self.host] = {k for k in pool.sent[self.host] if k[0] != self.spec.device_id}
        chips = pool.host_chips[self.host]
        if self.spec.device_id in chips:
            chips.remove(self.spec.device_id)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
