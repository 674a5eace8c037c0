"""PyFlink's ``pyflink.datastream``, under the same names and module layout: a program's
``from pyflink.datastream import StreamExecutionEnvironment, ProcessWindowFunction`` becomes
``from flinkwin.datastream import ...``, and ``pyflink.datastream.window``, ``.functions``,
``.state``, ``.output_tag``, ``.timerservice``, ``.time_domain``, ``.execution_mode``,
``.data_stream`` and ``.stream_execution_environment`` become the modules of the same names
here.

The stream API itself lives here, a module per class family: ``data_stream`` (``DataStream``;
as PyFlink's, it also gives ``KeyedStream``, ``WindowedStream`` and ``AllWindowedStream``),
``keyed_stream``, ``keyed_reduce`` (the rolling reduce), ``windowed_stream``,
``window_result_stream``, ``joined_streams``, ``cogrouped_streams``, ``interval_join`` and
``graph_stream``; ``window``, ``functions``, ``state``... re-export the Flink core's classes
under PyFlink's module names. The stream classes import Spark and load on first use;
everything else imports no Spark. Names flinkwin does not provide (broadcast
streams, state backends...) raise an ``ImportError`` saying what to do instead
(:mod:`flinkwin.unsupported`).
"""

import importlib
from typing import Any

from flinkwin.assigners import MergingWindowAssigner, WindowAssigner
from flinkwin.datastream.checkpointing_mode import CheckpointingMode
from flinkwin.datastream.stream_execution_environment import StreamExecutionEnvironment
from flinkwin.datastream.time_characteristic import TimeCharacteristic
from flinkwin.functions import (
    AggregateFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    ProcessFunction,
    ProcessWindowFunction,
    ReduceFunction,
    RuntimeContext,
    SinkFunction,
    TimeDomain,
    TimerService,
    WindowFunction,
)
from flinkwin.output_tag import OutputTag
from flinkwin.runtime_mode import RuntimeExecutionMode
from flinkwin.triggers import Trigger, TriggerResult
from flinkwin.unsupported import missing
from flinkwin.windows import CountWindow, GlobalWindow, TimeWindow, Window

_SPARK_API = {
    "ConnectedStreams": "flinkwin.datastream.connected_streams",
    "DataStream": "flinkwin.datastream.data_stream",
    "DEFAULT_KEY_GROUPS": "flinkwin.datastream.data_stream",
    "SinkContext": "flinkwin.datastream.element_sinks",
    "KeyedStream": "flinkwin.datastream.keyed_stream",
    "WindowedStream": "flinkwin.datastream.windowed_stream",
}


def __getattr__(name: str) -> Any:
    """The stream classes load on first use (they import Spark); refused PyFlink names raise
    an ``ImportError`` saying why."""
    module = _SPARK_API.get(name)
    if module is None:
        raise missing(__name__, name)
    return getattr(importlib.import_module(module), name)


__all__ = [
    "AggregateFunction",
    "CheckpointingMode",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "ConnectedStreams",
    "CountWindow",
    "DataStream",
    "FilterFunction",
    "FlatMapFunction",
    "GlobalWindow",
    "KeySelector",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStream",
    "MapFunction",
    "MergingWindowAssigner",
    "OutputTag",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "RuntimeExecutionMode",
    "SinkFunction",
    "StreamExecutionEnvironment",
    "TimeCharacteristic",
    "TimeDomain",
    "TimeWindow",
    "TimerService",
    "Trigger",
    "TriggerResult",
    "Window",
    "WindowAssigner",
    "WindowFunction",
    "WindowedStream",
]
