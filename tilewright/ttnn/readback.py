"""Readbacks: every tensor value a program reads back from the device, recorded in order.

``tilewright run --compare`` runs a program through both TT-Lang compilers and compares
what the program *sees*: each ``ttnn.to_torch`` / ``ttnn.to_numpy`` result, in call order,
with the user's line that asked for it.  Comparing readbacks needs no knowledge of either
compiler's operations (the real compiler launches ``generic_op`` programs, Tilewright's own
compiler launches its own), and it is exactly what a program's checks look at.

:func:`start` turns recording on for the process; conversions call :func:`note` (a no-op
when off); :func:`save` writes the records to an ``.npz`` file (raw bytes, dtype, shape and
label per readback) that :func:`load` reads back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilewright.errors import user_location
from tilewright.lazy import torch

__all__ = ["Readback", "start", "stop", "note", "records", "save", "load"]


@dataclass(frozen=True, slots=True)
class Readback:
    """One value the program read back: where (``file:line``), what (dtype, shape), the bytes."""

    where: str
    dtype: str
    shape: tuple[int, ...]
    data: bytes

    def values(self) -> np.ndarray:
        """The values (bfloat16 widened to float32, exactly)."""
        if self.dtype == "bfloat16":
            bits = np.frombuffer(self.data, dtype=np.uint16).astype(np.uint32) << 16
            return bits.view(np.float32).reshape(self.shape)
        return np.frombuffer(self.data, dtype=np.dtype(self.dtype)).reshape(self.shape)


_RECORDS: list[Readback] | None = None


def start() -> None:
    """Record every readback of this process from now on."""
    global _RECORDS
    _RECORDS = []


def stop() -> None:
    """Record no more (the records are dropped)."""
    global _RECORDS
    _RECORDS = None


def records() -> list[Readback]:
    return list(_RECORDS or [])


def _as_numpy(value) -> tuple[np.ndarray, str]:
    """The array and its dtype label (``"bfloat16"`` for torch's, kept as its bits)."""
    if isinstance(value, np.ndarray):
        return value, value.dtype.str
    # a torch result: only programs that have torch get one
    t = value.detach().contiguous()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16
        return t.view(torch.int16).numpy().view(np.uint16), "bfloat16"
    arr = t.numpy()
    return arr, arr.dtype.str


def note(value):
    """Record ``value`` (a torch tensor or numpy array a conversion returns); return it."""
    if _RECORDS is not None:
        arr, dtype = _as_numpy(value)
        loc = user_location()
        where = f"{loc.file}:{loc.line}" if loc is not None else "?"
        _RECORDS.append(
            Readback(where, dtype, tuple(arr.shape), np.ascontiguousarray(arr).tobytes())
        )
    return value


def save(path: str) -> None:
    """Write the records to ``path`` (``.npz``)."""
    recs = records()
    meta = [{"where": r.where, "dtype": r.dtype, "shape": list(r.shape)} for r in recs]
    arrays: dict[str, Any] = {
        f"r{i}": np.frombuffer(r.data, dtype=np.uint8) for i, r in enumerate(recs)
    }
    with open(path, "wb") as f:
        np.savez(f, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)


def load(path: str) -> list[Readback]:
    """The records :func:`save` wrote."""
    with np.load(path) as z:
        meta = json.loads(bytes(z["meta"]).decode())
        return [
            Readback(m["where"], m["dtype"], tuple(m["shape"]), bytes(z[f"r{i}"]))
            for i, m in enumerate(meta)
        ]
