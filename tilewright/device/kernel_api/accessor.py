"""Address generators: InterleavedAddrGen(Fast) and TensorAccessor / TensorAccessorArgs.

Host side, ``tensor_accessor_args(buffer)`` produces the compile-time args that
describe a buffer (``hostdevcommon/tensor_accessor/arg_config.hpp`` encoding).  We
pin one host/device pair (the digest's version trap, §4.3/§10):

* interleaved: ``[config, aligned_page_size]``;
* sharded: ``[config, rank, num_banks, tensor_shape_in_pages..., shard_shape_in_pages...,
  bank coords packed two per word ((x2<<24)|(y2<<16)|(x1<<8)|y1)]``.

Config bits: Sharded = 1, IsDram = 2 (everything else compile-time).  Device side,
``TensorAccessorArgs(cta_offset)`` reads them back from the running kernel's
compile-time args and ``TensorAccessor(args, base, page_size)`` maps page ids to
NoC addresses with the §3.2 / §3.3 math.
"""

from __future__ import annotations

import math

from tilewright.device import api_messages as M
from tilewright.device.engine import ACTIVE
from tilewright.device.noc import noc_xy_addr
from tilewright.errors import KernelError

__all__ = [
    "ARGS_SHARDED",
    "ARGS_IS_DRAM",
    "tensor_accessor_args",
    "InterleavedAddrGen",
    "InterleavedAddrGenFast",
    "TensorAccessorArgs",
    "TensorAccessor",
]

ARGS_SHARDED = 1
ARGS_IS_DRAM = 2


def _round_up(v: int, a: int) -> int:
    return -(-v // a) * a


def tensor_accessor_args(buffer) -> list[int]:
    """Host side: the compile-time args describing ``buffer`` for a TensorAccessor."""
    config = ARGS_IS_DRAM if buffer.is_dram else 0
    if buffer.shard is None:
        return [config, buffer.aligned_page_size]
    config |= ARGS_SHARDED
    tr, tc = buffer.shard.tensor2d_shape_in_pages
    sr, sc = buffer.shard.shard_shape_in_pages
    cores = buffer.shard_cores
    words = [config, 2, len(cores), tr, tc, sr, sc]
    coords = [(c.noc_x, c.noc_y) for c in cores]
    for i in range(0, len(coords), 2):
        x1, y1 = coords[i]
        x2, y2 = coords[i + 1] if i + 1 < len(coords) else (0, 0)
        words.append((x2 << 24) | (y2 << 16) | (x1 << 8) | y1)
    return words


def _device():
    run = ACTIVE.run
    if run is None:
        raise KernelError("address generators are used inside kernels")
    return run.kernel_context().device


class InterleavedAddrGen:
    """``InterleavedAddrGen<IsDram>{bank_base_address, page_size}``."""

    def __init__(self, bank_base_address: int, page_size: int, is_dram: bool = True) -> None:
        self.device = _device()
        self.bank_base_address = bank_base_address
        self.page_size = page_size
        self.is_dram = is_dram
        align = self.device.dram_alignment if is_dram else self.device.l1_alignment
        self.aligned_page_size = _round_up(page_size, align)
        self.num_banks = self.device.num_dram_channels if is_dram else self.device.num_l1_banks

    def page_size_bytes(self) -> int:
        return self.page_size

    def get_noc_addr(self, page_id: int, offset: int = 0, noc: int = 0) -> int:
        bank, index = page_id % self.num_banks, page_id // self.num_banks
        addr = self.bank_base_address + index * self.aligned_page_size + offset
        if self.is_dram:
            x, y = self.device.dram_noc_coord(bank)
        else:
            core = self.device.cores[bank]
            x, y = core.noc_x, core.noc_y
        return noc_xy_addr(x, y, addr, self.device.chip)


class InterleavedAddrGenFast(InterleavedAddrGen):
    """``InterleavedAddrGenFast<IsDram>{bank_base_address, page_size, data_format}``."""

    def __init__(
        self, bank_base_address: int, page_size: int, data_format=None, is_dram: bool = True
    ):
        super().__init__(bank_base_address, page_size, is_dram)
        self.data_format = data_format


class TensorAccessorArgs:
    """Device side: decode the accessor args at compile-time arg ``cta_offset``."""

    def __init__(self, cta_offset: int = 0, crta_offset: int = 0) -> None:
        run = ACTIVE.run
        if run is None:
            raise KernelError("TensorAccessorArgs is used inside kernels")
        cta = run.kernel_context().compile_args
        try:
            self.config = cta[cta_offset]
            self.is_dram = bool(self.config & ARGS_IS_DRAM)
            self.sharded = bool(self.config & ARGS_SHARDED)
            if not self.sharded:
                self.aligned_page_size = cta[cta_offset + 1]
                self.num_words = 2
                return
            rank, nb = cta[cta_offset + 1], cta[cta_offset + 2]
            p = cta_offset + 3
            self.tensor_shape = tuple(cta[p : p + rank])
            self.shard_shape = tuple(cta[p + rank : p + 2 * rank])
            p += 2 * rank
            n_words = math.ceil(nb / 2)
            coords = []
            for w in cta[p : p + n_words]:
                coords.append(((w >> 8) & 0xFF, w & 0xFF))
                coords.append(((w >> 24) & 0xFF, (w >> 16) & 0xFF))
            self.bank_coords = coords[:nb]
            self.num_words = 3 + 2 * rank + n_words
            if len(self.tensor_shape) != rank or len(self.bank_coords) != nb:
                raise IndexError
        except IndexError:
            raise M.ACCESSOR_ARGS(offset=cta_offset) from None
        self.aligned_page_size = 0

    def next_compile_time_args_offset(self) -> int:
        return self.num_words


class TensorAccessor:
    """``TensorAccessor(args, bank_base_address, page_size)``: page id → NoC address."""

    def __init__(
        self, args: TensorAccessorArgs, bank_base_address: int, page_size: int = 0
    ) -> None:
        self.args = args
        self.device = _device()
        self.bank_base_address = bank_base_address
        if args.sharded:
            if page_size <= 0:
                raise M.ACCESSOR_PAGE_SIZE()
            self.page_size = page_size
            self.aligned_page_size = _round_up(page_size, self.device.l1_alignment)
            self._gen = None
        else:
            self.page_size = page_size or args.aligned_page_size
            self.aligned_page_size = args.aligned_page_size
            self._gen = InterleavedAddrGen(bank_base_address, self.page_size, args.is_dram)
            self._gen.aligned_page_size = args.aligned_page_size

    def page_size_bytes(self) -> int:
        return self.page_size

    def get_noc_addr(self, page_id: int, offset: int = 0, noc: int = 0) -> int:
        if self._gen is not None:
            return self._gen.get_noc_addr(page_id, offset)
        a = self.args
        (tr, tc), (sr, sc) = a.tensor_shape, a.shard_shape
        if not 0 <= page_id < tr * tc:
            raise M.ACCESSOR_PAGE(page=page_id, count=tr * tc)
        pr, pc = divmod(page_id, tc)
        shards_per_row = math.ceil(tc / sc)
        shard_id = (pr // sr) * shards_per_row + pc // sc
        nb = len(a.bank_coords)
        bank = shard_id % nb
        in_shard = (pr % sr) * sc + pc % sc
        page_off = (shard_id // nb) * sr * sc + in_shard
        x, y = a.bank_coords[bank]
        return noc_xy_addr(
            x,
            y,
            self.bank_base_address + page_off * self.aligned_page_size + offset,
            self.device.chip,
        )

    # -- shards (sharded accessors only) ------------------------------------------------------

    def _sharded(self, what: str) -> TensorAccessorArgs:
        if not self.args.sharded:
            raise M.ACCESSOR_INTERLEAVED(what=what)
        return self.args

    def shard_volume(self) -> int:
        """Pages per shard (the shard shape in pages, multiplied out)."""
        return math.prod(self._sharded("shard access").shard_shape)

    def num_shards(self) -> int:
        a = self._sharded("shard access")
        return math.prod(math.ceil(t / s) for t, s in zip(a.tensor_shape, a.shard_shape))

    def shard_bytes(self) -> int:
        """Bytes of one whole shard: aligned page size x shard volume (what *_shard moves)."""
        return self.aligned_page_size * self.shard_volume()

    def get_shard_noc_addr(self, shard_id: int, offset: int = 0, noc: int = 0) -> int:
        """NoC address of shard ``shard_id``: bank ``shard_id % banks``, round-robin (§3.3)."""
        a = self._sharded("get_shard_noc_addr")
        if not 0 <= shard_id < self.num_shards():
            raise M.ACCESSOR_SHARD(shard=shard_id, count=self.num_shards())
        nb = len(a.bank_coords)
        x, y = a.bank_coords[shard_id % nb]
        page_off = (shard_id // nb) * self.shard_volume()
        return noc_xy_addr(
            x,
            y,
            self.bank_base_address + page_off * self.aligned_page_size + offset,
            self.device.chip,
        )
