"""PyFlink's ``pyflink.datastream.state``: keyed and window state descriptors and handles
(flinkwin's own home is :mod:`flinkwin.state`)."""

from typing import Any, TypeVar

from flinkwin.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    AppendingState,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    MergingState,
    ReducingState,
    ReducingStateDescriptor,
    State,
    StateDescriptor,
    ValueState,
    ValueStateDescriptor,
)
from flinkwin.state.backend import IN, OUT
from flinkwin.unsupported import missing

#: PyFlink's type variables of this module, for a program's own generic classes
T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


def __getattr__(name: str) -> Any:
    raise missing(__name__, name)


__all__ = [
    "IN",
    "OUT",
    "K",
    "T",
    "V",
    "AggregatingState",
    "AggregatingStateDescriptor",
    "AppendingState",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "MergingState",
    "ReducingState",
    "ReducingStateDescriptor",
    "State",
    "StateDescriptor",
    "ValueState",
    "ValueStateDescriptor",
]
