"""Comparing results with a golden (``ttl.utils.correctness``).

* :func:`assert_with_ulp` -- every element within ``ulp_threshold`` units in the last
  place of the golden, measured in the *result's* data type (a bfloat16 result is judged
  in bfloat16 ULPs: 8 significand bits, so 1 ULP of 1.0 is 2**-7);
* :func:`assert_allclose` -- ``|actual - expected| <= atol + rtol * |expected|``
  elementwise (``torch.allclose``'s rule);
* :func:`comp_pcc` / :func:`assert_pcc` -- the Pearson correlation coefficient of the
  flattened values.

Inputs may be torch tensors, numpy arrays or ``ttnn`` tensors (read back to the host).
Every assertion raises ``AssertionError`` with the worst element and its index; the
comparisons run in float64 on whole arrays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "assert_allclose",
    "assert_pcc",
    "assert_with_ulp",
    "comp_pcc",
    "compute_pcc",
    "ulp",
]

#: Explicit significand bits and smallest normal exponent of the float formats by name.
_FLOATS: dict[str, tuple[int, int]] = {
    "bfloat16": (7, -126),
    "float16": (10, -14),
    "float32": (23, -126),
    "float64": (52, -1022),
}


def _as_array(x: Any) -> tuple[np.ndarray, str]:
    """(float64 values, the name of the values' data type)."""
    if type(x).__module__.startswith("tilewright.ttnn"):  # a ttnn tensor: its host values
        dtype = getattr(x, "dtype", None)
        name = getattr(dtype, "name", "float32").lower()
        values = x.to_numpy()
        return np.asarray(values, dtype=np.float64), "bfloat16" if "bfloat" in name else "float32"
    if hasattr(x, "detach") and hasattr(x, "dtype"):  # torch
        name = str(x.dtype).rsplit(".", 1)[-1]
        return x.detach().to("cpu").double().numpy(), name
    arr = np.asarray(x)
    return arr.astype(np.float64), arr.dtype.name


def ulp(values: np.ndarray, dtype: str) -> np.ndarray:
    """The spacing of ``dtype`` at each value (the gap to the next representable number)."""
    mantissa, min_exp = _FLOATS.get(dtype, _FLOATS["float32"])
    mag = np.abs(values)
    with np.errstate(divide="ignore"):
        exp = np.floor(np.log2(np.where(mag > 0, mag, 1.0)))
    exp = np.maximum(exp, min_exp)  # subnormals share the smallest normal exponent's spacing
    return np.exp2(exp - mantissa)


def _check_shapes(expected: np.ndarray, actual: np.ndarray, what: str) -> None:
    if expected.shape != actual.shape:
        raise AssertionError(
            f"{what}: shapes differ: expected {tuple(expected.shape)}, actual {tuple(actual.shape)}"
        )


def _nonfinite_mismatch(expected: np.ndarray, actual: np.ndarray) -> str | None:
    """Where the non-finite values of the two differ (NaN matches NaN, inf its own sign)."""
    bad = ~np.isfinite(expected) | ~np.isfinite(actual)
    same = (np.isnan(expected) & np.isnan(actual)) | (expected == actual)
    wrong = bad & ~same
    if not wrong.any():
        return None
    i = np.unravel_index(int(np.argmax(wrong)), wrong.shape)
    return f"at {tuple(int(v) for v in i)} expected {float(expected[i])} but got {float(actual[i])}"


def assert_with_ulp(
    expected: object,
    actual: object,
    ulp_threshold: float = 10,
    allow_nonfinite: bool = False,
) -> tuple[bool, str]:
    """Every element of ``actual`` within ``ulp_threshold`` ULPs of ``expected`` (ULPs of
    ``actual``'s data type at the golden value).  Non-finite values must match exactly
    unless ``allow_nonfinite``.  Returns ``(True, message)``; raises ``AssertionError``."""
    exp, _ = _as_array(expected)
    act, dtype = _as_array(actual)
    _check_shapes(exp, act, "assert_with_ulp")
    if not allow_nonfinite:
        wrong = _nonfinite_mismatch(exp, act)
        if wrong is not None:
            raise AssertionError(f"assert_with_ulp: non-finite values differ {wrong}")
    finite = np.isfinite(exp) & np.isfinite(act)
    # The golden rounded to the result's type, as the result would be stored.
    with np.errstate(invalid="ignore"):  # inf - inf where both are the same infinity
        delta = np.where(finite, np.abs(act - exp) / ulp(exp, dtype), 0.0)
    worst = float(delta.max()) if delta.size else 0.0
    message = f"max ULP delta {worst:.3g} ({dtype} ULPs, threshold {ulp_threshold})"
    if worst > ulp_threshold:
        i = np.unravel_index(int(np.argmax(delta)), delta.shape)
        raise AssertionError(
            f"assert_with_ulp: {message}; at {tuple(int(v) for v in i)} expected "
            f"{float(exp[i])!r} but got {float(act[i])!r}"
        )
    return True, message


def assert_allclose(
    expected: object,
    actual: object,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool = False,
) -> tuple[bool, str]:
    """``|actual - expected| <= atol + rtol * |expected|`` for every element.  Returns
    ``(True, message)``; raises ``AssertionError`` naming the worst element."""
    exp, _ = _as_array(expected)
    act, _ = _as_array(actual)
    _check_shapes(exp, act, "assert_allclose")
    close = np.isclose(act, exp, rtol=rtol, atol=atol, equal_nan=equal_nan)
    diff = np.where(np.isnan(act) | np.isnan(exp), np.inf, np.abs(act - exp))
    worst = float(diff.max()) if diff.size else 0.0
    message = f"max abs error {worst:.4g} (rtol {rtol}, atol {atol})"
    if not close.all():
        far = np.where(close, -np.inf, diff - rtol * np.abs(exp))
        i = np.unravel_index(int(np.argmax(far)), far.shape)
        raise AssertionError(
            f"assert_allclose: {int((~close).sum())} of {close.size} elements differ; {message}; "
            f"at {tuple(int(v) for v in i)} expected {float(exp[i])!r} but got {float(act[i])!r}"
        )
    return True, message


def compute_pcc(expected: object, actual: object) -> float:
    """The Pearson correlation coefficient of the flattened values.

    Equal constant tensors correlate perfectly (1.0); a constant against a varying one
    not at all (0.0); NaNs count only where both have them (elsewhere the PCC is 0.0).
    """
    exp, _ = _as_array(expected)
    act, _ = _as_array(actual)
    _check_shapes(exp, act, "pcc")
    exp, act = exp.reshape(-1), act.reshape(-1)
    nan_e, nan_a = np.isnan(exp), np.isnan(act)
    if (nan_e != nan_a).any():
        return 0.0
    exp, act = exp[~nan_e], act[~nan_a]
    if exp.size == 0 or np.array_equal(exp, act):
        return 1.0
    if not (np.isfinite(exp).all() and np.isfinite(act).all()):
        return 0.0
    de, da = exp - exp.mean(), act - act.mean()
    denom = math.sqrt(float(np.dot(de, de)) * float(np.dot(da, da)))
    if denom == 0.0:
        return 0.0
    return max(-1.0, min(1.0, float(np.dot(de, da)) / denom))


def comp_pcc(expected: object, actual: object, pcc: float = 0.99) -> tuple[bool, float]:
    """``(PCC >= pcc, PCC)``."""
    value = compute_pcc(expected, actual)
    return value >= pcc, value


def assert_pcc(expected: object, actual: object, threshold: float = 0.99) -> float:
    """The PCC of ``actual`` against ``expected`` is at least ``threshold``; returns it."""
    passed, value = comp_pcc(expected, actual, threshold)
    if not passed:
        raise AssertionError(f"assert_pcc: PCC {value:.6f} is below {threshold}")
    return value
