"""Java ``long`` arithmetic: how window bounds, timers, lateness and sums are computed.

Flink computes them in Java ``long``, which wraps around silently on overflow (and sums an
``int``, ``short`` or ``byte`` field in that type: ``SumFunction``'s ``IntSum``, ``ShortSum``,
``ByteSum``). flinkwin computes them identically on every path (per element, vectorized,
columnar) under one of two policies:

- ``"wrap"`` (:data:`WRAP`, the core's default, as Flink): Java's two's-complement wrap-around,
  step by step as Flink's code does it;
- ``"error"`` (:data:`ERROR`): a result outside the type's range (``[MIN_LONG, MAX_LONG]`` for a
  long) raises :class:`LongOverflowError` naming what overflowed. On Spark this follows
  ``spark.sql.ansi.enabled`` (on by default in Spark 4), as Spark's own arithmetic does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flinkwin.time import MAX_LONG, MIN_LONG

WRAP = "wrap"
ERROR = "error"
OVERFLOW_POLICIES = (WRAP, ERROR)
#: Java's integral types by width in bits.
JAVA_INTEGERS = {8: "byte", 16: "short", 32: "int", 64: "long"}
_RANGES = {bits: (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) for bits in JAVA_INTEGERS}


class LongOverflowError(ArithmeticError):
    """A long result (or an ``int``/``short``/``byte`` sum) overflowed under the ``"error"``
    policy."""


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


def java_range(bits: int) -> tuple[int, int]:
    """The smallest and largest value of the Java integral type of ``bits`` bits."""
    return _RANGES[bits]


def wrap(value: int, bits: int = 64) -> int:
    """``value`` reduced to a Java long, or to the integral type of ``bits`` bits (two's
    complement wrap-around, as Java's arithmetic and narrowing casts do)."""
    bias = 1 << (bits - 1)
    return ((value + bias) & ((1 << bits) - 1)) - bias


def to_long(value: int, overflow: str, what: str, bits: int = 64) -> int:
    """``value`` if it fits a long (or the integral type of ``bits`` bits); otherwise wrapped
    (``"wrap"``) or a :class:`LongOverflowError` naming ``what`` (``"error"``)."""
    low, high = _RANGES[bits]
    if low <= value <= high:
        return value
    if overflow == ERROR:
        raise LongOverflowError(
            f"{JAVA_INTEGERS[bits]} overflow: {what} = {value} is outside [{low}, {high}] "
            f"(overflow='error', e.g. spark.sql.ansi.enabled=true; Flink's Java arithmetic, "
            f"overflow='wrap', would give {wrap(value, bits)})"
        )
    return wrap(value, bits)


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


def sums_may_overflow(
    values: np.ndarray, starts: np.ndarray, existing: Any = None, bits: int = 64
) -> bool:
    """Could a running sum over any segment ``values[starts[i]:starts[i + 1]]`` (plus
    ``existing[i]``, the pane's current sum) leave the long range (or the range of the
    integral type of ``bits`` bits, whose magnitudes a float adds exactly)? Conservative."""
    if len(values) == 0:
        return False
    magnitude = np.add.reduceat(np.abs(values.astype(np.float64)), starts)
    if existing is not None:
        magnitude = magnitude + np.abs(np.asarray(existing, dtype=np.float64))
    return bool((magnitude >= (SUM_SAFE if bits == 64 else 2.0 ** (bits - 1))).any())


__all__ = [
    "ERROR",
    "JAVA_INTEGERS",
    "OVERFLOW_POLICIES",
    "WRAP",
    "LongOverflowError",
    "add",
    "check_policy",
    "java_range",
    "located",
    "safe_band",
    "sums_may_overflow",
    "sub",
    "to_long",
    "wrap",
]
