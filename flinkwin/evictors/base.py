"""``Evictor``: removes elements from a firing window before and/or after the window function.

``elements`` is a mutable ``list`` of :class:`TimestampedValue` in insertion order; an evictor
removes entries from it (``del elements[i]``, ``elements.remove(tv)``, slicing assignment). What
is left after ``evict_after`` is what the window keeps. A window with an evictor always keeps
all its elements (list state), never an incremental aggregate.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Generic, TypeAlias, TypeVar

from flinkwin.java_hooks import JavaNamedHooks
from flinkwin.time import MIN_LONG

T = TypeVar("T")
W = TypeVar("W")


class TimestampedValue:
    """An element with its event timestamp (``MIN_LONG`` when it has none)."""

    __slots__ = ("value", "timestamp")

    def __init__(self, value: Any, timestamp: int | None = None) -> None:
        self.value = value
        self.timestamp = MIN_LONG if timestamp is None else timestamp

    def get_value(self) -> Any:
        return self.value

    def get_timestamp(self) -> int:
        return self.timestamp

    def has_timestamp(self) -> bool:
        return self.timestamp != MIN_LONG

    getValue = get_value  # noqa: N815
    getTimestamp = get_timestamp  # noqa: N815
    hasTimestamp = has_timestamp  # noqa: N815

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TimestampedValue)
            and self.value == other.value
            and self.timestamp == other.timestamp
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TimestampedValue({self.value!r}, {self.timestamp})"


class EvictorContext(ABC):
    """Clocks available to an evictor."""

    @abstractmethod
    def get_current_processing_time(self) -> int: ...

    @abstractmethod
    def get_current_watermark(self) -> int: ...

    def get_metric_group(self) -> Any:
        return None

    def getCurrentProcessingTime(self) -> int:  # noqa: N802 (Java name)
        return self.get_current_processing_time()

    def getMetricGroup(self) -> Any:  # noqa: N802 (Java name)
        return self.get_metric_group()

    def getCurrentWatermark(self) -> int:  # noqa: N802
        return self.get_current_watermark()


class Evictor(JavaNamedHooks, ABC, Generic[T, W]):
    """Base class of evictors, with PyFlink's method names (``Evictor[T, W]``: element type,
    window type)."""

    EvictorContext: TypeAlias = EvictorContext
    _java_hooks = {"evictBefore": "evict_before", "evictAfter": "evict_after"}

    @abstractmethod
    def evict_before(
        self, elements: list[TimestampedValue], size: int, window: W, evictor_context: Any
    ) -> None:
        """Called before the window function with all the window's elements."""

    @abstractmethod
    def evict_after(
        self, elements: list[TimestampedValue], size: int, window: W, evictor_context: Any
    ) -> None:
        """Called after the window function with the elements left by ``evict_before``."""


class BeforeOrAfterEvictor(Evictor[T, W]):
    """An evictor that applies one rule either before (default) or, with ``do_evict_after``,
    after the window function."""

    do_evict_after: bool = False

    def evict_before(
        self, elements: list[TimestampedValue], size: int, window: W, evictor_context: Any
    ) -> None:
        if not self.do_evict_after:
            self.evict(elements, size)

    def evict_after(
        self, elements: list[TimestampedValue], size: int, window: W, evictor_context: Any
    ) -> None:
        if self.do_evict_after:
            self.evict(elements, size)

    @abstractmethod
    def evict(self, elements: list[TimestampedValue], size: int) -> None:
        """Remove elements from ``elements`` in place."""

