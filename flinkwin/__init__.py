"""flinkwin: Apache Flink's DataStream window API, faithfully, on PySpark Structured Streaming.

The Flink semantics core (windows, assigners, triggers, evictors, functions, the window operator
and its state) has no Spark dependency; :mod:`flinkwin.datastream` and :mod:`flinkwin.spark`
compile a fluent pipeline onto Spark.
"""

from flinkwin.assigners import (
    DynamicEventTimeSessionWindows,
    DynamicProcessingTimeSessionWindows,
    EventTimeSessionWindows,
    GlobalWindows,
    MergingWindowAssigner,
    ProcessingTimeSessionWindows,
    SessionWindowTimeGapExtractor,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
    WindowStagger,
)
from flinkwin.evictors import CountEvictor, DeltaEvictor, Evictor, TimeEvictor, TimestampedValue
from flinkwin.functions import (
    AggregateFunction,
    AllWindowFunction,
    KeySelector,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    ReduceFunction,
    WindowFunction,
)
from flinkwin.output_tag import OutputTag
from flinkwin.record import Record
from flinkwin.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flinkwin.time import Duration, Time
from flinkwin.triggers import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    DeltaTrigger,
    EventTimeTrigger,
    NeverTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Trigger,
    TriggerResult,
)
from flinkwin.types import Types
from flinkwin.windows import GlobalWindow, TimeWindow, Window

__version__ = "0.1.0"

__all__ = [
    "AggregateFunction",
    "AggregatingStateDescriptor",
    "AllWindowFunction",
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountEvictor",
    "CountTrigger",
    "DeltaEvictor",
    "DeltaTrigger",
    "Duration",
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "Evictor",
    "GlobalWindow",
    "GlobalWindows",
    "KeySelector",
    "ListStateDescriptor",
    "MapStateDescriptor",
    "MergingWindowAssigner",
    "NeverTrigger",
    "OutputTag",
    "ProcessAllWindowFunction",
    "ProcessWindowFunction",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "Record",
    "ReduceFunction",
    "ReducingStateDescriptor",
    "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "Time",
    "TimeEvictor",
    "TimeWindow",
    "TimestampedValue",
    "Trigger",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "Types",
    "ValueStateDescriptor",
    "Window",
    "WindowAssigner",
    "WindowFunction",
    "WindowStagger",
]
