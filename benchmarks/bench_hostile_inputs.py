"""Hostile inputs per category, and how each one ended (the closing figures of issue 16).

Every category runs in a child process that tries its inputs one by one and reports
each outcome on a line of its own:

* ``clean``     -- a Tilewright error (message, rule; the user's line where there is one),
* ``handled``   -- the input was dealt with correctly without an error (a damaged cache
                   object rebuilt, a valid edge case that runs, a refused thread that got
                   its own device, ...),
* ``traceback`` -- any other exception escaped (a bug),
* ``hang``      -- the input did not finish within its time budget (the parent kills the
                   child and goes on with the next input),
* ``died``      -- the child process ended during the input (a crash, an exit),
* ``wrong``     -- a silent wrong answer: the input ran without an error and its result
                   differs from the reference (the interpreter, torch, the original call).

Categories: system descriptors (mutated ``.ttsys`` bytes, extreme values, hostile files),
``tilewright run`` options, ttnn host API arguments, TT-Lang programs, native C++ faults
(kernels that exit, abort, fault, loop, reach out of their L1), the build cache (damaged
objects and manifests, unusable directories), threads, and (issue 26) argument aliasing,
captured-value mutation between calls (both caches), integer overflow and division by
zero, ``generic_op`` descriptor fuzzing, ``emit`` reruns, huge shapes, signals and the
pytest plugin's options.  Deterministic (fixed seeds).

Prints one JSON object: per category the counts, and the total.  Not a test: run
``python benchmarks/bench_hostile_inputs.py`` (about three minutes; ``--quick`` tries a
tenth of the generated inputs; ``--list`` prints every input's outcome on stderr; category
names as arguments run only those).
"""

from __future__ import annotations

import json
import os
import random
import selectors
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTCOMES = ("clean", "handled", "traceback", "hang", "died", "wrong")
BUDGET = {"native": 60.0, "cache": 120.0, "threads": 120.0, "emit": 180.0, "signals": 120.0,
          "plugin": 120.0}  # fmt: skip  # seconds per input (default 30)

Case = tuple[str, Callable[[], object]]
LIST = "--list" in sys.argv  # every input's outcome on stderr


# -- the child: run the cases of one category ---------------------------------------------------


class WrongAnswer(Exception):
    """Raised by a case whose input ran without an error and gave a wrong result."""


def _classify(fn: Callable[[], object]) -> tuple[str, str]:
    from tilewright.errors import TilewrightError

    try:
        result = fn()
    except WrongAnswer as exc:
        return "wrong", str(exc)[:160]
    except TilewrightError as err:
        return "clean", f"{type(err).__name__}[{err.rule}]: {err.message.splitlines()[0][:120]}"
    except KeyboardInterrupt as exc:  # a report of where the kernels were is clean too
        notes = getattr(exc, "__notes__", ())
        return ("clean" if notes else "traceback"), "KeyboardInterrupt"
    except Exception as exc:  # noqa: BLE001 - what the harness counts
        return "traceback", f"{type(exc).__name__}: {str(exc)[:160]}"
    return "handled", str(result)[:120] if result is not None else ""


def child(category: str, start: int, quick: bool, fd: int) -> None:
    """Report on ``fd`` (the programs' own output goes to stdout, which is discarded)."""
    out = os.fdopen(fd, "w", buffering=1)
    cases = list(CATEGORIES[category](quick))
    for i in range(start, len(cases)):
        name, fn = cases[i]
        out.write(json.dumps({"start": i, "name": name}) + "\n")
        outcome, detail = _classify(fn)
        out.write(json.dumps({"done": i, "outcome": outcome, "detail": detail}) + "\n")
    out.write(json.dumps({"end": len(cases)}) + "\n")


# -- the parent: restart after deaths and hangs --------------------------------------------------


def run_category(category: str, quick: bool) -> dict:
    counts: Counter[str] = Counter()
    bad: list[str] = []
    start = 0
    budget = BUDGET.get(category, 30.0)
    while True:
        read_fd, write_fd = os.pipe()
        proc = subprocess.Popen(
            [sys.executable, __file__, "--child", category, str(start), str(write_fd)]
            + (["--quick"] if quick else []),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            start_new_session=True,
            pass_fds=(write_fd,),
        )
        os.close(write_fd)
        reports = os.fdopen(read_fd, "r")
        sel = selectors.DefaultSelector()
        sel.register(reports, selectors.EVENT_READ)
        current, name, finished = None, "", False
        deadline = time.monotonic() + 600  # the child's start-up and its first input
        while True:
            if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                counts["hang"] += 1
                bad.append(f"hang: {name}")
                proc.kill()
                break
            line = reports.readline()
            if not line:
                if current is not None:
                    counts["died"] += 1
                    bad.append(f"died: {name} (exit {proc.wait()})")
                break
            msg = json.loads(line)
            if "start" in msg:
                current, name = msg["start"], msg["name"]
                deadline = time.monotonic() + budget
            elif "done" in msg:
                counts[msg["outcome"]] += 1
                if LIST:
                    print(f"{category}: {name}: {msg['outcome']}: {msg['detail']}", file=sys.stderr)
                if msg["outcome"] not in ("clean", "handled"):  # traceback, wrong
                    bad.append(f"{msg['outcome']}: {name}: {msg['detail']}")
                current = None
                deadline = time.monotonic() + budget
            elif "end" in msg:
                finished = True
                break
        proc.kill()
        proc.wait()
        reports.close()
        if finished or current is None:
            break
        start = current + 1
    tried = sum(counts.values())
    return {"tried": tried, **{k: counts[k] for k in OUTCOMES}, "problems": bad[:20]}


# -- categories -----------------------------------------------------------------------------------


def descriptors(quick: bool) -> Iterator[Case]:
    """Mutated .ttsys bytes, extreme field values and hostile files, each read, checked and
    (when accepted) built into a device."""
    import dataclasses
    import resource

    from tilewright.device.device import Device
    from tilewright.device.requirements import check_runnable
    from tilewright.target import board_preset, decode_ttsys, encode_ttsys, read_system_desc

    limit = 6 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    rng = random.Random(16)
    base = encode_ttsys(board_preset("n150"))
    chip = board_preset("n150").get_chip_desc(0)
    extremes = [0, 1, 3, 31, 2**31 - 1, 2**32 - 1, 2**63 - 1, -1]
    fields = ["l1_size", "num_cbs", "num_dram_channels", "l1_unreserved_base", "num_compute_threads",
              "num_datamovement_threads", "dst_physical_size_tiles", "noc_l1_address_align_bytes",
              "dram_channel_size", "dram_unreserved_base"]  # fmt: skip

    def run_bytes(data: bytes) -> Callable[[], object]:
        def case():
            sd = decode_ttsys(data).system_desc
            check_runnable(sd)
            Device(sd).close()
            return "accepted and ran"

        return case

    n = 30 if quick else 300
    for i in range(n):
        data = bytearray(base)
        kind = i % 3
        if kind == 0:
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data = data[: rng.randrange(len(data))]
        else:
            name = rng.choice(fields)
            value = rng.choice(extremes)
            try:
                mutated = dataclasses.replace(chip, **{name: value})
                root = board_preset("n150")
                sd = dataclasses.replace(root.system_desc, chip_descs=(mutated,))
                data = bytearray(encode_ttsys(dataclasses.replace(root, system_desc=sd)))
            except Exception:  # noqa: BLE001 - not encodable: flip a byte instead
                data[rng.randrange(len(data))] ^= 0xFF
        yield (
            f"descriptor #{i} ({['bit flips', 'truncated', 'extreme value'][kind]})",
            run_bytes(bytes(data)),
        )
    tmp = Path(tempfile.mkdtemp())
    fifo = tmp / "fifo.ttsys"
    os.mkfifo(fifo)
    big = tmp / "big.ttsys"
    big.write_bytes(b"\0" * (3 << 20))
    (tmp / "text.mlir").write_text("#ttcore.system_desc<[{garbage")
    (tmp / "bad.json").write_text('{"system_desc": [1, 2, 3]}')
    for path in ["/dev/zero", str(fifo), str(tmp), str(big), str(tmp / "text.mlir"),
                 str(tmp / "bad.json"), str(tmp / "missing.ttsys"), "/etc/passwd"]:  # fmt: skip
        yield f"descriptor file {path}", lambda path=path: check_runnable(read_system_desc(path))


def run_options(quick: bool) -> Iterator[Case]:
    """``tilewright run`` with bad options (the program is never started)."""
    from click.testing import CliRunner

    from tilewright.cli.main import cli

    tmp = Path(tempfile.mkdtemp())
    prog = tmp / "prog.py"
    prog.write_text("print('ran')\n")
    (tmp / "junk.ttsys").write_bytes(b"junk")
    argsets = [
        ["--trace", str(tmp / "missing" / "t.json"), str(prog)],
        ["--board", "n9000", str(prog)],
        ["--board", "n150", "--system-desc", str(tmp / "junk.ttsys"), str(prog)],
        ["--system-desc", str(tmp / "junk.ttsys"), str(prog)],
        ["--system-desc", "/dev/zero", str(prog)],
        ["--watchdog", "-1", str(prog)],
        ["--watchdog", "nan", str(prog)],
        ["--watchdog", "inf", str(prog)],
        ["--watchdog", "abc", str(prog)],
        [str(tmp / "missing.py")],
        [str(tmp)],
        ["--stats", "--trace", "/proc/self/nope.json", str(prog)],
        ["--isolate-channel", "x,y", str(prog)],
    ]

    def invoke(args):
        def case():
            result = CliRunner().invoke(cli, ["run", *args])
            text = (result.stderr or "") + (result.output or "")
            if result.exit_code == 0:
                return "ran"
            if (
                "Traceback" in text
                or result.exception not in (None,)
                and not isinstance(result.exception, SystemExit)
            ):
                raise RuntimeError(f"exit {result.exit_code}: {text[-300:]}")
            from tilewright.errors import TilewrightError

            raise TilewrightError(text.strip().splitlines()[-1] if text.strip() else "no message")

        return case

    for args in argsets:
        yield f"run {' '.join(args)}", invoke(args)


def ttnn_inputs(quick: bool) -> Iterator[Case]:
    """ttnn's host API with odd and wrong arguments."""
    import numpy as np
    import torch

    from tilewright import ttnn

    device = ttnn.open_device(device_id=0)
    closed = ttnn.open_device(device_id=1)
    ttnn.close_device(closed)
    rng = random.Random(7)
    shapes = [(), (0,), (0, 32), (32, 0), (1,), (1, 1), (33, 65), (2, 3, 5), (-1, 4), (4, -2),
              (1.5, 2), ("a", 1), None, 7, (1 << 20, 0), True, [2, 2], (2, 2, 2, 2, 2)]  # fmt: skip
    dtypes = [ttnn.bfloat16, ttnn.float32, ttnn.bfloat8_b, ttnn.uint32, ttnn.int32, "bf16", 3.5,
              None, object()]  # fmt: skip
    layouts = [ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT, "tile", 7, None]
    devices = [device, None, closed, "device0", 0]
    configs = [ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG, None, "dram", 5]
    makers = ["zeros", "ones", "full", "empty", "rand"]
    n = 20 if quick else 200
    for _ in range(n):
        maker = rng.choice(makers)
        shape, dtype, layout = rng.choice(shapes), rng.choice(dtypes), rng.choice(layouts)
        dev, mc = rng.choice(devices), rng.choice(configs)

        def case(maker=maker, shape=shape, dtype=dtype, layout=layout, dev=dev, mc=mc):
            if maker == "full":
                t = ttnn.full(shape, 2.5, dtype=dtype, layout=layout, device=dev, memory_config=mc)
            elif maker == "rand":
                t = ttnn.rand(shape, dtype=dtype, layout=layout, device=dev, memory_config=mc)
            else:
                t = getattr(ttnn, maker)(
                    shape, dtype=dtype, layout=layout, device=dev, memory_config=mc
                )
            ttnn.to_torch(t)
            return "created"

        yield f"ttnn.{maker}({shape!r}, dtype={dtype!r}, layout={layout!r}, device={dev!r})", case
    good = ttnn.from_torch(torch.rand(64, 64), layout=ttnn.TILE_LAYOUT, device=device)
    others = [
        ("from_torch of a list", lambda: ttnn.from_torch([1, 2, 3])),
        ("from_torch of complex", lambda: ttnn.from_torch(torch.zeros(2, 2, dtype=torch.complex64))),
        ("from_torch of an empty tensor", lambda: ttnn.from_torch(torch.zeros(0, 4), device=device)),
        ("from_torch uint8 as bf8", lambda: ttnn.from_torch(np.zeros((32, 32), np.uint8), dtype=ttnn.bfloat8_b)),
        ("from_torch nan into int32", lambda: ttnn.from_torch(torch.full((2, 2), float("nan")), dtype=ttnn.int32)),
        ("to_layout junk", lambda: ttnn.to_layout(good, "diagonal")),
        ("typecast junk", lambda: ttnn.typecast(good, "int4")),
        ("to_device junk", lambda: ttnn.to_device(good.cpu(), "gpu0")),
        ("to_device closed", lambda: ttnn.to_device(good.cpu(), closed)),
        ("slice out of range", lambda: good[70:80, 0]),
        ("slice reversed", lambda: good[9:5, 0]),
        ("slice with a step", lambda: good[0:2:2, 0]),
        ("slice with a string", lambda: good["a"]),
        ("open a device twice", lambda: ttnn.open_device(device_id=0)),
        ("open device -1", lambda: ttnn.open_device(device_id=-1)),
        ("open device 999", lambda: ttnn.open_device(device_id=999)),
        ("open device 'a'", lambda: ttnn.open_device(device_id="a")),
        ("sharded config without shard spec", lambda: ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1)),
        ("add of mismatched shapes", lambda: ttnn.add(good, ttnn.from_torch(torch.rand(32, 96), layout=ttnn.TILE_LAYOUT, device=device))),
        ("matmul of mismatched shapes", lambda: ttnn.matmul(good, ttnn.from_torch(torch.rand(32, 96), layout=ttnn.TILE_LAYOUT, device=device))),
        ("deallocate then read", lambda: (lambda t: (ttnn.deallocate(t), ttnn.to_torch(t)))(ttnn.from_torch(torch.rand(32, 32), layout=ttnn.TILE_LAYOUT, device=device))),
    ]  # fmt: skip
    yield from others


def _program(source: str) -> Callable[[], object]:
    """Run a TT-Lang program text (written to a file, so errors can point at its lines)."""

    def case():
        import runpy

        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(source)
        try:
            runpy.run_path(f.name, run_name="__main__")
        finally:
            from tilewright.ttnn.chips import open_devices

            for dev in open_devices():
                dev.close()
        return "ran"

    return case


PROGRAM = """\
import torch
from tilewright import ttl, ttnn
from tilewright.device.engine import EngineOptions

@ttl.operation(grid={grid})
def op(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape={shape}, block_count={count})
    o_dfb = ttl.make_dataflow_buffer_like(out, shape={shape}, block_count={count})
{setup}
    @ttl.datamovement()
    def reader():
{reader}
    @ttl.compute()
    def compute():
{compute}
    @ttl.datamovement()
    def writer():
{writer}

device = ttnn.open_device(device_id=0, options=EngineOptions(watchdog=0.5))
kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
a = ttnn.from_torch(torch.rand(64, 64), **kw)
out = ttnn.from_torch(torch.zeros(64, 64), **kw)
{call}
"""
READER = "        with a_dfb.reserve() as b:\n            ttl.copy(a[0, 0], b).wait()"
COMPUTE = "        with a_dfb.wait() as x, o_dfb.reserve() as y:\n            y.store(x + x)"
WRITER = "        with o_dfb.wait() as y:\n            ttl.copy(y, out[0, 0]).wait()"


def ttlang_programs(quick: bool) -> Iterator[Case]:
    """TT-Lang programs with one mistake each (and the unmodified program, which runs)."""
    base = dict(grid="(1, 1)", shape="(1, 1)", count=2, setup="", reader=READER, compute=COMPUTE,
                writer=WRITER, call="op(a, out)")  # fmt: skip
    variants = {
        "correct program": {},
        "grid zero": {"grid": "(0, 1)"},
        "grid string": {"grid": "'big'"},
        "grid beyond the chip": {"grid": "(99, 99)"},
        "grid callable returning junk": {"grid": "lambda *a: (-1, 2)"},
        "17 semaphores": {"setup": "    s = [ttl.Semaphore(0) for _ in range(17)]\n"},
        "semaphore value too big": {"setup": "    s = ttl.Semaphore(1 << 40)\n"},
        "huge DFB": {"shape": "(64, 64)"},
        "block count zero": {"count": 0},
        "generator kernel": {"reader": "        yield 1"},
        "deadlock: nobody pushes": {"reader": "        pass"},
        "livelock: spinning compute": {"compute": "        while True:\n            pass"},
        "block math in a data-movement kernel": {"reader": "        with a_dfb.reserve() as b:\n            b.store(b + b)"},
        "copy outside a kernel": {"call": "ttl.copy(a[0, 0], a[0, 0])"},
        "math outside a kernel": {"call": "ttl.math.exp(a)"},
        "host tensor argument": {"call": "op(a.cpu(), out)"},
        "not a tensor": {"call": "op(3, out)"},
        "too many arguments": {"call": "op(a, out, out)"},
        "tile index out of range": {"reader": "        with a_dfb.reserve() as b:\n            ttl.copy(a[9, 9], b).wait()"},
        "store twice": {"compute": "        with a_dfb.wait() as x, o_dfb.reserve() as y:\n            y.store(x)\n            y.store(x)"},
        "wait on a reserved block": {"compute": "        with a_dfb.wait() as x, o_dfb.reserve() as y:\n            y.store(x)\n        with a_dfb.wait() as x:\n            pass"},
        "missing extern header": {"reader": "        ttl.call_extern_func('nope.hpp', 'f', func_args=[1])"},
        "extern with a float argument": {"reader": "        ttl.call_extern_func('nope.hpp', 'f', func_args=[1.5])"},
    }  # fmt: skip
    for name, change in variants.items():
        yield f"program: {name}", _program(PROGRAM.format(**{**base, **change}))


NATIVE_BODIES = {
    "exit(3)": "exit(3);",
    "_exit(4)": "_exit(4);",
    "quick_exit(5)": "quick_exit(5);",
    "abort()": "std::abort();",
    "assert(false)": "assert(ARG(0) == 99);",
    "std::terminate()": "std::terminate();",
    "throw runtime_error": 'throw std::runtime_error("no");',
    "throw int": "throw 7;",
    "null store": "*reinterpret_cast<volatile uint32_t*>(ARG(0)) = 1;",
    "store beyond L1": "*reinterpret_cast<volatile uint32_t*>(0x200000) = 1;",
    "store far beyond L1": "*reinterpret_cast<volatile uint32_t*>(0x3ffff0) = 1;",
    "store to a host address": "*reinterpret_cast<volatile uint32_t*>(0x7f0000001000ull) = 1;",
    "store below the window": "*reinterpret_cast<volatile uint32_t*>(0x8000) = 1;",
    "divide by zero": "volatile uint32_t z = ARG(0); DPRINT << 7 / z << ENDL();",
    "trap": "__builtin_trap();",
    "stack overflow": "struct R { static int f(int n) { volatile char b[4096]; b[0] = char(n); return f(n + 1) + b[0]; } }; R::f(0);",
    "endless loop": "volatile uint32_t n = 0; while (true) { n = n + 1; }",
    "endless malloc loop": "while (true) { void* volatile p = std::malloc(64); std::free(p); }",
    "sleep forever": "while (true) { usleep(1000); }",
    "get_arg_val out of range": "volatile uint32_t v = get_arg_val<uint32_t>(50); (void)v;",
    "cb on an unconfigured index": "cb_reserve_back(7, 1);",
    "noc read beyond L1": "noc_async_read(get_noc_addr(0x20000), 1499136 - 16, 64); noc_async_read_barrier();",
    "noc write to a core beyond L1": "noc_async_write(0x20000, get_noc_addr(ARG(1), ARG(2), 1499136 - 16), 64);",
    "noc write to no core": "noc_async_write(0x20000, get_noc_addr(63, 63, 0x20000), 64);",
    "noc misaligned": "noc_async_write(0x20001, get_noc_addr(ARG(1), ARG(2), 0x20000), 64);",
    "multicast semaphore beyond L1": "noc_semaphore_inc_multicast(get_noc_multicast_addr(ARG(1), ARG(2), ARG(3), ARG(2), 1507328 + 16), 1, 2);",
    "semaphore id out of range": "volatile uint32_t s = get_semaphore(99); (void)s;",
    "semaphore wait forever": "noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), 5);",
    "compile error": "this is not C++;",
    "undefined function": "extern void nowhere(); nowhere();",
    "unknown kernel API": "llk_unpack_tilizeA_B(0);",
    "infinite recursion in a header-less lambda": "auto f = [](auto& self, int n) -> int { return self(self, n + 1) + 1; }; DPRINT << f(f, 0) << ENDL();",
}  # fmt: skip

NATIVE_PRELUDE = (
    "#include <cassert>\n#include <cstdint>\n#include <cstdlib>\n#include <exception>\n"
    "#include <stdexcept>\n#include <unistd.h>\n#define ARG(i) get_arg_val<uint32_t>(i)\n"
    "void kernel_main() {\n"
)


def native_faults(quick: bool) -> Iterator[Case]:
    """C++ kernels that exit, abort, fault, loop, or reach out of their L1."""
    from tilewright import ttnn
    from tilewright.device.coords import CoreCoord
    from tilewright.device.engine import EngineOptions
    from tilewright.device.program import Program, ReaderDataMovementConfig
    from tilewright.native.kernels import NativeKernel

    device = ttnn.open_device(device_id=0, options=EngineOptions(watchdog=0.5))
    core = CoreCoord(1, 1)
    right, next_right = device.core(CoreCoord(2, 1)), device.core(CoreCoord(3, 1))
    args = [0, right.noc_x, right.noc_y, next_right.noc_x]

    def run(body: str) -> Callable[[], object]:
        def case():
            program = Program("hostile")
            k = program.create_kernel(
                NativeKernel(source=NATIVE_PRELUDE + "    " + body + "\n}\n", name="hostile"),
                core,
                ReaderDataMovementConfig(),
            )
            program.set_runtime_args(k, core, args)
            try:
                device.command_queue.enqueue_program(program)
            finally:  # the device keeps working after every input
                ok = Program("ok")
                ok.create_kernel(
                    NativeKernel(source="void kernel_main() {}\n", name="ok"),
                    core,
                    ReaderDataMovementConfig(),
                )
                device.command_queue.enqueue_program(ok)
            return "ran"

        return case

    for name, body in NATIVE_BODIES.items():
        yield f"C++ kernel: {name}", run(body)


def build_cache(quick: bool) -> Iterator[Case]:
    """Damaged cache objects and manifests (each must be rebuilt, never loaded), and
    unusable cache directories (a build-environment error naming the path)."""
    import ctypes
    import shutil

    from tilewright import native
    from tilewright.native import build as nbuild
    from tilewright.native import cachefs

    tmp = Path(tempfile.mkdtemp())
    header = tmp / "value.hpp"
    header.write_text("#pragma once\ninline int64_t value() { return 41; }\n")
    source = (
        '#include "tilewright/glue.h"\n#include "value.hpp"\n'
        "TW_EXPORT int32_t tw_entry(const int64_t*, int64_t* r) {\n"
        "    TW_ENTRY_BEGIN\n    *r = value();\n    TW_ENTRY_END\n}\n"
    )
    cache = tmp / "cache"
    native.configure(cache_dir=str(cache))
    first = native.build_shared_object(source, include_paths=[tmp])
    pristine = Path(first.path).read_bytes()
    manifest_path = Path(first.path).parent / f"{first.key}.json"
    manifest = manifest_path.read_text()
    rng = random.Random(5)

    def build_and_call(damage: Callable[[], None]) -> Callable[[], object]:
        def case():
            fresh = Path(first.path).with_suffix(".fresh")
            fresh.write_bytes(pristine)  # a new inode: the loaded copy stays mapped
            os.replace(fresh, first.path)
            manifest_path.write_text(manifest)
            damage()
            nbuild._VERIFIED.clear()  # a new process
            cachefs.FILE_HASHES.clear()
            result = native.build_shared_object(source, include_paths=[tmp])
            lib = ctypes.CDLL(result.path)
            value = ctypes.c_int64(0)
            if lib.tw_entry((ctypes.c_int64 * 1)(), ctypes.byref(value)) != 0 or value.value != 41:
                raise RuntimeError("the rebuilt object gives a wrong answer")
            return "rebuilt" if not result.cached else "reused"

        return case

    def replace_object(data: bytes) -> Callable[[], None]:
        def damage():
            tmp_obj = Path(first.path).with_suffix(".tmp")
            tmp_obj.write_bytes(data)
            os.replace(tmp_obj, first.path)

        return damage

    n = 4 if quick else 40
    for i in range(n):
        data = bytearray(pristine)
        if i % 2:
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            what = "bit flips"
        else:
            data = data[: rng.randrange(len(data))]
            what = "truncated"
        yield f"cached object {what} #{i}", build_and_call(replace_object(bytes(data)))
    evil = tmp / "evil.so"
    shutil.copy(first.path, evil)
    manifests = {
        "manifest: not JSON": "{",
        "manifest: a list": "[]",
        "manifest: object elsewhere": json.dumps({**json.loads(manifest), "object": str(evil)}),
        "manifest: object ../": json.dumps({**json.loads(manifest), "object": "../evil.so"}),
        "manifest: header /dev/zero": json.dumps({**json.loads(manifest), "deps": [["/dev/zero", "0"]]}),
        "manifest: 2 MiB": "x" * (2 << 20),
    }  # fmt: skip
    for name, text in manifests.items():
        yield name, build_and_call(lambda text=text: manifest_path.write_text(text))
    (tmp / "file-cache").write_text("in the way")
    for name, path in (
        ("cache is a file", tmp / "file-cache"),
        ("cache under /sys", Path("/sys/tw")),
    ):

        def unusable(path=path):
            native.configure(cache_dir=str(path))
            try:
                return native.build_shared_object(source + "// other\n", include_paths=[tmp])
            finally:
                native.configure(cache_dir=str(cache))

        yield name, unusable


def threads(quick: bool) -> Iterator[Case]:
    """Threads with their own devices (Python and native kernels), and threads sharing one."""
    import threading

    import torch

    from tilewright import ttnn

    def two_threads_own_devices():
        sys.path.insert(0, str(ROOT))
        from tests.robustness.test_threads import _native_worker, _worker

        results: dict = {}
        errors: list = []
        for worker in (_worker, _native_worker):
            results.clear()
            ts = [threading.Thread(target=worker, args=(i, results, errors)) for i in range(2)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            if errors or len(results) != 2:
                raise RuntimeError(f"thread errors: {errors[:3]}")
        return "all right"

    def shared_device():
        from tilewright.device.engine import KernelRun

        device = ttnn.open_device(device_id=0)
        release, inside = threading.Event(), threading.Event()
        core = device.core(0, 0)

        def hold():
            inside.set()
            release.wait(10)

        t = threading.Thread(
            target=lambda: device.engine.run([KernelRun(core, "hold", "brisc", hold)])
        )
        t.start()
        inside.wait(10)
        try:
            device.engine.run([KernelRun(core, "intruder", "ncrisc", lambda: None)])
        finally:
            release.set()
            t.join()
            ttnn.close_device(device)

    def open_same_chip():
        out: list = []
        errs: list = []
        barrier = threading.Barrier(6)

        def opener():
            barrier.wait()
            try:
                out.append(ttnn.open_device(device_id=0))
            except Exception as exc:  # noqa: BLE001
                errs.append(exc)

        ts = [threading.Thread(target=opener) for _ in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for d in out:
            ttnn.close_device(d)
        from tilewright.errors import DeviceError

        if len(out) != 1 or not all(isinstance(e, DeviceError) for e in errs):
            raise RuntimeError(f"{len(out)} opened, errors {errs[:2]}")
        return "exactly one opened"

    _ = torch
    yield "two threads, own devices, Python and native kernels", two_threads_own_devices
    yield "two threads, one device", shared_device
    yield "six threads open one chip", open_same_chip


def _issue26(module: str, name: str) -> Callable[[bool], Iterator[Case]]:
    """A category of ``hostile_cases`` (issue 26), given this driver's WrongAnswer."""

    def category(quick: bool) -> Iterator[Case]:
        import importlib

        found = getattr(importlib.import_module(f"hostile_cases.{module}"), name)
        yield from found(WrongAnswer, quick)

    category.__doc__ = f"hostile_cases.{module}.{name}"
    return category


CATEGORIES: dict[str, Callable[[bool], Iterator[Case]]] = {
    "descriptors": descriptors,
    "run_options": run_options,
    "ttnn": ttnn_inputs,
    "programs": ttlang_programs,
    "native": native_faults,
    "cache": build_cache,
    "threads": threads,
    "aliasing": _issue26("calls", "aliasing"),
    "captured": _issue26("calls", "captured"),
    "overflow": _issue26("calls", "overflow"),
    "generic_op": _issue26("calls", "descriptors"),
    "huge_shapes": _issue26("calls", "huge_shapes"),
    "emit": _issue26("processes", "emit_reruns"),
    "threads_one_device": _issue26("processes", "threads_one_device"),
    "signals": _issue26("processes", "signals"),
    "plugin": _issue26("processes", "plugin_options"),
}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), "--quick" in sys.argv, int(sys.argv[4]))
        return
    quick = "--quick" in sys.argv
    only = [a for a in sys.argv[1:] if not a.startswith("--")]
    start = time.monotonic()
    report = {}
    for category in only or CATEGORIES:
        report[category] = run_category(category, quick)
    total = {k: sum(r[k] for r in report.values()) for k in ("tried", *OUTCOMES)}
    print(
        json.dumps(
            {"categories": report, "total": total, "seconds": round(time.monotonic() - start, 1)},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
