"""Every TT-Lang rule's bad program on every engine: the same diagnostic, or the documented
exception (docs/compiler.md, "Rules on every engine").

Each rule is a check function of ``lang.rules`` (``lang.blockstate`` for the block state
machine) that the interpreter calls as the program runs and the lowering calls at compile
time, emitting a violation as a ``fail`` op (``compiler/backend/lower/violations.py``).
For each row of :data:`CASES` the program runs under ``--engine python``, ``native`` and
``auto``; the interpreter's error -- type, message, rule id, file and line -- must match
the row, and

* the native engine raises exactly the same error (``native=None``), or -- the row's
  ``native`` reason says why the compiled engine cannot check the rule -- a
  ``NotCompilableError`` at the kernel or construct that the row names;
* ``auto`` gives exactly the interpreter's error: it compiles what the native engine
  checks (the test sees it compiled) and otherwise interprets -- it never runs an engine
  that checks less.

``test_every_rule_has_a_case`` keeps the table complete: a rule registered without a bad
program here fails it.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import tilewright.ttl  # noqa: F401 - the language: every rule registered
from tests.compiler.helpers import line_of, load, write
from tilewright.device import session
from tilewright.errors import (
    BlockStateError,
    DeviceError,
    DFBContractError,
    InterfaceError,
    KernelError,
    NotCompilableError,
    TilewrightError,
)
from tilewright.lang.rules.registry import RULES

PROGRAM = """
@ttl.operation(grid={grid})
def op(a, out{extra_params}):
{setup}
{kernels}

device = ttnn.open_device(device_id=0)
try:
    def dev(t, layout=ttnn.TILE_LAYOUT, dtype=ttnn.bfloat16):
        return ttnn.from_torch(t, dtype=dtype, layout=layout, device=device)

    op(dev(torch.ones({rows}, {cols})), dev(torch.zeros({rows}, {cols})){extra_args})
finally:
    ttnn.close_device(device)
"""

SETUP = """
d = ttl.make_dataflow_buffer_like(a, shape={shape}, block_count={blocks})
e = ttl.make_dataflow_buffer_like(out, shape={shape}, block_count={blocks})
"""


def kernel(kind: str, name: str, body: str) -> str:
    deco = "compute" if kind == "compute" else "datamovement"
    return f"@ttl.{deco}()\ndef {name}():\n" + textwrap.indent(textwrap.dedent(body), "    ")


READER = kernel("dm", "reader", "with d.reserve() as blk:\n    ttl.copy(a[0, 0], blk).wait()\n")
COMPUTE = kernel(
    "compute", "compute", "with d.wait() as x, e.reserve() as y:\n    y.store(x + x)\n"
)
WRITER = kernel("dm", "writer", "with e.wait() as blk:\n    ttl.copy(blk, out[0, 0]).wait()\n")


@dataclass(frozen=True)
class Case:
    """One bad program: its kernels (``# <-`` marks the line the error names)."""

    rule: str
    error: type[TilewrightError]
    message: str  # a regular expression the interpreter's message must match
    kernels: tuple[str, ...]
    native: str | None = None  # why the compiled engine cannot check it (None: it does)
    native_message: str = ""  # for a native exception: what its NotCompilableError says
    grid: str = "(1, 1)"
    shape: str = "(1, 1)"
    blocks: int = 2
    rows: int = 32
    cols: int = 32
    setup: str = ""
    extra_params: str = ""
    extra_args: str = ""
    rule_id: str | None = None  # the error's rule when it is finer than the row's (block ops)

    def source(self) -> str:
        setup = SETUP.format(shape=self.shape, blocks=self.blocks) + textwrap.dedent(self.setup)
        return PROGRAM.format(
            grid=self.grid,
            extra_params=self.extra_params,
            extra_args=self.extra_args,
            setup=textwrap.indent(setup, "    "),
            kernels=textwrap.indent("\n".join(self.kernels), "    "),
            rows=self.rows,
            cols=self.cols,
        )


def dm(body: str, name: str = "k") -> str:
    return kernel("dm", name, body)


def ck(body: str, name: str = "c") -> str:
    return kernel("compute", name, body)


PIPE_GRID = "(2, 1)"
PIPE_NET = "net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])\n"
SEM = "s = ttl.Semaphore()\n"
NOT_RUNTIME = (
    "an InterfaceError, which the interpreter raises as the kernel runs; a compiled kernel "
    "raises only run-time error classes (ttlang::ErrorClass)"
)
NOT_COMPILED = "the construct is not compiled (docs/compiler.md, the compilable subset)"

CASES: dict[str, Case] = {
    # -- DFB protocol (spec D.1) -------------------------------------------------------------
    "dfb-acquire-kernel": Case(
        "dfb-acquire-kernel",
        DFBContractError,
        r"^kernel= is not supported on DFB reserve\(\); select release ownership on push\(\) "
        r"or pop\(\)$",
        (dm("blk = d.reserve(kernel=ttl.KernelKind.DATA_MOVEMENT)  # <-\n"),),
    ),
    "dfb-acquire-args": Case(
        "dfb-acquire-args",
        InterfaceError,
        r"^DFB wait\(\) takes no arguments; got keyword argument\(s\): timeout$",
        (dm("blk = d.wait(timeout=1)  # <-\n"),),
        native=NOT_RUNTIME,
        native_message="DFB wait() takes no arguments",
    ),
    "dfb-one-pointer": Case(
        "dfb-one-pointer",
        DFBContractError,
        r"^d\.reserve\(\): kernel 'k' still holds block block 'x' \(reserved from DFB 'd'\); a "
        r"data-movement kernel addresses a DFB through one write pointer: push each block before "
        r"the next acquisition$",
        (dm("x = d.reserve()\ny = d.reserve()  # <-\n"),),
    ),
    "dfb-capacity": Case(
        "dfb-capacity",
        DFBContractError,
        r"^d\.reserve\(\): kernel 'c' already holds all 2 blocks of the DFB; push one before "
        r"acquiring another$",
        (ck("x = d.reserve()\ny = d.reserve()\nz = d.reserve()  # <-\n"),),
    ),
    "dfb-spsc": Case(
        "dfb-spsc",
        DFBContractError,
        r"^DFB 'd' has two producers on node \(0, 0\): kernels 'one' and 'two'; a DFB has one "
        r"producer and one consumer kernel per node \(use one DFB per consumer\)$",
        (
            dm("with d.reserve() as blk:\n    ttl.copy(a[0, 0], blk).wait()\n", "one"),
            dm("with d.reserve() as blk:  # <-\n    ttl.copy(a[0, 0], blk).wait()\n", "two"),
        ),
        blocks=4,
        native="which kernel acquires second -- the one the message names -- is decided by "
        "the run; the compiler sees both producers and does not compile the operation",
        native_message="DFB 'd' has two producers (kernels 'one' and 'two')",
    ),
    "dfb-release-order": Case(
        "dfb-release-order",
        DFBContractError,
        r"^block 'y' \(reserved from DFB 'd'\) is pushed before block 'x' \(reserved from DFB "
        r"'d'\): blocks of a DFB are pushed in the order they were acquired$",
        (
            ck(
                "x = d.reserve()\ny = d.reserve()\n"
                "y.store(ttl.block.fill(1.0, shape=(1, 1)))\ny.push()  # <-\n"
            ),
        ),
    ),
    "dfb-release-nothing": Case(
        "dfb-release-nothing",
        DFBContractError,
        r"^d\.pop\(\): there is no waited block to pop$",
        (dm("d.pop()  # <-\n"),),
    ),
    # -- the block state machine (spec D.2) ---------------------------------------------------
    "block-state read MW": Case(
        "block-state",
        BlockStateError,
        r"^block 'y' \(reserved from DFB 'e'\) is read while in state MW \(must-write: reserved, "
        r"not written yet\); store into it before reading it$",
        (READER, ck("with d.wait() as x, e.reserve() as y:\n    y.store(y + x)  # <-\n"), WRITER),
    ),
    "block-state push unwritten": Case(
        "block-state",
        BlockStateError,
        r"^push\(\) is not allowed on block 'blk' \(reserved from DFB 'd'\) in state MW ",
        (dm("with d.reserve() as blk:\n    blk.push()  # <-\n"),),
    ),
    "block-state copy lock": Case(
        "block-state",
        BlockStateError,
        r"^copy lock error: block 'blk' \(reserved from DFB 'd'\) is written while a transfer is "
        r"still reading it \(state ROR\); wait for the transfer first$",
        (
            dm(
                "with d.reserve() as blk:\n    ttl.copy(a[0, 0], blk).wait()\n"
                "    ttl.copy(blk, out[0, 0])\n    ttl.copy(a[0, 0], blk)  # <-\n"
            ),
        ),
    ),
    "block-state pop unread": Case(
        "block-state",
        BlockStateError,
        r"^pop\(\) is not allowed on block 'blk' \(waited from DFB 'd'\) in state MR .*next "
        r"allowed: ttl\.copy from the block$",
        (READER, dm("with d.wait() as blk:\n    blk.pop()  # <-\n", "w")),
    ),
    "block-state wrong release": Case(
        "block-state",
        BlockStateError,
        r"^push\(\) is for reserve\(\) blocks; a wait\(\) block is closed with pop\(\) \(block "
        r"'x' \(waited from DFB 'd'\)\)$",
        (READER, ck("x = d.wait()\nx.push()  # <-\n")),
    ),
    "block-state released": Case(
        "block-state",
        BlockStateError,
        r"^push\(\) on block 'blk' \(reserved from DFB 'd'\): the block is no longer active",
        (
            dm(
                "with d.reserve() as blk:\n    ttl.copy(a[0, 0], blk).wait()\n    blk.push()\n"
                "    blk.push()  # <-\n"
            ),
        ),
    ),
    # -- block math (spec A.5) ------------------------------------------------------------------
    "compute-only expression": Case(
        "compute-only",
        KernelError,
        r"^block expression 'fill' runs on compute kernels; 'k' is a data-movement kernel$",
        (dm("with d.reserve() as blk:\n    blk.store(ttl.block.fill(1.0, shape=(1, 1)))  # <-\n"),),
    ),
    "compute-only store": Case(
        "compute-only",
        KernelError,
        r"^store\(\) runs on compute kernels; 'w' is a data-movement kernel$",
        (READER, dm("with d.wait() as x, e.reserve() as y:\n    y.store(x)  # <-\n", "w")),
    ),
    "store-shape": Case(
        "store-shape",
        BlockStateError,
        r"^store: expression of shape \(1, 2\) does not match block 'y' \(reserved from DFB "
        r"'e'\) of shape \(1, 1\); shapes must match exactly$",
        (ck("with e.reserve() as y:\n    y.store(ttl.block.fill(1.0, shape=(1, 2)))  # <-\n"),),
    ),
    "store-layout": Case(
        "store-layout",
        BlockStateError,
        r"^store: the expression's values \(32x1024\) do not fit block 'y' \(reserved from DFB "
        r"'r'\), which holds 1x32 row-major elements; tiled and row-major blocks do not mix$",
        (ck("with r.reserve() as y:\n    y.store(ttl.block.fill(1.0, shape=(1, 32)))  # <-\n"),),
        setup="r = ttl.make_dataflow_buffer_like(rm, shape=(1, 32), block_count=2)\n",
        extra_params=", rm",
        extra_args=", dev(torch.ones(32, 32), layout=ttnn.ROW_MAJOR_LAYOUT)",
        native="block math on a row-major DFB is not compiled (32x32 tiles only)",
        native_message="block math on DFB 'r' (row-major)",
    ),
    "block-layouts": Case(
        "block-layouts",
        KernelError,
        r"^operator\.add: operand 1 is a tiled block of \(1, 1\) tiles and operand 2 is a "
        r"row-major block of \(32, 32\) elements; tiled and row-major blocks do not mix$",
        (
            dm(
                "with d.reserve() as x:\n    ttl.copy(a[0, 0], x).wait()\n"
                "with r.reserve() as y:\n    ttl.copy(rm[0:32, 0:32], y).wait()\n",
                "reader",
            ),
            ck("with d.wait() as x, r.wait() as y, e.reserve() as o:\n    o.store(x + y)  # <-\n"),
        ),
        setup="r = ttl.make_dataflow_buffer_like(rm, shape=(32, 32), block_count=2)\n",
        extra_params=", rm",
        extra_args=", dev(torch.ones(32, 32), layout=ttnn.ROW_MAJOR_LAYOUT)",
        native="block math on a row-major DFB is not compiled (32x32 tiles only)",
        native_message="ttl.copy of row-major tensors is not compiled yet",
    ),
    "block-op": Case(
        "block-op",
        KernelError,
        r"^math\.relu got an unexpected keyword argument 'bogus' \(signature: relu\(x\)\)$",
        (
            READER,
            ck(
                "with d.wait() as x, e.reserve() as y:\n    y.store(ttl.math.relu(x, bogus=1))  # <-\n"
            ),
            WRITER,
        ),
        rule_id="op-param",
    ),
    "block-operand": Case(
        "block-operand",
        KernelError,
        r"^block expression operand must be a block or a number, got str$",
        (
            READER,
            ck("with d.wait() as x, e.reserve() as y:\n    y.store(x + 'one')  # <-\n"),
            WRITER,
        ),
    ),
    "block-operand bool": Case(
        "block-operand",
        KernelError,
        r"^block expression operand must be a block or a number, got bool$",
        (
            READER,
            ck("with d.wait() as x, e.reserve() as y:\n    y.store(x * True)  # <-\n"),
            WRITER,
        ),
    ),
    "block-operand store": Case(
        "block-operand",
        KernelError,
        r"^expected a block or block expression, got float$",
        (ck("with e.reserve() as y:\n    y.store(2.0)  # <-\n"),),
    ),
    # -- copies (spec A.6, D.5) -------------------------------------------------------------------
    "dm-only copy": Case(
        "dm-only",
        KernelError,
        r"^ttl\.copy runs on data-movement kernels; 'c' is a compute kernel$",
        (ck("with d.reserve() as blk:\n    ttl.copy(a[0, 0], blk)  # <-\n"),),
    ),
    "dm-only pipe net": Case(
        "dm-only",
        KernelError,
        r"^net\.if_src runs on data-movement kernels; 'c' is a compute kernel$",
        (ck("def cb(p):\n    pass\nnet.if_src(cb)  # <-\n"),),
        grid=PIPE_GRID,
        setup=PIPE_NET,
    ),
    "copy-ends": Case(
        "copy-ends",
        KernelError,
        r"^ttl\.copy\(tensor slice, tensor slice\): a copy moves data between a block and a "
        r"tensor slice or a pipe; exactly one side must be a block$",
        (dm("ttl.copy(a[0, 0], out[0, 0])  # <-\n"),),
    ),
    "copy-into-reserved": Case(
        "copy-into-reserved",
        KernelError,
        r"^ttl\.copy\(tensor_slice, block\) writes the block, so it must come from reserve\(\); "
        r"block 'blk' \(waited from DFB 'd'\) comes from wait\(\)$",
        (READER, dm("with d.wait() as blk:\n    ttl.copy(a[0, 0], blk).wait()  # <-\n", "w")),
    ),
    "copy-into-reserved pipe": Case(
        "copy-into-reserved",
        KernelError,
        r"^ttl\.copy\(pipe, block\) writes the block, so it must come from reserve\(\); block "
        r"'blk' \(waited from DFB 'd'\) comes from wait\(\)$",
        (
            dm(
                "def recv(p):\n    with d.wait() as blk:\n        ttl.copy(p, blk).wait()  # <-\n"
                "net.if_dst(recv)\n"
            ),
            dm(
                "def fill(p):\n    with d.reserve() as blk:\n        ttl.copy(a[0, 0], blk).wait()\n"
                "net.if_dst(fill)\n",
                "feeder",
            ),
        ),
        grid=PIPE_GRID,
        setup=PIPE_NET,
    ),
    "copy-layout": Case(
        "copy-layout",
        KernelError,
        r"^ttl\.copy: cannot mix a row-major tensor with a tiled DFB 'd'$",
        (dm("with d.reserve() as blk:\n    ttl.copy(rm[0:32, 0:32], blk).wait()  # <-\n"),),
        extra_params=", rm",
        extra_args=", dev(torch.ones(32, 32), layout=ttnn.ROW_MAJOR_LAYOUT)",
    ),
    "copy-format": Case(
        "copy-format",
        KernelError,
        r"^ttl\.copy: tensor of float32 and DFB 'd' of bfloat16 differ in format; the NoC copies bytes, "
        r"so formats must match$",
        (dm("with d.reserve() as blk:\n    ttl.copy(f[0, 0], blk).wait()  # <-\n"),),
        extra_params=", f",
        extra_args=", dev(torch.ones(32, 32), dtype=ttnn.float32)",
    ),
    "copy-tile": Case(
        "copy-tile",
        KernelError,
        r"^ttl\.copy: tensor tiles 32x32 and DFB 'h' tiles 16x32 differ$",
        (dm("with h.reserve() as blk:\n    ttl.copy(a[0, 0], blk).wait()  # <-\n"),),
        setup="h = ttl.make_dfb('bf16', shape=(1, 1), tile=(16, 32))\n",
    ),
    "copy-covers-block": Case(
        "copy-covers-block",
        KernelError,
        r"^Tensor shape \(32, 32\) does not match Block shape \(2, 2\) \(tile counts: 1 vs 4\): "
        r"the slice TensorSlice\[0:1, 0:1\] must cover exactly the block of block 'blk' "
        r"\(reserved from DFB 'd'\)$",
        (dm("with d.reserve() as blk:\n    ttl.copy(a[0:1, 0:1], blk).wait()  # <-\n"),),
        shape="(2, 2)",
        rows=64,
        cols=64,
    ),
    "copy-covers-block run-time slice": Case(
        "copy-covers-block",
        KernelError,
        r"^Tensor shape \(32, 32\) does not match Block shape \(2, 2\) \(tile counts: 1 vs 4\): "
        r"the slice TensorSlice\[1:2, 0:1\] must cover exactly the block of block 'blk' "
        r"\(reserved from DFB 'd'\)$",
        (
            dm(
                "for i in range(1, 2):\n    with d.reserve() as blk:\n"
                "        ttl.copy(a[i:i + 1, 0:1], blk).wait()  # <-\n"
            ),
        ),
        shape="(2, 2)",
        rows=64,
        cols=64,
    ),
    "copy-row-pages": Case(
        "copy-row-pages",
        KernelError,
        r"^ttl\.copy of a row-major tensor needs whole-row pages \(interleaved or "
        r"height-sharded\); this tensor is width- or block-sharded$",
        (dm("with r.reserve() as blk:\n    ttl.copy(ws[0:1, 0:32], blk).wait()  # <-\n"),),
        setup="r = ttl.make_dataflow_buffer_like(ws, shape=(1, 32), block_count=2)\n",
        extra_params=", ws",
        extra_args=", width_sharded()",
        native="row-major copies are not compiled",
        native_message="ttl.copy of row-major tensors is not compiled yet",
    ),
    "transfer-single-use": Case(
        "transfer-single-use",
        DFBContractError,
        r"^transfer handle of copy TensorSlice\[0, 0\] -> block 'blk' \(reserved from DFB 'd'\) "
        r"was already waited; a handle is single-use$",
        (
            dm(
                "with d.reserve() as blk:\n    h = ttl.copy(a[0, 0], blk)\n    h.wait()\n    h.wait()  # <-\n"
            ),
        ),
    ),
    "transfer-single-use run-time slice": Case(
        "transfer-single-use",
        DFBContractError,
        r"^transfer handle of copy block 'blk' \(reserved from DFB 'd'\) -> TensorSlice\[0, 1\] "
        r"was already waited; a handle is single-use$",
        (
            dm(
                "for j in range(1, 2):\n    with d.reserve() as blk:\n"
                "        ttl.copy(a[0, 0], blk).wait()\n        h = ttl.copy(blk, out[0, j])\n"
                "        h.wait()\n        h.wait()  # <-\n"
            ),
        ),
        rows=32,
        cols=64,
    ),
    "transfer-single-use pipe": Case(
        "transfer-single-use",
        DFBContractError,
        r"^this receive was already waited; a request is single-use$",
        (
            dm(
                "def send(p):\n    with d.reserve() as blk:\n        ttl.copy(a[0, 0], blk).wait()\n"
                "        ttl.copy(blk, p).wait()\n"
                "def recv(p):\n    with d.reserve() as blk:\n        r = ttl.copy(p, blk)\n"
                "        r.wait()\n        r.wait()  # <-\n"
                "net.if_src(send)\nnet.if_dst(recv)\n"
            ),
        ),
        grid=PIPE_GRID,
        setup=PIPE_NET,
    ),
    "tensor-slice index": Case(
        "tensor-slice",
        DeviceError,
        r"^tensor slice dimension 0: index 5 is outside 0:1$",
        (dm("with d.reserve() as blk:\n    ttl.copy(a[5, 0], blk).wait()  # <-\n"),),
    ),
    "tensor-slice run-time range": Case(
        "tensor-slice",
        DeviceError,
        r"^tensor slice dimension 1: 1:2 is outside 0:1 \(tiles\)$",
        (
            dm(
                "for j in range(2):\n    with d.reserve() as blk:\n"
                "        ttl.copy(a[0:1, j:j + 1], blk).wait()  # <-\n"
            ),
            ck("for j in range(2):\n    with d.wait() as x:\n        pass\n", "drain"),
        ),
    ),
    "tensor-slice rank": Case(
        "tensor-slice",
        DeviceError,
        r"^tensor slice needs one index per dimension: the tensor has 2 dimensions \(tiles: "
        r"\(1, 1\)\), got 1$",
        (dm("with d.reserve() as blk:\n    ttl.copy(a[0], blk).wait()  # <-\n"),),
    ),
    "tensor-slice step": Case(
        "tensor-slice",
        DeviceError,
        r"^tensor slice dimension 0: step must be 1, got 2$",
        (dm("with d.reserve() as blk:\n    ttl.copy(a[0:2:2, 0], blk).wait()  # <-\n"),),
    ),
    "group-transfer-single-use": Case(
        "group-transfer-single-use",
        DFBContractError,
        r"^GroupTransfer\.wait_all\(\) was already called; a group is single-use$",
        (dm("g = ttl.GroupTransfer()\ng.wait_all()\ng.wait_all()  # <-\n"),),
        native=NOT_COMPILED,
        native_message="ttl.GroupTransfer",
    ),
    "group-transfer-item": Case(
        "group-transfer-item",
        KernelError,
        r"^GroupTransfer\.add\(\) takes a transfer handle, got int$",
        (dm("g = ttl.GroupTransfer()\ng.add(3)  # <-\n"),),
        native=NOT_COMPILED,
        native_message="ttl.GroupTransfer",
    ),
    # -- semaphores (spec D.4) ----------------------------------------------------------------
    "semaphore-dm-only": Case(
        "semaphore-dm-only",
        KernelError,
        r"^ttl\.Semaphore\.set changes or waits on a semaphore, which runs on data-movement "
        r"kernels \(spec §Semaphore\); 'c' is a compute kernel$",
        (ck("s.set(1)  # <-\n"),),
        setup=SEM,
    ),
    "semaphore-value": Case(
        "semaphore-value",
        KernelError,
        r"^ttl\.Semaphore\.set: semaphore values are 32-bit unsigned ints, got -1$",
        (dm("s.set(-1)  # <-\n"),),
        setup=SEM,
    ),
    "semaphore-value run-time": Case(
        "semaphore-value",
        KernelError,
        r"^UnicastRemoteSemaphore\.inc: semaphore values are 32-bit unsigned ints, got "
        r"4294967296$",
        (dm("for i in range(2):\n    s.get_remote((0, 0)).inc(i * 4294967296)  # <-\n"),),
        setup=SEM,
    ),
    "semaphore-remote": Case(
        "semaphore-remote",
        InterfaceError,
        r"^Semaphore\.get_remote: node \(3, 0\) is outside the 1x1 grid$",
        (dm("s.get_remote(3).set(1)  # <-\n"),),
        setup=SEM,
        native=NOT_RUNTIME,
        native_message="Semaphore.get_remote: node (3, 0) is outside the 1x1 grid",
    ),
    "semaphore-multicast-sender": Case(
        "semaphore-multicast-sender",
        KernelError,
        r"^MulticastRemoteSemaphore\.set on node \(0, 0\): MulticastRemoteSemaphore\.set: the "
        r"multicast rectangle contains only the sender \(a semaphore multicast reaches every "
        r"node of the range except the sender\)$",
        (dm("s.get_remote_multicast().set(1)  # <-\n"),),
        setup=SEM,
    ),
    "semaphore-multicast-set-only": Case(
        "semaphore-multicast-set-only",
        KernelError,
        r"^MulticastRemoteSemaphore\.inc: a multicast semaphore only sets",
        (dm("s.get_remote_multicast().inc(1)  # <-\n"),),
        grid=PIPE_GRID,
        setup=SEM,
    ),
    # -- pipes (spec D.3) -----------------------------------------------------------------------
    "pipe-end send": Case(
        "pipe-end",
        KernelError,
        r"^ttl\.copy\(block, pipe\) sends, but <destination end of Pipe\(\(0, 0\) -> \(1, 0\)\)> "
        r"is a receiving end \(given to an if_dst callback\); send on the pipe given to if_src$",
        (
            dm(
                "def recv(p):\n    with d.reserve() as blk:\n        ttl.copy(a[0, 0], blk).wait()\n"
                "        ttl.copy(blk, p).wait()  # <-\nnet.if_dst(recv)\n"
            ),
        ),
        grid=PIPE_GRID,
        setup=PIPE_NET,
    ),
    "pipe-end receive": Case(
        "pipe-end",
        KernelError,
        r"^ttl\.copy\(pipe, block\) receives, but <source end of Pipe\(\(0, 0\) -> \(1, 0\)\)> "
        r"is a sending end \(given to an if_src callback\); receive from the pipe given to "
        r"if_dst$",
        (
            dm(
                "def send(p):\n    with d.reserve() as blk:\n        ttl.copy(p, blk).wait()  # <-\nnet.if_src(send)\n"
            ),
        ),
        grid=PIPE_GRID,
        setup=PIPE_NET,
    ),
    "pipe-end-node": Case(
        "pipe-end-node",
        KernelError,
        r"^ttl\.copy\(block, pipe\): node \(1, 0\) is not the source of Pipe\(\(0, 0\) -> "
        r"\(1, 0\)\)$",
        (
            dm(
                "def keep(p):\n    ENDS.append(p)\nnet.if_src(keep)\nif ENDS and ttl.node(dims=1) == 1:\n"
                "    with d.reserve() as blk:\n        ttl.copy(a[0, 0], blk).wait()\n"
                "        ttl.copy(blk, ENDS[0]).wait()  # <-\n"
            ),
        ),
        grid=PIPE_GRID,
        setup=PIPE_NET,
        native="a pipe end reaches another node only through Python state (here a module "
        "list), which compiled kernels cannot hold",
        native_message="'ENDS' is a Python list object",
    ),
    "pipe-blocks": Case(
        "pipe-blocks",
        KernelError,
        r"^pipe Pipe\(\(0, 0\) -> \(1, 0\)\): node \(0, 0\) sends a block of shape \(1, 1\) "
        r"\(bfloat16\) but node \(1, 0\) receives into a block of shape \(2, 2\) \(bfloat16\); sent and "
        r"received blocks must match$",
        (
            dm(
                "def send(p):\n    with d.reserve() as blk:\n        ttl.copy(a[0, 0], blk).wait()\n"
                "        ttl.copy(blk, p).wait()\n"
                "def recv(p):\n    with big.reserve() as blk:\n        ttl.copy(p, blk).wait()  # <-\n"
                "net.if_src(send)\nnet.if_dst(recv)\n"
            ),
        ),
        grid=PIPE_GRID,
        setup=PIPE_NET + "big = ttl.make_dfb('bf16', shape=(2, 2))\n",
        native="the error names the end that completes the rendezvous -- the send or the "
        "receive, whichever the run reaches last; the compiler sees both blocks and does not "
        "compile the operation",
        native_message="blocks of different shapes or formats are sent and received on pipe 0",
    ),
    "wait-any": Case(
        "wait-any",
        KernelError,
        r"^ttl\.wait_any takes a non-empty tuple of ReceiveRequests$",
        (dm("ttl.wait_any(())  # <-\n"),),
        native=NOT_COMPILED,
        native_message="ttl.wait_any: the request it completes is known only at run time",
    ),
}
"""Bad programs by name; each names its rule (several programs may test one rule)."""

UNREACHABLE = {
    "pipe-unmatched": "an unmatched receive is waited, so it deadlocks first (DeadlockError on "
    "both engines); an unmatched send completes without its receivers (spec §Pipe), so the "
    "interpreter reports it when the operation ends, at no kernel line, where the compiled "
    "rendezvous deadlocks on it (tests/ttl/test_pipes.py covers both)",
}
"""Rules without a row here (no bad program has one diagnostic on every engine), and why."""

WIDTH_SHARDED = """
def width_sharded():
    config = ttnn.create_sharded_memory_config(
        (32, 64), ttnn.CoreGrid(y=1, x=2), ttnn.ShardStrategy.WIDTH
    )
    return ttnn.from_torch(
        torch.ones(32, 64),
        dtype=ttnn.bfloat16,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        device=device,
        memory_config=config,
    )
"""

MODULE = "ENDS = []\n"


@dataclass(frozen=True)
class Outcome:
    error: type
    message: str
    rule: str
    file: str | None
    line: int | None
    compiled: int


def _run(path: Path, engine: str) -> Outcome:
    from tilewright.compiler.backend import engine as backend

    compiled: list[str] = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: compiled.append(r.name))
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = engine
    try:
        load(path)
    except TilewrightError as exc:
        loc = exc.loc
        return Outcome(
            type(exc),
            exc.message,
            exc.rule,
            loc.file if loc else None,
            loc.line if loc else None,
            len(compiled),
        )
    finally:
        session.OPTIONS.engine = saved
        backend.COMPILE_OBSERVERS.pop()
    raise AssertionError(f"{path} ran without an error on --engine {engine}")


def _source(case: Case) -> str:
    text = case.source()
    device_line = "device = ttnn.open_device(device_id=0)\n"
    return MODULE + text.replace(device_line, device_line + WIDTH_SHARDED.lstrip("\n"), 1)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_on_every_engine(tmp_path, name):
    case = CASES[name]
    path = write(tmp_path, _source(case))
    line = line_of(path)
    py = _run(path, "python")
    assert py.error is case.error, (py, case)
    assert re.search(case.message, py.message), py.message
    assert py.rule == (case.rule_id or case.rule), py
    assert (py.file, py.line) == (str(path), line), py
    native = _run(path, "native")
    auto = _run(path, "auto")
    assert (auto.error, auto.message, auto.rule, auto.file, auto.line) == (
        py.error,
        py.message,
        py.rule,
        py.file,
        py.line,
    ), "auto gives the interpreter's diagnostic"
    if case.native is None:
        assert (native.error, native.message, native.rule, native.file, native.line) == (
            py.error,
            py.message,
            py.rule,
            py.file,
            py.line,
        ), "the compiled engine gives the interpreter's diagnostic"
        assert native.compiled >= 1 and auto.compiled >= 1, "auto compiles what native checks"
    else:
        assert native.error is NotCompilableError, native
        assert case.native_message in native.message, native.message
        assert native.file == str(path), native
        assert auto.compiled == 0, "auto interprets what the compiled engine cannot check"


def test_every_rule_has_a_case():
    tested = {case.rule for case in CASES.values()}
    missing = sorted(set(RULES) - tested - set(UNREACHABLE))
    assert not missing, f"rules without a bad program in CASES: {missing}"
    assert not (set(UNREACHABLE) - set(RULES)), "UNREACHABLE names rules that do not exist"
    assert not (tested - set(RULES)), "CASES names rules that are not registered"


def test_the_table_lists_the_exceptions():
    """The engine exceptions are documented (docs/compiler.md lists each rule id)."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "compiler.md").read_text()
    for case in CASES.values():
        if case.native is not None:
            assert f"`{case.rule}`" in docs, case.rule
    for rule in UNREACHABLE:
        assert f"`{rule}`" in docs, rule
