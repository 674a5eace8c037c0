"""Window assigners, one concept per module, named as in Flink."""

from flinkwin.assigners.base import (
    MergeCallback,
    MergingWindowAssigner,
    WindowAssigner,
    WindowAssignerContext,
)
from flinkwin.assigners.count import CountSlidingWindowAssigner, CountTumblingWindowAssigner
from flinkwin.assigners.global_windows import GlobalWindows
from flinkwin.assigners.session import (
    DynamicEventTimeSessionWindows,
    DynamicProcessingTimeSessionWindows,
    EventTimeSessionWindows,
    ProcessingTimeSessionWindows,
    SessionWindowTimeGapExtractor,
)
from flinkwin.assigners.sliding import SlidingEventTimeWindows, SlidingProcessingTimeWindows
from flinkwin.assigners.stagger import WindowStagger
from flinkwin.assigners.tumbling import TumblingEventTimeWindows, TumblingProcessingTimeWindows

__all__ = [
    "CountSlidingWindowAssigner",
    "CountTumblingWindowAssigner",
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows",
    "GlobalWindows",
    "MergeCallback",
    "MergingWindowAssigner",
    "ProcessingTimeSessionWindows",
    "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "WindowAssigner",
    "WindowAssignerContext",
    "WindowStagger",
]
