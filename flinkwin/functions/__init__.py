"""User functions with PyFlink's signatures: window and process functions, the window join's
and the interval join's functions, key selectors and built-in aggregations."""

from flinkwin.functions.base import (
    AggregateFunction,
    AllWindowFunction,
    CallableKeySelector,
    FieldKeySelector,
    Function,
    KeySelector,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    ReduceFunction,
    WindowContext,
    WindowFunction,
)
from flinkwin.functions.builtin import BuiltinAggregation, max_by, max_of, min_by, min_of, sum_of
from flinkwin.functions.co import (
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    KeyedCoProcessFunction,
)
from flinkwin.functions.join import CoGroupFunction, FlatJoinFunction, JoinFunction
from flinkwin.functions.process import (
    KeyedProcessFunction,
    ProcessFunction,
    TimeDomain,
    TimerService,
)
from flinkwin.functions.process_join import ProcessJoinContext, ProcessJoinFunction
from flinkwin.functions.runtime_context import RuntimeContext
from flinkwin.functions.transform import (
    FilterFunction,
    FlatMapFunction,
    MapFunction,
    SinkFunction,
)

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "BuiltinAggregation",
    "CallableKeySelector",
    "CoFlatMapFunction",
    "CoGroupFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "FieldKeySelector",
    "Function",
    "FilterFunction",
    "FlatJoinFunction",
    "FlatMapFunction",
    "JoinFunction",
    "KeySelector",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "MapFunction",
    "ProcessFunction",
    "ProcessAllWindowFunction",
    "ProcessJoinContext",
    "ProcessJoinFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "SinkFunction",
    "TimeDomain",
    "TimerService",
    "WindowContext",
    "WindowFunction",
    "max_by",
    "max_of",
    "min_by",
    "min_of",
    "sum_of",
]
