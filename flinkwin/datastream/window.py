"""PyFlink's ``pyflink.datastream.window``: windows, window assigners, triggers and their
serializers, under PyFlink's names (flinkwin's own homes are :mod:`flinkwin.windows`,
:mod:`flinkwin.assigners` and :mod:`flinkwin.triggers`). ``Time`` is importable from here as
from PyFlink's module, and so are the helpers a custom assigner or trigger copied from
PyFlink's own imports: the type variables ``T``, ``W``..., ``mod_inverse``,
``long_to_int_with_bit_mixing`` and ``Min``."""

from typing import Any, TypeVar

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
)
from flinkwin.functions.base import IN, KEY, OUT, ReduceFunction, W
from flinkwin.time import Time
from flinkwin.triggers import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    EventTimeTrigger,
    NeverTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Trigger,
    TriggerResult,
)
from flinkwin.unsupported import missing
from flinkwin.windows import (
    CountWindow,
    CountWindowSerializer,
    GlobalWindow,
    GlobalWindowSerializer,
    TimeWindow,
    TimeWindowSerializer,
    Window,
)

#: PyFlink's type variables of this module, for a program's own generic classes
T = TypeVar("T")
W2 = TypeVar("W2")


def long_to_int_with_bit_mixing(x: int) -> int:
    """PyFlink's hash mixing of a long (the SplitMix64 finalizer), on Python's unbounded ints
    as PyFlink computes it."""
    for shift, multiplier in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        x = (x ^ (x >> shift)) * multiplier
    return x ^ (x >> 31)


def mod_inverse(x: int) -> int:
    """PyFlink's multiplicative inverse of an odd ``x`` modulo 2**32 (three Newton steps from
    ``x**3``), on Python's unbounded ints as PyFlink computes it: ``mod_inverse(x) * x %
    2**32 == 1``."""
    inverse = x * x * x
    for _ in range(3):
        inverse *= 2 - x * inverse
    return inverse


class Min(ReduceFunction):
    """PyFlink's ``Min`` (the reduce of its continuous triggers' fire-time state): the smaller
    value."""

    def reduce(self, value1: Any, value2: Any) -> Any:
        return min(value1, value2)


def __getattr__(name: str) -> Any:
    raise missing(__name__, name)


__all__ = [
    "IN",
    "KEY",
    "OUT",
    "T",
    "W",
    "W2",
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountSlidingWindowAssigner",
    "CountTrigger",
    "CountTumblingWindowAssigner",
    "CountWindow",
    "CountWindowSerializer",
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "GlobalWindow",
    "GlobalWindowSerializer",
    "GlobalWindows",
    "MergingWindowAssigner",
    "Min",
    "NeverTrigger",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "Time",
    "TimeWindow",
    "TimeWindowSerializer",
    "Trigger",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "Window",
    "WindowAssigner",
    "long_to_int_with_bit_mixing",
    "mod_inverse",
]
