"""``TimestampAssigner``: extracts an element's event timestamp (PyFlink's
``pyflink.common.watermark_strategy.TimestampAssigner``, Java's ``TimestampAssigner<T>``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Generic, TypeVar

T = TypeVar("T")


class TimestampAssigner(ABC, Generic[T]):
    """Implement ``extract_timestamp(value, record_timestamp)`` returning epoch milliseconds;
    ``record_timestamp`` is the element's previous timestamp (``MIN_LONG`` when it has none)."""

    @abstractmethod
    def extract_timestamp(self, value: T, record_timestamp: int) -> int:
        """The event timestamp of ``value`` in epoch milliseconds."""

    def extractTimestamp(self, value: T, record_timestamp: int) -> int:  # noqa: N802 (Java)
        return self.extract_timestamp(value, record_timestamp)


__all__ = ["TimestampAssigner"]
