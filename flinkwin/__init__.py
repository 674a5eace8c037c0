"""flinkwin: Apache Flink's DataStream window API, faithfully, on PySpark Structured Streaming.

The Flink semantics core (windows, assigners, triggers, evictors, functions, the window operator
and its state) has no Spark dependency; :mod:`flinkwin.datastream` and :mod:`flinkwin.spark`
compile a fluent pipeline onto Spark.
"""

import importlib
from typing import Any

from flinkwin.assigners import (
    CountSlidingWindowAssigner,
    CountTumblingWindowAssigner,
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
    FilterFunction,
    FlatMapFunction,
    Function,
    KeySelector,
    MapFunction,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    ReduceFunction,
    RuntimeContext,
    SinkFunction,
    WindowFunction,
)
from flinkwin.output_tag import OutputTag
from flinkwin.record import Record, Row, RowKind
from flinkwin.runtime_mode import RuntimeExecutionMode
from flinkwin.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flinkwin.time import Duration, Time
from flinkwin.timestamps import TimestampAssigner
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
from flinkwin.windows import (
    CountWindow,
    CountWindowSerializer,
    GlobalWindow,
    TimeWindow,
    TimeWindowSerializer,
    Window,
)

__version__ = "0.1.0"

_SPARK_API = {
    "DataStream": "flinkwin.datastream.data_stream",
    "KeyedStream": "flinkwin.keyed_stream",
    "WindowedStream": "flinkwin.windowed_stream",
    "AllWindowedStream": "flinkwin.windowed_stream",
    "WindowResultStream": "flinkwin.window_result_stream",
    "WatermarkStrategy": "flinkwin.watermark",
    "DeltaSink": "flinkwin.sinks",
    "IncompatibleRestartError": "flinkwin.spark.restart",
}


def __getattr__(name: str) -> Any:
    """The Spark-facing API (``fw.DataStream``...) loads on first use, so the core never
    imports pyspark."""
    module = _SPARK_API.get(name)
    if module is None:
        raise AttributeError(f"module 'flinkwin' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "AggregateFunction",
    "AllWindowedStream",
    "DataStream",
    "DeltaSink",
    "IncompatibleRestartError",
    "KeyedStream",
    "WatermarkStrategy",
    "WindowResultStream",
    "WindowedStream",
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
    "FilterFunction",
    "FlatMapFunction",
    "GlobalWindow",
    "GlobalWindows",
    "KeySelector",
    "ListStateDescriptor",
    "MapFunction",
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
    "Row",
    "RowKind",
    "RuntimeContext",
    "TimestampAssigner",
    "CountSlidingWindowAssigner",
    "CountTumblingWindowAssigner",
    "CountWindow",
    "CountWindowSerializer",
    "TimeWindowSerializer",
    "Function",
    "RuntimeExecutionMode",
    "ReduceFunction",
    "ReducingStateDescriptor",
    "SessionWindowTimeGapExtractor",
    "SinkFunction",
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
