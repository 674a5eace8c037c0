"""Session windows: one window ``[t, t + gap)`` per element, merged while they overlap."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flinkwin.assigners.base import (
    MergeCallback,
    MergingWindowAssigner,
    WindowAssignerContext,
    overflow_of,
)
from flinkwin.longs import to_long
from flinkwin.time import MAX_LONG, TimeLike, to_millis
from flinkwin.windows import TimeWindow, TimeWindowSerializer

GapExtractor = Any  # a callable(element) -> gap, or an object with extract(element)


def session_window(start: int, gap: int, context: WindowAssignerContext) -> TimeWindow:
    """``[start, start + gap)`` in long arithmetic."""
    end = start + gap
    if end > MAX_LONG:
        end = to_long(end, overflow_of(context), f"end of the session window of {start}")
    return TimeWindow.of(start, end)


def _extract_gap(extractor: GapExtractor, element: Any) -> int:
    fn = extractor.extract if hasattr(extractor, "extract") else extractor
    return to_millis(fn(element), "session gap")


class SessionWindowTimeGapExtractor:
    """Extracts a per-element session gap (PyFlink's interface); a plain callable works too."""

    def extract(self, element: Any) -> int:
        raise NotImplementedError


class _SessionWindowsBase(MergingWindowAssigner[Any, TimeWindow]):
    def merge_windows(self, windows: Iterable[TimeWindow], callback: MergeCallback) -> None:
        TimeWindow.merge_windows(windows, callback)

    def get_window_serializer(self) -> TimeWindowSerializer:
        return TimeWindowSerializer()


class EventTimeSessionWindows(_SessionWindowsBase):
    """Event-time sessions: an element at ``t`` opens ``[t, t + gap)``; overlapping (or touching)
    windows merge. Default trigger: ``EventTimeTrigger``."""

    def __init__(self, session_timeout: int):
        if session_timeout <= 0:
            raise ValueError("EventTimeSessionWindows parameters must satisfy 0 < size")
        self.session_timeout = session_timeout

    @staticmethod
    def withGap(size: TimeLike) -> EventTimeSessionWindows:  # noqa: N802 (Flink name)
        return EventTimeSessionWindows(to_millis(size, "session gap"))

    @staticmethod
    def withDynamicGap(extractor: GapExtractor) -> DynamicEventTimeSessionWindows:  # noqa: N802
        return DynamicEventTimeSessionWindows(extractor)

    with_gap = withGap
    with_dynamic_gap = withDynamicGap

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssignerContext
    ) -> list[TimeWindow]:
        return [session_window(timestamp, self.session_timeout, context)]

    def get_default_trigger(self, env: Any = None) -> Any:
        from flinkwin.triggers.event_time import EventTimeTrigger

        return EventTimeTrigger.create()

    def is_event_time(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"EventTimeSessionWindows({self.session_timeout})"


class ProcessingTimeSessionWindows(_SessionWindowsBase):
    """Processing-time sessions over the operator's clock.
    Default trigger: ``ProcessingTimeTrigger``."""

    def __init__(self, session_timeout: int):
        if session_timeout <= 0:
            raise ValueError("ProcessingTimeSessionWindows parameters must satisfy 0 < size")
        self.session_timeout = session_timeout

    @staticmethod
    def withGap(size: TimeLike) -> ProcessingTimeSessionWindows:  # noqa: N802
        return ProcessingTimeSessionWindows(to_millis(size, "session gap"))

    @staticmethod
    def withDynamicGap(extractor: GapExtractor) -> DynamicProcessingTimeSessionWindows:  # noqa: N802
        return DynamicProcessingTimeSessionWindows(extractor)

    with_gap = withGap
    with_dynamic_gap = withDynamicGap

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssignerContext
    ) -> list[TimeWindow]:
        now = context.get_current_processing_time()
        return [session_window(now, self.session_timeout, context)]

    def get_default_trigger(self, env: Any = None) -> Any:
        from flinkwin.triggers.processing_time import ProcessingTimeTrigger

        return ProcessingTimeTrigger.create()

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"ProcessingTimeSessionWindows({self.session_timeout})"


class DynamicEventTimeSessionWindows(_SessionWindowsBase):
    """Event-time sessions whose gap is extracted from each element."""

    def __init__(self, extractor: GapExtractor):
        self.session_window_time_gap_extractor = extractor

    @staticmethod
    def withDynamicGap(extractor: GapExtractor) -> DynamicEventTimeSessionWindows:  # noqa: N802
        return DynamicEventTimeSessionWindows(extractor)

    with_dynamic_gap = withDynamicGap

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssignerContext
    ) -> list[TimeWindow]:
        gap = _extract_gap(self.session_window_time_gap_extractor, element)
        if gap <= 0:
            raise ValueError("Dynamic session time gap must satisfy 0 < gap")
        return [session_window(timestamp, gap, context)]

    def get_default_trigger(self, env: Any = None) -> Any:
        from flinkwin.triggers.event_time import EventTimeTrigger

        return EventTimeTrigger.create()

    def is_event_time(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "DynamicEventTimeSessionWindows()"


class DynamicProcessingTimeSessionWindows(_SessionWindowsBase):
    """Processing-time sessions whose gap is extracted from each element."""

    def __init__(self, extractor: GapExtractor):
        self.session_window_time_gap_extractor = extractor

    @staticmethod
    def withDynamicGap(extractor: GapExtractor) -> DynamicProcessingTimeSessionWindows:  # noqa: N802
        return DynamicProcessingTimeSessionWindows(extractor)

    with_dynamic_gap = withDynamicGap

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssignerContext
    ) -> list[TimeWindow]:
        now = context.get_current_processing_time()
        gap = _extract_gap(self.session_window_time_gap_extractor, element)
        if gap <= 0:
            raise ValueError("Dynamic session time gap must satisfy 0 < gap")
        return [session_window(now, gap, context)]

    def get_default_trigger(self, env: Any = None) -> Any:
        from flinkwin.triggers.processing_time import ProcessingTimeTrigger

        return ProcessingTimeTrigger.create()

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "DynamicProcessingTimeSessionWindows()"
