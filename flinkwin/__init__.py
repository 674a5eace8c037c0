"""flinkwin: Apache Flink's DataStream window API, faithfully, on PySpark Structured Streaming.

The Flink semantics core (windows, assigners, triggers, evictors, functions, the window operator
and its state) has no Spark dependency; :mod:`flinkwin.datastream` and :mod:`flinkwin.spark`
compile a fluent pipeline onto Spark.

PyFlink programs port by replacing the package name ``pyflink`` with ``flinkwin``:
:mod:`flinkwin.datastream` and :mod:`flinkwin.common` have PyFlink's module layout, and an
import of something flinkwin does not provide raises an ``ImportError`` saying what to do
instead (:mod:`flinkwin.unsupported`). Every name is also importable from ``flinkwin`` itself.
"""

import importlib
from typing import Any

from flinkwin import unsupported
from flinkwin._version import __version__ as __version__
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
from flinkwin.datastream.stream_execution_environment import StreamExecutionEnvironment
from flinkwin.evictors import CountEvictor, DeltaEvictor, Evictor, TimeEvictor, TimestampedValue
from flinkwin.functions import (
    AggregateFunction,
    AllWindowFunction,
    CoFlatMapFunction,
    CoGroupFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatJoinFunction,
    FlatMapFunction,
    Function,
    JoinFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    ProcessAllWindowFunction,
    ProcessFunction,
    ProcessJoinFunction,
    ProcessWindowFunction,
    ReduceFunction,
    RuntimeContext,
    SinkFunction,
    TimeDomain,
    TimerService,
    WindowFunction,
)
from flinkwin.operator.cogroup import TaggedUnion
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

_SPARK_API = {
    "ConnectedStreams": "flinkwin.datastream.connected_streams",
    "DataStream": "flinkwin.datastream.data_stream",
    "KeyedStream": "flinkwin.datastream.keyed_stream",
    "WindowedStream": "flinkwin.datastream.windowed_stream",
    "AllWindowedStream": "flinkwin.datastream.windowed_stream",
    "WindowResultStream": "flinkwin.datastream.window_result_stream",
    "WatermarkStrategy": "flinkwin.watermark",
    "DeltaSink": "flinkwin.sinks",
    "DeltaUpsertSink": "flinkwin.sinks",
    "IncompatibleRestartError": "flinkwin.spark.restart",
    "OneTaskGraphWarning": "flinkwin.datastream.graph_stream",
    "RestartedWatermarksWarning": "flinkwin.datastream.graph_stream",
    "UnsizedStageWarning": "flinkwin.spark.sizing",
}


def __getattr__(name: str) -> Any:
    """The Spark-facing API (``fw.DataStream``...) loads on first use, so the core never
    imports pyspark."""
    module = _SPARK_API.get(name)
    if module is None:
        raise unsupported.missing(__name__, name)
    return getattr(importlib.import_module(module), name)


unsupported.install()


__all__ = [
    "AggregateFunction",
    "AllWindowedStream",
    "ConnectedStreams",
    "DataStream",
    "DeltaSink",
    "DeltaUpsertSink",
    "IncompatibleRestartError",
    "KeyedStream",
    "OneTaskGraphWarning",
    "RestartedWatermarksWarning",
    "UnsizedStageWarning",
    "WatermarkStrategy",
    "WindowResultStream",
    "WindowedStream",
    "AggregatingStateDescriptor",
    "AllWindowFunction",
    "CoFlatMapFunction",
    "CoGroupFunction",
    "CoMapFunction",
    "CoProcessFunction",
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
    "FlatJoinFunction",
    "FlatMapFunction",
    "GlobalWindow",
    "GlobalWindows",
    "JoinFunction",
    "KeySelector",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "ListStateDescriptor",
    "MapFunction",
    "MapStateDescriptor",
    "MergingWindowAssigner",
    "NeverTrigger",
    "OutputTag",
    "ProcessAllWindowFunction",
    "ProcessJoinFunction",
    "ProcessFunction",
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
    "StreamExecutionEnvironment",
    "Time",
    "TimeDomain",
    "TimeEvictor",
    "TimerService",
    "TimeWindow",
    "TaggedUnion",
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
