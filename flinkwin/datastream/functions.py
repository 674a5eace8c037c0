"""PyFlink's ``pyflink.datastream.functions``: the user-function base classes a program
implements (flinkwin's own home is :mod:`flinkwin.functions`), with Flink's join and coGroup
functions (``JoinFunction``, ``FlatJoinFunction``, ``CoGroupFunction``, ``ProcessJoinFunction``),
which a program written from Flink's Java-only pages imports from here, and the co-functions of
connected streams (``CoMapFunction``, ``CoFlatMapFunction``, ``CoProcessFunction``,
``KeyedCoProcessFunction``). Broadcast
functions raise an ``ImportError`` saying why (:mod:`flinkwin.unsupported`)."""

from typing import Any, TypeVar

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
from flinkwin.functions.base import (
    IN,
    KEY,
    OUT,
    NullByteKeySelector,
    PassThroughAllWindowFunction,
    PassThroughWindowFunction,
    W,
)
from flinkwin.state.backend import KeyedStateStore
from flinkwin.unsupported import missing

#: PyFlink's type variables of this module, for a program's own generic classes
W2 = TypeVar("W2")
IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")


def __getattr__(name: str) -> Any:
    raise missing(__name__, name)


__all__ = [
    "IN",
    "IN1",
    "IN2",
    "KEY",
    "OUT",
    "W",
    "W2",
    "AggregateFunction",
    "AllWindowFunction",
    "CoFlatMapFunction",
    "CoGroupFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "FilterFunction",
    "FlatJoinFunction",
    "FlatMapFunction",
    "Function",
    "JoinFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStateStore",
    "KeySelector",
    "MapFunction",
    "NullByteKeySelector",
    "PassThroughAllWindowFunction",
    "PassThroughWindowFunction",
    "ProcessFunction",
    "ProcessJoinFunction",
    "ProcessAllWindowFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "SinkFunction",
    "TimeDomain",
    "TimerService",
    "WindowFunction",
]
