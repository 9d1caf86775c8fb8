"""``print`` inside kernels: TT-Lang's debug print (spec §Debug printing).

While an operation runs, ``print`` is routed here.  Outside kernels it is the
ordinary ``print``.  Inside a kernel it accepts the spec's keywords (``thread=`` for
compute kernels, ``num_pages=`` for tensors on data-movement kernels, ``label=``,
``_dump_dst_registers=``), checks them, and prefixes each line with the node and
kernel, like DPRINT output on hardware.  Blocks print their tiles, DFBs their
metadata, tensors their first ``num_pages`` pages.
"""

from __future__ import annotations

from tilewright.device.engine import ACTIVE
from tilewright.device.formats import data_type_name
from tilewright.device.print_hook import line_prefix
from tilewright.errors import KernelError
from tilewright.ttnn.tensor import Tensor

__all__ = ["make_print"]

_THREADS = ("math", "pack", "unpack")


def _render_tensor(t, num_pages):
    assert isinstance(t, Tensor)
    pages = t.host_pages()
    n = pages.shape[0] if num_pages is None else min(int(num_pages), pages.shape[0])
    return f"tensor {list(t.shape)} {data_type_name(t.dtype)}: {n} of {pages.shape[0]} pages\n{pages[:n]}"


def make_print(original):
    def kernel_print(
        *args,
        sep=" ",
        end="\n",
        file=None,
        flush=False,
        thread=None,
        num_pages=None,
        label=None,
        _dump_dst_registers=False,
    ):
        run = ACTIVE.run
        if run is None or file is not None:
            return original(*args, sep=sep, end=end, file=file, flush=flush)
        kind = run.kernel_context().kernel.kind
        if thread is not None:
            if kind != "compute":
                raise KernelError(
                    "print(thread=...) selects a TRISC and is for compute kernels only"
                )
            if thread not in _THREADS:
                raise KernelError(
                    f"print(thread={thread!r}): expected one of {', '.join(_THREADS)}"
                )
        if num_pages is not None and kind == "compute":
            raise KernelError("print(..., num_pages=...) is for data-movement kernels only")

        parts = []
        for a in args:
            if isinstance(a, Tensor):
                if kind == "compute":
                    raise KernelError("printing a tensor is for data-movement kernels only")
                parts.append(_render_tensor(a, num_pages))
            else:
                parts.append(str(a))
        prefix = line_prefix(run)
        if label:
            prefix += f" {label}:"
        text = sep.join(parts)
        dst = run.kernel_context().dst
        if _dump_dst_registers and dst is not None:
            text += f"\nDST:\n{dst[:8]}"
        original(f"{prefix} {text}", end=end, flush=flush)

    return kernel_print
