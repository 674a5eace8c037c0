"""Flink's built-in field aggregations (``sum``, ``min``, ``max``, ``minBy``, ``maxBy``).

They are ``ReduceFunction``s with Flink's exact semantics, plus a vectorized kernel the operator
uses on whole batches:
- ``sum(f)``: the first element of the window with ``f`` replaced by the sum (a ``float``
  field's sum rounds to single precision at every addition, as Java's); integer sums are
  Java long sums, or ``int``/``short``/``byte`` sums for a narrower field (``bits``), as
  Flink's ``SumFunction`` adds the field's class (wrapping around, as Flink's, or raising
  under ``overflow="error"``; see :mod:`flinkwin.longs`).
- ``min(f)``/``max(f)``: the first element with ``f`` replaced by the minimum/maximum.
- ``minBy(f)``/``maxBy(f)``: the element holding the minimum/maximum of ``f``; on ties the
  earliest one.

Values are compared as Java's ``compareTo`` does (Flink's ``ComparableAggregator``): for floats
``Double.compareTo``, so NaN is greater than every number (``max`` of ``[1.0, NaN]`` is NaN,
``min`` is 1.0, whatever the order) and ``-0.0`` is less than ``0.0``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from flinkwin.functions.base import ReduceFunction
from flinkwin.longs import JAVA_INTEGERS, WRAP, check_policy, java_range, sums_may_overflow, to_long
from flinkwin.record import Row


def java_compare(a: Any, b: Any) -> int:
    """The sign of Java's ``a.compareTo(b)``: for floats ``Double.compareTo`` (NaN is greater
    than everything and equal to itself; ``-0.0 < 0.0``), for strings ``String.compareTo``
    (UTF-16 code units: a character beyond U+FFFF, a surrogate pair, sorts below U+E000 to
    U+FFFF, where Python's code points put it above), else the values' own order."""
    if isinstance(a, float) or isinstance(b, float):
        a, b = _double_rank(a), _double_rank(b)
    elif isinstance(a, str) and isinstance(b, str):
        a, b = a.encode("utf-16-be", "surrogatepass"), b.encode("utf-16-be", "surrogatepass")
    return (a > b) - (a < b)


def _double_rank(x: Any) -> tuple[int, float, float]:
    """A sort key ordering floats as ``Double.compareTo`` does."""
    if x != x:
        return (1, 0.0, 0.0)
    return (0, float(x), math.copysign(1.0, x))


def _replace(record: Any, field: str, value: Any) -> Any:
    if isinstance(record, Row):
        return Row.replace(record, field, value)
    if isinstance(record, dict):
        out = dict(record)
        out[field] = value
        return out
    raise TypeError(f"cannot aggregate field {field!r} of {type(record).__name__}")


class BuiltinAggregation(ReduceFunction):
    """One of sum/min/max/min_by/max_by over ``field``."""

    KINDS = ("sum", "min", "max", "min_by", "max_by")

    def __init__(
        self, kind: str, field: str, overflow: str = WRAP, single_precision: bool = False,
        bits: int = 64,
    ) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"unknown aggregation {kind!r}")
        if not isinstance(field, str):
            raise TypeError("aggregation field must be a field name (str)")
        if bits not in JAVA_INTEGERS:
            raise ValueError(f"bits must be one of {tuple(JAVA_INTEGERS)}, got {bits!r}")
        self.kind = kind
        self.field = field
        self.overflow = check_policy(overflow)
        #: the field is a Java ``float``: sums round to single precision at every addition
        self.single_precision = single_precision
        #: the width of the field's Java integral type (``long`` 64, ``int`` 32, ``short`` 16,
        #: ``byte`` 8): an integer sum wraps around, or raises, at its range
        self.bits = bits
        self._low, self._high = java_range(bits)

    def with_overflow(self, overflow: str) -> BuiltinAggregation:
        """This aggregation under another overflow policy."""
        return self if overflow == self.overflow else BuiltinAggregation(
            self.kind, self.field, overflow, self.single_precision, self.bits
        )

    def with_single_precision(self) -> BuiltinAggregation:
        """This aggregation over a ``float`` (single-precision) field."""
        return BuiltinAggregation(self.kind, self.field, self.overflow, True, self.bits)

    def with_bits(self, bits: int) -> BuiltinAggregation:
        """This aggregation over an integral field of ``bits`` bits (an ``int`` field: 32)."""
        return BuiltinAggregation(self.kind, self.field, self.overflow, self.single_precision, bits)

    @property
    def int64_exact(self) -> bool:
        """numpy's int64 arithmetic gives this aggregation's results on an integer field: a
        min/max, or a long sum wrapping around as Java's; any other sum (under ``"error"``, or
        of a narrower field) only while no running sum leaves the field's range
        (:meth:`sums_may_overflow`)."""
        return self.kind != "sum" or (self.overflow == WRAP and self.bits == 64)

    def sums_may_overflow(
        self, values: np.ndarray, starts: np.ndarray, existing: Any = None
    ) -> bool:
        """Could a running sum of a segment of ``values`` (plus its ``existing`` sum) leave the
        field's range (:func:`flinkwin.longs.sums_may_overflow`)? The vectorized and columnar
        paths leave such a batch to the per-element fold (:meth:`reduce`), which wraps or
        raises at the field's width as Flink's ``SumFunction`` does."""
        return sums_may_overflow(values, starts, existing, self.bits)

    def reduce(self, value1: Any, value2: Any) -> Any:
        a, b = value1[self.field], value2[self.field]
        if a is None or b is None:
            raise ValueError(
                f"{self!r}: field {self.field!r} is null in {value1 if a is None else value2!r}"
                " (Flink's field aggregations fail on a null field too)"
            )
        kind = self.kind
        if kind == "sum":
            # Java's FloatSum adds floats: each addition rounds to single precision
            total = float(np.float32(a) + np.float32(b)) if self.single_precision else a + b
            if type(total) is int and not self._low <= total <= self._high:
                total = to_long(
                    total, self.overflow, f"sum of field {self.field!r}: {a} + {b}", self.bits
                )
            return _replace(value1, self.field, total)
        c = java_compare(a, b)
        # Flink's ComparableAggregator: min/max keep value1's field only when it is strictly
        # extremal (else value2's); minBy/maxBy keep the first element on ties
        if kind == "min":
            return value1 if c < 0 else _replace(value1, self.field, b)
        if kind == "max":
            return value1 if c > 0 else _replace(value1, self.field, b)
        if kind == "min_by":
            return value2 if c > 0 else value1
        return value2 if c < 0 else value1

    def __repr__(self) -> str:
        return f"{self.kind}({self.field!r})"


def sum_of(field: str) -> BuiltinAggregation:
    return BuiltinAggregation("sum", field)


def min_of(field: str) -> BuiltinAggregation:
    return BuiltinAggregation("min", field)


def max_of(field: str) -> BuiltinAggregation:
    return BuiltinAggregation("max", field)


def min_by(field: str) -> BuiltinAggregation:
    return BuiltinAggregation("min_by", field)


def max_by(field: str) -> BuiltinAggregation:
    return BuiltinAggregation("max_by", field)
