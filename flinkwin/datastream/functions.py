"""PyFlink's ``pyflink.datastream.functions``: the user-function base classes a program
implements (flinkwin's own home is :mod:`flinkwin.functions`). Two-input and broadcast
functions raise an ``ImportError`` saying why (:mod:`flinkwin.unsupported`)."""

from typing import Any

from flinkwin.functions import (
    AggregateFunction,
    AllWindowFunction,
    FilterFunction,
    FlatMapFunction,
    Function,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    ProcessAllWindowFunction,
    ProcessFunction,
    ProcessWindowFunction,
    ReduceFunction,
    RuntimeContext,
    SinkFunction,
    TimeDomain,
    TimerService,
    WindowFunction,
)
from flinkwin.unsupported import missing


def __getattr__(name: str) -> Any:
    raise missing(__name__, name)


__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "FilterFunction",
    "FlatMapFunction",
    "Function",
    "KeyedProcessFunction",
    "KeySelector",
    "MapFunction",
    "ProcessFunction",
    "ProcessAllWindowFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "SinkFunction",
    "TimeDomain",
    "TimerService",
    "WindowFunction",
]
