"""Sliding windows: fixed-size windows starting every ``slide`` (overlapping when slide < size)."""

from __future__ import annotations

from typing import Any

from flinkwin.assigners.base import WindowAssigner, WindowAssignerContext
from flinkwin.assigners.tumbling import NO_TIMESTAMP_MESSAGE
from flinkwin.time import MIN_LONG, TimeLike, to_millis
from flinkwin.windows import TimeWindow, TimeWindowSerializer


def sliding_windows(timestamp: int, size: int, slide: int, offset: int) -> list[TimeWindow]:
    """All windows containing ``timestamp``, latest start first (Flink's order)."""
    last_start = TimeWindow.get_window_start_with_offset(timestamp, offset, slide)
    windows = []
    start = last_start
    while start > timestamp - size:
        windows.append(TimeWindow(start, start + size))
        start -= slide
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
        return sliding_windows(timestamp, self.size, self.slide, self.offset)

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
        return sliding_windows(now, self.size, self.slide, self.offset)

    def get_default_trigger(self, env: Any = None) -> Any:
        from flinkwin.triggers.processing_time import ProcessingTimeTrigger

        return ProcessingTimeTrigger.create()

    def get_window_serializer(self) -> TimeWindowSerializer:
        return TimeWindowSerializer()

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"SlidingProcessingTimeWindows({self.size}, {self.slide})"
