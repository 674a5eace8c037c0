"""Tumbling windows: fixed-size, non-overlapping, aligned to the epoch plus an offset."""

from __future__ import annotations

from typing import Any

from flinkwin.assigners.base import WindowAssigner, WindowAssignerContext, overflow_of
from flinkwin.assigners.stagger import StaggeredAssigner, WindowStagger
from flinkwin.longs import to_long
from flinkwin.time import MAX_LONG, MIN_LONG, TimeLike, java_mod, to_millis
from flinkwin.windows import TimeWindow, TimeWindowSerializer

NO_TIMESTAMP_MESSAGE = (
    "Row has Long.MIN_VALUE timestamp (= no timestamp marker). Is the time characteristic set "
    "to 'ProcessingTime', or did you forget to call 'assignTimestampsAndWatermarks(...)'?"
)


def tumbling_window(timestamp: int, offset: int, size: int, overflow: str) -> TimeWindow:
    """The window ``[start, start + size)`` containing ``timestamp``, in long arithmetic."""
    start = TimeWindow.get_window_start_with_offset(timestamp, offset, size, overflow)
    end = start + size
    if end > MAX_LONG:
        end = to_long(end, overflow, f"end of the window of timestamp {timestamp}")
    return TimeWindow.of(start, end)


class TumblingEventTimeWindows(StaggeredAssigner, WindowAssigner[Any, TimeWindow]):
    """Each element goes to the one window ``[start, start + size)`` containing its timestamp.

    Default trigger: ``EventTimeTrigger`` (fires once when the watermark passes the window end).
    """

    def __init__(self, size: int, offset: int = 0, stagger: WindowStagger = WindowStagger.ALIGNED):
        if abs(offset) >= size:
            raise ValueError("TumblingEventTimeWindows parameters must satisfy abs(offset) < size")
        self.size = size
        self.global_offset = offset
        self.window_stagger = stagger
        self._stagger_offset: int | None = None

    @staticmethod
    def of(
        size: TimeLike, offset: TimeLike = 0, stagger: WindowStagger = WindowStagger.ALIGNED
    ) -> TumblingEventTimeWindows:
        return TumblingEventTimeWindows(
            to_millis(size, "size"), to_millis(offset, "offset"), stagger
        )

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssignerContext
    ) -> list[TimeWindow]:
        if timestamp <= MIN_LONG:
            raise RuntimeError(NO_TIMESTAMP_MESSAGE)
        stagger = self._draw_stagger_offset(context.get_current_processing_time())
        offset = java_mod(self.global_offset + stagger, self.size)
        return [tumbling_window(timestamp, offset, self.size, overflow_of(context))]

    def get_default_trigger(self, env: Any = None) -> Any:
        from flinkwin.triggers.event_time import EventTimeTrigger

        return EventTimeTrigger.create()

    def get_window_serializer(self) -> TimeWindowSerializer:
        return TimeWindowSerializer()

    def is_event_time(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"TumblingEventTimeWindows({self.size})"


class TumblingProcessingTimeWindows(StaggeredAssigner, WindowAssigner[Any, TimeWindow]):
    """Each element goes to the window containing the operator's current processing time.

    Default trigger: ``ProcessingTimeTrigger``.
    """

    def __init__(self, size: int, offset: int = 0, stagger: WindowStagger = WindowStagger.ALIGNED):
        if abs(offset) >= size:
            raise ValueError(
                "TumblingProcessingTimeWindows parameters must satisfy abs(offset) < size"
            )
        self.size = size
        self.global_offset = offset
        self.window_stagger = stagger
        self._stagger_offset: int | None = None

    @staticmethod
    def of(
        size: TimeLike, offset: TimeLike = 0, stagger: WindowStagger = WindowStagger.ALIGNED
    ) -> TumblingProcessingTimeWindows:
        return TumblingProcessingTimeWindows(
            to_millis(size, "size"), to_millis(offset, "offset"), stagger
        )

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssignerContext
    ) -> list[TimeWindow]:
        now = context.get_current_processing_time()
        offset = java_mod(self.global_offset + self._draw_stagger_offset(now), self.size)
        return [tumbling_window(now, offset, self.size, overflow_of(context))]

    def get_default_trigger(self, env: Any = None) -> Any:
        from flinkwin.triggers.processing_time import ProcessingTimeTrigger

        return ProcessingTimeTrigger.create()

    def get_window_serializer(self) -> TimeWindowSerializer:
        return TimeWindowSerializer()

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"TumblingProcessingTimeWindows({self.size})"
