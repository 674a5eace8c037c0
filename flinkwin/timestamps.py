"""``TimestampAssigner``: extracts an element's event timestamp (PyFlink's
``pyflink.common.watermark_strategy.TimestampAssigner``, Java's ``TimestampAssigner<T>``)."""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from decimal import Decimal
from typing import Any, Generic, TypeVar

from flinkwin.java_hooks import JavaNamedHooks

T = TypeVar("T")


class TimestampAssigner(JavaNamedHooks, ABC, Generic[T]):
    """Implement ``extract_timestamp(value, record_timestamp)`` returning epoch milliseconds;
    ``record_timestamp`` is the element's previous timestamp (``MIN_LONG`` when it has none).
    A float (or other real number) is truncated toward zero, as PyFlink's ``LONG`` coder does
    (:func:`as_timestamp`)."""

    _java_hooks = {"extractTimestamp": "extract_timestamp"}

    @abstractmethod
    def extract_timestamp(self, value: T, record_timestamp: int) -> int:
        """The event timestamp of ``value`` in epoch milliseconds."""

    def extractTimestamp(self, value: T, record_timestamp: int) -> int:  # noqa: N802 (Java)
        return self.extract_timestamp(value, record_timestamp)



def as_timestamp(value: Any) -> int | None:
    """An ``extract_timestamp`` result as PyFlink takes it: an int as it is; a float, numpy
    float or Decimal truncated toward zero (PyFlink writes the result with its ``LONG`` coder,
    which converts with ``int()``: ``1.9`` is ``1``, ``-1.9`` is ``-1``); None for anything
    else (a bool, text, NaN, an infinity), which the caller reports as an error."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, (numbers.Real, Decimal)) and math.isfinite(value):
        return int(value)  # type: ignore[arg-type]  # every real number has __int__
    return None


__all__ = ["TimestampAssigner", "as_timestamp"]
