"""Sliding windows: fixed-size windows starting every ``slide`` (overlapping when slide < size)."""

from __future__ import annotations

from typing import Any

from flinkwin.assigners.base import WindowAssigner, WindowAssignerContext, overflow_of
from flinkwin.assigners.tumbling import NO_TIMESTAMP_MESSAGE
from flinkwin.longs import WRAP as _WRAP
from flinkwin.longs import LongOverflowError, to_long
from flinkwin.time import MAX_LONG, MIN_LONG, TimeLike, to_millis
from flinkwin.windows import TimeWindow, TimeWindowSerializer


def sliding_windows(
    timestamp: int, size: int, slide: int, offset: int, overflow: str = _WRAP
) -> list[TimeWindow]:
    """All windows containing ``timestamp``, latest start first (Flink's order), in long
    arithmetic. A start wrapping below ``MIN_LONG`` while the loop continues, where Flink's
    loop would run on for 2^64 / slide windows, raises :class:`LongOverflowError` under either
    policy."""
    start = TimeWindow.get_window_start_with_offset(timestamp, offset, slide, overflow)
    lower = timestamp - size
    if lower < MIN_LONG:
        lower = to_long(lower, overflow, f"timestamp {timestamp} - window size {size}")
    windows = []
    while start > lower:
        end = start + size
        if end > MAX_LONG:
            end = to_long(end, overflow, f"end of a window of timestamp {timestamp}")
        windows.append(TimeWindow.of(start, end))
        start -= slide
        if start < MIN_LONG:
            raise LongOverflowError(
                f"long overflow: the sliding windows of timestamp {timestamp} start below "
                f"{MIN_LONG} (Flink's assigner would not terminate)"
            )
    return windows


class SlidingEventTimeWindows(WindowAssigner[Any, TimeWindow]):
    """Each element goes to every window ``[start, start + size)`` with ``start`` on the slide grid
    that contains its timestamp. Default trigger: ``EventTimeTrigger``."""

    def __init__(self, size: int, slide: int, offset: int = 0):
        if abs(offset) >= slide or size <= 0:
            raise ValueError(
                "SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0"
            )
        self.size = size
        self.slide = slide
        self.offset = offset

    @staticmethod
    def of(size: TimeLike, slide: TimeLike, offset: TimeLike = 0) -> SlidingEventTimeWindows:
        return SlidingEventTimeWindows(
            to_millis(size, "size"), to_millis(slide, "slide"), to_millis(offset, "offset")
        )

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssignerContext
    ) -> list[TimeWindow]:
        if timestamp <= MIN_LONG:
            raise RuntimeError(NO_TIMESTAMP_MESSAGE)
        return sliding_windows(timestamp, self.size, self.slide, self.offset, overflow_of(context))

    def get_default_trigger(self, env: Any = None) -> Any:
        from flinkwin.triggers.event_time import EventTimeTrigger

        return EventTimeTrigger.create()

    def get_window_serializer(self) -> TimeWindowSerializer:
        return TimeWindowSerializer()

    def is_event_time(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"SlidingEventTimeWindows({self.size}, {self.slide})"


class SlidingProcessingTimeWindows(WindowAssigner[Any, TimeWindow]):
    """Sliding windows over the operator's current processing time.
    Default trigger: ``ProcessingTimeTrigger``."""

    def __init__(self, size: int, slide: int, offset: int = 0):
        if abs(offset) >= slide or size <= 0:
            raise ValueError(
                "SlidingProcessingTimeWindows parameters must satisfy "
                "abs(offset) < slide and size > 0"
            )
        self.size = size
        self.slide = slide
        self.offset = offset

    @staticmethod
    def of(size: TimeLike, slide: TimeLike, offset: TimeLike = 0) -> SlidingProcessingTimeWindows:
        return SlidingProcessingTimeWindows(
            to_millis(size, "size"), to_millis(slide, "slide"), to_millis(offset, "offset")
        )

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssignerContext
    ) -> list[TimeWindow]:
        now = context.get_current_processing_time()
        return sliding_windows(now, self.size, self.slide, self.offset, overflow_of(context))

    def get_default_trigger(self, env: Any = None) -> Any:
        from flinkwin.triggers.processing_time import ProcessingTimeTrigger

        return ProcessingTimeTrigger.create()

    def get_window_serializer(self) -> TimeWindowSerializer:
        return TimeWindowSerializer()

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"SlidingProcessingTimeWindows({self.size}, {self.slide})"
