"""Java ``long`` arithmetic: how window bounds, timers, lateness and sums are computed.

Flink computes them in Java ``long``, which wraps around silently on overflow. flinkwin computes
them identically on every path (per element, vectorized, columnar) under one of two policies:

- ``"wrap"`` (:data:`WRAP`, the core's default, as Flink): Java's two's-complement wrap-around,
  step by step as Flink's code does it;
- ``"error"`` (:data:`ERROR`): a result outside ``[MIN_LONG, MAX_LONG]`` raises
  :class:`LongOverflowError` naming what overflowed. On Spark this follows
  ``spark.sql.ansi.enabled`` (on by default in Spark 4), as Spark's own long arithmetic does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flinkwin.time import MAX_LONG, MIN_LONG

WRAP = "wrap"
ERROR = "error"
OVERFLOW_POLICIES = (WRAP, ERROR)
_BIAS = 2**63
_MASK = 2**64 - 1


class LongOverflowError(ArithmeticError):
    """A long result overflowed under the ``"error"`` policy."""


def located(exc: LongOverflowError, key: Any, window: Any) -> LongOverflowError:
    """``exc`` naming the key (and the window, if any) it happened for, once."""
    if str(exc).startswith("key "):
        return exc
    where = f"key {key!r}" if window is None else f"key {key!r}, window {window}"
    return LongOverflowError(f"{where}: {exc}")


def check_policy(overflow: str) -> str:
    """``overflow`` if it names a policy, else a ``ValueError``."""
    if overflow not in OVERFLOW_POLICIES:
        raise ValueError(f"overflow must be one of {OVERFLOW_POLICIES}, got {overflow!r}")
    return overflow


def wrap(value: int) -> int:
    """``value`` reduced to a Java long (two's complement wrap-around)."""
    return ((value + _BIAS) & _MASK) - _BIAS


def to_long(value: int, overflow: str, what: str) -> int:
    """``value`` if it fits a long; otherwise wrapped (``"wrap"``) or a
    :class:`LongOverflowError` naming ``what`` (``"error"``)."""
    if MIN_LONG <= value <= MAX_LONG:
        return value
    if overflow == ERROR:
        raise LongOverflowError(
            f"long overflow: {what} = {value} is outside [{MIN_LONG}, {MAX_LONG}] (overflow="
            f"'error', e.g. spark.sql.ansi.enabled=true; Flink's Java arithmetic, "
            f"overflow='wrap', would give {wrap(value)})"
        )
    return wrap(value)


def add(a: int, b: int, overflow: str, what: str) -> int:
    """``a + b`` in long arithmetic."""
    return to_long(a + b, overflow, what)


def sub(a: int, b: int, overflow: str, what: str) -> int:
    """``a - b`` in long arithmetic."""
    return to_long(a - b, overflow, what)


def safe_band(margin: int) -> tuple[int, int]:
    """Timestamps in ``[low, high]`` stay ``margin`` away from both long limits: arithmetic
    adding or subtracting at most ``margin`` to them cannot overflow (vectorized paths use
    this to decide when the per-element path must take a batch)."""
    return MIN_LONG + margin, MAX_LONG - margin


#: Segments whose absolute values add up to less than this cannot overflow a running long sum,
#: even allowing for the rounding of the float estimate.
SUM_SAFE = 2.0**62


def sums_may_overflow(values: np.ndarray, starts: np.ndarray, existing: Any = None) -> bool:
    """Could a running sum over any segment ``values[starts[i]:starts[i + 1]]`` (plus
    ``existing[i]``, the pane's current sum) leave the long range? Conservative (float)."""
    if len(values) == 0:
        return False
    magnitude = np.add.reduceat(np.abs(values.astype(np.float64)), starts)
    if existing is not None:
        magnitude = magnitude + np.abs(np.asarray(existing, dtype=np.float64))
    return bool((magnitude >= SUM_SAFE).any())


__all__ = [
    "ERROR",
    "OVERFLOW_POLICIES",
    "WRAP",
    "LongOverflowError",
    "add",
    "check_policy",
    "located",
    "safe_band",
    "sums_may_overflow",
    "sub",
    "to_long",
    "wrap",
]
